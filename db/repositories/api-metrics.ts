import type { Knex } from 'knex';
import { ProjectionOutbox } from './projection-outbox';

export interface OutboxLag {
  pending: number;
  oldestSeconds: number;
}

export interface OutboxLags {
  search: OutboxLag;
  webhooks: OutboxLag;
  /** Completed jobs whose leads have not reached IDAP yet (still retried). */
  projection: OutboxLag;
  /** Completed jobs whose projection was given up (PROJECTION_RETRY_HOURS passed). */
  projectionGivenUp: number;
}

/**
 * The deployment-wide figures the metrics endpoint reads at each scrape. Queued jobs by type and
 * undispatched deliveries are partial-index scans and the search outbox drains continuously; the
 * processing count reads the jobs table (cheap while jobs are few; a partial index on processing
 * jobs would serve a large history). The projection outbox holds only owed projections (a
 * backlog, or a few just-completed jobs). A scrape shares one outbox reading between its two gauges.
 */
export class ApiMetricsRepository {
  private lag: Promise<OutboxLags> | undefined;

  constructor(private readonly db: Knex) {}

  async jobsInFlight(): Promise<{ type: string; status: string; count: number }[]> {
    // tenancy: operator metrics (GET /metrics) count every client's rows, by design; no row is returned.
    const { rows } = (await this.db.raw(
      `SELECT type, status, count(*)::int AS count FROM jobs WHERE status IN ('queued', 'processing') GROUP BY type, status`,
    )) as { rows: { type: string; status: string; count: number }[] };
    return rows;
  }

  /**
   * The outboxes' lag (the projection outbox's given-up rows apart: they are no longer retried);
   * concurrent callers (the gauges of one scrape) share one reading.
   */
  outboxLag(): Promise<OutboxLags> {
    this.lag ??= this.readLag().finally(() => {
      this.lag = undefined;
    });
    return this.lag;
  }

  private async readLag(): Promise<OutboxLags> {
    // tenancy: operator metrics (GET /metrics) count every client's rows, by design; no row is returned.
    const { rows } = (await this.db.raw(
      `SELECT 'search' AS outbox, count(*)::int AS pending, coalesce(extract(epoch FROM now() - min(enqueued_at)), 0)::float AS oldest FROM search_outbox
       UNION ALL
       -- tenancy: every client's undelivered webhooks, counted
       SELECT 'webhooks', count(*)::int, coalesce(extract(epoch FROM now() - min(created_at)), 0)::float FROM webhook_deliveries WHERE dispatched_at IS NULL`,
    )) as { rows: { outbox: string; pending: number; oldest: number }[] };
    const of = (name: string): OutboxLag => {
      const r = rows.find((x) => x.outbox === name);
      return { pending: r?.pending ?? 0, oldestSeconds: r?.oldest ?? 0 };
    };
    const projection = await new ProjectionOutbox(this.db).backlog();
    return {
      search: of('search'),
      webhooks: of('webhooks'),
      projection: { pending: projection.pending, oldestSeconds: projection.oldestSeconds },
      projectionGivenUp: projection.givenUp,
    };
  }
}
