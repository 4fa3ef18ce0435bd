import type { Knex } from 'knex';
import { SearchOutboxModel } from '../models/search-outbox';
import { tenantSql } from '../models/tenant';

export interface OutboxRow {
  client_id: string;
  resource_id: string;
  job_id: string | null;
}

/**
 * The lead-index outbox: businesses whose search document must be rewritten, queued in the same
 * transaction as the change itself, so Elasticsearch can be down without losing an update. The
 * indexer claims rows with SKIP LOCKED (several workers drain in parallel without overlap) and
 * deletes them only once Elasticsearch has accepted the documents.
 */
export class SearchOutbox {
  constructor(private readonly db: Knex) {}

  /** Queues businesses (idempotent: a queued one stays queued once). */
  async enqueue(trx: Knex, clientId: string, resourceIds: string[], jobId: string | null = null): Promise<void> {
    if (resourceIds.length === 0) return;
    await trx('search_outbox')
      .insert([...new Set(resourceIds)].map((id) => ({ client_id: clientId, resource_id: id, job_id: jobId })))
      .onConflict(['client_id', 'resource_id'])
      .merge({ job_id: jobId, enqueued_at: trx.fn.now() });
  }

  /** Queues every business of the client (after its ICP changed, all scores change). */
  async enqueueAll(trx: Knex, clientId: string): Promise<number> {
    // One insert ... select (every business of the client): no round trip per row.
    const { rowCount } = (await tenantSql(trx, clientId).raw(
      `insert into search_outbox (client_id, resource_id)
       select client_id, id from {idap_resources} where resource_type = 'businesses'
       on conflict (client_id, resource_id) do update set enqueued_at = now()`,
    )) as { rowCount: number };
    return rowCount;
  }

  /**
   * Runs `work` on up to `limit` claimed rows (all clients, or one) inside a transaction; the rows
   * are deleted if it succeeds and released, with the error recorded, if it throws.
   */
  async drain(
    limit: number,
    clientId: string | undefined,
    work: (rows: OutboxRow[], trx: Knex.Transaction) => Promise<void>,
  ): Promise<number> {
    let claimed: OutboxRow[] = [];
    try {
      return await this.db.transaction(async (trx) => {
        const q = clientId
          ? SearchOutboxModel.forClient<SearchOutboxModel>(trx, clientId)
          : SearchOutboxModel.query(trx);
        claimed = (await q
          .select('client_id', 'resource_id', 'job_id')
          .orderBy('enqueued_at')
          .limit(limit)
          .forUpdate()
          .skipLocked()) as unknown as OutboxRow[];
        if (claimed.length === 0) return 0;
        await work(claimed, trx);
        await trx('search_outbox')
          .whereIn(
            ['client_id', 'resource_id'],
            claimed.map((r) => [r.client_id, r.resource_id]),
          )
          .delete();
        return claimed.length;
      });
    } catch (err) {
      // The rows stay queued (the transaction rolled back); note why, for operators.
      if (claimed.length > 0) {
        await this.db('search_outbox')
          .whereIn(
            ['client_id', 'resource_id'],
            claimed.map((r) => [r.client_id, r.resource_id]),
          )
          .increment('attempts', 1)
          .update({ last_error: String((err as Error).message).slice(0, 500) })
          .catch(() => undefined);
      }
      throw err;
    }
  }
}
