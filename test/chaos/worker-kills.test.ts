import { bearer, ownQueues, startTestApi, type TestApi } from '../support/api';
import {
  FULL,
  reportFigures,
  size,
  standbyWorkerProcess,
  startWorkerProcess,
  type ServiceProcess,
} from '../support/chaos';
import { caller, type Caller } from '../support/jobs';
import { waitFor } from '../support/processes';
import { startDnsStandIn, type DnsStandIn } from '../stand-ins/dns';
import {
  leedsBakeries,
  startGooglePlacesStandIn,
  type GooglePlacesStandIn,
  type StandInPlace,
} from '../stand-ins/google-places';
import { startLeadSites, type LeadSites } from '../stand-ins/lead-sites';
import { startSmtpStandIn, type SmtpStandIn } from '../stand-ins/smtp';
import { startSocialStandIn, type SocialStandIn } from '../stand-ins/social';
import { startViesStandIn, type ViesStandIn } from '../stand-ins/vies';
import { startWebsite, type Website } from '../stand-ins/website';

// Issue 17 item 1: mixed jobs of every type with stand-ins (crawlSite, crawlCompanyData, crawlVerify,
// crawlMaps, crawlPeople, crawlPublicSocial; crawlLanding is left out: a Chromium per page makes a
// storm of it minutes long) while the production worker process (workers/main.ts) is SIGKILLed three
// times and restarted each time. Every job reaches a terminal state, none is lost or done twice
// (one job row per submission, one result set, no event twice), and what GET results answers is
// byte-equal to a calm run of the same payloads (another client, no kills) once the fields that are
// per run by nature are set aside (PER_RUN below). Sizes: 40 jobs in npm test, 200 with CHAOS=1.
const JOBS = size(40, 200);
const KILLS = 3;
jest.setTimeout(size(20, 40) * 60_000);

/**
 * Fields of GET /results that differ between two runs of the same payload whatever happens: the
 * job's id, worker and times, the registry's request times and durations, and the client's de-duplication store
 * (a person's contact record id, and whether the client's store already held them, depend on which
 * of the client's jobs ran first). Besides, the job and client ids inside strings (a hosted
 * picture's URL names the client's bucket) are replaced.
 */
const PER_RUN = new Set([
  'job_id',
  'worker_id',
  'created_at',
  'started_at',
  'completed_at',
  'processing_time_seconds',
  // crawlCompanyData: how long the registry took to answer.
  'query_time_ms',
  // crawlCompanyData: when the registry was asked, and so when its cached answer expires.
  'request_date',
  'retrieved_at',
  'cache_expires_at',
  'canonical_id',
  'dedupe_unique',
]);

const KEY = 'AIzaStandInKey-0123456789';
let sites: LeadSites;
/** The crawlSite jobs' sites on 127.0.0.2: their leads are not the crawlPeople site's company (127.0.0.1), which the client's IDAP would name after whichever crawl finished first. */
let siteBase: string;
let website: Website;
let places: GooglePlacesStandIn;
let vies: ViesStandIn;
let smtp: SmtpStandIn;
let dns: DnsStandIn;
let social: SocialStandIn;
let api: TestApi;
let env: Record<string, string>;
let worker: ServiceProcess | undefined;
const spares: ServiceProcess[] = [];

