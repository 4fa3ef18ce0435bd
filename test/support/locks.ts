import type { Knex } from 'knex';

/**
 * Returns once another session's query waits for a lock that `trx` holds (pg_blocking_pids): the
 * query under test has read what it read and is now held at its write, so a change made in `trx`
 * before its commit lands between the two.
 */
export async function untilBlockedBy(db: Knex, trx: Knex.Transaction, timeoutMs = 10_000): Promise<void> {
  const { rows } = (await trx.raw('select pg_backend_pid() as pid')) as { rows: { pid: number }[] };
  const pid = rows[0]?.pid ?? -1;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const waiting = (await db.raw(
      'select count(*)::int as n from pg_stat_activity where ? = any(pg_blocking_pids(pid))',
      [pid],
    )) as { rows: { n: number }[] };
    if ((waiting.rows[0]?.n ?? 0) > 0) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for a query blocked by session ${pid}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
