import type { Db } from '..';
import { UnsubscribeAuditModel, UnsubscribePreferenceModel } from '../models/unsubscribe';
import { ALL_LISTS, normaliseEmail } from '../../lib/unsubscribe';

export type UnsubscribeScope = 'list' | 'all';
export type UnsubscribeSource = 'page' | 'one_click';

export interface UnsubscribeAuditRow {
  id: string;
  client_id: string;
  email: string;
  list: string;
  scope: UnsubscribeScope;
  source: UnsubscribeSource;
  ip_address: string | null;
  user_agent: string | null;
  created_at: Date;
}

interface PreferenceRow {
  client_id: string;
  email: string;
  list: string;
  status: 'subscribed' | 'unsubscribed';
  created_at: Date;
  updated_at: Date;
}

export interface Preferences {
  email: string;
  unsubscribed_all: boolean;
  /** When the recipient left every list (null while subscribed to them). */
  unsubscribed_all_at: Date | null;
  lists: Record<string, { status: 'subscribed' | 'unsubscribed'; updated_at: Date }>;
  audit: UnsubscribeAuditRow[];
}

export interface ApplyInput {
  clientId: string;
  email: string;
  list: string;
  scope: UnsubscribeScope;
  source: UnsubscribeSource;
  ipAddress: string | null;
  userAgent: string | null;
}

/** Most audit rows a preferences answer carries (newest first). */
const AUDIT_LIMIT = 100;

/**
 * Recipients' unsubscribe preferences per client (spec §4.12). Addresses are stored lower-case, so
 * every comparison is case-insensitive; every query is scoped by the client id.
 */
export class UnsubscribeRepository {
  constructor(private readonly db: Db) {}

  /**
   * Those of `emails` (as given) that must not get mail of `list` from this client: unsubscribed
   * from that list or from every list. `list` null: only those unsubscribed from every list.
   */
  async suppressed(clientId: string, emails: string[], list: string | null): Promise<string[]> {
    if (emails.length === 0) return [];
    const lists = list === null ? [ALL_LISTS] : [ALL_LISTS, list.trim().toLowerCase()];
    const rows = (await UnsubscribePreferenceModel.forClient(this.db, clientId)
      .distinct('email')
      .where({ status: 'unsubscribed' })
      .whereIn('list', lists)
      .whereIn('email', [...new Set(emails.map(normaliseEmail))])) as unknown as { email: string }[];
    const out = new Set(rows.map((r) => r.email));
    return emails.filter((e) => out.has(normaliseEmail(e)));
  }

  /** Records that the recipient gets `list` (a link was made for it); an existing preference stays as it is. */
  async register(clientId: string, email: string, list: string): Promise<void> {
    await this.db('unsubscribe_preferences')
      .insert({ client_id: clientId, email: normaliseEmail(email), list, status: 'subscribed' })
      .onConflict(['client_id', 'email', 'list'])
      .ignore();
  }

  /**
   * Unsubscribes the recipient from the token's list, or from every list (and that one), and writes
   * the audit row, all in one transaction. A repeat changes no preference (its updated_at stays) but
   * adds another audit row. False when the client no longer exists.
   */
  async apply(input: ApplyInput): Promise<boolean> {
    const email = normaliseEmail(input.email);
    return this.db.transaction(async (trx) => {
      const client = (await trx('clients').where({ id: input.clientId }).first('id')) as { id: string } | undefined;
      if (!client) return false;
      const lists = input.scope === 'all' ? [input.list, ALL_LISTS] : [input.list];
      for (const list of lists) {
        await trx.raw(
          `INSERT INTO unsubscribe_preferences (client_id, email, list, status) VALUES (?, ?, ?, 'unsubscribed')
           ON CONFLICT (client_id, email, list) DO UPDATE SET status = 'unsubscribed',
             updated_at = CASE WHEN unsubscribe_preferences.status = 'unsubscribed' THEN unsubscribe_preferences.updated_at ELSE now() END`,
          [input.clientId, email, list],
        );
      }
      await trx('unsubscribe_audit').insert({
        client_id: input.clientId,
        email,
        list: input.list,
        scope: input.scope,
        source: input.source,
        ip_address: input.ipAddress,
        user_agent: input.userAgent === null ? null : input.userAgent.slice(0, 1000),
      });
      return true;
    });
  }

  async preferences(clientId: string, email: string): Promise<Preferences> {
    const addr = normaliseEmail(email);
    const [rows, audit] = await Promise.all([
      UnsubscribePreferenceModel.forClient(this.db, clientId)
        .where({ email: addr })
        .orderBy('list') as unknown as Promise<PreferenceRow[]>,
      UnsubscribeAuditModel.forClient(this.db, clientId)
        .where({ email: addr })
        .orderBy('id', 'desc')
        .limit(AUDIT_LIMIT) as unknown as Promise<UnsubscribeAuditRow[]>,
    ]);
    const all = rows.find((r) => r.list === ALL_LISTS);
    const lists: Preferences['lists'] = {};
    for (const r of rows) if (r.list !== ALL_LISTS) lists[r.list] = { status: r.status, updated_at: r.updated_at };
    const unsubscribedAll = all?.status === 'unsubscribed';
    return {
      email: addr,
      unsubscribed_all: unsubscribedAll,
      unsubscribed_all_at: unsubscribedAll && all ? all.updated_at : null,
      lists,
      audit,
    };
  }
}
