import { randomBytes, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { EventName } from '../../jobs';
import type { CredentialCipher, SealContext } from '../../lib/cipher';
import { ClientModel } from '../models/client';
import { WebhookModel } from '../models/webhook';
import { WebhookDeliveryModel } from '../models/webhook-delivery';
import { appendEvent } from './events';
import { newestFirstPage } from './paging';

export interface WebhookRow {
  id: string;
  client_id: string;
  url: string;
  events: EventName[];
  description: string | null;
  /** The signing secret at rest: sealed (`v2.…`, `v1.…` before a reseal), or `whsec_…` itself when stored without a key. Opened by `signingSecret`. */
  secret: string;
  active: boolean;
  consecutive_failures: number;
  task_queue: string;
  disabled_at: Date | null;
  created_at: Date;
}

export interface DeliveryRow {
  id: string;
  webhook_id: string;
  client_id: string;
  event_id: string;
  event: EventName;
  body: Record<string, unknown>;
  status: 'pending' | 'delivered' | 'failed' | 'cancelled';
  attempts: number;
  dispatched_at: Date | null;
  delivered_at: Date | null;
  created_at: Date;
}

export interface AttemptRow {
  delivery_id: string;
  attempt: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  created_at: Date;
}

/** Where a webhook's signing secret is sealed for (lib/cipher.ts's associated data). */
export const secretSealedAt = (clientId: string, id: string): SealContext => ({
  table: 'webhooks',
  column: 'secret',
  clientId,
  rowId: id,
});

/** Secrets as issued start with this; a sealed one starts with `v2.` (`v1.` before reseal; lib/cipher.ts). */
const PLAINTEXT_PREFIX = 'whsec_';

/**
 * Webhooks of one client (every query is scoped by the client id) and their deliveries.
 *
 * Signing secrets are sealed at rest with `cipher` (INTEGRATIONS_ENCRYPTION_KEY), so that a database
 * dump cannot forge deliveries. Without a cipher (no key: allowed outside production) they are
 * stored as issued. Either form is read by its prefix, so rows stored before a key was set keep
 * working until `integrations:reseal` seals them.
 */
export class WebhookRepository {
  constructor(
    private readonly db: Knex,
    private readonly schema: string,
    private readonly cipher?: CredentialCipher,
  ) {}

  /** Whether new secrets are sealed (a key is configured). */
  get sealsSecrets(): boolean {
    return this.cipher !== undefined;
  }

  /**
   * `taskQueue`: the deployment's webhooks queue, where its deliveries will run. Returns the row and
   * the secret in the clear, for the create response only (the row holds it sealed).
   */
  async create(
    clientId: string,
    taskQueue: string,
    input: { url: string; events: EventName[]; description?: string | null },
  ): Promise<{ webhook: WebhookRow; secret: string }> {
    // 32 random bytes: the receiver's HMAC key. The prefix tells a leaked string's origin at a glance.
    const secret = `${PLAINTEXT_PREFIX}${randomBytes(32).toString('hex')}`;
    const id = randomUUID();
    const [row] = (await this.db('webhooks')
      .insert({
        id,
        client_id: clientId,
        url: input.url,
        events: input.events,
        description: input.description ?? null,
        secret: this.cipher?.seal(secret, secretSealedAt(clientId, id)) ?? secret,
        task_queue: taskQueue,
      })
      .returning('*')) as WebhookRow[];
    if (!row) throw new Error('webhook insert returned nothing');
    return { webhook: row, secret };
  }

  /** The secret deliveries are signed with. Throws if it is sealed and this process has no key that opens it. */
  signingSecret(row: Pick<WebhookRow, 'secret' | 'id' | 'client_id'>): string {
    if (row.secret.startsWith(PLAINTEXT_PREFIX)) return row.secret;
    if (!this.cipher)
      throw new Error('the webhook secret is sealed but INTEGRATIONS_ENCRYPTION_KEY is not set: it cannot be opened');
    return this.cipher.open(row.secret, secretSealedAt(row.client_id, row.id));
  }

  /**
   * Rotation and migration: every secret stored in plaintext or sealed with another key is sealed
   * with the current one; all clients' unless one is named. `resealed`: the rows updated;
   * `unopenable`: the rows whose secret no key of the cipher opens (or that is damaged), left as
   * they are. Each row is updated only if it still holds what was read.
   */
  async reseal(clientId?: string): Promise<{ resealed: number; unopenable: string[] }> {
    const cipher = this.cipher;
    if (!cipher) throw new Error('webhook secrets cannot be sealed without INTEGRATIONS_ENCRYPTION_KEY');
    const query =
      clientId === undefined ? WebhookModel.query(this.db) : WebhookModel.forClient<WebhookModel>(this.db, clientId);
    const rows = (await query.select('id', 'client_id', 'secret')) as unknown as Pick<
      WebhookRow,
      'id' | 'client_id' | 'secret'
    >[];
    const outcome = { resealed: 0, unopenable: [] as string[] };
    for (const r of rows) {
      if (cipher.isCurrent(r.secret)) continue;
      let secret: string;
      try {
        secret = this.signingSecret(r);
      } catch {
        outcome.unopenable.push(`webhooks ${r.id}`);
        continue;
      }
      outcome.resealed += await this.db('webhooks')
        .where({ id: r.id, secret: r.secret })
        .update({ secret: cipher.seal(secret, secretSealedAt(r.client_id, r.id)) });
    }
    return outcome;
  }

  async list(clientId: string, page: number, pageSize: number): Promise<{ total: number; webhooks: WebhookRow[] }> {
    const base = WebhookModel.forClient<WebhookModel>(this.db, clientId);
    const { total, rows } = await newestFirstPage(base, pageSize, (page - 1) * pageSize);
    return { total, webhooks: rows as unknown as WebhookRow[] };
  }

  async find(clientId: string, id: string): Promise<WebhookRow | undefined> {
    return (await WebhookModel.forClient(this.db, clientId).findById(id)) as unknown as WebhookRow | undefined;
  }

  /** Deletes the webhook and its log; deliveries in flight find it gone and stop. */
  async delete(clientId: string, id: string): Promise<boolean> {
    return (await WebhookModel.forClient(this.db, clientId).deleteById(id)) > 0;
  }

  /**
   * The delivery log, newest first, each delivery with its attempts (oldest first). One
   * repeatable-read snapshot: a success committed between the reads would otherwise show a
   * `pending` delivery with its 200 attempt.
   */
  async deliveries(
    clientId: string,
    webhookId: string,
    page: number,
    pageSize: number,
  ): Promise<{ total: number; deliveries: (DeliveryRow & { attempt_log: AttemptRow[] })[] }> {
    return this.db.transaction(
      async (trx) => {
        const base = WebhookDeliveryModel.forClient(trx, clientId).where({ webhook_id: webhookId });
        const count = (await base.clone().count('* as count')) as unknown as { count: string }[];
        const deliveries = (await base
          .clone()
          .orderBy([
            { column: 'created_at', order: 'desc' },
            { column: 'event_id', order: 'desc' },
          ])
          .limit(pageSize)
          .offset((page - 1) * pageSize)) as unknown as DeliveryRow[];
        const attempts =
          deliveries.length === 0
            ? []
            : ((await trx('webhook_attempts')
                .whereIn(
                  'delivery_id',
                  deliveries.map((d) => d.id),
                )
                .orderBy('id')) as AttemptRow[]);
        return {
          total: Number(count[0]?.count ?? 0),
          deliveries: deliveries.map((d) => ({ ...d, attempt_log: attempts.filter((a) => a.delivery_id === d.id) })),
        };
      },
      { isolationLevel: 'repeatable read', readOnly: true },
    );
  }

  // ---- the delivery side (worker) ----------------------------------------------------------------

  /**
   * Runs `start` on up to `limit` undispatched deliveries of a queue (all clients), claimed with SKIP LOCKED so
   * that several workers share the work, and marks them dispatched once `start` returned. If it
   * throws, they stay undispatched and the next poll tries again (`start` must be idempotent).
   */
  async dispatch(
    taskQueue: string,
    limit: number,
    start: (rows: Pick<DeliveryRow, 'id' | 'client_id' | 'webhook_id' | 'event'>[]) => Promise<void>,
  ): Promise<number> {
    return this.db.transaction(async (trx) => {
      const rows = (await trx('webhook_deliveries')
        .select('id', 'client_id', 'webhook_id', 'event')
        .whereNull('dispatched_at')
        .andWhere('task_queue', taskQueue)
        .orderBy('created_at')
        .limit(limit)
        .forUpdate()
        .skipLocked()) as Pick<DeliveryRow, 'id' | 'client_id' | 'webhook_id' | 'event'>[];
      if (rows.length === 0) return 0;
      await start(rows);
      await trx('webhook_deliveries')
        .whereIn(
          'id',
          rows.map((r) => r.id),
        )
        .update({ dispatched_at: trx.fn.now() });
      return rows.length;
    });
  }

  /** The delivery, its webhook, and whether its client is active (a deactivated client's deliveries are not sent). */
  async delivery(
    id: string,
  ): Promise<{ delivery: DeliveryRow; webhook: WebhookRow | undefined; clientActive: boolean } | undefined> {
    const delivery = (await this.db('webhook_deliveries').where({ id }).first()) as DeliveryRow | undefined;
    if (!delivery) return undefined;
    const [webhook, client] = await Promise.all([
      this.db('webhooks').where({ id: delivery.webhook_id }).first() as Promise<WebhookRow | undefined>,
      ClientModel.query(this.db).findById(delivery.client_id).select('is_active'),
    ]);
    return { delivery, webhook, clientActive: client?.is_active === true };
  }

  /** A deactivated client's deliveries still pending -> cancelled (not sent on re-activation either); how many. */
  async cancelPending(clientId: string): Promise<number> {
    return WebhookDeliveryModel.query(this.db)
      .modify('forClient', clientId)
      .where('status', 'pending')
      .patch({ status: 'cancelled' });
  }

  async setStatus(id: string, status: DeliveryRow['status']): Promise<void> {
    await this.db('webhook_deliveries').where({ id, status: 'pending' }).update({ status });
  }

  /** Logs a 2xx attempt: the delivery is done and the webhook's failure streak ends. */
  async recordSuccess(delivery: DeliveryRow, attempt: Omit<AttemptRow, 'delivery_id' | 'created_at'>): Promise<void> {
    await this.db.transaction(async (trx) => {
      await trx('webhook_attempts').insert({ delivery_id: delivery.id, ...attempt });
      await trx('webhook_deliveries')
        .where({ id: delivery.id })
        .update({ status: 'delivered', delivered_at: trx.fn.now(), attempts: trx.raw('attempts + 1') });
      await trx('webhooks').where({ id: delivery.webhook_id }).update({ consecutive_failures: 0 });
    });
  }

  /**
   * Logs a failed attempt and lengthens the webhook's failure streak. At `disableAfter` failures in
   * a row the webhook is disabled and `webhook.disabled` is stored for its client (once: only the
   * update that flips `active` writes the event). Returns whether the webhook is still active.
   */
  async recordFailure(
    delivery: DeliveryRow,
    attempt: Omit<AttemptRow, 'delivery_id' | 'created_at'>,
    disableAfter: number,
  ): Promise<{ active: boolean }> {
    return this.db.transaction(async (trx) => {
      await trx('webhook_attempts').insert({ delivery_id: delivery.id, ...attempt });
      await trx('webhook_deliveries')
        .where({ id: delivery.id })
        .update({ attempts: trx.raw('attempts + 1') });
      const [hook] = (await trx('webhooks')
        .where({ id: delivery.webhook_id })
        .increment('consecutive_failures', 1)
        .returning(['id', 'url', 'active', 'consecutive_failures'])) as Pick<
        WebhookRow,
        'id' | 'url' | 'active' | 'consecutive_failures'
      >[];
      if (!hook) return { active: false };
      if (!hook.active) return { active: false };
      if (hook.consecutive_failures < disableAfter) return { active: true };
      await trx('webhooks').where({ id: hook.id }).update({ active: false, disabled_at: trx.fn.now() });
      await appendEvent(trx, this.schema, {
        clientId: delivery.client_id,
        name: 'webhook.disabled',
        data: {
          webhook_id: hook.id,
          url: hook.url,
          consecutive_failures: hook.consecutive_failures,
          last_error: attempt.error ?? `HTTP ${attempt.status_code}`,
        },
      });
      return { active: false };
    });
  }
}
