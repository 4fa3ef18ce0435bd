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

test('at 3600 per hour two requests go at once, the third a second later', async () => {
  const key = `probe/${randomUUID()}`;
  const started = Date.now();
  const [a, b, c] = await Promise.all([paced(key, 3600), paced(key, 3600), paced(key, 3600)]);
  const at = [a, b, c].sort((x, y) => x - y).map((t) => t - started);
  expect(at[1]).toBeLessThan(500);
  expect(at[2]).toBeGreaterThanOrEqual(950);
});

test('a request that fails still takes its turn', async () => {
  const key = `probe/${randomUUID()}`;
  const started = Date.now();
  expect(await failure(paced(key, 3600, undefined, new Error('source down')))).toMatchObject({ message: 'source down' });
  await paced(key, 3600);
  // Had the failed one not counted, this third would have gone at once with the second.
  expect((await paced(key, 3600)) - started).toBeGreaterThanOrEqual(950);
});

test('a cancel stops the wait for a turn at once, and the turn is not taken', async () => {
  const key = `probe/${randomUUID()}`;
  await Promise.all([paced(key, 3600), paced(key, 3600)]);
  const controller = new AbortController();
  const waiting = paced(key, 3600, controller.signal);
  await new Promise((r) => setTimeout(r, 150));
  const cancelledAt = Date.now();
  controller.abort(new Error('job cancelled'));
  expect(await failure(waiting)).toMatchObject({ message: 'job cancelled' });
  // At once, not at the turn it waited for (about 850 ms later).
  expect(Date.now() - cancelledAt).toBeLessThan(500);
  // The next request goes at the cancelled one's turn (about a second after the first two), not a second after that.
  const next = await paced(key, 3600);
  expect(next - cancelledAt).toBeLessThan(1200);
});

test('waiters hold no connection: six callers on a pool of two, and other queries still run', async () => {
  const key = `probe/${randomUUID()}`;
  const all = Promise.all(Array.from({ length: 6 }, () => paced(key, 36_000)));
  await new Promise((r) => setTimeout(r, 100));
  const asked = Date.now();
  await db.raw('select 1');
  expect(Date.now() - asked).toBeLessThan(300);
  const at = (await all).sort((x, y) => x - y);
  // 10 per second with a burst of two: the sixth about 400 ms after the first.
  expect((at[5] as number) - (at[0] as number)).toBeGreaterThanOrEqual(350);
});

test('a cancel during the request ends the hold at once, however long the gap', async () => {
  const key = `probe/${randomUUID()}`;
  const controller = new AbortController();
  const started = Date.now();
  const running = pacedGlobally(db, key, { gapMs: 5000 }, controller.signal, async () => {
    // The job is cancelled while its request is on the wire; the request stops with the cancel.
    controller.abort(new Error('job cancelled'));
    throw controller.signal.reason;
  });
  expect(await failure(running)).toMatchObject({ message: 'job cancelled' });
  expect(Date.now() - started).toBeLessThan(1000);
});
