import { readFileSync } from 'node:fs';
import {
  Client,
  Connection,
  defaultGrpcRetryOptions,
  makeGrpcRetryInterceptor,
  type TLSConfig,
} from '@temporalio/client';
import { ConfigError, type Config } from './config';

export type TemporalConnectionConfig = Pick<
  Config,
  | 'TEMPORAL_ADDRESS'
  | 'TEMPORAL_TLS'
  | 'TEMPORAL_TLS_CERT_PATH'
  | 'TEMPORAL_TLS_KEY_PATH'
  | 'TEMPORAL_TLS_CA_PATH'
  | 'TEMPORAL_TLS_SERVER_NAME'
  | 'TEMPORAL_API_KEY'
>;

/** What both `Connection` (client) and `NativeConnection` (worker) take to reach the frontend. */
export interface TemporalConnectionOptions {
  address: string;
  tls?: TLSConfig;
  apiKey?: string;
}

/**
 * The connection options of every process (API, worker, benchmarks), built here only. The PEM
 * files are read now, at start: a missing or unreadable one stops the process naming its variable
 * instead of failing the first gRPC call. Certificates are not reloaded: restart to rotate them.
 */
export function temporalConnectionOptions(config: TemporalConnectionConfig): TemporalConnectionOptions {
  if (!config.TEMPORAL_TLS) return { address: config.TEMPORAL_ADDRESS };
  const tls: TLSConfig = {};
  if (config.TEMPORAL_TLS_CERT_PATH && config.TEMPORAL_TLS_KEY_PATH) {
    tls.clientCertPair = {
      crt: readPem('TEMPORAL_TLS_CERT_PATH', config.TEMPORAL_TLS_CERT_PATH),
      key: readPem('TEMPORAL_TLS_KEY_PATH', config.TEMPORAL_TLS_KEY_PATH),
    };
  }
  if (config.TEMPORAL_TLS_CA_PATH)
    tls.serverRootCACertificate = readPem('TEMPORAL_TLS_CA_PATH', config.TEMPORAL_TLS_CA_PATH);
  if (config.TEMPORAL_TLS_SERVER_NAME) tls.serverNameOverride = config.TEMPORAL_TLS_SERVER_NAME;
  return {
    address: config.TEMPORAL_ADDRESS,
    tls,
    ...(config.TEMPORAL_API_KEY ? { apiKey: config.TEMPORAL_API_KEY } : {}),
  };
}

function readPem(variable: string, path: string): Buffer {
  let pem: Buffer;
  try {
    pem = readFileSync(path);
  } catch (err) {
    throw new ConfigError(`invalid configuration:\n  ${variable}: ${(err as Error).message}`);
  }
  // Checked here because the native TLS layer's own error names neither the file nor the variable.
  if (!pem.includes('-----BEGIN '))
    throw new ConfigError(`invalid configuration:\n  ${variable}: ${path} is not a PEM file`);
  return pem;
}

export interface Temporal {
  connection: Connection;
  client: Client;
}

/**
 * gRPC's wait between reconnection attempts grows 1.6-fold from 1 s up to 2 minutes, and while it
 * waits every call fails at once: after a 20 s outage the API answered 503 for another 12 s once
 * Temporal was back. Capped at 2 s, an attempt costs a refused TCP connect while it is down.
 */
const MAX_RECONNECT_BACKOFF_MS = 2000;

/**
 * A lazy connection: the API starts (and reports `queue: unavailable`) even while Temporal is
 * down, and connects on first use. Calls retry transient errors three times (well under a
 * second) instead of the SDK's ten: a request waiting on Temporal should answer 503 promptly,
 * and a call must not outlive the request (or the connection) that made it.
 */
export function connectTemporalLazy(config: TemporalConnectionConfig & Pick<Config, 'TEMPORAL_NAMESPACE'>): Temporal {
  const connection = Connection.lazy({
    ...temporalConnectionOptions(config),
    interceptors: [makeGrpcRetryInterceptor(defaultGrpcRetryOptions({ maxAttempts: 3 }))],
    channelArgs: { 'grpc.max_reconnect_backoff_ms': MAX_RECONNECT_BACKOFF_MS },
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
