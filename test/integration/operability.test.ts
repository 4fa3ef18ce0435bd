import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import path from 'node:path';
import { startServer } from '../../api/server';
import { CATALOG } from '../../jobs';
import { bearer, ownQueues, startTestApi, testConfig, type TestApi } from '../support/api';
import { caller, waitForStatus, type Caller } from '../support/jobs';
import { freePort, waitFor } from '../support/processes';
import { startViesStandIn, type ViesStandIn } from '../stand-ins/vies';

// Operators' view: GET /api/v1/system/queues (Temporal's task-queue statistics and the caller's
// jobs), the API's Prometheus metrics at /metrics, and the production worker's metrics endpoint
// (WORKER_METRICS_ADDRESS), with a real worker process against the VIES stand-in.
jest.setTimeout(120_000);

const root = path.join(__dirname, '../..');

interface QueueSide {
  backlog: number;
  pollers: number;
  rate_limit_per_second: number | null;
}
interface QueueRow {
  name: string;
  role: string;
  job_types: string[];
  workflow: QueueSide | null;
  activity: QueueSide;
}
interface QueueStats {
  success: boolean;
  queues: QueueRow[];
  jobs: Record<string, Record<string, number>>;
}

let vies: ViesStandIn;
let api: TestApi;
let a: Caller;
let b: Caller;
let worker: ChildProcess | undefined;
let workerMetrics: string;
const queues = ownQueues('ops');
const prefix = queues.TASK_QUEUE_PREFIX ?? '';
// The operator's token for /metrics on the API port (without it, or METRICS_PORT, they are not served there).
const METRICS_TOKEN = 'operability-metrics-token-0123';
const scrape = { headers: { authorization: `Bearer ${METRICS_TOKEN}` } };
const overrides = () => ({
  RATE_LIMIT_ENABLED: 'false',
  USER_URL_ALLOW_HOSTS: '127.0.0.1',
  VIES_BASE_URL: vies.baseUrl,
  METRICS_TOKEN,
  ...queues,
});

