import type { Knex } from 'knex';
import { sleep } from '../lib/sleep';

/** How requests with one key are spaced, across every worker. */
export interface Pace {
  /** No request starts less than this after the previous one started (Nominatim's 1 s, SEC's rate). */
  gapMs: number;
  /**
   * Where gapMs counts from: the previous request's start (a rate: Nominatim, SEC), or its answer (a
   * pause between requests: the social 3-10 s delay). From the answer the source sees the whole pause
   * however long the previous request took to reach it; from the start a request that was slow to
   * arrive leaves the next one less (90 ms of a 100 ms pause, seen in CI on 2026-12-04).
   */
  from?: 'start' | 'answer';
  /**
   * A rate over time as well: at most this many per hour on average, with a burst of two. Any
   * window of W ms holds at most W / (3600000 / perHour) + 2 requests, whenever the workers took
   * their activities off the queue.
   */
  perHour?: number;
}

/**
 * Runs `request` so that requests with the same `key` keep `pace` anywhere: a worker takes a
 * Postgres advisory lock for the key, waits until the rate allows (the key's theoretical arrival
 * time in source_pacing: the generic cell rate algorithm, tolerance one interval), makes the
 * request, and keeps the lock until `gapMs` after the start. Temporal's queue rate limit alone is
 * not enough: its token bucket lets a burst through (two Nominatim requests 995 ms apart were
 * measured at rate 0.5/s), and activities dispatched on time but started late by a busy worker
 * reach the lock together (ten social requests in two seconds at 2 per second, 2026-11-26).
 *
 * - Times are the database's, so that the workers' clocks need not agree.
 * - A waiter holds no connection between its tries (each try is a transaction of its own), so that
 *   waiting activities cannot empty the pool; the holder does all its work on its one connection.
 * - A request counts once it has been allowed, whether it succeeds, fails or is cancelled: the
 *   transaction commits in every case after the turn is taken.
 * - A cancel stops the wait for the lock or the turn at once, and ends the hold after the request.
 */
export async function pacedGlobally<T>(
  db: Knex,
  key: string,
  pace: Pace,
  signal: AbortSignal,
  request: () => Promise<T>,
): Promise<T> {
  for (;;) {
    signal.throwIfAborted();
    const trx = await db.transaction();
    let locked: boolean;
    try {
      const { rows } = (await trx.raw('select pg_try_advisory_xact_lock(hashtextextended(?, 0)) as ok', [
        `pace/${key}`,
      ])) as { rows: { ok: boolean }[] };
      locked = rows[0]?.ok === true;
      if (locked && pace.perHour !== undefined) await takeTurn(trx, key, 3_600_000 / pace.perHour, signal);
    } catch (err) {
      await trx.rollback();
      throw err;
    }
    if (!locked) {
      await trx.rollback();
      await sleep(50, signal);
      continue;
    }
    const started = Date.now();
    let outcome: { ok: true; value: T } | { ok: false; error: unknown };
    try {
      outcome = { ok: true, value: await request() };
    } catch (error) {
      outcome = { ok: false, error };
    }
    // Held past the answer: the next request (any worker) starts gapMs after this one started, or
    // after its answer. A cancel ends the hold at once (the request is over; the job is being stopped).
    const wait = pace.from === 'answer' ? pace.gapMs : started + pace.gapMs - Date.now();
    if (wait > 0) await sleep(wait, signal).catch(() => undefined);
    await trx.commit();
    signal.throwIfAborted();
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  }
}

/**
 * With the key's lock held: waits until the theoretical arrival time less one interval, then moves
 * it one interval on from the later of itself and now.
 */
async function takeTurn(trx: Knex.Transaction, key: string, intervalMs: number, signal: AbortSignal): Promise<void> {
  const { rows } = (await trx.raw(
    `select greatest(0, extract(epoch from (next_at - clock_timestamp())) * 1000 - ?)::float8 as wait_ms from source_pacing where key = ?`,
    [intervalMs, key],
  )) as { rows: { wait_ms: number }[] };
  const wait = rows[0]?.wait_ms ?? 0;
  if (wait > 0) await sleep(wait, signal);
  await trx.raw(
    `insert into source_pacing (key, next_at) values (?, clock_timestamp() + make_interval(secs => ?))
     on conflict (key) do update set next_at = greatest(source_pacing.next_at, clock_timestamp()) + make_interval(secs => ?)`,
    [key, intervalMs / 1000, intervalMs / 1000],
  );
}
