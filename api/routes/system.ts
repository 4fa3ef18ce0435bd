import type { ApiRouter } from '../routing';
import type { QueueStatsService } from '../queue-stats';
import { clientIdOf } from '../context';
import { withTimeout } from '../../lib/timeout';
import { healthResponse, queueStatsResponse } from '../schemas/system';

export type Probe = () => Promise<void>;
export interface HealthProbes {
  database: Probe;
  queue: Probe;
  search: Probe;
  storage: Probe;
}

export function systemRoutes(
  api: ApiRouter,
  probes: HealthProbes,
  timeoutMs: number,
  queueStats: QueueStatsService,
): void {
  api.add({
    method: 'get',
    path: '/api/v1/system/health',
    operationId: 'getHealth',
    summary: 'Service health (also a cheap way to check credentials)',
    description:
      'Probes Postgres (database), Temporal (queue), Elasticsearch (search) and MinIO (storage) in parallel. 503 when any is down.',
    tags: ['system'],
    security: 'client',
    responses: {
      200: { description: 'All dependencies answer', schema: healthResponse },
      503: { description: 'At least one dependency is down', schema: healthResponse },
    },
    handler: async (ctx) => {
      const names = Object.keys(probes) as (keyof HealthProbes)[];
      const results = await Promise.allSettled(
        names.map((n) => withTimeout(Promise.resolve().then(probes[n]), timeoutMs, `the ${n} probe`)),
      );
      const states = Object.fromEntries(
        names.map((n, i) => {
          const r = results[i];
          if (r?.status === 'rejected')
            ctx.state.log.warn({ dependency: n, err: String(r.reason) }, 'health probe failed');
          return [n, r?.status === 'fulfilled' ? 'connected' : 'unavailable'];
        }),
      ) as Record<keyof HealthProbes, 'connected' | 'unavailable'>;
      const healthy = Object.values(states).every((s) => s === 'connected');
      ctx.status = healthy ? 200 : 503;
      // As every 503 of the service: when to ask again.
      if (!healthy) ctx.set('Retry-After', '5');
      ctx.body = { status: healthy ? 'healthy' : 'unhealthy', ...states, timestamp: new Date().toISOString() };
    },
  });

  api.add({
    method: 'get',
    path: '/api/v1/system/queues',
    operationId: 'getQueueStats',
    summary: 'System queue statistics: task-queue backlog, pollers and rates; your jobs by status per type',
    description:
      "Temporal's description of every task queue of the deployment (backlog and its age, add and dispatch rates, pollers, the queue's rate limit) " +
      "and, from Postgres, the calling client's jobs per type and status and its completed jobs whose leads have not reached IDAP and search yet " +
      '(`projection`: still retried, and given up). 503 when Temporal does not answer.',
    tags: ['system'],
    security: 'client',
    responses: {
      200: { description: 'Queue statistics', schema: queueStatsResponse },
      503: { description: 'queue service unavailable' },
    },
    handler: async (ctx) => {
      const [queues, jobs, projection] = await Promise.all([
        queueStats.queues(),
        queueStats.jobsByStatus(clientIdOf(ctx)),
        queueStats.projection(clientIdOf(ctx)),
      ]);
      ctx.body = { success: true, queues, jobs, projection, timestamp: new Date().toISOString() };
    },
  });
}
