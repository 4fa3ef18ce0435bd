import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { createDb, type Db } from '../../db';
import { ClientRepository } from '../../db/repositories/clients';
import { bearer, ownQueues, testConfig, type TestApi } from '../support/api';
import {
  sleep,
  standbyWorkerProcess,
  startApiProcess,
  startWorkerProcess,
  type ServiceProcess,
} from '../support/chaos';
import { caller, type Caller } from '../support/jobs';
import { freePort, waitFor } from '../support/processes';
import { startDnsStandIn, type DnsStandIn } from '../stand-ins/dns';
import {
  cityPlaces,
  startGooglePlacesStandIn,
  type GooglePlacesStandIn,
  type StandInPlace,
} from '../stand-ins/google-places';
import { startLeadSites, type LeadSites } from '../stand-ins/lead-sites';
import { startSmtpStandIn, type SmtpStandIn } from '../stand-ins/smtp';

// Issue 40 item 2: the service on the Temporal cluster of dev/cluster (frontend 127.0.0.1:7333, two
// history processes, matching, internal worker; PostgreSQL persistence): two API processes and two
// worker processes of the service (the production entrypoints, as child processes on this run's
// queues), against stand-in providers. The cluster's server processes are dev/cluster's: a test
// SIGKILLs one by its pid file and `dev/cluster up temporal` starts it again.
jest.setTimeout(15 * 60_000);

const repo = path.join(__dirname, '../..');
const stackDir = process.env.STACK_DIR ?? path.join(repo, '.stack');
const FRONTEND = '127.0.0.1:7333';
const KEY = 'AIzaStandInKey-cluster-0123456789';
const MAIL_DOMAIN = 'cluster-campaign.test';
const CITIES = ['Leeds', 'York', 'Manchester', 'Bradford', 'Sheffield'];
const run = promisify(execFile);

let sites: LeadSites;
let places: GooglePlacesStandIn;
let dns: DnsStandIn;
let smtp: SmtpStandIn;
let db: Db;
let env: Record<string, string>;
const workers: (ServiceProcess | undefined)[] = [];
const apis: { port: number; process?: ServiceProcess }[] = [];

/** `dev/cluster up temporal`: installs and starts what is missing of the cluster, reuses what runs. */
const clusterUp = () =>
  run('bash', [path.join(repo, 'dev/cluster'), 'up', 'temporal'], { cwd: repo, timeout: 15 * 60_000 });
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const serverPid = (service: string) =>
  Number(readFileSync(path.join(stackDir, 'cluster/run', `temporal-${service}.pid`), 'utf8').trim());

/** Each city's bakery has a mail domain of its own (the SMTP stand-in knows the mailbox 'owner'). */
const mailDomain = (city: string) => `${city.toLowerCase()}.${MAIL_DOMAIN}`;

/** A business of `city`: the first with a site of its own naming one person's address, the second without a site. */
async function cityBusinesses(city: string): Promise<StandInPlace[]> {
  const [withSite, without] = cityPlaces(city, 'bakery', 2) as [StandInPlace, StandInPlace];
  const { websiteUri: _none, ...bare } = without;
  return [
    {
      ...withSite,
      id: `ChIJcluster${city}1`,
      displayName: { text: `${city} Crust`, languageCode: 'en' },
      websiteUri: await sites.ownHost({ emails: `owner@${mailDomain(city)}` }),
      photos: [],
      reviews: [],
    },
    {
      ...bare,
      id: `ChIJcluster${city}2`,
      displayName: { text: `${city} Offline`, languageCode: 'en' },
      photos: [],
      reviews: [],
    },
  ];
}

