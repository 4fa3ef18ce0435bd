import type { ChildProcess } from 'node:child_process';
import type { IssuedCredentials } from '../../lib/credentials';
import { runCampaign } from '../../workflows';
import { bearer, ownQueues, startTestApi, type TestApi } from '../support/api';
import { caller, type Caller } from '../support/jobs';
import { freePort, spawnWorkerProcess } from '../support/processes';
import { SseReader } from '../support/sse';
import { startTestWorker, type TestWorker } from '../support/worker';
import { cityPlaces, startGooglePlacesStandIn, type GooglePlacesStandIn } from '../stand-ins/google-places';
import { startWebhookReceiver, verifySignature } from '../stand-ins/webhook-receiver';

// Campaigns over HTTP through the real API and a real worker (the campaigns and crawlMaps queues)
// on the stack, against a stand-in Google Places that answers each city with its own places.
jest.setTimeout(180_000);

const KEY = 'AIzaStandInKey-campaigns-0123456789';

let places: GooglePlacesStandIn;
let api: TestApi;
let worker: TestWorker;
let creds: IssuedCredentials;
let c: Caller;
let env: Record<string, string>;
const readers: SseReader[] = [];
const children: ChildProcess[] = [];

beforeAll(async () => {
  places = await startGooglePlacesStandIn({
    apiKey: KEY,
    byCity: true,
    places: [
      ...cityPlaces('Leeds', 'bakery', 3),
      ...cityPlaces('Manchester', 'bakery', 2),
      ...cityPlaces('Bristol', 'bakery', 1),
      ...cityPlaces('York', 'bakery', 1),
      ...cityPlaces('Sheffield', 'bakery', 1),
    ],
  });
  env = {
    RATE_LIMIT_ENABLED: 'false',
    GOOGLE_PLACES_BASE_URL: places.baseUrl,
    GOOGLE_PLACES_API_KEY: KEY,
    ...ownQueues('campaigns'),
  };
  api = await startTestApi(env);
  worker = await startTestWorker({ types: ['crawlMaps'], identity: 'campaign-worker', overrides: env });
  creds = await api.newClient();
  c = caller(api, bearer(creds));
});

afterAll(async () => {
  children.forEach((p) => p.kill('SIGKILL'));
  await Promise.all(readers.map((r) => r.close()));
  await worker.stop();
  await api.close();
  await places.close();
});

type Summary = Record<'pending' | 'submitted' | 'completed' | 'failed' | 'skipped', number>;
interface Campaign {
  campaign_id: string;
  status: string;
  locations_total: number;
  summary: Summary;
  progress: { done: number; total: number; percent: number };
  totals: { businesses: number; emails_found: number; valid_emails: number };
  completed_at: string | null;
  [k: string]: unknown;
}
interface JobItem {
  job_id: string | null;
  location_id: number;
  search_string: string;
  display_name: string;
  status: string;
  job_status: string | null;
  results_count: number | null;
  submitted_at: string | null;
  completed_at: string | null;
  sequence_order: number;
}