beforeAll(async () => {
  [sites, website, vies, social] = await Promise.all([
    startLeadSites(),
    startWebsite(),
    startViesStandIn(),
    startSocialStandIn(),
  ]);
  siteBase = new URL(await sites.ownHost()).origin;
  smtp = await startSmtpStandIn({ catchAllDomain: 'catchall.test' });
  dns = await startDnsStandIn({
    'verify.test': { mx: [{ exchange: 'mx.verify.test', priority: 10 }] },
    'mx.verify.test': { a: [smtp.address] },
  });
  // Bakeries of their own (no photos: a photo's stored copy is keyed by client), one per maps job.
  const template = leedsBakeries(1)[0] as StandInPlace;
  const bakeries = Array.from({ length: JOBS }, (_, i) => ({
    ...template,
    id: `ChIJchaosbakery${String(i).padStart(6, '0')}`,
    displayName: { text: bakeryName(i), languageCode: 'en' },
    photos: [],
    reviews: [],
  }));
  places = await startGooglePlacesStandIn({ apiKey: KEY, places: bakeries });
  env = {
    ...ownQueues('kills'),
    RATE_LIMIT_ENABLED: 'false',
    USER_URL_ALLOW_HOSTS: '127.0.0.0/8',
    SITE_DELAY_MS: '0',
    VIES_BASE_URL: vies.baseUrl,
    // Every run asks the registry itself (no answer cached by the calm run).
    REGISTRY_CACHE_TTL_SECONDS: '0',
    DNS_SERVERS: dns.server,
    SMTP_PROBE_PORT: String(smtp.port),
    SMTP_HELO_NAME: 'probe.leadjobs.test',
    SMTP_FROM: 'verify@leadjobs.test',
    GOOGLE_PLACES_BASE_URL: places.baseUrl,
    GOOGLE_PLACES_API_KEY: KEY,
    SOCIAL_BASE_URL: social.baseUrl,
    SOCIAL_REQUESTS_PER_HOUR: '36000',
    SOCIAL_DELAY_MIN_MS: '0',
    SOCIAL_DELAY_MAX_MS: '0',
    SOCIAL_RETRY_WINDOW_SECONDS: '3',
  };
  api = await startTestApi(env);
});

afterAll(async () => {
  await worker?.kill('SIGKILL');
  await Promise.all(spares.map((p) => p.kill('SIGKILL')));
  await api?.close();
  await Promise.all([
    sites?.close(),
    website?.close(),
    places?.close(),
    vies?.close(),
    smtp?.close(),
    dns?.close(),
    social?.close(),
  ]);
});

function bakeryName(i: number): string {
  return `Chaos Bakery ${String(i).padStart(4, '0')}`;
}

/** Job i of the mix: the types in turn, each payload unique (the 24 h submit de-duplication stays out of the way). */
function job(i: number): { type: string; payload: Record<string, unknown> } {
  switch (i % 6) {
    // A page that takes its time, so that kills find crawls in flight.
    case 0:
      return { type: 'crawlSite', payload: { url: `${siteBase}/?site=kill${i}&leads=${1 + (i % 3)}&delay_ms=1500` } };
    case 1:
      return { type: 'crawlCompanyData', payload: { mode: 'vat', vat_number: `DE${100_000_000 + i}` } };
    case 2:
      return {
        type: 'crawlVerify',
        payload:
          i % 4 === 0
            ? { email: `nobody${i}@verify.test` }
            : { emails: ['alice@verify.test', `someone${i}@verify.test`, `grey${i}@verify.test`] },
      };
    case 3:
      return { type: 'crawlMaps', payload: { search_query: bakeryName(i), max_results: 1, dedupe_enabled: false } };
    case 4:
      return { type: 'crawlPeople', payload: { url: `${website.baseUrl}/`, max_results: 5 + Math.floor(i / 6) } };
    default:
      return { type: 'crawlPublicSocial', payload: { username: `load${9000 + i}` } };
  }
}

interface Outcome {
  type: string;
  jobId: string;
  status: string;
  resultsCount: number;
  /** GET /results (completed) or the status's error (failed), per-run fields set aside. */
  answer: string;
  events: string[];
  resultRows: number;
}

async function submitAll(c: Caller): Promise<{ type: string; jobId: string }[]> {
  const out: { type: string; jobId: string }[] = [];
  for (let i = 0; i < JOBS; i += 10) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(10, JOBS - i) }, async (_, k) => {
        const { type, payload } = job(i + k);
        let res = await c.post(`/api/v1/jobs/${type}/submit`, { payload });
        // A 503 says retry (a busy Temporal did not answer the start within 5 s): a client does.
        for (let attempt = 1; res.status === 503 && res.headers.get('retry-after') && attempt < 10; attempt++) {
          await new Promise((r) => setTimeout(r, 1000));
          res = await c.post(`/api/v1/jobs/${type}/submit`, { payload });
        }
        if (res.status !== 201)
          throw new Error(`submit ${type} ${JSON.stringify(payload)}: ${res.status} ${await res.text()}`);
        return { type, jobId: (await c.json<{ job_id: string }>(res)).job_id };
      }),
    );
    out.push(...batch);
  }
  return out;
}

