import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';
import type { Config } from './config';

export interface Temporal {
  connection: Connection;
  client: Client;
}

/**
 * A lazy connection: the API starts (and reports `queue: unavailable`) even while Temporal is
 * down, and connects on first use. Calls retry transient errors three times (well under a
 * second) instead of the SDK's ten: a request waiting on Temporal should answer 503 promptly,
 * and a call must not outlive the request (or the connection) that made it.
 */
export function connectTemporalLazy(config: Pick<Config, 'TEMPORAL_ADDRESS' | 'TEMPORAL_NAMESPACE'>): Temporal {
  const connection = Connection.lazy({
    address: config.TEMPORAL_ADDRESS,
    interceptors: [makeGrpcRetryInterceptor(defaultGrpcRetryOptions({ maxAttempts: 3 }))],
  });
  return { connection, client: new Client({ connection, namespace: config.TEMPORAL_NAMESPACE }) };
}

/** Health probe: the frontend's gRPC health service. */
export async function pingTemporal(temporal: Temporal, timeoutMs: number): Promise<void> {
  const res = await temporal.connection.withDeadline(Date.now() + timeoutMs, () =>
    temporal.connection.healthService.check({}),
  );
  // 1 = SERVING in grpc.health.v1.HealthCheckResponse.ServingStatus
  if (res.status !== 1) throw new Error(`temporal health status ${String(res.status)}`);
}
