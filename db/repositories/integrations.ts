import type { Knex } from 'knex';
import { conflict, type DomainError } from '../../lib/errors';
import type { CredentialCipher, SealContext } from '../../lib/llm/cipher';
import {
  credentialIdentity,
  keyPreview,
  modelOf,
  PROVIDERS,
  type Credentials,
  type ProviderName,
} from '../../lib/llm/providers';
import type { Price } from '../../lib/llm/prices';
import { IntegrationModel } from '../models/integration';
import { appendEvent } from './events';

export interface IntegrationRow {
  id: number;
  client_id: string;
  provider_name: ProviderName;
  key_label: string | null;
  credentials_sealed: string;
  credential_fingerprint: string;
  key_preview: Record<string, string>;
  model: string;
  price_input: string | null;
  price_output: string | null;
  is_active: boolean;
  is_primary: boolean;
  priority: number;
  daily_limit: number | null;
  daily_count: number;
  daily_window: string | null;
  minute_limit: number | null;
  minute_count: number;
  minute_window: Date | null;
  health_status: 'healthy' | 'unhealthy';
  consecutive_failures: number;
  retry_at: Date | null;
  rate_limited_until: Date | null;
  last_error: string | null;
  last_used_at: Date | null;
  spend_limit_amount: string | null;
  spend_limit_period: 'daily' | 'monthly';
  spend_limit_action: 'warn' | 'block';
  /** As of the last recorded usage, kept only so that a crossing stores one event: whether a key is over its limit is spend_limit_exceeded_now. */
  spend_limit_exceeded: boolean;
  created_at: Date;
  updated_at: Date;
}

/** A row with what the view adds: counters of the current windows and the spend of the current period. */
export interface IntegrationState extends IntegrationRow {
  daily_count_now: number;
  minute_count_now: number;
  spend_current_period: number;
  /** The current period's spend has reached the limit (SPEND_LIMIT_EXCEEDED): what the API shows and the selection obeys. */
  spend_limit_exceeded_now: boolean;
}

/** A `block` key whose limit is reached: calls skip it until the period rolls over or the limit is raised. */
export const spendBlocked = (k: IntegrationState): boolean =>
  k.spend_limit_action === 'block' && k.spend_limit_exceeded_now;

/** One answer's usage as logged: what for, the key's model, tokens and their cost in USD. */
export interface UsageRecord {
  purpose: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

export interface IntegrationSettings {
  key_label?: string | null;
  is_active?: boolean;
  is_primary?: boolean;
  priority?: number;
  daily_limit?: number | null;
  minute_limit?: number | null;
  spend_limit_amount?: number | null;
  spend_limit_period?: 'daily' | 'monthly';
  spend_limit_action?: 'warn' | 'block';
  prices?: Price | null;
}

const UTC_TODAY = "(now() AT TIME ZONE 'utc')::date";
const THIS_MINUTE = "date_trunc('minute', now())";
const PERIOD_START =
  "CASE i.spend_limit_period WHEN 'daily' THEN date_trunc('day', now() AT TIME ZONE 'utc') AT TIME ZONE 'utc' ELSE date_trunc('month', now() AT TIME ZONE 'utc') AT TIME ZONE 'utc' END";
/** USD the key `i` spent in its current period (UTC day or month), from the usage log. */
const SPEND_CURRENT_PERIOD = `(SELECT coalesce(sum(u.cost_usd), 0) FROM llm_usage u WHERE u.integration_id = i.id AND u.created_at >= ${PERIOD_START})`;
/**
 * The one definition of "over the spend limit", from the spend itself: a limit of 0, a lowered limit
 * or a new period count at once. Read by every query of a key's state (the API's view, the selection);
 * the stored spend_limit_exceeded column only remembers the last crossing, for its event.
 */
const SPEND_LIMIT_EXCEEDED = `(i.spend_limit_amount IS NOT NULL AND ${SPEND_CURRENT_PERIOD} >= i.spend_limit_amount)`;

/**
 * A client's LLM integrations (every query scoped by client id, except the worker-side accounting
 * calls that take an id the selection just read for that client). Credentials go in sealed and come
 * out only through `credentials()`.
 */
export class IntegrationRepository {
  constructor(
    private readonly db: Knex,
    private readonly cipher: CredentialCipher,
    private readonly schema: string,
  ) {}