/** The production worker (workers/main.ts) in its own process, with its metrics endpoint on. */
async function startWorkerProcess(metricsAddress: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'workers/main.ts'], {
    cwd: root,
    env: {
      ...process.env,
      ...overrides(),
      WORKER_METRICS_ADDRESS: metricsAddress,
      WORKER_ID: 'ops-worker',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return child;
}

function rawRequest(
  method: string,
  path: string,
  auth?: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${api.url}${path}`, { method, headers: auth ? { authorization: auth } : {} }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.once('error', reject);
    req.end();
  });
}

const vat = () => `FR${String(Math.floor(Math.random() * 1e11)).padStart(11, '0')}`;

async function stats(c: Caller): Promise<QueueStats> {
  const res = await c.get('/api/v1/system/queues');
  expect(res.status).toBe(200);
  return c.json<QueueStats>(res);
}

const queue = (s: QueueStats, name: string) => s.queues.find((q) => q.name === name);

beforeAll(async () => {
  vies = await startViesStandIn();
  api = await startTestApi(overrides());
  a = caller(api, bearer(await api.newClient('ops a')));
  b = caller(api, bearer(await api.newClient('ops b')));
  workerMetrics = `127.0.0.1:${await freePort()}`;
  worker = await startWorkerProcess(workerMetrics);
  // Ready once Temporal reports the worker polling the type's queue.
  await waitFor(
    async () => (queue(await stats(a), `${prefix}-crawl-company-data`)?.workflow?.pollers ?? 0) > 0,
    60_000,
    'the worker polling',
  );
});

afterAll(async () => {
  if (worker && worker.exitCode === null) {
    const exited = new Promise((r) => worker?.once('exit', r));
    worker.kill('SIGTERM');
    await exited;
  }
  await api?.close();
  await vies?.close();
});

describe('GET /api/v1/system/queues', () => {
  test("every queue of the deployment with Temporal's pollers and limits; the caller's jobs by type and status, not another client's", async () => {
    const res = await a.post('/api/v1/jobs/crawlCompanyData/submit', { payload: { mode: 'vat', vat_number: vat() } });
    expect(res.status).toBe(201);
    const { job_id } = await a.json<{ job_id: string }>(res);
    expect((await waitForStatus(a, job_id, ['completed', 'failed'], 60_000)).status).toBe('completed');

    const mine = await stats(a);
    const jobQueue = queue(mine, `${prefix}-crawl-company-data`);
    expect(jobQueue).toMatchObject({ role: 'job', job_types: ['crawlCompanyData'] });
    expect(jobQueue?.workflow?.pollers).toBeGreaterThan(0);
    expect(jobQueue?.activity.pollers).toBeGreaterThan(0);
    // The registries' queues are listed with the rate their workers poll with (the catalog's).
    const sec = CATALOG.crawlCompanyData.activityQueues?.(testConfig(overrides())).find((q) => q.key === 'sec');
    const secQueue = queue(mine, `${prefix}-${sec?.queue ?? '?'}`);
    expect(secQueue).toMatchObject({ role: 'activity', workflow: null });
    // crawlPeople asks the registries too (a company name resolved by a registry search): one queue, one limit.
    expect(secQueue?.job_types.sort()).toEqual(['crawlCompanyData', 'crawlPeople']);
    expect(mine.queues.filter((q) => q.name === secQueue?.name)).toHaveLength(1);
    expect(secQueue?.activity.rate_limit_per_second).toBeCloseTo(sec?.perSecond ?? -1, 5);
    expect(queue(mine, `${prefix}-leads`)?.role).toBe('leads');
    expect(queue(mine, `${prefix}-mail`)?.workflow?.pollers).toBeGreaterThan(0);
    expect(mine.jobs.crawlCompanyData).toEqual({ queued: 0, processing: 0, completed: 1, failed: 0, cancelled: 0 });
    expect(mine.jobs.crawlSite?.completed).toBe(0);

    const theirs = await stats(b);
    expect(theirs.jobs.crawlCompanyData?.completed).toBe(0);
  });

  test('a job nobody polls for shows as backlog on its queue', async () => {
    // A second deployment (its own queue prefix) without a worker.
    const idle = ownQueues('ops-idle');
    const lonely = await startTestApi({ ...overrides(), ...idle });
    try {
      const c = caller(lonely, bearer(await lonely.newClient('ops idle')));
      expect(
        (await c.post('/api/v1/jobs/crawlCompanyData/submit', { payload: { mode: 'vat', vat_number: vat() } })).status,
      ).toBe(201);
      const name = `${idle.TASK_QUEUE_PREFIX ?? ''}-crawl-company-data`;
      let seen: QueueRow | undefined;
      // Temporal's backlog figure is approximate and refreshed in the background.
      await waitFor(
        async () => {
          seen = queue(await stats(c), name);
          return (seen?.workflow?.backlog ?? 0) >= 1;
        },
        30_000,
        'the backlog to show',
      );
      expect(seen?.workflow).toMatchObject({ backlog: 1, pollers: 0 });
      expect((await stats(c)).jobs.crawlCompanyData?.queued).toBe(1);
    } finally {
      await lonely.close();
    }
  });

  test('Temporal unreachable: 503 queue service unavailable, never a 500', async () => {
    const down = await startTestApi({ ...overrides(), TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}` });
    try {
      const c = caller(down, bearer(await down.newClient('ops down')));
      const res = await c.get('/api/v1/system/queues');
      expect({ status: res.status, body: await res.json() }).toEqual({
        status: 503,
        body: { detail: 'queue service unavailable' },
      });
    } finally {
      await down.close();
    }
  });

  test('Postgres unreachable: a request answers 503 with Retry-After and the spec-shaped detail, never a 500', async () => {
    const down = await startTestApi({
      ...overrides(),
      DATABASE_URL: `postgres://leadjobs@127.0.0.1:${await freePort()}/leadjobs`,
    });
    try {
      const res = await fetch(`${down.url}/api/v1/jobs/list`, { headers: { authorization: a.auth } });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      expect(await res.json()).toEqual({ detail: 'service unavailable: the database does not answer, retry later' });
    } finally {
      await down.close();
    }
  });

  test('the route needs a credential', async () => {
    expect((await fetch(`${api.url}/api/v1/system/queues`)).status).toBe(401);
  });
});