beforeAll(async () => {
  await clusterUp();
  [sites, smtp] = await Promise.all([startLeadSites(), startSmtpStandIn({ catchAllDomain: 'catchall.test' })]);
  dns = await startDnsStandIn({
    ...Object.fromEntries(
      CITIES.map((city) => [mailDomain(city), { mx: [{ exchange: `mx.${MAIL_DOMAIN}`, priority: 10 }] }]),
    ),
    [`mx.${MAIL_DOMAIN}`]: { a: [smtp.address] },
  });
  places = await startGooglePlacesStandIn({
    apiKey: KEY,
    byCity: true,
    places: (await Promise.all(CITIES.map(cityBusinesses))).flat(),
  });
  env = {
    ...ownQueues('cluster'),
    TEMPORAL_ADDRESS: FRONTEND,
    USER_URL_ALLOW_HOSTS: '127.0.0.0/8',
    SITE_DELAY_MS: '0',
    GOOGLE_PLACES_BASE_URL: places.baseUrl,
    GOOGLE_PLACES_API_KEY: KEY,
    DNS_SERVERS: dns.server,
    SMTP_PROBE_PORT: String(smtp.port),
    SMTP_HELO_NAME: 'probe.leadjobs.test',
    SHUTDOWN_GRACE_MS: '2000',
  };
  db = createDb(testConfig(env));
  const [w1, w2] = await Promise.all([
    startWorkerProcess('cluster-worker-1', env),
    startWorkerProcess('cluster-worker-2', env),
  ]);
  workers.push(w1, w2);
  for (let i = 0; i < 2; i++) apis.push({ port: await freePort() });
  await Promise.all(
    apis.map(async (a) => {
      a.process = await startApiProcess(a.port, env);
    }),
  );
});

afterAll(async () => {
  await Promise.all([...apis.map((a) => a.process?.kill('SIGTERM')), ...workers.map((w) => w?.kill('SIGTERM'))]);
  await db?.destroy();
  await Promise.all([sites?.close(), places?.close(), dns?.close(), smtp?.close()]);
  // A history process a test killed is running again for whatever comes next.
  await clusterUp();
});

/**
 * A GET's JSON. The API processes run with the per-client rate limit on (the third test checks
 * it): a 429 is waited out as its Retry-After says, as a client does.
 */
async function read<T = Record<string, unknown>>(c: Caller, urlPath: string): Promise<T> {
  for (;;) {
    const res = await c.get(urlPath);
    if (res.status === 200) return c.json<T>(res);
    if (res.status !== 429) throw new Error(`GET ${urlPath}: ${res.status} ${await res.text()}`);
    await sleep(Math.min(5, Number(res.headers.get('retry-after') ?? 1)) * 1000);
  }
}

/** Polls the job's status once a second (within the rate limit) until it is one of `statuses`. */
async function statusOf(
  c: Caller,
  jobId: string,
  statuses: string[],
  timeoutMs: number,
): Promise<Record<string, unknown>> {
  let last: Record<string, unknown> = {};
  await waitFor(
    async () => {
      last = await read(c, `/api/v1/jobs/${jobId}/status`);
      if (statuses.includes(String(last.status))) return true;
      await sleep(800);
      return false;
    },
    timeoutMs,
    `job ${jobId} ${statuses.join('|')}`,
  );
  return last;
}

const apiOf = (i: number): TestApi => ({ url: `http://127.0.0.1:${apis[i % 2]?.port}` }) as TestApi;
async function newCallers(name: string): Promise<[Caller, Caller]> {
  const auth = bearer(await new ClientRepository(db).create(name));
  return [caller(apiOf(0), auth), caller(apiOf(1), auth)];
}