const TERMINAL = ['completed', 'failed', 'cancelled'];

async function terminalCount(ids: string[]): Promise<number> {
  const [row] = await api.deps
    .db('jobs')
    .whereIn('id', ids)
    .whereIn('status', TERMINAL)
    .count<{ count: string }[]>('* as count');
  return Number(row?.count ?? 0);
}

/** Where two answers differ (JSON paths with both values, the first few), for a readable failure. */
function differences(a: unknown, b: unknown, at = '$', out: string[] = []): string[] {
  if (out.length >= 5) return out;
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)]))
      differences((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], `${at}.${key}`, out);
  } else if (JSON.stringify(a) !== JSON.stringify(b)) {
    out.push(`${at}: calm ${JSON.stringify(a)?.slice(0, 120)} / chaos ${JSON.stringify(b)?.slice(0, 120)}`);
  }
  return out;
}

function normalise(value: unknown, ids: string[]): unknown {
  if (Array.isArray(value)) return value.map((v) => normalise(v, ids));
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, PER_RUN.has(k) ? '<per-run>' : normalise(v, ids)]),
    );
  }
  if (typeof value === 'string') return ids.reduce((s, id) => s.split(id).join('<id>'), value);
  return value;
}

async function outcomes(c: Caller, clientId: string, jobs: { type: string; jobId: string }[]): Promise<Outcome[]> {
  const db = api.deps.db;
  return Promise.all(
    jobs.map(async ({ type, jobId }) => {
      const status = await c.json(await c.get(`/api/v1/jobs/${jobId}/status`));
      // The client's media bucket is named after its id (lib/storage.ts bucketFor).
      const ids = [jobId, clientId, clientId.toLowerCase().replace(/[^a-z0-9-]/g, '-')];
      let answer: string;
      if (status.status === 'completed') {
        const res = await c.get(`/api/v1/jobs/${jobId}/results`);
        answer = JSON.stringify(normalise(await res.json(), ids));
      } else {
        answer = JSON.stringify(normalise({ status: status.status, error: status.error_message }, ids));
      }
      const events = (await db('events').where({ job_id: jobId }).orderBy('id').pluck('name')) as string[];
      const [rows] = await db('job_results').where({ job_id: jobId }).count<{ count: string }[]>('* as count');
      return {
        type,
        jobId,
        status: String(status.status),
        resultsCount: Number(status.results_count ?? 0),
        answer,
        events,
        resultRows: Number(rows?.count ?? 0),
      };
    }),
  );
}

/** Submits the mix as a new client and waits for every job; `chaos` kills the worker KILLS times meanwhile. */
async function run(
  name: string,
  chaos: boolean,
): Promise<{
  outcomes: Outcome[];
  kills: { at_terminal: number; in_flight: number; restart_ms: number }[];
  ms: number;
}> {
  const creds = await api.newClient(name);
  const c = caller(api, bearer(creds));
  worker = await startWorkerProcess(`${name}-worker-0`, env);
  // The replacements are loaded and connected first (warm spares, not polling), so each restart takes seconds.
  const ready = chaos
    ? await Promise.all(Array.from({ length: KILLS }, (_, k) => standbyWorkerProcess(`${name}-worker-${k + 1}`, env)))
    : [];
  spares.push(...ready.map((s) => s.process));
  const started = Date.now();
  const jobs = await submitAll(c);
  const ids = jobs.map((j) => j.jobId);
  const kills: { at_terminal: number; in_flight: number; restart_ms: number }[] = [];
  for (const [index, spare] of ready.entries()) {
    const k = index + 1;
    // Kill at a quarter, half and three quarters of the jobs done, with work in flight.
    const target = Math.floor((JOBS * k) / (KILLS + 1));
    await waitFor(
      async () => (await terminalCount(ids)) >= target,
      size(10, 20) * 60_000,
      `${target} jobs terminal before kill ${k}`,
    );
    const processing = async () =>
      Number(
        (
          await api.deps
            .db('jobs')
            .whereIn('id', ids)
            .where({ status: 'processing' })
            .count<{ count: string }[]>('* as count')
        )[0]?.count ?? 0,
      );
    await waitFor(async () => (await processing()) > 0, 60_000, `a job in flight for kill ${k}`);
    const inFlight = await processing();
    const atTerminal = await terminalCount(ids);
    await worker.kill('SIGKILL');
    const t0 = Date.now();
    worker = await spare.start();
    kills.push({ at_terminal: atTerminal, in_flight: inFlight, restart_ms: Date.now() - t0 });
  }
  // A killed attempt is noticed by its heartbeat (20 s) or step timeout (30 s), then retried.
  await waitFor(
    async () => (await terminalCount(ids)) === ids.length,
    size(10, 20) * 60_000,
    `all ${name} jobs terminal`,
  );
  const ms = Date.now() - started;
  await worker.kill('SIGTERM');
  worker = undefined;
  // Lost or duplicated jobs: the client has exactly one job row per submission.
  const [count] = await api.deps
    .db('jobs')
    .where({ client_id: creds.client_id })
    .count<{ count: string }[]>('* as count');
  expect(Number(count?.count)).toBe(JOBS);
  return { outcomes: await outcomes(c, creds.client_id, jobs), kills, ms };
}