const token = (x: IssuedCredentials) => `${x.client_id}:${x.api_key}:${x.api_secret}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cityId = async (name: string) =>
  (
    (await api.deps.db('locations').where({ name, country_code: 'GB' }).orderBy('population', 'desc').first()) as {
      id: number;
    }
  ).id;

async function create(as: Caller, body: Record<string, unknown>): Promise<string> {
  const res = await as.post('/api/v1/campaigns', body);
  const json = await as.json<{ campaign_id: string }>(res);
  expect({ status: res.status, json }).toMatchObject({ status: 201 });
  return json.campaign_id;
}

async function get(as: Caller, id: string): Promise<Campaign> {
  return as.json<Campaign>(await as.get(`/api/v1/campaigns/${id}`));
}

/** Polls the campaign until `done(campaign)`; `each` sees every poll. */
async function waitCampaign(
  as: Caller,
  id: string,
  done: (x: Campaign) => boolean,
  timeoutMs = 60_000,
  each?: (x: Campaign) => void,
): Promise<Campaign> {
  const deadline = Date.now() + timeoutMs;
  let last: Campaign | undefined;
  while (Date.now() < deadline) {
    last = await get(as, id);
    each?.(last);
    if (done(last)) return last;
    await sleep(100);
  }
  throw new Error(`campaign ${id} not there within ${timeoutMs} ms: ${JSON.stringify(last)}`);
}

async function jobItems(
  as: Caller,
  id: string,
  query = '',
): Promise<{ total: number; jobs: JobItem[]; summary?: Summary; page_size: number }> {
  const res = await as.get(`/api/v1/jobs/crawlMaps/campaigns/${id}/jobs${query}`);
  expect(res.status).toBe(200);
  return as.json(res);
}

async function stream(campaignId: string): Promise<SseReader> {
  const r = await new SseReader().open(
    `${api.url}/api/v1/events/stream?token=${encodeURIComponent(token(creds))}&campaign_id=${campaignId}&last_event_id=0`,
  );
  readers.push(r);
  return r;
}

describe('campaigns', () => {
  test('a 3-location campaign completes: locations, job items, jobs in the job list, totals, campaign.terminal on the campaign stream, CampaignId on every child', async () => {
    const bristol = await cityId('Bristol');
    const id = await create(c, {
      name: 'bakeries of the north',
      search_terms: ['bakery'],
      locations: [
        { city: 'leeds', country: 'GB' },
        { city: 'Manchester', country: 'United Kingdom' },
        bristol,
        { city: 'LEEDS', country: 'gb' },
      ],
      max_results_per_location: 10,
      concurrency: 2,
    });
    const sse = await stream(id);
    const done = await waitCampaign(c, id, (x) => x.status !== 'running');
    expect(done).toMatchObject({
      status: 'completed',
      // Leeds given twice counts once.
      locations_total: 3,
      summary: { pending: 0, submitted: 0, completed: 3, failed: 0, skipped: 0 },
      progress: { done: 3, total: 3, percent: 100 },
      totals: { businesses: 6, emails_found: 0, valid_emails: 0 },
      search_terms: ['bakery'],
      max_results_per_location: 10,
      concurrency: 2,
      auto_submit: true,
      workflow: null,
      priority: 0,
      error_message: null,
    });
    expect(done.completed_at).not.toBeNull();

    const page = await jobItems(c, id);
    expect(page.summary).toEqual({ pending: 0, submitted: 0, completed: 3, failed: 0, skipped: 0 });
    expect(page.total).toBe(3);
    expect(page.page_size).toBe(50);
    expect(
      page.jobs.map((j) => [
        j.sequence_order,
        j.search_string,
        j.display_name,
        j.status,
        j.job_status,
        j.results_count,
      ]),
    ).toEqual([
      [1, 'bakery in Leeds, GB', 'bakery — Leeds, United Kingdom', 'completed', 'completed', 3],
      [2, 'bakery in Manchester, GB', 'bakery — Manchester, United Kingdom', 'completed', 'completed', 2],
      [3, 'bakery in Bristol, GB', 'bakery — Bristol, United Kingdom', 'completed', 'completed', 1],
    ]);
    expect(page.jobs[2]?.location_id).toBe(bristol);
    for (const j of page.jobs) expect(j.submitted_at && j.completed_at).toBeTruthy();
    // Filters and paging of spec §4.3.
    expect((await jobItems(c, id, '?status=pending')).total).toBe(0);
    const second = await jobItems(c, id, '?job_status=completed&page=2&page_size=2&include_summary=false');
    expect(second).toMatchObject({ total: 3, page_size: 2 });
    expect(second.jobs.map((j) => j.sequence_order)).toEqual([3]);
    expect(second.summary).toBeUndefined();

    // Each location is an ordinary crawlMaps job with the campaign's id, with its own results.
    const list = await c.json<{
      jobs: { job_id: string; type: string; campaign_id: string | null; results_count: number }[];
    }>(await c.get('/api/v1/jobs/list?page_size=100'));
    const own = list.jobs.filter((j) => j.campaign_id === id);
    expect(own.map((j) => j.job_id).sort()).toEqual(page.jobs.map((j) => j.job_id).sort());
    expect(own.every((j) => j.type === 'crawlMaps')).toBe(true);
    const leeds = await c.json<{ data: { businesses: { business_name: string }[] } }>(
      await c.get(`/api/v1/jobs/${page.jobs[0]?.job_id}/results`),
    );
    expect(leeds.data.businesses.map((b) => b.business_name).sort()).toEqual([
      'Leeds bakery 1',
      'Leeds bakery 2',
      'Leeds bakery 3',
    ]);

    const terminal = await sse.waitFor((e) => e.event === 'campaign.terminal');
    expect(terminal.data).toMatchObject({
      campaign_id: id,
      status: 'completed',
      success_pct: 100,
      locations_total: 3,
      completed: 3,
      failed: 0,
      skipped: 0,
      businesses_total: 6,
      total_valid_emails: 0,
    });
    // The campaign stream carries the campaign's event only (job events carry no campaign id, spec §6), once.
    await sleep(500);
    expect(sse.events.filter((e) => e.event !== 'connected' && e.event !== 'heartbeat').map((e) => e.event)).toEqual([
      'campaign.terminal',
    ]);

    // Operators find the campaign's children in the Web UI with CampaignId = "<id>".
    const found: string[] = [];
    for (let i = 0; i < 50 && found.length < 3; i++) {
      found.length = 0;
      for await (const w of api.deps.temporal.client.workflow.list({
        query: `CampaignId = "${id}" AND WorkflowType = "runJob"`,
      }))
        found.push(w.workflowId);
      if (found.length < 3) await sleep(200);
    }
    expect(found.sort()).toEqual(page.jobs.map((j) => `job/${j.job_id}`).sort());

    // The list has it, newest first, with the same record.
    const listed = await c.json<{ total: number; campaigns: Campaign[] }>(
      await c.get('/api/v1/campaigns?page_size=100'),
    );
    expect(listed.campaigns.find((x) => x.campaign_id === id)).toEqual(await get(c, id));
  });

  test('a webhook subscribed to campaign.terminal receives it, signed', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const hooked = caller(api, bearer(await api.newClient('webhook client')));
      const created = await hooked.json<{ secret: string }>(
        await hooked.post('/api/v1/webhooks', { url: receiver.url('/campaigns'), events: ['campaign.terminal'] }),
      );
      const id = await create(hooked, {
        name: 'hooked',
        search_terms: ['bakery'],
        locations: [{ city: 'York', country: 'GB' }],
      });
      await waitCampaign(hooked, id, (x) => x.status !== 'running');
      const deadline = Date.now() + 30_000;
      while (receiver.received('/campaigns').length === 0 && Date.now() < deadline) await sleep(100);
      const [delivery, ...more] = receiver.received('/campaigns');
      expect(more).toEqual([]);
      expect(delivery?.body).toMatchObject({
        event: 'campaign.terminal',
        data: {
          campaign_id: id,
          status: 'completed',
          success_pct: 100,
          locations_total: 1,
          completed: 1,
          businesses_total: 1,
        },
      });
      expect(
        verifySignature(created.secret, delivery?.headers['x-leadjobs-signature'] as string, delivery?.raw ?? ''),
      ).toBe(true);
    } finally {
      await receiver.close();
    }
  });

  test('concurrency bounds the locations in flight', async () => {
    places.setDelay(1200);
    try {
      const cities = ['Leeds', 'Manchester', 'Bristol', 'York', 'Sheffield'].map((city) => ({ city, country: 'GB' }));
      const id = await create(c, {
        name: 'two at a time',
        search_terms: ['bakery'],
        locations: cities,
        concurrency: 2,
      });
      let most = 0;
      const done = await waitCampaign(
        c,
        id,
        (x) => x.status !== 'running',
        90_000,
        (x) => {
          most = Math.max(most, x.summary.submitted);
        },
      );
      // Jobs running at once, from their rows: at each job's start, the jobs whose span covers that
      // instant (itself included); the most over all starts is the most ever running together (a
      // count of every span overlapping a long one would add two that ran one after the other).
      // Every search takes 1.2 s, so two did run together, never three.
      const rows = (await api.deps.db('jobs').where({ campaign_id: id }).select('started_at', 'completed_at')) as {
        started_at: Date;
        completed_at: Date;
      }[];
      const overlap = Math.max(
        ...rows.map((r) => rows.filter((o) => o.started_at <= r.started_at && o.completed_at > r.started_at).length),
      );
      // The polls never saw more than two locations submitted (a slow poll may miss the moments with two).
      expect({
        status: done.status,
        completed: done.summary.completed,
        overlap,
        mostSubmittedAtMost2: most <= 2,
        rows,
      }).toMatchObject({ status: 'completed', completed: 5, overlap: 2, mostSubmittedAtMost2: true });
    } finally {
      places.setDelay(0);
    }
  });

  test('auto_submit false: nothing is submitted until POST /next {count: 2}, then exactly 2', async () => {
    const id = await create(c, {
      name: 'by hand',
      search_terms: ['bakery', 'cafe'],
      locations: [
        { city: 'York', country: 'GB' },
        { city: 'Sheffield', country: 'GB' },
      ],
      auto_submit: false,
    });
    await sleep(1500);
    const idle = await get(c, id);
    expect(idle).toMatchObject({ status: 'running', locations_total: 4, summary: { pending: 4, submitted: 0 } });
    expect(await api.deps.db('jobs').where({ campaign_id: id }).count<{ count: string }[]>('* as count')).toEqual([
      { count: '0' },
    ]);
    expect((await jobItems(c, id)).jobs.map((j) => [j.search_string, j.job_id, j.job_status])).toEqual([
      ['bakery in York, GB', null, null],
      ['cafe in York, GB', null, null],
      ['bakery in Sheffield, GB', null, null],
      ['cafe in Sheffield, GB', null, null],
    ]);

    const res = await c.post(`/api/v1/campaigns/${id}/next`, { count: 2 });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ success: true, campaign_id: id, released: 2, pending_remaining: 2 });
    await waitCampaign(c, id, (x) => x.summary.completed === 2);
    await sleep(1500);
    const half = await jobItems(c, id);
    expect(half.jobs.map((j) => j.status)).toEqual(['completed', 'completed', 'pending', 'pending']);
    expect(half.jobs[1]?.results_count).toBe(0); // no cafe in York
    expect((await get(c, id)).status).toBe('running');

    // More than are left: the rest.
    expect(await c.json(await c.post(`/api/v1/campaigns/${id}/next`, { count: 10 }))).toEqual({
      success: true,
      campaign_id: id,
      released: 2,
      pending_remaining: 0,
    });
    const done = await waitCampaign(c, id, (x) => x.status !== 'running');
    expect(done).toMatchObject({ status: 'completed', summary: { completed: 4 }, totals: { businesses: 2 } });

    // /next of an ended campaign, and of one that submits by itself.
    const ended = await c.post(`/api/v1/campaigns/${id}/next`, { count: 1 });
    expect(ended.status).toBe(400);
    expect(await ended.json()).toEqual({ detail: 'campaign is completed: no more locations are submitted' });
    const auto = await create(c, {
      name: 'auto',
      search_terms: ['bakery'],
      locations: [{ city: 'York', country: 'GB' }],
    });
    const refused = await c.post(`/api/v1/campaigns/${auto}/next`, { count: 1 });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { detail: string }).detail).toMatch(/auto_submit is true/);
    await waitCampaign(c, auto, (x) => x.status !== 'running');
  });

  test('cancel: running jobs are cancelled through Temporal, pending locations skipped, campaign.terminal says cancelled', async () => {
    places.setDelay(60_000);
    try {
      const cities = ['Leeds', 'Manchester', 'Bristol', 'York'].map((city) => ({ city, country: 'GB' }));
      const id = await create(c, { name: 'to cancel', search_terms: ['bakery'], locations: cities, concurrency: 2 });
      const sse = await stream(id);
      const before = places.requests.length;
      await waitCampaign(c, id, (x) => x.summary.submitted === 2);
      // Both jobs' searches are waiting on the provider.
      while (places.requests.length - before < 2) await sleep(50);
      const running = (await jobItems(c, id, '?status=submitted')).jobs.map((j) => j.job_id as string);
      expect(running).toHaveLength(2);

      const res = await c.post(`/api/v1/campaigns/${id}/cancel`, {});
      expect(res.status).toBe(200);
      const cancelled = await c.json<Campaign>(res);
      expect(cancelled).toMatchObject({
        campaign_id: id,
        status: 'cancelled',
        summary: { pending: 0, submitted: 0, completed: 0, skipped: 4 },
      });
      for (const jobId of running) {
        expect(await c.json(await c.get(`/api/v1/jobs/${jobId}/status`))).toMatchObject({
          status: 'cancelled',
          campaign_id: id,
        });
      }

      const terminal = await sse.waitFor((e) => e.event === 'campaign.terminal');
      expect(terminal.data).toMatchObject({
        campaign_id: id,
        status: 'cancelled',
        success_pct: 0,
        locations_total: 4,
        completed: 0,
        skipped: 4,
      });
      // The workflows were cancelled (not left running until the provider answers), and nothing new was asked.
      const client = api.deps.temporal.client.workflow;
      for (const wid of [`campaign/${id}`, ...running.map((j) => `job/${j}`)]) {
        let status = '';
        for (let i = 0; i < 50 && status !== 'CANCELLED'; i++) {
          status = (await client.getHandle(wid).describe()).status.name;
          if (status !== 'CANCELLED') await sleep(100);
        }
        expect([wid, status]).toEqual([wid, 'CANCELLED']);
      }
      const asked = places.requests.length;
      await sleep(3000);
      expect(places.requests.length).toBe(asked);
      expect(await api.deps.db('jobs').where({ campaign_id: id }).count<{ count: string }[]>('* as count')).toEqual([
        { count: '2' },
      ]);
      expect((await get(c, id)).status).toBe('cancelled');
      expect(sse.events.filter((e) => e.event === 'campaign.terminal')).toHaveLength(1);

      const again = await c.post(`/api/v1/campaigns/${id}/cancel`, {});
      expect(again.status).toBe(400);
      expect(await again.json()).toEqual({ detail: 'cannot cancel a cancelled campaign: it is already terminal' });
    } finally {
      places.setDelay(0);
    }
  });

  test("dedupe_fuzzy (default false) is kept on the campaign and carried by its location jobs' crawlMaps payloads", async () => {
    const plain = await create(c, {
      name: 'exact only',
      search_terms: ['bakery'],
      locations: [{ city: 'York', country: 'GB' }],
      auto_submit: false,
    });
    expect((await get(c, plain)).dedupe_fuzzy).toBe(false);
    const id = await create(c, {
      name: 'fuzzy',
      search_terms: ['bakery'],
      locations: [{ city: 'York', country: 'GB' }],
      dedupe_fuzzy: true,
      auto_submit: false,
    });
    expect((await get(c, id)).dedupe_fuzzy).toBe(true);
    expect(await c.json(await c.post(`/api/v1/campaigns/${id}/next`, { count: 1 }))).toMatchObject({ released: 1 });
    const deadline = Date.now() + 20_000;
    let jobs: { payload: Record<string, unknown> }[] = [];
    while (jobs.length === 0 && Date.now() < deadline) {
      jobs = await api.deps.db('jobs').where({ campaign_id: id }).select('payload');
      await sleep(100);
    }
    expect(jobs[0]?.payload).toMatchObject({
      search_query: 'bakery in York, GB',
      dedupe_enabled: true,
      dedupe_fuzzy: true,
    });
    expect(
      (
        await c.post('/api/v1/campaigns', {
          name: 'x',
          search_terms: ['a'],
          locations: [{ city: 'York', country: 'GB' }],
          dedupe_fuzzy: 'yes',
        })
      ).status,
    ).toBe(422);
  });

  test('a campaign with workflow is accepted and its jobs carry the workflow options; the maps-only campaign has no workflow results', async () => {
    const id = await create(c, {
      name: 'with pipeline',
      search_terms: ['bakery'],
      locations: [
        { city: 'York', country: 'GB' },
        { city: 'Leeds', country: 'GB' },
      ],
      workflow: { site: { max_pages: 3 }, verify: { smtp_check: false } },
      auto_submit: false,
    });
    const record = await get(c, id);
    expect(record.workflow).toEqual({
      enabled: true,
      site: { max_pages: 3, extract_team: true, compendium: { enabled: false, cleanup_level: 'fit' } },
      verify: { enabled: true, smtp_check: false },
    });
    expect(await c.json(await c.post(`/api/v1/campaigns/${id}/next`, { count: 1 }))).toMatchObject({
      released: 1,
      pending_remaining: 1,
    });
    const deadline = Date.now() + 20_000;
    let jobs: { payload: Record<string, unknown> }[] = [];
    while (jobs.length === 0 && Date.now() < deadline) {
      jobs = await api.deps.db('jobs').where({ campaign_id: id }).select('payload');
      await sleep(100);
    }
    expect(jobs).toHaveLength(1);
    expect(jobs[0]?.payload).toMatchObject({
      search_query: 'bakery in York, GB',
      max_results: 20,
      region: 'GB',
      workflow: record.workflow,
    });

    const agg = await c.get(`/api/v1/campaigns/${id}/workflow-results`);
    expect(agg.status).toBe(200);
    expect(await agg.json()).toMatchObject({
      success: false,
      campaign_id: id,
      status: 'running',
      locations: { summary: { pending: 1 } },
    });
    expect((await c.post(`/api/v1/campaigns/${id}/cancel`, {})).status).toBe(200);

    const mapsOnly = await create(c, {
      name: 'maps only',
      search_terms: ['bakery'],
      locations: [{ city: 'York', country: 'GB' }],
      workflow: { enabled: false },
    });
    expect((await get(c, mapsOnly)).workflow).toBeNull();
    const none = await c.get(`/api/v1/campaigns/${mapsOnly}/workflow-results`);
    expect(none.status).toBe(400);
    expect(await none.json()).toEqual({ detail: 'campaign without workflow configuration' });
    await waitCampaign(c, mapsOnly, (x) => x.status !== 'running');
  });

  test('a campaign whose every location fails is failed, each location with its error', async () => {
    places.revokeKey(true);
    try {
      const id = await create(c, {
        name: 'no key',
        search_terms: ['bakery'],
        locations: [
          { city: 'York', country: 'GB' },
          { city: 'Leeds', country: 'GB' },
        ],
      });
      const sse = await stream(id);
      const done = await waitCampaign(c, id, (x) => x.status !== 'running');
      expect(done).toMatchObject({
        status: 'failed',
        summary: { failed: 2, completed: 0 },
        progress: { done: 2, percent: 100 },
        error_message: 'every location failed (2)',
      });
      const items = (await jobItems(c, id, '?status=failed')).jobs as (JobItem & { error_message: string })[];
      expect(items.map((j) => j.job_status)).toEqual(['failed', 'failed']);
      for (const j of items) expect(j.error_message).toMatch(/rejected the key \(API_KEY_INVALID\)/);
      const terminal = await sse.waitFor((e) => e.event === 'campaign.terminal');
      expect(terminal.data).toMatchObject({ status: 'failed', success_pct: 0, completed: 0, failed: 2 });
    } finally {
      places.revokeKey(false);
    }
  });

  test('a campaign that reaches its deadline ends itself: pending locations skipped, error_message says so, campaign.terminal sent, /next 400', async () => {
    const id = await create(c, {
      name: 'runs out of time',
      search_terms: ['bakery'],
      locations: [
        { city: 'York', country: 'GB' },
        { city: 'Sheffield', country: 'GB' },
      ],
      auto_submit: false,
    });
    const sse = await stream(id);
    expect(await c.json(await c.post(`/api/v1/campaigns/${id}/next`, { count: 1 }))).toMatchObject({
      released: 1,
      pending_remaining: 1,
    });
    await waitCampaign(c, id, (x) => x.summary.completed === 1);
    // The API's workflow ends in 30 days: this one is started again with an end a moment away, as it
    // would be at the end of its 30 days, with one location never released.
    const row = (await api.deps.db('campaigns').where({ id }).first()) as { workflow_id: string; task_queue: string };
    const client = api.deps.temporal.client.workflow;
    await client.getHandle(row.workflow_id).terminate('the test restarts it with a near deadline');
    await client.start(runCampaign, {
      taskQueue: row.task_queue,
      workflowId: row.workflow_id,
      args: [
        {
          campaignId: id,
          clientId: creds.client_id,
          autoSubmit: false,
          concurrency: 5,
          endBy: new Date(Date.now() + 2000).toISOString(),
        },
      ],
      workflowExecutionTimeout: '60s',
    });
    const done = await waitCampaign(c, id, (x) => x.status !== 'running', 30_000);
    expect(done).toMatchObject({
      status: 'completed',
      summary: { completed: 1, skipped: 1, pending: 0 },
      error_message: 'the campaign reached its deadline (30 days): 1 location(s) not run were skipped',
    });
    expect(done.completed_at).not.toBeNull();
    const terminal = await sse.waitFor((e) => e.event === 'campaign.terminal');
    expect(terminal.data).toMatchObject({
      campaign_id: id,
      status: 'completed',
      success_pct: 100,
      completed: 1,
      skipped: 1,
    });
    const next = await c.post(`/api/v1/campaigns/${id}/next`, { count: 1 });
    expect(next.status).toBe(400);
    expect(await next.json()).toEqual({ detail: 'campaign is completed: no more locations are submitted' });
  });

  test('with Temporal unreachable a campaign is 503 queue service unavailable and nothing is stored', async () => {
    const down = await startTestApi({ ...env, TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}` });
    try {
      const d = caller(down, bearer(creds));
      const before = await down.deps.db('campaign_locations').count<{ count: string }[]>('* as count');
      const res = await d.post('/api/v1/campaigns', {
        name: 'unqueued',
        search_terms: ['bakery'],
        locations: [{ city: 'York', country: 'GB' }],
      });
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ detail: 'queue service unavailable' });
      expect(
        await down.deps.db('campaigns').where({ name: 'unqueued' }).count<{ count: string }[]>('* as count'),
      ).toEqual([{ count: '0' }]);
      expect(await down.deps.db('campaign_locations').count<{ count: string }[]>('* as count')).toEqual(before);
    } finally {
      await down.close();
    }
  });

  test('a client with CAMPAIGN_MAX_RUNNING_PER_CLIENT running campaigns gets 429 and nothing is stored, even when it asks at once; another client is not affected; a cancelled one frees a place', async () => {
    const capped = await startTestApi({ ...env, CAMPAIGN_MAX_RUNNING_PER_CLIENT: '2' });
    try {
      const a = caller(capped, bearer(await capped.newClient('capped client')));
      const body = (name: string) => ({
        name,
        search_terms: ['bakery'],
        locations: [{ city: 'York', country: 'GB' }],
        auto_submit: false,
      });
      // Five at once: the count and the insert take turns per client, so exactly two pass.
      const answers = await Promise.all(
        Array.from({ length: 5 }, (_, i) => a.post('/api/v1/campaigns', body(`capped ${i}`))),
      );
      expect(answers.map((r) => r.status).sort()).toEqual([201, 201, 429, 429, 429]);
      const refused = answers.find((r) => r.status === 429);
      expect(await refused?.json()).toEqual({
        detail: 'too many running campaigns: at most 2 at once per client; wait for one to end, or cancel one',
      });
      const list = await a.json<{ total: number; campaigns: { campaign_id: string }[] }>(
        await a.get('/api/v1/campaigns'),
      );
      expect(list.total).toBe(2);
      // Another client has places of its own.
      const b = caller(capped, bearer(await capped.newClient('other capped client')));
      const theirs = await create(b, body('theirs'));
      // A cancelled campaign no longer counts.
      expect((await a.post(`/api/v1/campaigns/${list.campaigns[0]?.campaign_id}/cancel`, {})).status).toBe(200);
      const third = await create(a, body('after a cancel'));
      for (const [who, id] of [
        [a, third],
        [a, list.campaigns[1]?.campaign_id],
        [b, theirs],
      ] as const) {
        expect((await who.post(`/api/v1/campaigns/${id}/cancel`, {})).status).toBe(200);
      }
    } finally {
      await capped.close();
    }
  });

  test('campaign workflow results and totals are sums over the pipeline rows of its jobs', async () => {
    // auto_submit false and nothing released: no job runs; the pipeline's rows (job_workflows,
    // workflow_businesses, as the pipeline writes them) are laid down here for one location.
    const id = await create(c, {
      name: 'aggregate',
      search_terms: ['bakery'],
      locations: [
        { city: 'York', country: 'GB' },
        { city: 'Leeds', country: 'GB' },
      ],
      workflow: {},
      auto_submit: false,
    });
    const db = api.deps.db;
    const jobId = '00000000-0000-4000-8000-0000000000a1';
    await db('jobs').insert({
      id: jobId,
      client_id: creds.client_id,
      type: 'crawlMaps',
      status: 'completed',
      priority: 0,
      payload: {},
      payload_hash: 'x',
      campaign_id: id,
      workflow_id: `job/${jobId}`,
      task_queue: 'none',
      results_count: 3,
    });
    await db('campaign_locations')
      .where({ campaign_id: id, sequence_order: 1 })
      .update({ status: 'completed', job_id: jobId, results_count: 3 });
    await db('job_workflows').insert({
      job_id: jobId,
      client_id: creds.client_id,
      campaign_id: id,
      status: 'completed_with_errors',
      options: {},
      limits: {},
      verify_timed_out: true,
      deadline_at: new Date(),
    });
    const business = (n: number, website: string) => ({
      business_name: `B${n}`,
      business_place_id: `p${n}`,
      business_website: website,
    });
    await db('workflow_businesses').insert([
      {
        job_id: jobId,
        place_id: 'p1',
        client_id: creds.client_id,
        campaign_id: id,
        position: 0,
        business: business(1, 'https://a.example/'),
        site_origin: 'https://a.example',
        site_status: 'completed',
        site: { emails_found: ['a@a.example', 'b@a.example'] },
        verify_status: 'completed',
        valid_emails_count: 1,
      },
      {
        job_id: jobId,
        place_id: 'p2',
        client_id: creds.client_id,
        campaign_id: id,
        position: 1,
        business: business(2, 'https://www.facebook.com/b2'),
        domain_filtered: true,
        filter_reason: 'social_media: facebook.com',
        site_status: 'skipped',
        verify_status: 'skipped',
      },
      {
        job_id: jobId,
        place_id: 'p3',
        client_id: creds.client_id,
        campaign_id: id,
        position: 2,
        business: business(3, 'https://c.example/'),
        site_origin: 'https://c.example',
        site_status: 'failed',
        site_error: 'HTTP 500',
        verify_status: 'skipped',
      },
    ]);

    const res = await c.get(`/api/v1/campaigns/${id}/workflow-results`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      success: false,
      campaign_id: id,
      status: 'running',
      locations: { summary: { pending: 1, submitted: 0, completed: 1, failed: 0, skipped: 0 } },
      businesses_total: 3,
      // Every business with a website, the filtered one included (as one job's results count).
      businesses_with_domains: 3,
      businesses_filtered: 1,
      spidersite_completed: 1,
      spidersite_failed: 1,
      spiderverify_completed: 1,
      spiderverify_failed: 0,
      total_emails_found: 2,
      total_valid_emails: 1,
      spidersite_timed_out: false,
      spiderverify_timed_out: true,
      jobs: [
        {
          job_id: jobId,
          location_id: await cityId('York'),
          display_name: 'bakery — York, United Kingdom',
          status: 'completed_with_errors',
          businesses_total: 3,
          total_valid_emails: 1,
        },
      ],
    });
    expect(await get(c, id)).toMatchObject({
      totals: { businesses: 3, emails_found: 2, valid_emails: 1 },
      progress: { done: 1, total: 2, percent: 50 },
    });
    expect((await c.post(`/api/v1/campaigns/${id}/cancel`, {})).status).toBe(200);
  });

  test("validation: unknown city 422 naming the entry, too many terms 422, malformed id 400, another client's campaign 404", async () => {
    const unknown = await c.post('/api/v1/campaigns', {
      name: 'x',
      search_terms: ['bakery'],
      locations: [{ city: 'Leeds', country: 'GB' }, { city: 'Atlantis', country: 'GB' }, 999_999_999],
    });
    expect(unknown.status).toBe(422);
    const issues = (await unknown.json()) as { detail: { loc: (string | number)[]; msg: string }[] };
    expect(issues.detail.map((d) => d.loc)).toEqual([
      ['body', 'locations', 1],
      ['body', 'locations', 2],
    ]);
    expect(issues.detail[0]?.msg).toMatch(/no city named "Atlantis" in GB/);
    expect(issues.detail[1]?.msg).toMatch(/unknown location id 999999999/);

    const terms = await c.post('/api/v1/campaigns', {
      name: 'x',
      search_terms: Array.from({ length: 21 }, (_, i) => `t${i}`),
      locations: [{ city: 'Leeds', country: 'GB' }],
    });
    expect(terms.status).toBe(422);
    expect(((await terms.json()) as { detail: { loc: unknown[] }[] }).detail[0]?.loc).toEqual(['body', 'search_terms']);
    for (const bad of [
      { locations: [] },
      { concurrency: 51 },
      { max_results_per_location: 501 },
      { priority: 11 },
      { extra: 1 },
    ]) {
      const res = await c.post('/api/v1/campaigns', {
        name: 'x',
        search_terms: ['bakery'],
        locations: [{ city: 'Leeds', country: 'GB' }],
        ...bad,
      });
      expect([JSON.stringify(bad), res.status]).toEqual([JSON.stringify(bad), 422]);
    }
    // Nothing was stored by the refused requests.
    expect(await api.deps.db('campaigns').where({ name: 'x' }).count<{ count: string }[]>('* as count')).toEqual([
      { count: '0' },
    ]);

    for (const p of [
      '/api/v1/campaigns/nope',
      '/api/v1/campaigns/nope/workflow-results',
      '/api/v1/jobs/crawlMaps/campaigns/nope/jobs',
    ]) {
      const res = await c.get(p);
      expect([p, res.status, await res.json()]).toEqual([
        p,
        400,
        { detail: 'invalid campaign id format, expected UUID' },
      ]);
    }
    expect((await c.post('/api/v1/campaigns/nope/cancel', {})).status).toBe(400);

    const mine = await create(c, {
      name: 'mine',
      search_terms: ['bakery'],
      locations: [{ city: 'York', country: 'GB' }],
      auto_submit: false,
    });
    const other = caller(api, bearer(await api.newClient('other client')));
    for (const p of [
      `/api/v1/campaigns/${mine}`,
      `/api/v1/campaigns/${mine}/workflow-results`,
      `/api/v1/jobs/crawlMaps/campaigns/${mine}/jobs`,
    ]) {
      const res = await other.get(p);
      expect([p, res.status, await res.json()]).toEqual([p, 404, { detail: 'campaign not found' }]);
    }
    expect((await other.post(`/api/v1/campaigns/${mine}/cancel`, {})).status).toBe(404);
    expect((await other.post(`/api/v1/campaigns/${mine}/next`, { count: 1 })).status).toBe(404);
    expect((await other.json<{ total: number }>(await other.get('/api/v1/campaigns'))).total).toBe(0);
    expect((await c.post(`/api/v1/campaigns/${mine}/cancel`, {})).status).toBe(200);
  });
});

