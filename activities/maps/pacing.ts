import type { Knex } from 'knex';

/**
 * Runs `request` so that no two requests with the same `key` start less than `intervalMs` apart
 * anywhere: every worker takes a Postgres advisory lock for the key, makes the request, and keeps
 * the lock until `intervalMs` after the start. Temporal's queue rate limit alone is not enough: its
 * token bucket lets a burst through (two Nominatim requests 995 ms apart were measured at rate 0.5/s).
 * Waiting for the lock polls, so that a cancel (the signal) stops the wait at once. Also used for
 * crawlPublicSocial's randomised pause between profile requests (activities/social).
 */
export async function pacedGlobally<T>(db: Knex, key: string, intervalMs: number, signal: AbortSignal, request: () => Promise<T>): Promise<T> {
  return db.transaction(async (trx) => {
    for (;;) {
      signal.throwIfAborted();
      const { rows } = (await trx.raw('select pg_try_advisory_xact_lock(hashtextextended(?, 0)) as ok', [`pace/${key}`])) as { rows: { ok: boolean }[] };
      if (rows[0]?.ok) break;
      await sleep(50, signal);
    }
    const started = Date.now();
    try {
      return await request();
    } finally {
      // Held past the answer: the next request (any worker) starts intervalMs after this one started.
      // A cancel ends the hold at once (the request is over; the job is being stopped).
      const wait = started + intervalMs - Date.now();
      if (wait > 0) await sleep(wait, signal);
    }
  });
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