  /** The client's integrations (aliased `i`) with their counters as of now. */
  private state(clientId: string) {
    return IntegrationModel.query(this.db)
      .alias('i')
      .modify('forClient', clientId)
      .select(
        'i.*',
        this.db.raw(`CASE WHEN i.daily_window = ${UTC_TODAY} THEN i.daily_count ELSE 0 END AS daily_count_now`),
        this.db.raw(`CASE WHEN i.minute_window = ${THIS_MINUTE} THEN i.minute_count ELSE 0 END AS minute_count_now`),
        this.db.raw(`${SPEND_CURRENT_PERIOD}::float8 AS spend_current_period`),
        this.db.raw(`${SPEND_LIMIT_EXCEEDED} AS spend_limit_exceeded_now`),
      );
  }

  async create(
    clientId: string,
    provider: ProviderName,
    credentials: Credentials,
    settings: IntegrationSettings,
  ): Promise<IntegrationState> {
    const isPrimary = settings.is_primary ?? false;
    const fingerprint = this.cipher.fingerprint(provider, credentialIdentity(credentials));
    // The id first: the sealed value is bound to its row (lib/cipher.ts).
    const id = await nextId(this.db, 'llm_integrations');
    try {
      const [row] = (await this.db('llm_integrations')
        .insert({
          id,
          client_id: clientId,
          provider_name: provider,
          credentials_sealed: this.cipher.seal(JSON.stringify(credentials), credentialsSealedAt(clientId, id)),
          credential_fingerprint: fingerprint,
          key_preview: JSON.stringify(keyPreview(credentials)),
          model: modelOf(provider, credentials),
          ...columns({ ...settings, is_primary: isPrimary, priority: settings.priority ?? (isPrimary ? 10 : 0) }),
        })
        .returning('id')) as { id: number }[];
      return (await this.find(clientId, row?.id ?? -1)) as IntegrationState;
    } catch (err) {
      if ((err as { code?: string }).code === '23505') throw duplicate(provider);
      throw err;
    }
  }

  async list(clientId: string): Promise<IntegrationState[]> {
    return (await this.state(clientId).orderBy([
      { column: 'i.is_primary', order: 'desc' },
      { column: 'i.priority', order: 'desc' },
      { column: 'i.id', order: 'asc' },
    ])) as unknown as IntegrationState[];
  }

  async find(clientId: string, id: number): Promise<IntegrationState | undefined> {
    return (await this.state(clientId).where({ 'i.id': id }).first()) as unknown as IntegrationState | undefined;
  }

  /** Settings, and new credentials (re-sealed, new preview and fingerprint) when given. */
  async update(
    clientId: string,
    id: number,
    settings: IntegrationSettings,
    credentials?: Credentials,
  ): Promise<IntegrationState | undefined> {
    const current = await this.find(clientId, id);
    if (!current) return undefined;
    const patch: Record<string, unknown> = { ...columns(settings), updated_at: this.db.fn.now() };
    // Becoming primary (or not) moves the default priority with it unless one is given.
    if (
      settings.is_primary !== undefined &&
      settings.priority === undefined &&
      current.priority === (current.is_primary ? 10 : 0)
    )
      patch.priority = settings.is_primary ? 10 : 0;
    // Another limit or period is a new threshold: its crossing (seen at the next recorded usage) stores its own event.
    if (settings.spend_limit_amount !== undefined || settings.spend_limit_period !== undefined)
      patch.spend_limit_exceeded = false;
    if (credentials) {
      Object.assign(patch, {
        credentials_sealed: this.cipher.seal(JSON.stringify(credentials), credentialsSealedAt(clientId, id)),
        credential_fingerprint: this.cipher.fingerprint(current.provider_name, credentialIdentity(credentials)),
        key_preview: JSON.stringify(keyPreview(credentials)),
        model: modelOf(current.provider_name, credentials),
        // New credentials deserve a fresh start.
        health_status: 'healthy',
        consecutive_failures: 0,
        retry_at: null,
        rate_limited_until: null,
        last_error: null,
      });
    }
    try {
      await IntegrationModel.forClient(this.db, clientId).findById(id).patch(patch);
    } catch (err) {
      if ((err as { code?: string }).code === '23505') throw duplicate(current.provider_name);
      throw err;
    }
    return this.find(clientId, id);
  }

  async delete(clientId: string, id: number): Promise<boolean> {
    return (await IntegrationModel.forClient(this.db, clientId).deleteById(id)) > 0;
  }

  credentials(row: IntegrationRow): Credentials {
    return JSON.parse(
      this.cipher.open(row.credentials_sealed, credentialsSealedAt(row.client_id, row.id)),
    ) as Credentials;
  }