test('a 5-location campaign (maps -> site -> verify) completes while a worker process and a history process are killed and restarted: every lead once, nothing lost', async () => {
  const [c] = await newCallers('cluster campaign');
  // Warm before the kill, so the worker is back within seconds (loading the project takes a minute).
  const spare = await standbyWorkerProcess('cluster-worker-1b', env);
  const created = await c.post('/api/v1/campaigns', {
    name: 'bakeries on the cluster',
    search_terms: ['bakery'],
    locations: CITIES.map((city) => ({ city, country: 'GB' })),
    max_results_per_location: 5,
    workflow: { enabled: true, site: { max_pages: 3 }, verify: { smtp_check: true } },
  });
  expect({ status: created.status, body: created.status === 201 ? '' : await created.text() }).toEqual({
    status: 201,
    body: '',
  });
  const { campaign_id: id } = await c.json<{ campaign_id: string }>(created);

  // Mid-run (a location job has started): SIGKILL worker 1 and the first history process.
  await waitFor(
    async () => (await read<{ jobs: unknown[] }>(c, `/api/v1/jobs/crawlMaps/campaigns/${id}/jobs`)).jobs.length > 0,
    120_000,
    'the first location job',
  );
  const historyPid = serverPid('history-1');
  process.kill(historyPid, 'SIGKILL');
  expect(await workers[0]?.kill('SIGKILL')).toBe('SIGKILL');
  workers[0] = await spare.start();
  await waitFor(async () => !alive(historyPid), 30_000, 'the killed history process to be gone');
  await clusterUp();
  expect(serverPid('history-1')).not.toBe(historyPid);

  let record: Record<string, unknown> = {};
  await waitFor(
    async () => {
      record = await read(c, `/api/v1/campaigns/${id}`);
      if (record.status !== 'running') return true;
      await sleep(800);
      return false;
    },
    10 * 60_000,
    'the campaign to end',
  );
  expect(record).toMatchObject({
    status: 'completed',
    summary: { pending: 0, submitted: 0, completed: 5, failed: 0, skipped: 0 },
    totals: { businesses: 10, emails_found: 5, valid_emails: 5 },
  });
  const items = await read<{
    jobs: { job_id: string; search_string: string; status: string; results_count: number }[];
  }>(c, `/api/v1/jobs/crawlMaps/campaigns/${id}/jobs`);
  // One job per location, each with its two businesses: none lost, none run twice.
  expect(items.jobs.map((j) => [j.search_string, j.status, j.results_count]).sort()).toEqual(
    CITIES.map((city) => [`bakery in ${city}, GB`, 'completed', 2]).sort(),
  );
  const names: string[] = [];
  for (const job of items.jobs) {
    const body = await read<{ businesses: { business_name: string }[] }>(
      c,
      `/api/v1/jobs/crawlMaps/campaigns/${id}/jobs/${job.job_id}/results?wait=false`,
    );
    for (const b of body.businesses) names.push(b.business_name);
  }
  expect(names.sort()).toEqual(CITIES.flatMap((city) => [`${city} Crust`, `${city} Offline`]).sort());
});

test('submissions spread over both API processes while one is SIGKILLed and restarted: every 201 job completes, one job per submission', async () => {
  const clients = await Promise.all([0, 1, 2].map((n) => newCallers(`cluster storm ${n}`)));
  const SUBMISSIONS = 45; // 15 per client: under the burst, so the rate limit answers none of them
  const created = new Map<number, string>();
  let connectionErrors = 0;
  let next = 0;
  const submitOne = async (i: number, attempt: number): Promise<boolean> => {
    const c = (clients[i % 3] as [Caller, Caller])[(i + attempt) % 2] as Caller;
    try {
      const res = await c.post('/api/v1/jobs/crawlSite/submit', {
        payload: { url: `${sites.baseUrl}/?site=cluster-storm-${process.pid}-${i}` },
      });
      if (res.status !== 201) throw new Error(`submission ${i}: ${res.status} ${await res.text()}`);
      created.set(i, (await c.json<{ job_id: string }>(res)).job_id);
      return true;
    } catch (err) {
      if (err instanceof Error && err.message.startsWith('submission')) throw err;
      // The process that was asked is down: the next attempt goes to the other one.
      connectionErrors++;
      return false;
    }
  };
  const storm = Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < SUBMISSIONS) {
        const i = next++;
        for (let attempt = 0; !(await submitOne(i, attempt)); attempt++) await sleep(100);
      }
    }),
  );
  await waitFor(async () => next >= SUBMISSIONS / 3, 120_000, 'a third of the submissions');
  const first = apis[0] as { port: number; process?: ServiceProcess };
  expect(await first.process?.kill('SIGKILL')).toBe('SIGKILL');
  first.process = await startApiProcess(first.port, env);
  await storm;

  expect(created.size).toBe(SUBMISSIONS);
  expect(new Set(created.values()).size).toBe(SUBMISSIONS);
  for (const [i, jobId] of created) {
    const owner = (clients[i % 3] as [Caller, Caller])[0];
    expect((await statusOf(owner, jobId, ['completed', 'failed', 'cancelled'], 5 * 60_000)).status).toBe('completed');
  }
  console.log(`cluster storm: ${SUBMISSIONS} submissions, ${connectionErrors} connection errors while API 1 was down`);
});

