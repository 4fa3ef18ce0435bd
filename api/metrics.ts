import type { Middleware } from 'koa';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Db } from '../db';
import { hashSecret, secretMatches } from '../lib/credentials';
import { AppError } from '../lib/errors';
import { ApiMetricsRepository } from '../db/repositories/api-metrics';
import type { AppState } from './context';

/**
 * The API process's Prometheus metrics (prom-client): request latency by route template and status,
 * jobs submitted by type, and, read from Postgres at each scrape, the jobs waiting or running per
 * type, the lag of the outboxes (lead index, webhook deliveries, IDAP projection of completed jobs)
 * and the projections given up. Labels never carry a client id or a raw path, so the series stay
 * few and tenant-free.
 */
export class ApiMetrics {
  readonly registry = new Registry();
  private readonly requestDuration: Histogram<'method' | 'route' | 'status'>;
  private readonly submitted: Counter<'type'>;

  constructor(db: Db) {
    const repo = new ApiMetricsRepository(db);
    collectDefaultMetrics({ register: this.registry, prefix: 'leadjobs_api_' });
    this.requestDuration = new Histogram({
      name: 'leadjobs_http_request_duration_seconds',
      help: 'API request latency by route template, method and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [this.registry],
    });
    this.submitted = new Counter({
      name: 'leadjobs_jobs_submitted_total',
      help: 'Jobs created by this API process, by type (cached de-duplicated submissions not counted)',
      labelNames: ['type'],
      registers: [this.registry],
    });
    new Gauge({
      name: 'leadjobs_jobs_in_flight',
      help: 'Jobs queued or processing now, by type and status (all API processes see the same figure)',
      labelNames: ['type', 'status'],
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const row of await repo.jobsInFlight()) this.set({ type: row.type, status: row.status }, row.count);
      },
    });
    new Gauge({
      name: 'leadjobs_outbox_pending',
      help: 'Rows waiting in an outbox: lead index (search), webhook deliveries not yet dispatched (webhooks), completed jobs whose leads have not reached IDAP yet (projection)',
      labelNames: ['outbox'],
      registers: [this.registry],
      async collect() {
        const lag = await repo.outboxLag();
        this.set({ outbox: 'search' }, lag.search.pending);
        this.set({ outbox: 'webhooks' }, lag.webhooks.pending);
        this.set({ outbox: 'projection' }, lag.projection.pending);
      },
    });
    new Gauge({
      name: 'leadjobs_outbox_oldest_seconds',
      help: 'Age of the oldest row waiting in an outbox (0 when empty): how far the lead index, webhook dispatch or IDAP projection lags',
      labelNames: ['outbox'],
      registers: [this.registry],
      async collect() {
        const lag = await repo.outboxLag();
        this.set({ outbox: 'search' }, lag.search.oldestSeconds);
        this.set({ outbox: 'webhooks' }, lag.webhooks.oldestSeconds);
        this.set({ outbox: 'projection' }, lag.projection.oldestSeconds);
      },
    });
    new Gauge({
      name: 'leadjobs_projection_given_up',
      help: 'Completed jobs whose leads never reached IDAP: their projection failed for PROJECTION_RETRY_HOURS and is no longer retried (docs/security.md)',
      registers: [this.registry],
      async collect() {
        this.set((await repo.outboxLag()).projectionGivenUp);
      },
    });
  }

  /** Times every request; the route label is the matched template (`/api/v1/jobs/:job_id`), `unmatched` otherwise. */
  middleware(): Middleware<AppState> {
    return async (ctx, next) => {
      const end = this.requestDuration.startTimer();
      try {
        await next();
      } finally {
        const route = (ctx as unknown as { _matchedRoute?: string | RegExp })._matchedRoute;
        end({ method: ctx.method, route: typeof route === 'string' ? route : 'unmatched', status: String(ctx.status) });
      }
    };
  }

  jobSubmitted(type: string): void {
    this.submitted.inc({ type });
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

/**
 * GET /metrics in Prometheus's text format on the API's own listener, for the operator only: the
 * request must carry METRICS_TOKEN as a bearer credential (compared in constant time), else 401.
 */
export function metricsRoute(metrics: ApiMetrics, token: string): Middleware<AppState> {
  return async (ctx, next) => {
    if (ctx.path !== '/metrics' || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    const presented = /^Bearer (.+)$/i.exec(ctx.get('authorization'))?.[1] ?? '';
    if (!secretMatches(presented, hashSecret(token))) {
      throw new AppError(401, 'metrics need the operator token (METRICS_TOKEN) as a bearer credential', undefined, {
        'www-authenticate': 'Bearer realm="metrics"',
      });
    }
    const { contentType, body } = await metrics.render();
    ctx.type = contentType;
    ctx.body = body;
  };
}