async function workerProcess(identity: string, workerEnv: Record<string, string>): Promise<ChildProcess> {
  const child = await spawnWorkerProcess(identity, ['crawlMaps'], workerEnv);
  children.push(child);
  return child;
}

describe('campaign durability', () => {
  test('a worker SIGKILLed mid-campaign loses nothing and duplicates nothing', async () => {
    // Queues of this test's own: only the doomed worker, then the survivor, poll them.
    const killEnv = { ...env, ...ownQueues('campaigns-kill') };
    const killApi = await startTestApi(killEnv);
    let survivor: TestWorker | undefined;
    places.setDelay(3000);
    try {
      const k = caller(killApi, bearer(creds));
      const doomed = await workerProcess('doomed-campaign-worker', killEnv);
      const cities = ['Leeds', 'Manchester', 'Bristol', 'York'].map((city) => ({ city, country: 'GB' }));
      const id = await create(k, { name: 'survives', search_terms: ['bakery'], locations: cities, concurrency: 2 });
      const before = places.requests.length;
      await waitCampaign(k, id, (x) => x.summary.submitted === 2);
      while (places.requests.length - before < 2) await sleep(50);
      doomed.kill('SIGKILL');

      places.setDelay(0);
      survivor = await startTestWorker({
        types: ['crawlMaps'],
        identity: 'survivor-campaign-worker',
        overrides: killEnv,
      });
      // Lost activities are noticed by their heartbeat timeout (20 s), then retried by the survivor.
      const done = await waitCampaign(k, id, (x) => x.status !== 'running', 150_000);
      expect(done).toMatchObject({
        status: 'completed',
        summary: { completed: 4, pending: 0, submitted: 0, failed: 0, skipped: 0 },
        totals: { businesses: 7 },
      });
      const jobs = (await killApi.deps.db('jobs').where({ campaign_id: id }).select('id', 'status')) as {
        id: string;
        status: string;
      }[];
      expect(jobs).toHaveLength(4);
      expect(jobs.every((j) => j.status === 'completed')).toBe(true);
      const items = (await jobItems(k, id)).jobs;
      expect(new Set(items.map((j) => j.job_id)).size).toBe(4);
      expect(items.map((j) => j.job_id).sort()).toEqual(jobs.map((j) => j.id).sort());
      const results = await killApi.deps
        .db('job_results')
        .whereIn(
          'job_id',
          jobs.map((j) => j.id),
        )
        .count<{ count: string }[]>('* as count');
      expect(results).toEqual([{ count: '4' }]);
      const terminal = await killApi.deps.db('events').where({ campaign_id: id, name: 'campaign.terminal' });
      expect(terminal).toHaveLength(1);
    } finally {
      places.setDelay(0);
      await survivor?.stop();
      await killApi.close();
    }
  });
});
