import type { Middleware } from 'koa';
import { RateLimiterPostgres, RateLimiterRes, RateLimiterUnion } from 'rate-limiter-flexible';
import type { Db } from '../../db';
import { AppError } from '../../lib/errors';
import type { AppState } from '../context';

export interface RateLimitOptions {
  perMinute: number;
  /** At most this many requests in any one second (the spec's "burst 20"). */
  burst: number;
  schema: string;
  /**
   * Who is counted: `client` (the authenticated client; the spec's per-client limit) or `address`
   * (the source address: the public pages and content API, which have no client). Each has windows
   * of its own.
   */
  per?: 'client' | 'address';
}

/**
 * Per-client (or per-address) limits shared by every API process through Postgres (spec §8): a
 * minute window of `perMinute` requests and a one-second window of `burst`. Every response carries
 * X-RateLimit-Limit/-Remaining/-Reset for the minute window; a 429 adds Retry-After.
 */
export function rateLimit(db: Db, options: RateLimitOptions): Middleware<AppState> {
  const common = {
    storeClient: db,
    storeType: 'knex',
    tableName: 'rate_limits',
    schemaName: options.schema,
    tableCreated: true,
  } as const;
  const prefix = options.per === 'address' ? 'public_' : '';
  const minute = new RateLimiterPostgres({
    ...common,
    keyPrefix: `${prefix}minute`,
    points: options.perMinute,
    duration: 60,
  });
  const second = new RateLimiterPostgres({
    ...common,
    keyPrefix: `${prefix}burst`,
    points: options.burst,
    duration: 1,
  });
  const union = new RateLimiterUnion(minute, second);

  return async (ctx, next) => {
    const key = options.per !== 'address' && ctx.state.client ? ctx.state.client.id : `ip:${ctx.ip}`;
    let result: Record<string, RateLimiterRes>;
    try {
      result = (await union.consume(key)) as Record<string, RateLimiterRes>;
    } catch (rejected) {
      if (rejected instanceof Error) throw rejected;
      // The union rejects with one entry per window that failed: a refusal (RateLimiterRes) or the
      // store's own error (Postgres down), which is an outage (503), not a limit.
      const failure = Object.values(rejected as Record<string, unknown>).find((r) => !(r instanceof RateLimiterRes));
      if (failure !== undefined) throw failure;
      const byWindow = rejected as Record<string, RateLimiterRes>;
      const waitMs = Math.max(...Object.values(byWindow).map((r) => r.msBeforeNext));
      // Only the windows that refused are reported; when just the burst window did, the caller may
      // retry after it, so Reset points there and Remaining is 0 until then.
      const minuteRes = byWindow[minute.keyPrefix] ?? new RateLimiterRes(0, waitMs);
      setHeaders(ctx.set.bind(ctx), options.perMinute, minuteRes);
      throw new AppError(429, `rate limit exceeded, maximum ${options.perMinute} requests per minute`, 'rate_limited', {
        'Retry-After': String(Math.max(1, Math.ceil(waitMs / 1000))),
      });
    }
    // The union reports each window under its keyPrefix (`public_minute` for the per-address limit).
    const minuteRes = result[minute.keyPrefix];
    if (minuteRes) setHeaders(ctx.set.bind(ctx), options.perMinute, minuteRes);
    return next();
  };
}

function setHeaders(set: (k: string, v: string) => void, limit: number, res: RateLimiterRes): void {
  set('X-RateLimit-Limit', String(limit));
  set('X-RateLimit-Remaining', String(Math.max(0, res.remainingPoints)));
  set('X-RateLimit-Reset', String(Math.ceil((Date.now() + res.msBeforeNext) / 1000)));
}