test(`${JOBS} mixed jobs through ${KILLS} worker SIGKILLs: all terminal, none lost or duplicated, results equal to a calm run`, async () => {
  const calm = await run('calm', false);
  const chaos = await run('chaos', true);
  expect(chaos.kills).toHaveLength(KILLS);
  // Each kill found work in flight.
  expect(chaos.kills.every((k) => k.in_flight > 0)).toBe(true);

  const duplicatedEvents = chaos.outcomes.filter((o) => new Set(o.events).size !== o.events.length);
  const different = chaos.outcomes.filter(
    (o, i) => o.answer !== calm.outcomes[i]?.answer || o.status !== calm.outcomes[i]?.status,
  );
  // One stored result per completed job, and the same count of results as in the calm run.
  const resultRowsDiffer = chaos.outcomes.filter(
    (o, i) =>
      o.resultRows !== calm.outcomes[i]?.resultRows ||
      o.resultsCount !== calm.outcomes[i]?.resultsCount ||
      o.resultRows !== (o.status === 'completed' ? 1 : 0),
  );
  const types = [...new Set(chaos.outcomes.map((o) => o.type))];
  reportFigures(
    'worker-kills',
    types.map((type) => {
      const mine = chaos.outcomes.filter((o) => o.type === type);
      return {
        type,
        jobs: mine.length,
        terminal: mine.filter((o) => TERMINAL.includes(o.status)).length,
        completed: mine.filter((o) => o.status === 'completed').length,
        equal_to_calm: mine.filter((o) => !different.includes(o)).length,
        duplicated_events: mine.filter((o) => duplicatedEvents.includes(o)).length,
        result_rows_off: mine.filter((o) => resultRowsDiffer.includes(o)).length,
      };
    }),
    { jobs: JOBS, kills: chaos.kills, calm_ms: calm.ms, chaos_ms: chaos.ms, per_run_fields: [...PER_RUN], full: FULL },
  );

  // Every job finished, and the same way as in the calm run.
  expect(chaos.outcomes.filter((o) => !TERMINAL.includes(o.status))).toEqual([]);
  expect(calm.outcomes.filter((o) => o.status !== 'completed').map((o) => o.answer)).toEqual([]);
  // A job whose worker was killed in each of its attempts still completes (workflows/worker-loss.ts); a failure shows its error_message.
  expect(
    chaos.outcomes
      .filter((o) => o.status !== 'completed')
      .map((o) => ({ type: o.type, status: o.status, answer: o.answer })),
  ).toEqual([]);
  expect(duplicatedEvents.map((o) => [o.type, o.events])).toEqual([]);
  for (const o of chaos.outcomes)
    expect(o.events.filter((e) => ['job.completed', 'job.failed', 'job.cancelled'].includes(e))).toHaveLength(1);
  expect(
    different.map((o) => ({
      type: o.type,
      differences: differences(
        JSON.parse(calm.outcomes[chaos.outcomes.indexOf(o)]?.answer ?? 'null'),
        JSON.parse(o.answer),
      ),
    })),
  ).toEqual([]);
  expect(resultRowsDiffer.map((o) => ({ type: o.type, rows: o.resultRows, results_count: o.resultsCount }))).toEqual(
    [],
  );
});