test('the per-client rate limit is one counter across both API processes: requests to either take from the same minute window, and a minute of allowance plus a burst at once over both is held to the allowance', async () => {
  const config = testConfig();
  const burst = config.RATE_LIMIT_BURST;
  const remaining = (r: Response) => Number(r.headers.get('x-ratelimit-remaining'));
  // One at a time, alternating processes (fewer than the burst): the minute window counts down by
  // one whichever process answers. Two counters would answer 99, 99, 98, 98, ...
  const [a, b] = await newCallers('cluster rate limit sequential');
  const sequential: number[] = [];
  for (let i = 0; i < burst / 2; i++) {
    const res = await (i % 2 === 0 ? a : b).get('/api/v1/jobs/list');
    expect(res.status).toBe(200);
    sequential.push(remaining(res));
  }
  expect(sequential).toEqual(Array.from({ length: burst / 2 }, (_, i) => config.RATE_LIMIT_PER_MINUTE - 1 - i));

  // A minute's allowance and a burst more, at once over both (60 each: under the minute limit of
  // either process alone). Each admitted request took its own point of the one counter (no two
  // answers show the same remaining count), the first burst passed, and at most the minute's
  // allowance did: the rest are 429 with Retry-After.
  const [c, d] = await newCallers('cluster rate limit burst');
  const total = config.RATE_LIMIT_PER_MINUTE + burst;
  const answers = await Promise.all(
    Array.from({ length: total }, (_, i) => (i % 2 === 0 ? c : d).get('/api/v1/jobs/list')),
  );
  expect(answers.map((r) => r.status).filter((st) => st !== 200 && st !== 429)).toEqual([]);
  const admitted = answers.filter((r) => r.status === 200).map(remaining);
  const limited = answers.filter((r) => r.status === 429);
  expect(new Set(admitted).size).toBe(admitted.length);
  expect(admitted.length).toBeGreaterThanOrEqual(burst);
  expect(admitted.length).toBeLessThanOrEqual(config.RATE_LIMIT_PER_MINUTE);
  expect(limited.length).toBe(total - admitted.length);
  expect(limited.every((r) => r.headers.get('retry-after') !== null)).toBe(true);
});

test('a cancel reaches a running activity on either worker process within 3 s', async () => {
  const [c] = await newCallers('cluster cancel');
  // crawlSite jobs on a site that answers after two minutes: each holds one worker's activity.
  const byWorker = new Map<string, { jobId: string; url: string }>();
  for (let i = 0; i < 12 && byWorker.size < 2; i++) {
    const url = `${sites.baseUrl}/?site=cluster-cancel-${process.pid}-${i}&delay_ms=120000`;
    const res = await c.post('/api/v1/jobs/crawlSite/submit', { payload: { url } });
    expect(res.status).toBe(201);
    const { job_id } = await c.json<{ job_id: string }>(res);
    const status = await statusOf(c, job_id, ['processing'], 60_000);
    await waitFor(async () => sites.requests(url).length > 0, 60_000, `job ${i}'s page request`);
    const worker = String(status.worker_id);
    if (byWorker.has(worker)) await c.del(`/api/v1/jobs/${job_id}`);
    else byWorker.set(worker, { jobId: job_id, url });
  }
  // Two running jobs, one on each worker process.
  expect(byWorker.size).toBe(2);
  for (const { jobId, url } of byWorker.values()) {
    const before = Date.now();
    expect((await c.del(`/api/v1/jobs/${jobId}`)).status).toBe(200);
    await waitFor(
      async () => sites.requests(url).some((r) => r.abortedAt !== undefined),
      10_000,
      'the worker to hang up on the page',
    );
    const abortedAt = sites.requests(url).find((r) => r.abortedAt !== undefined)?.abortedAt as number;
    expect(abortedAt - before).toBeLessThan(3000);
    expect((await statusOf(c, jobId, ['cancelled', 'completed', 'failed'], 10_000)).status).toBe('cancelled');
  }
});
