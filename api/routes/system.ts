import type { ApiRouter } from '../routing';
import { healthResponse } from '../schemas/system';

export type Probe = () => Promise<void>;
export interface HealthProbes {
  database: Probe;
  queue: Probe;
  search: Probe;
  storage: Probe;
}

function withTimeout(probe: Probe, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    probe().then(
      () => { clearTimeout(timer); resolve(); },
      (err: unknown) => { clearTimeout(timer); reject(err); },
    );
  });
}

export function systemRoutes(api: ApiRouter, probes: HealthProbes, timeoutMs: number): void {
  api.add({
    method: 'get',
    path: '/api/v1/system/health',
    operationId: 'getHealth',
    summary: 'Service health (also a cheap way to check credentials)',
    description: 'Probes Postgres (database), Temporal (queue), Elasticsearch (search) and MinIO (storage) in parallel. 503 when any is down.',
    tags: ['system'],
    security: 'client',
    responses: {
      200: { description: 'All dependencies answer', schema: healthResponse },
      503: { description: 'At least one dependency is down', schema: healthResponse },
    },
    handler: async (ctx) => {
      const names = Object.keys(probes) as (keyof HealthProbes)[];
      const results = await Promise.allSettled(names.map((n) => withTimeout(probes[n], timeoutMs)));
      const states = Object.fromEntries(
        names.map((n, i) => {
          const r = results[i];
          if (r?.status === 'rejected') ctx.state.log.warn({ dependency: n, err: String(r.reason) }, 'health probe failed');
          return [n, r?.status === 'fulfilled' ? 'connected' : 'unavailable'];
        }),
      ) as Record<keyof HealthProbes, 'connected' | 'unavailable'>;
      const healthy = Object.values(states).every((s) => s === 'connected');
      ctx.status = healthy ? 200 : 503;
      ctx.body = { status: healthy ? 'healthy' : 'unhealthy', ...states, timestamp: new Date().toISOString() };
    },
  });
}
