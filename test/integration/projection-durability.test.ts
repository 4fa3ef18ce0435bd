import { bearer, ownQueues, startTestApi, type TestApi } from '../support/api';
import { caller, waitForStatus, type Caller } from '../support/jobs';
import { waitFor } from '../support/processes';
import { startTestWorker, type TestWorker } from '../support/worker';
import { startLeadSites, type LeadSites } from '../stand-ins/lead-sites';

// Issue 38 item 8: a completed job's projection into IDAP and the lead index outlives the
// workflow's own attempts. The client's IDAP writes fail (a trigger on idap_resources raises for
// this client only, as a Postgres outage would for everyone) for longer than the workflow tries;
// the job completes all the same, the backlog shows on /metrics and in the queue statistics, and
// once the writes succeed again the leads reach IDAP and search with nothing asked of the client.
jest.setTimeout(300_000);

const METRICS_TOKEN = 'projection-metrics-token-0123456789';
// The workflow tries twice (about a second); the sweeper takes over a second after completion and
// looks every half second (backing off while it fails).
const overrides = {
  RATE_LIMIT_ENABLED: 'false',
  METRICS_TOKEN,
  PROJECTION_ATTEMPTS: '2',
  PROJECTION_SWEEP_AFTER_SECONDS: '1',
  PROJECTION_SWEEP_INTERVAL_MS: '500',
  ...ownQueues('projection'),
};

let api: TestApi;
let worker: TestWorker;
let sites: LeadSites;
let c: Caller;
let clientId: string;

beforeAll(async () => {
  sites = await startLeadSites();
  api = await startTestApi(overrides);
  worker = await startTestWorker({ types: ['crawlSite'], identity: 'projection-worker', overrides });
  const creds = await api.newClient();
  clientId = creds.client_id;
  c = caller(api, bearer(creds));
});

afterAll(async () => {
  await api.deps.db.raw('drop trigger if exists projection_test_refuse on idap_resources').catch(() => undefined);
  await worker.stop();
  await api.close();
  await sites.close();
});

/** The client's IDAP writes fail until `heal` (the trigger is this test's client's only). */
async function breakIdapWrites(): Promise<{ heal: () => Promise<void> }> {
  const db = api.deps.db;
  await db.raw(
    `create or replace function projection_test_refuse() returns trigger language plpgsql as $$
     begin
       if new.client_id = '${clientId}' then raise exception 'idap_resources unavailable (test)'; end if;
       return new;
     end $$`,
  );
  await db.raw(
    'create trigger projection_test_refuse before insert or update on idap_resources for each row execute function projection_test_refuse()',
  );
  return { heal: async () => void (await db.raw('drop trigger projection_test_refuse on idap_resources')) };
}

const businessNames = async (): Promise<string[]> => {
  const body = await c.json<{ items: { data: { name?: string } }[] }>(await c.get('/api/v1/idap/businesses?limit=500'));
  return body.items.map((b) => String(b.data.name));
};

const leadNames = async (): Promise<string[]> => {
  const res = await c.get('/api/v1/search/leads?sort_by=name&per_page=100');
  return res.status === 200 ? (await c.json<{ hits: { name: string }[] }>(res)).hits.map((h) => h.name) : [];
};

/** The API's projection backlog gauges, as an operator's Prometheus scrapes them. */
async function scrapedBacklog(): Promise<{ pending: number; oldest: number }> {
  const text = await (
    await fetch(`${api.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
  ).text();
  const value = (name: string) =>
    Number(new RegExp(`^${name}\\{outbox="projection"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  return { pending: value('leadjobs_outbox_pending'), oldest: value('leadjobs_outbox_oldest_seconds') };
}

const queueStatsProjection = async () =>
  (
    await c.json<{ projection?: { pending: number; oldest_seconds: number; given_up: number } }>(
      await c.get('/api/v1/system/queues'),
    )
  ).projection;

test("leads of a job whose projection failed past the workflow's attempts reach IDAP and search once the writes succeed again", async () => {
  const failure = await breakIdapWrites();
  const url = await sites.ownHost();
  const name = String(new URL(url).searchParams.get('site'));
  const { job_id } = await c.json<{ job_id: string }>(
    await c.post('/api/v1/jobs/crawlSite/submit', { payload: { url } }),
  );
  expect(await waitForStatus(c, job_id, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
  // The workflow has ended: its own attempts are spent, and the lead is not in IDAP.
  await api.deps.temporal.client.workflow.getHandle(`job/${job_id}`).result();
  expect(await businessNames()).toEqual([]);

  // Meanwhile the backlog is visible to the operator and to the client.
  await waitFor(async () => (await scrapedBacklog()).pending >= 1, 30_000, 'the projection backlog on /metrics');
  expect((await scrapedBacklog()).oldest).toBeGreaterThan(0);
  expect(await queueStatsProjection()).toMatchObject({ pending: 1, given_up: 0 });
  expect((await queueStatsProjection())?.oldest_seconds).toBeGreaterThan(0);

  await failure.heal();
  await waitFor(
    async () => (await businessNames()).includes(name),
    90_000,
    'the lead in IDAP after the writes succeed again',
  );
  await waitFor(async () => (await leadNames()).includes(name), 60_000, 'the lead in search');
  expect(await queueStatsProjection()).toEqual({ pending: 0, oldest_seconds: 0, given_up: 0 });
  // Projected once: the retries changed nothing more (one business, as the job found it).
  expect(await businessNames()).toEqual([name]);
});

test('a projection still failing PROJECTION_RETRY_HOURS after its job completed is given up, and counted where operator and client look', async () => {
  const failure = await breakIdapWrites();
  try {
    const url = await sites.ownHost();
    const { job_id } = await c.json<{ job_id: string }>(
      await c.post('/api/v1/jobs/crawlSite/submit', { payload: { url } }),
    );
    expect(await waitForStatus(c, job_id, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
    await api.deps.temporal.client.workflow.getHandle(`job/${job_id}`).result();
    await waitFor(async () => (await queueStatsProjection())?.pending === 1, 30_000, 'the job owed its projection');
    // A week and an hour pass (the default PROJECTION_RETRY_HOURS is 168) with the writes still failing.
    await api.deps
      .db('projection_outbox')
      .where({ job_id })
      .update({ enqueued_at: api.deps.db.raw("now() - interval '169 hours'") });
    await waitFor(async () => (await queueStatsProjection())?.given_up === 1, 60_000, 'the projection given up');
    expect(await queueStatsProjection()).toEqual({ pending: 0, oldest_seconds: 0, given_up: 1 });
    const text = await (
      await fetch(`${api.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
    ).text();
    expect(Number(/^leadjobs_projection_given_up (\S+)$/m.exec(text)?.[1])).toBeGreaterThanOrEqual(1);
  } finally {
    await failure.heal();
  }
});
