import { randomUUID } from 'node:crypto';
import { pacedGlobally } from '../../activities/pacing';
import { createDb, type Db } from '../../db';
import { parseDbConfig } from '../../lib/config';
import { failure } from '../support/failure';

// activities/pacing.ts against the real Postgres: the spacing that outside sources (Nominatim,
// Overpass, the social profile API) get from every worker together. A pool of two connections, as
// a small worker might have.
jest.setTimeout(30_000);

let db: Db;
beforeAll(() => {
  db = createDb(parseDbConfig({ ...process.env, DATABASE_POOL_MAX: '2' }));
});
afterAll(async () => {
  await db.destroy();
});

/** One request through the pacing: resolves with the time it started, or rejects with `fail`. */
function paced(key: string, perHour: number, signal = new AbortController().signal, fail?: Error): Promise<number> {
  return pacedGlobally(db, key, { gapMs: 0, perHour }, signal, async () => {
    const at = Date.now();
    if (fail) throw fail;
    return at;
  });
}

// The next turn's time as the pacing keeps it (the database's clock).
const nextAt = async (key: string): Promise<number | undefined> => {
  const row = (await db('source_pacing').where({ key }).first('next_at')) as { next_at: Date } | undefined;
  return row?.next_at.getTime();
};

test('at 900 per hour two requests go at once, the third 4 s later', async () => {
  const key = `probe/${randomUUID()}`;
  const started = Date.now();
  const [a, b, c] = await Promise.all([paced(key, 900), paced(key, 900), paced(key, 900)]);
  const at = [a, b, c].sort((x, y) => x - y).map((t) => t - started);
  // At once (it waits for the first's lock, a 50 ms retry or so): a burst of one would start it a
  // whole interval (4 s) after the first. Half of that is a bound only the defect crosses, not a timing.
  expect(at[1]).toBeLessThan(2000);
  // It waited (a lower bound), 50 ms short of the interval for the two clocks.
  expect(at[2]).toBeGreaterThanOrEqual(3950);
});

test('a request that fails still takes its turn', async () => {
  const key = `probe/${randomUUID()}`;
  const started = Date.now();
  expect(await failure(paced(key, 3600, undefined, new Error('source down')))).toMatchObject({
    message: 'source down',
  });
  await paced(key, 3600);
  // Had the failed one not counted, this third would have gone at once with the second.
  expect((await paced(key, 3600)) - started).toBeGreaterThanOrEqual(950);
});

test('a cancel stops the wait for a turn at once, and the turn is not taken', async () => {
  const key = `probe/${randomUUID()}`;
  // 180 per hour: after the burst of two, the third's turn is 20 s away.
  await Promise.all([paced(key, 180), paced(key, 180)]);
  const turn = await nextAt(key);
  const controller = new AbortController();
  const waiting = paced(key, 180, controller.signal);
  await new Promise((r) => setTimeout(r, 150));
  const cancelledAt = Date.now();
  controller.abort(new Error('job cancelled'));
  expect(await failure(waiting)).toMatchObject({ message: 'job cancelled' });
  // At once, not at the turn it waited for (about 20 s later): a bound only that defect crosses, not a timing.
  expect(Date.now() - cancelledAt).toBeLessThan(5000);
  // The turn is not taken: the key's next turn is where the first two left it, so the next request
  // goes at the cancelled one's turn, not an interval after that.
  expect(await nextAt(key)).toBe(turn);
});

test('waiters hold no connection: six callers on a pool of two, and other queries still run', async () => {
  const key = `probe/${randomUUID()}`;
  // 360 per hour: after the burst of two, the third holds the key's lock (and its connection) for
  // its turn 10 s away; the other three wait for the lock, each try a transaction of its own.
  const controller = new AbortController();
  let went = 0;
  const all = Promise.all(
    Array.from({ length: 6 }, () =>
      paced(key, 360, controller.signal).then(
        (at) => {
          went++;
          return at;
        },
        (err: Error) => err.message,
      ),
    ),
  );
  while (went < 2) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 100));
  const asked = Date.now();
  await db.raw('select 1');
  // Had the waiters held the pool's other connection, this would wait for the third's turn (10 s):
  // a bound only that defect crosses, not a timing.
  expect(Date.now() - asked).toBeLessThan(5000);
  controller.abort(new Error('job cancelled'));
  const outcomes = await all;
  expect(outcomes.filter((o) => typeof o === 'number')).toHaveLength(2);
  expect(outcomes.filter((o) => o === 'job cancelled')).toHaveLength(4);
});

test('a cancel during the request ends the hold at once, however long the gap', async () => {
  const key = `probe/${randomUUID()}`;
  const controller = new AbortController();
  const started = Date.now();
  const running = pacedGlobally(db, key, { gapMs: 20_000 }, controller.signal, async () => {
    // The job is cancelled while its request is on the wire; the request stops with the cancel.
    controller.abort(new Error('job cancelled'));
    throw controller.signal.reason;
  });
  expect(await failure(running)).toMatchObject({ message: 'job cancelled' });
  // Not held for the 20 s gap: a bound only that defect crosses, not a timing.
  expect(Date.now() - started).toBeLessThan(5000);
});

test('a pause counted from the answer reaches the source whole, though the previous request was slow to arrive', async () => {
  const key = `probe/${randomUUID()}`;
  // The first request reaches the source 60 ms after it starts, the second at once (a busy server
  // or network): counted from the start, the source would see them 40 ms apart.
  const arrivals: number[] = [];
  const request = (latencyMs: number) => async () => {
    await new Promise((r) => setTimeout(r, latencyMs));
    arrivals.push(Date.now());
  };
  const signal = new AbortController().signal;
  await pacedGlobally(db, key, { gapMs: 100, from: 'answer' }, signal, request(60));
  await pacedGlobally(db, key, { gapMs: 100, from: 'answer' }, signal, request(0));
  expect(arrivals).toHaveLength(2);
  expect((arrivals[1] as number) - (arrivals[0] as number)).toBeGreaterThanOrEqual(100);
});
