/**
 * Which backing service an error says is unreachable, if any: the error middleware answers those
 * 503 with Retry-After (spec §7: the service is unavailable, retry) instead of a 500, so a client
 * can tell an outage from a bug and nothing is half-stored (each request's writes are one
 * transaction that the outage rolled back).
 */
export type Dependency = 'database' | 'search' | 'storage' | 'queue';

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
  'ECONNABORTED',
]);
// Postgres SQLSTATE: class 08 connection exceptions; 57P01-57P03 shutdown / cannot connect now; 53300 too many connections.
const PG_OUTAGE = /^(08...|57P0[123]|53300)$/;

interface ErrorLike {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  cause?: unknown;
  /** Objection's DBError (db-errors) keeps the driver's error here. */
  nativeError?: unknown;
  syscall?: unknown;
}

/**
 * Errors of the drivers themselves (a socket error, pg's, knex's, Objection's wrapper of them, the
 * Elasticsearch, MinIO and Temporal clients'). Any other named error is the service's own about an outside server (an
 * OutboundError, a mail server's, PeerTube's): a refused connection there is not our backing
 * service being down, so it is never read as one.
 */
const DRIVER_ERROR_NAMES = new Set([
  'Error',
  'error',
  'AggregateError',
  'DatabaseError',
  'DBError',
  'KnexTimeoutError',
  'ConnectionError',
  'NoLivingConnectionsError',
  'TimeoutError',
  'ServiceError',
  'S3Error',
]);

export function unavailableDependency(err: unknown, depth = 0): Dependency | undefined {
  if (typeof err !== 'object' || err === null || depth > 3) return undefined;
  const e = err as ErrorLike;
  const name = typeof e.name === 'string' ? e.name : '';
  if (!DRIVER_ERROR_NAMES.has(name)) return undefined;
  const code = typeof e.code === 'string' ? e.code : undefined;
  const message = typeof e.message === 'string' ? e.message : '';
  // knex: no pooled connection within acquireConnectionTimeout (Postgres down or saturated).
  if (name === 'KnexTimeoutError') return 'database';
  if (code && PG_OUTAGE.test(code)) return 'database';
  if (
    /Connection terminated|terminating connection|encountered a connection error and is not queryable|the database system is (starting up|shutting down|not yet accepting connections|in recovery mode)/i.test(
      message,
    )
  )
    return 'database';
  // @elastic/elasticsearch transport errors (they carry `meta`): no answer at all. A bare TimeoutError is AbortSignal.timeout's.
  if ((name === 'ConnectionError' || name === 'NoLivingConnectionsError' || name === 'TimeoutError') && 'meta' in e)
    return 'search';
  // MinIO's client: S3 answers "service unavailable" or "slow down" while a node is restarting.
  if (code === 'SlowDown' || code === 'ServiceUnavailable' || code === 'XMinioServerNotInitialized') return 'storage';
  // Temporal gRPC: UNAVAILABLE (14) or DEADLINE_EXCEEDED (4) from the frontend.
  if (name === 'ServiceError' && /UNAVAILABLE|DEADLINE_EXCEEDED/.test(message)) return 'queue';
  if (code && NETWORK_CODES.has(code)) return socketOwner(e) ?? 'database';
  return unavailableDependency(e.cause ?? e.nativeError, depth + 1);
}

const OWNER = Symbol('leadjobs.dependency');

/**
 * Marks a client's error as `dependency`'s: a refused connection is a bare socket error that says
 * nothing of whose socket it was (lib/storage.ts marks MinIO's, which would else read as the database's).
 */
export function markDependency<E>(err: E, dependency: Dependency): E {
  if (typeof err === 'object' && err !== null && !Object.prototype.hasOwnProperty.call(err, OWNER))
    Object.defineProperty(err, OWNER, { value: dependency });
  return err;
}

/** A raw socket error: marked by its client (markDependency), else MinIO's client is told apart by its stack, else it is pg's. */
function socketOwner(e: ErrorLike): Dependency | undefined {
  const owner = (e as Record<symbol, unknown>)[OWNER];
  if (typeof owner === 'string') return owner as Dependency;
  const stack = (e as { stack?: unknown }).stack;
  if (typeof stack === 'string' && /node_modules[\\/]minio[\\/]/.test(stack)) return 'storage';
  return undefined;
}

export const UNAVAILABLE_DETAIL: Record<Dependency, string> = {
  database: 'service unavailable: the database does not answer, retry later',
  search: 'search service unavailable',
  storage: 'service unavailable: object storage does not answer, retry later',
  queue: 'queue service unavailable',
};