  /**
   * The keys a call may try, in order: active, primary first, then priority. Unhealthy keys whose
   * cool-down is over are included (the breaker's re-test); keys in a 429 pause are not.
   */
  async candidates(clientId: string): Promise<IntegrationState[]> {
    return (await this.state(clientId)
      .where({ 'i.is_active': true })
      .andWhere((q) => q.where('i.health_status', 'healthy').orWhere('i.retry_at', '<=', this.db.fn.now()))
      .andWhere((q) => q.whereNull('i.rate_limited_until').orWhere('i.rate_limited_until', '<=', this.db.fn.now()))
      .orderBy([
        { column: 'i.is_primary', order: 'desc' },
        { column: 'i.priority', order: 'desc' },
        { column: 'i.id', order: 'asc' },
      ])) as unknown as IntegrationState[];
  }

  /**
   * Counts one request against the key's minute and day windows if both have room, in one UPDATE:
   * the row lock makes check-and-count atomic across every worker. An unhealthy key is claimed for
   * its re-test at the same time (its retry_at moves a cool-down ahead), so that only one caller
   * re-tests it. False: no room (or someone else is re-testing it).
   */
  async reserve(id: number, cooldownSeconds: number): Promise<boolean> {
    // tenancy: an integration by its id, chosen by the client-scoped key selection (lib/llm) before the call.
    const res = await this.db.raw(
      `UPDATE llm_integrations SET
         minute_count = CASE WHEN minute_window = ${THIS_MINUTE} THEN minute_count + 1 ELSE 1 END,
         minute_window = ${THIS_MINUTE},
         daily_count = CASE WHEN daily_window = ${UTC_TODAY} THEN daily_count + 1 ELSE 1 END,
         daily_window = ${UTC_TODAY},
         retry_at = CASE WHEN health_status = 'unhealthy' THEN now() + make_interval(secs => ?) ELSE retry_at END,
         last_used_at = now()
       WHERE id = ? AND is_active
         AND (minute_limit IS NULL OR minute_window IS DISTINCT FROM ${THIS_MINUTE} OR minute_count < minute_limit)
         AND (daily_limit IS NULL OR daily_window IS DISTINCT FROM ${UTC_TODAY} OR daily_count < daily_limit)
         AND (health_status = 'healthy' OR retry_at <= now())
       RETURNING id`,
      [cooldownSeconds, id],
    );
    return (res as { rows: unknown[] }).rows.length > 0;
  }

  /** A successful call: the key healthy again, and its usage recorded as recordUsage does. */
  async recordSuccess(row: IntegrationRow, usage: UsageRecord): Promise<void> {
    await this.logUsage(row, usage, true);
  }

  /**
   * The tokens an answer reported, whatever became of the answer (one that is not the JSON asked
   * for was billed all the same): usage and cost logged, and the spend checked against the limit.
   * Crossing it sets spend_limit_exceeded and stores an `integration.spend_limit_exceeded` event
   * (once per crossing).
   */
  async recordUsage(row: IntegrationRow, usage: UsageRecord): Promise<void> {
    await this.logUsage(row, usage, false);
  }

  private async logUsage(row: IntegrationRow, usage: UsageRecord, healthy: boolean): Promise<void> {
    const health = healthy
      ? "health_status = 'healthy', consecutive_failures = 0, retry_at = NULL, last_error = NULL,"
      : '';
    await this.db.transaction(async (trx) => {
      await trx('llm_usage').insert({
        integration_id: row.id,
        client_id: row.client_id,
        purpose: usage.purpose,
        model: usage.model,
        input_tokens: usage.inputTokens,
        output_tokens: usage.outputTokens,
        cost_usd: usage.costUsd,
      });
      // tenancy: an integration by its id, chosen by the client-scoped key selection (lib/llm) before the call.
      const res = await trx.raw(
        `UPDATE llm_integrations i SET ${health} spend_limit_exceeded = ${SPEND_LIMIT_EXCEEDED}
         FROM llm_integrations old WHERE i.id = ? AND old.id = i.id
         RETURNING i.spend_limit_exceeded AS now_exceeded, old.spend_limit_exceeded AS was_exceeded, i.spend_limit_action AS action, i.spend_limit_amount AS amount, i.spend_limit_period AS period`,
        [row.id],
      );
      const r = (
        res as {
          rows: { now_exceeded: boolean; was_exceeded: boolean; action: string; amount: string; period: string }[];
        }
      ).rows[0];
      if (r?.now_exceeded && !r.was_exceeded) {
        await appendEvent(trx, this.schema, {
          clientId: row.client_id,
          name: 'integration.spend_limit_exceeded',
          data: {
            integration_id: row.id,
            provider_name: row.provider_name,
            key_label: row.key_label,
            spend_limit_amount: Number(r.amount),
            spend_limit_period: r.period,
            spend_limit_action: r.action,
          },
        });
      }
    });
  }

