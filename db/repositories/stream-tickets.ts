import type { Knex } from 'knex';
import { hashSecret, randomToken } from '../../lib/credentials';

/** What a ticket starts with: tells it from a `client_id:api_key:api_secret` credential at a glance. */
export const TICKET_PREFIX = 'tkt_';

/** One-use, short-lived credentials of one event stream (migration 20261201000200). */
export class StreamTickets {
  constructor(private readonly db: Knex) {}

  /** A new ticket of `clientId`, valid for `ttlMs`. Expired tickets of every client are cleared on the way. */
  async issue(clientId: string, ttlMs: number): Promise<{ ticket: string; expiresAt: Date }> {
    const ticket = `${TICKET_PREFIX}${randomToken(43)}`;
    const expiresAt = new Date(Date.now() + ttlMs);
    await this.db('stream_tickets').where('expires_at', '<', this.db.fn.now()).delete();
    await this.db('stream_tickets').insert({
      ticket_hash: hashSecret(ticket),
      client_id: clientId,
      expires_at: expiresAt,
    });
    return { ticket, expiresAt };
  }

  /**
   * The client id of an unexpired ticket, which is used up by this call (one statement: two streams
   * racing with one ticket, on any API processes, cannot both get it); undefined otherwise.
   */
  async redeem(ticket: string): Promise<string | undefined> {
    const rows = (await this.db('stream_tickets')
      .where({ ticket_hash: hashSecret(ticket) })
      .andWhere('expires_at', '>', this.db.fn.now())
      .delete()
      .returning('client_id')) as { client_id: string }[];
    return rows[0]?.client_id;
  }
}