describe('Prometheus metrics', () => {
  test('the API: request latency by route template and status, jobs submitted by type, jobs in flight and outbox lag', async () => {
    const before = await (await fetch(`${api.url}/metrics`, scrape)).text();
    const submittedBefore = Number(
      /^leadjobs_jobs_submitted_total\{type="crawlCompanyData"\} (\d+)/m.exec(before)?.[1] ?? 0,
    );
    expect((await a.get('/api/v1/jobs/00000000-0000-4000-8000-000000000000/status')).status).toBe(404);
    const res = await a.post('/api/v1/jobs/crawlCompanyData/submit', { payload: { mode: 'vat', vat_number: vat() } });
    const { job_id } = await a.json<{ job_id: string }>(res);
    await waitForStatus(a, job_id, ['completed', 'failed'], 60_000);

    const metrics = await fetch(`${api.url}/metrics`, scrape);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toContain('text/plain');
    const text = await metrics.text();
    // The route label is the template, never the job id itself.
    expect(text).toMatch(
      /^leadjobs_http_request_duration_seconds_count\{method="GET",route="\/api\/v1\/jobs\/:job_id\/status",status="404"\} [1-9]/m,
    );
    expect(text).not.toContain('00000000-0000-4000-8000-000000000000');
    expect(Number(/^leadjobs_jobs_submitted_total\{type="crawlCompanyData"\} (\d+)/m.exec(text)?.[1])).toBe(
      submittedBefore + 1,
    );
    expect(text).toMatch(/^leadjobs_outbox_pending\{outbox="search"\} \d+/m);
    expect(text).toMatch(/^leadjobs_outbox_oldest_seconds\{outbox="webhooks"\} [\d.e+-]+/m);
    expect(text).toMatch(/^# TYPE leadjobs_jobs_in_flight gauge/m);
    // No client id appears in any label.
    expect(text).not.toMatch(/cli_/);
  });

  test('METRICS_PORT moves them to a listener of their own', async () => {
    const port = await freePort();
    const server = await startServer(testConfig({ ...overrides(), PORT: '0', METRICS_PORT: String(port) }));
    try {
      const address = server.server.address();
      const apiPort = typeof address === 'object' && address ? address.port : 0;
      expect((await fetch(`http://127.0.0.1:${apiPort}/metrics`, scrape)).status).toBe(404);
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(res.status).toBe(200);
      expect(await res.text()).toMatch(/^# TYPE leadjobs_http_request_duration_seconds histogram/m);
      expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404);
    } finally {
      await server.close();
    }
  });

  test('the worker: Temporal SDK metrics, jobs finished by type and status, provider requests by outcome', async () => {
    const res = await a.post('/api/v1/jobs/crawlCompanyData/submit', { payload: { mode: 'vat', vat_number: vat() } });
    const { job_id } = await a.json<{ job_id: string }>(res);
    await waitForStatus(a, job_id, ['completed', 'failed'], 60_000);
    const text = await (await fetch(`http://${workerMetrics}/metrics`)).text();
    const finished = new RegExp(
      `^leadjobs_jobs_finished_total\\{[^}]*job_type="crawlCompanyData"[^}]*status="completed"[^}]*\\} (\\d+)`,
      'm',
    ).exec(text);
    const completedHere = await api.deps
      .db('jobs')
      .where({ type: 'crawlCompanyData', status: 'completed', worker_id: 'ops-worker' })
      .count<{ count: string }[]>('* as count');
    expect(Number(finished?.[1])).toBe(Number(completedHere[0]?.count));
    expect(text).toMatch(/^leadjobs_provider_requests_total\{[^}]*outcome="ok"[^}]*provider="vies"[^}]*\} [1-9]/m);
    expect(text).toMatch(/^temporal_activity_execution_latency_count\{/m);
  });
});

describe('methods', () => {
  test('TRACE on a known path is a 405 with Allow, on an unknown path a 404; a wrong method gets the {detail} body', async () => {
    // fetch refuses TRACE: node:http sends it.
    const trace = await rawRequest('TRACE', '/api/v1/jobs/list', a.auth);
    expect(trace.status).toBe(405);
    expect(trace.headers.allow).toContain('GET');
    expect((JSON.parse(trace.body) as { detail: string }).detail).toMatch(/TRACE not allowed/);
    expect((await rawRequest('TRACE', '/api/v1/nowhere')).status).toBe(404);
    const put = await fetch(`${api.url}/api/v1/system/health`, { method: 'PUT', headers: { authorization: a.auth } });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toContain('GET');
    expect(await put.json()).toEqual({ detail: expect.stringContaining('PUT not allowed') });
  });
});