  /** A failed call: one more failure in a row; at `threshold` the breaker opens for `cooldownSeconds`. */
  async recordFailure(id: number, error: string, threshold: number, cooldownSeconds: number): Promise<void> {
    // tenancy: an integration by its id, chosen by the client-scoped key selection (lib/llm) before the call.
    await this.db.raw(
      `UPDATE llm_integrations SET
         consecutive_failures = consecutive_failures + 1,
         last_error = ?,
         health_status = CASE WHEN consecutive_failures + 1 >= ? THEN 'unhealthy' ELSE health_status END,
         retry_at = CASE WHEN consecutive_failures + 1 >= ? THEN now() + make_interval(secs => ?) ELSE retry_at END,
         updated_at = now()
       WHERE id = ?`,
      [error.slice(0, 1000), threshold, threshold, cooldownSeconds, id],
    );
  }

  /** A 429: the key is skipped for Retry-After (at least a second), which is not a failure of the key. */
  async recordRateLimited(id: number, seconds: number, error: string): Promise<void> {
    // tenancy: an integration by its id, chosen by the client-scoped key selection (lib/llm) before the call.
    await this.db.raw(
      `UPDATE llm_integrations SET rate_limited_until = now() + make_interval(secs => ?), last_error = ? WHERE id = ?`,
      [Math.min(Math.max(seconds, 1), 3600), error.slice(0, 1000), id],
    );
  }

  /** The integration's own price, when it has one. */
  ownPrice(row: IntegrationRow): Price | null {
    return row.price_input === null || row.price_output === null
      ? null
      : { input: Number(row.price_input), output: Number(row.price_output) };
  }

  /**
   * Rotation: every credential sealed with another key is re-sealed with the current one (and
   * re-fingerprinted); all clients' unless one is named. `resealed`: the rows updated;
   * `unopenable`: the rows whose credential no key of the cipher opens (or that is damaged), left as
   * they are. Each row is updated only if it still holds what was read: a PATCH in between sealed
   * it with the current key already.
   */
  async reseal(clientId?: string): Promise<{ resealed: number; unopenable: string[] }> {
    const query =
      clientId === undefined
        ? IntegrationModel.query(this.db)
        : IntegrationModel.forClient<IntegrationModel>(this.db, clientId);
    const rows = (await query.select('id', 'client_id', 'provider_name', 'credentials_sealed')) as unknown as Pick<
      IntegrationRow,
      'id' | 'client_id' | 'provider_name' | 'credentials_sealed'
    >[];
    const outcome = { resealed: 0, unopenable: [] as string[] };
    for (const r of rows) {
      if (this.cipher.isCurrent(r.credentials_sealed)) continue;
      let creds: Credentials;
      try {
        creds = JSON.parse(
          this.cipher.open(r.credentials_sealed, credentialsSealedAt(r.client_id, r.id)),
        ) as Credentials;
      } catch {
        // Only the row id: the error of a JSON.parse may quote the plaintext.
        outcome.unopenable.push(`llm_integrations ${r.id}`);
        continue;
      }
      outcome.resealed += await this.db('llm_integrations')
        .where({ id: r.id, credentials_sealed: r.credentials_sealed })
        .update({
          credentials_sealed: this.cipher.seal(JSON.stringify(creds), credentialsSealedAt(r.client_id, r.id)),
          credential_fingerprint: this.cipher.fingerprint(r.provider_name, credentialIdentity(creds)),
        });
    }
    return outcome;
  }
}

/** Where an integration's credentials are sealed for (lib/cipher.ts's associated data). */
export const credentialsSealedAt = (clientId: string, id: number): SealContext => ({
  table: 'llm_integrations',
  column: 'credentials_sealed',
  clientId,
  rowId: id,
});

/** The next id of a serial primary key, taken before the insert that uses it. */
export async function nextId(db: Knex, table: string): Promise<number> {
  const { rows } = (await db.raw('select nextval(pg_get_serial_sequence(?, ?)) as id', [table, 'id'])) as {
    rows: { id: string }[];
  };
  return Number(rows[0]?.id);
}

function duplicate(provider: ProviderName): DomainError {
  const msg = `this credential already exists for ${provider} (${PROVIDERS[provider].label})`;
  return conflict(msg, msg);
}

function columns(s: IntegrationSettings): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of [
    'key_label',
    'is_active',
    'is_primary',
    'priority',
    'daily_limit',
    'minute_limit',
    'spend_limit_amount',
    'spend_limit_period',
    'spend_limit_action',
  ] as const) {
    if (s[k] !== undefined) out[k] = s[k];
  }
  if (s.prices !== undefined) {
    out.price_input = s.prices?.input ?? null;
    out.price_output = s.prices?.output ?? null;
  }
  return out;
}
