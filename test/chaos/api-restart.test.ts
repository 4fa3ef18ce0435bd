import { bearer, ownQueues, testConfig } from '../support/api';
import { percentile, reportFigures, size, sleep, startApiProcess, type ServiceProcess } from '../support/chaos';
import { freePort, waitFor } from '../support/processes';
import { startTestWorker, type TestWorker } from '../support/worker';
import { startLeadSites, type LeadSites } from '../stand-ins/lead-sites';
import { createDb, type Db } from '../../db';
import { ClientRepository } from '../../db/repositories/clients';

// Issue 17 item 2: a storm of crawlSite submissions (one-page stand-in sites) against the real API
// process (api/server.ts), which is SIGKILLed once and SIGTERMed (drained) once mid-storm and
// restarted each time on the same port. Connection errors while it is down are expected and
// counted; no request may get a 500, and any other 5xx must be a 503 with Retry-After. Every job id
// answered with a 201 must reach a terminal state. Sizes: 200 submissions in npm test, 1,000 with CHAOS=1.
const SUBMISSIONS = size(200, 1000);
const CALLERS = 16;
jest.setTimeout(size(15, 30) * 60_000);

const env = { ...ownQueues('api-restart'), RATE_LIMIT_ENABLED: 'false', SHUTDOWN_GRACE_MS: '2000' };
let sites: LeadSites;
let worker: TestWorker;
let db: Db;
let apiProcess: ServiceProcess | undefined;
const runStamp = Date.now().toString(36);

beforeAll(async () => {
  sites = await startLeadSites();
  db = createDb(testConfig(env));
  worker = await startTestWorker({ types: ['crawlSite'], identity: 'api-restart-worker', overrides: env });
});

afterAll(async () => {
  await apiProcess?.kill('SIGKILL');
  await worker?.stop();
  await db?.destroy();
  await sites?.close();
});

interface Tally {
  created: Set<string>;
  fromCache: number;
  statuses: Map<number, number>;
  connectionErrors: number;
  unexpected: { status: number; retryAfter: string | null; body: string }[];
  latencies: number[];
}

test(`${SUBMISSIONS} submissions through an API SIGKILL and an API SIGTERM: every 201 job terminal, no 500`, async () => {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const auth = bearer(await new ClientRepository(db).create('storm'));
  apiProcess = await startApiProcess(port, env);
  const tally: Tally = {
    created: new Set(),
    fromCache: 0,
    statuses: new Map(),
    connectionErrors: 0,
    unexpected: [],
    latencies: [],
  };
  let next = 0;

  /** One attempt at submission i: false when the connection failed (the API is down), to try again. */
  const submitOne = async (i: number): Promise<boolean> => {
    const started = Date.now();
    let res: Response;
    try {
      res = await fetch(`${base}/api/v1/jobs/crawlSite/submit`, {
        method: 'POST',
        headers: { authorization: auth, 'content-type': 'application/json' },
        body: JSON.stringify({ payload: { url: `${sites.baseUrl}/?site=storm${runStamp}x${i}` } }),
      });
    } catch {
      // Refused or reset while the API is down: expected and counted; the caller tries again a little later.
      tally.connectionErrors++;
      await sleep(250);
      return false;
    }
    const body = await res.text().catch(() => '');
    tally.statuses.set(res.status, (tally.statuses.get(res.status) ?? 0) + 1);
    if (res.status === 201) {
      const answer = JSON.parse(body) as { job_id: string; from_cache: boolean };
      // A retry of a submission whose answer the crash cut off finds the job it made (de-duplication): the same id.
      if (answer.from_cache) tally.fromCache++;
      tally.created.add(answer.job_id);
      tally.latencies.push(Date.now() - started);
    } else if (res.status >= 500 && !(res.status === 503 && res.headers.get('retry-after'))) {
      tally.unexpected.push({ status: res.status, retryAfter: res.headers.get('retry-after'), body });
    } else if (res.status !== 503) {
      tally.unexpected.push({ status: res.status, retryAfter: null, body });
    } else {
      // 503 with Retry-After (a dependency not yet reconnected): a client tries again.
      await sleep(500);
      return false;
    }
    return true;
  };
  const storm = Promise.all(
    Array.from({ length: CALLERS }, async () => {
      while (next < SUBMISSIONS) {
        const i = next++;
        while (!(await submitOne(i)));
      }
    }),
  );

  // The restarts: a SIGKILL at a third of the storm, a SIGTERM (drain) at two thirds.
  const restarts: { signal: string; at_submission: number; down_ms: number; exit: string }[] = [];
  for (const [signal, at] of [
    ['SIGKILL', 1 / 3],
    ['SIGTERM', 2 / 3],
  ] as const) {
    await waitFor(async () => next >= SUBMISSIONS * at, 120_000, `submission ${Math.round(SUBMISSIONS * at)}`);
    const t0 = Date.now();
    const atSubmission = next;
    const exit = await apiProcess.kill(signal);
    apiProcess = await startApiProcess(port, env);
    restarts.push({ signal, at_submission: atSubmission, down_ms: Date.now() - t0, exit });
  }
  await storm;

  // Every 201 is a committed job that reaches a terminal state.
  const terminal = async () =>
    Number(
      (
        await db('jobs')
          .whereIn('id', [...tally.created])
          .whereIn('status', ['completed', 'failed', 'cancelled'])
          .count<{ count: string }[]>('* as count')
      )[0]?.count ?? 0,
    );
  await waitFor(async () => (await terminal()) === tally.created.size, size(10, 20) * 60_000, 'every 201 job terminal');
  const byStatus = await db('jobs')
    .whereIn('id', [...tally.created])
    .groupBy('status')
    .select('status')
    .count<{ status: string; count: string }[]>('* as count');

  reportFigures(
    'api-restart',
    [
      {
        submissions: SUBMISSIONS,
        jobs_201: tally.created.size,
        from_cache: tally.fromCache,
        connection_errors: tally.connectionErrors,
        answered_503: tally.statuses.get(503) ?? 0,
        answered_500: tally.statuses.get(500) ?? 0,
        unexpected: tally.unexpected.length,
        terminal: await terminal(),
        submit_p50_ms: percentile(tally.latencies, 50),
        submit_p99_ms: percentile(tally.latencies, 99),
      },
    ],
    { restarts, statuses: Object.fromEntries(tally.statuses), jobs_by_status: byStatus },
  );

  expect(restarts.map((r) => r.exit)).toEqual(['SIGKILL', '0']);
  expect(tally.statuses.get(500) ?? 0).toBe(0);
  expect(tally.unexpected).toEqual([]);
  // Every submission got its job (a retried one the same job): one id per submission.
  expect(tally.created.size).toBe(SUBMISSIONS);
  expect(byStatus.filter((r) => r.status !== 'completed')).toEqual([]);
});
