import { randomUUID } from 'node:crypto';
import yaml from 'js-yaml';
import type { ActivityDeps } from '../../activities';
import { createJobLifecycleActivities } from '../../activities/store/jobs';
import { runJobInput } from '../../jobs/run-input';
import { payloadHash } from '../../lib/payload-hash';
import { JobRepository } from '../../db/repositories/jobs';
import { JobResultStore, resultObjectKey } from '../../db/repositories/job-results';
import { CATALOG } from '../../jobs';
import { jobTaskQueue } from '../../jobs/queues';
import { runJob } from '../../workflows';
import { bearer, ownQueues, startTestApi, type TestApi } from '../support/api';
import { caller, waitForStatus, type Caller } from '../support/jobs';
import { startTestWorker, type TestWorker } from '../support/worker';
import { startLeadSites, type LeadSites } from '../stand-ins/lead-sites';

// The job engine through the real API and a real worker running the real crawlSite against stand-in
// sites on 127.0.0.1 (each test its own site). Nothing polls crawlCompanyData's queue here, so those
// jobs stay queued: the tests' queued jobs.
let api: TestApi;
let worker: TestWorker;
let c: Caller;
let sites: LeadSites;
beforeAll(async () => {
  sites = await startLeadSites();
  api = await startTestApi({ RATE_LIMIT_ENABLED: 'false', ...ownQueues('jobs') });
  // Pages may take a minute (the cancel test's slow site); the crawl's own limits stay the product's.
  worker = await startTestWorker({
    types: ['crawlSite'],
    identity: 'jobs-test-worker',
    overrides: { ...ownQueues('jobs'), SITE_PAGE_TIMEOUT_MS: '90000' },
  });
  c = caller(api, bearer(await api.newClient()));
});
afterAll(async () => {
  await worker.stop();
  await api.close();
  await sites.close();
});

const site = (query: Record<string, string | number> = {}, extra: Record<string, unknown> = {}) => ({
  payload: { url: sites.url(query), ...extra },
});
/** A job that stays queued: a real type whose queue no worker of this file polls. */
const queuedJob = () => ({ payload: { mode: 'vat', vat_number: `DE${Math.floor(1e8 + Math.random() * 9e8)}` } });

describe('submit', () => {
  test('returns 201 with a job id at once and the job runs to completed with results', async () => {
    const res = await c.post('/api/v1/jobs/crawlSite/submit', site({ leads: 3 }));
    expect(res.status).toBe(201);
    const body = await c.json(res);
    expect(body).toEqual({
      job_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      type: 'crawlSite',
      status: 'queued',
      created_at: expect.any(String),
      from_cache: false,
      message: 'crawlSite job queued',
    });
    const done = await waitForStatus(c, String(body.job_id), ['completed']);
    // results_count of crawlSite is the pages crawled: the stand-in site is one page.
    expect(done).toMatchObject({
      status: 'completed',
      worker_id: 'jobs-test-worker',
      results_count: 1,
      error_message: null,
      priority: 5,
      message: 'job completed',
    });
    expect(done.processing_time_seconds).toEqual(expect.any(Number));

    const results = await c.get(`/api/v1/jobs/${String(body.job_id)}/results`);
    expect(results.status).toBe(200);
    const envelope = await c.json(results);
    expect(envelope).toMatchObject({
      success: true,
      job_id: body.job_id,
      type: 'crawlSite',
      status: 'completed',
      worker_id: 'jobs-test-worker',
      error_message: null,
    });
    const host = new URL(String((envelope.data as { url: string }).url)).searchParams.get('site');
    expect((envelope.data as { emails: string[] }).emails).toEqual([0, 1, 2].map((i) => `lead${i}@${host}.example`));
    expect(envelope.completed_at).toEqual(done.completed_at);
  });

  test('the generic endpoint and YAML bodies work, and the payload defaults are applied', async () => {
    const url = sites.url();
    const res = await c.post(
      '/api/v1/jobs/submit',
      `type: crawlSite\npayload:\n  url: "${url}"\n  max_pages: 3\npriority: 9\n`,
      'application/yaml',
    );
    expect(res.status).toBe(201);
    const { job_id } = await c.json<{ job_id: string }>(res);
    const status = yaml.load(await (await c.get(`/api/v1/jobs/${job_id}/status?format=yaml`)).text()) as Record<
      string,
      unknown
    >;
    expect(status).toMatchObject({ job_id, type: 'crawlSite', priority: 9 });
    const row = await api.deps.db('jobs').where({ id: job_id }).first();
    expect(row.payload).toMatchObject({
      url,
      max_pages: 3,
      extract_team: true,
      respect_robots: true,
      compendium: { enabled: false, cleanup_level: 'fit' },
    });
  });

  test('the same job within 24 hours is returned from cache, whatever the key order', async () => {
    const payload = { url: sites.url(), max_pages: 4, extract_team: false };
    const first = await c.json<{ job_id: string }>(await c.post('/api/v1/jobs/crawlSite/submit', { payload }));
    const again = await c.json(
      await c.post('/api/v1/jobs/crawlSite/submit', {
        priority: 7,
        payload: { extract_team: false, max_pages: 4, url: payload.url },
      }),
    );
    expect(again).toMatchObject({ job_id: first.job_id, from_cache: true });
    expect(String(again.message)).toContain('24 hours');
    const other = await c.json(
      await c.post('/api/v1/jobs/crawlSite/submit', { payload: { ...payload, max_pages: 5 } }),
    );
    expect(other.from_cache).toBe(false);
    const otherClient = caller(api, bearer(await api.newClient()));
    expect(
      (await otherClient.json(await otherClient.post('/api/v1/jobs/crawlSite/submit', { payload }))).from_cache,
    ).toBe(false);
  });

  test('concurrent identical submissions make one job', async () => {
    const body = site();
    const all = await Promise.all(
      Array.from({ length: 5 }, () =>
        c.post('/api/v1/jobs/crawlSite/submit', body).then((r) => c.json<{ job_id: string; from_cache: boolean }>(r)),
      ),
    );
    expect(new Set(all.map((b) => b.job_id)).size).toBe(1);
    expect(all.filter((b) => !b.from_cache)).toHaveLength(1);
  });

  test('a failed job is not served from cache: submitting it again runs it again', async () => {
    const body = site({ status: 500 });
    const first = await c.json<{ job_id: string }>(await c.post('/api/v1/jobs/crawlSite/submit', body));
    await waitForStatus(c, first.job_id, ['failed']);
    const again = await c.json(await c.post('/api/v1/jobs/crawlSite/submit', body));
    expect(again.from_cache).toBe(false);
    expect(again.job_id).not.toBe(first.job_id);
  });
});

describe('validation', () => {
  const detail = async (res: Response) => {
    expect(res.status).toBe(422);
    return (await res.json()) as { detail: { type: string; loc: unknown[]; msg: string }[] };
  };

  test('crawlSite needs an http(s) url and rejects unknown keys', async () => {
    const d1 = await detail(await c.post('/api/v1/jobs/crawlSite/submit', { payload: { url: 'ftp://x.test' } }));
    expect(d1.detail).toEqual([
      { type: 'custom', loc: ['body', 'payload', 'url'], msg: 'url must be a valid http(s) URL' },
    ]);
    const d2 = await detail(
      await c.post('/api/v1/jobs/crawlSite/submit', { payload: { url: 'https://x.test', depth: 3 } }),
    );
    expect(d2.detail).toEqual([{ type: 'extra_forbidden', loc: ['body', 'payload'], msg: 'Unknown field(s): depth' }]);
  });

  test('crawlCompanyData names each missing field of its mode', async () => {
    const d = await detail(
      await c.post('/api/v1/jobs/crawlCompanyData/submit', { payload: { mode: 'lookup', country: 'GB' } }),
    );
    expect(d.detail).toEqual([
      { type: 'custom', loc: ['body', 'payload', 'identifier'], msg: 'identifier is required for mode lookup' },
    ]);
    const v = await detail(await c.post('/api/v1/jobs/crawlCompanyData/submit', { payload: { mode: 'vat' } }));
    expect(v.detail[0]).toMatchObject({
      loc: ['body', 'payload', 'vat_number'],
      msg: 'vat_number is required for mode vat',
    });
    const p = await detail(
      await c.post('/api/v1/jobs/crawlCompanyData/submit', { payload: { name: 'Shell', country: 'GB' }, priority: 11 }),
    );
    expect(p.detail[0]).toMatchObject({ type: 'too_big', loc: ['body', 'priority'] });
  });

  test('crawlPublicSocial without username or profile URL gets the spec detail', async () => {
    const d = await detail(await c.post('/api/v1/jobs/crawlPublicSocial/submit', { payload: {} }));
    expect(d.detail).toEqual([
      { type: 'custom', loc: ['body', 'payload'], msg: 'either username or profile URL must be provided' },
    ]);
  });

  test('crawlMaps keys sit at the top level; a malformed URL says the URL or place id is invalid', async () => {
    const d = await detail(await c.post('/api/v1/jobs/crawlMaps/submit', { url: 'not a url', priority: 3 }));
    expect(d.detail).toEqual([
      { type: 'custom', loc: ['body', 'url'], msg: 'invalid maps URL or place id: not a URL or place id' },
    ]);
    const none = await detail(await c.post('/api/v1/jobs/crawlMaps/submit', { max_results: 5 }));
    expect(none.detail[0]?.msg).toBe('either url or search_query must be provided');
  });

  test('a lone UTF-16 surrogate in a payload string is a 422 at its field, not a 500, and nothing is stored', async () => {
    // JSON.stringify writes a lone surrogate as the escape \ud800, which JSON.parse reads back as one.
    const before = await c.json<{ total: number }>(await c.get('/api/v1/jobs/list'));
    const d = await detail(await c.post('/api/v1/jobs/crawlMaps/submit', { search_query: 'cafe \ud800 leeds' }));
    expect(d.detail).toEqual([
      {
        type: 'string_unicode',
        loc: ['body', 'search_query'],
        msg: 'lone UTF-16 surrogates (\\ud800-\\udfff without their pair) are not accepted',
      },
    ]);
    const y = await c.post(
      '/api/v1/jobs/submit',
      'type: crawlSite\npayload:\n  url: "https://x.test/\\udc00"\n',
      'text/yaml',
    );
    expect((await detail(y)).detail[0]).toMatchObject({ type: 'string_unicode', loc: ['body', 'payload', 'url'] });
    // A well-formed pair (an emoji) is text like any other.
    expect(
      (await c.post('/api/v1/jobs/crawlMaps/submit', { search_query: `cafe \ud83c\udf70 ${randomUUID()}` })).status,
    ).toBe(201);
    expect((await c.json<{ total: number }>(await c.get('/api/v1/jobs/list'))).total).toBe(before.total + 1);
  });

  test('crawlMaps: a body with both a payload object and top-level payload keys is refused, naming both', async () => {
    // The nested payload was dropped without a word and the job ran with the top-level keys.
    const d = await detail(
      await c.post('/api/v1/jobs/crawlMaps/submit', { payload: { search_query: 'nested' }, search_query: 'top' }),
    );
    expect(d.detail).toEqual([
      {
        type: 'payload_conflict',
        loc: ['body', 'payload'],
        msg: 'give the payload either as the object `payload` or as top-level keys, not both (top-level: search_query)',
      },
    ]);
  });

  test('a missing job type is reported as missing', async () => {
    const d = await detail(await c.post('/api/v1/jobs/submit', { payload: {} }));
    expect(d.detail).toEqual([{ type: 'missing', loc: ['body', 'type'], msg: 'Field required' }]);
  });

  test("an empty priority is no priority: the type's default applies", async () => {
    const res = await c.post('/api/v1/jobs/submit', {
      type: 'crawlCompanyData',
      payload: queuedJob().payload,
      priority: '',
    });
    expect(res.status).toBe(201);
    const { job_id } = (await res.json()) as { job_id: string };
    expect(await c.json<{ priority: number }>(await c.get(`/api/v1/jobs/${job_id}/status`))).toMatchObject({
      priority: CATALOG.crawlCompanyData.defaultPriority,
    });
  });

  test('an unknown job type is 422; a known one without a worker implementation is 501', async () => {
    const d = await detail(await c.post('/api/v1/jobs/submit', { type: 'crawlMoon', payload: {} }));
    expect(d.detail[0]).toMatchObject({ loc: ['body', 'type'] });
    // Every type of the catalog has its worker side now: a deployment that serves only some says so for the others.
    const partial = await startTestApi({ RATE_LIMIT_ENABLED: 'false', ...ownQueues('jobs') }, ['crawlSite']);
    try {
      const res = await caller(partial, c.auth).post('/api/v1/jobs/submit', {
        type: 'crawlPeople',
        payload: { company_domain: 'acme.test' },
      });
      expect(res.status).toBe(501);
      expect(await res.json()).toEqual({ detail: 'job type crawlPeople is not available yet on this service' });
    } finally {
      await partial.close();
    }
  });
});

describe('status, results, list', () => {
  test('results are 202 while queued and processing (with worker_id), 410 for failed with the error', async () => {
    const slow = await c.json<{ job_id: string }>(
      await c.post('/api/v1/jobs/crawlSite/submit', site({ delay_ms: 1500 })),
    );
    await waitForStatus(c, slow.job_id, ['processing']);
    const processing = await c.get(`/api/v1/jobs/${slow.job_id}/results`);
    expect(processing.status).toBe(202);
    expect(await processing.json()).toMatchObject({
      success: false,
      status: 'processing',
      worker_id: 'jobs-test-worker',
      message: 'job is processing; poll again for results',
      data: null,
    });

    const queued = await c.json<{ job_id: string }>(await c.post('/api/v1/jobs/crawlCompanyData/submit', queuedJob()));
    const q = await c.get(`/api/v1/jobs/${queued.job_id}/results`);
    expect(q.status).toBe(202);
    expect(await q.json()).toMatchObject({
      success: false,
      status: 'queued',
      worker_id: null,
      message: 'job is queued; poll again for results',
    });

    const failingSite = site({ status: 503 });
    const failing = await c.json<{ job_id: string }>(await c.post('/api/v1/jobs/crawlSite/submit', failingSite));
    const failed = await waitForStatus(c, failing.job_id, ['failed']);
    const message = `${failingSite.payload.url} could not be crawled: the site answered HTTP 503`;
    expect(failed.error_message).toBe(message);
    const gone = await c.get(`/api/v1/jobs/${failing.job_id}/results`);
    expect(gone.status).toBe(410);
    expect(await gone.json()).toMatchObject({
      success: false,
      status: 'failed',
      error_message: message,
      worker_id: 'jobs-test-worker',
      processing_time_seconds: expect.any(Number),
      completed_at: expect.any(String),
      data: null,
    });
  });

  test('completion is idempotent: a completeJob retried after its commit (the worker died before reporting it) keeps the result', async () => {
    const { job_id } = await c.json<{ job_id: string }>(
      await c.post('/api/v1/jobs/crawlSite/submit', site({ leads: 2 })),
    );
    await waitForStatus(c, job_id, ['completed']);
    const before = await c.json(await c.get(`/api/v1/jobs/${job_id}/results`));
    expect((before.data as { emails: string[] }).emails).toHaveLength(2);
    // What Temporal does when the worker's completion report was lost: the same activity, again.
    const lifecycle = createJobLifecycleActivities({
      config: api.deps.config,
      db: api.deps.db,
      workerId: 'retrying-worker',
    } as ActivityDeps);
    expect(await lifecycle.completeJob({ jobId: job_id, resultsCount: 1 })).toEqual({ status: 'completed' });
    const after = await c.get(`/api/v1/jobs/${job_id}/results`);
    expect(after.status).toBe(200);
    expect(await after.json()).toEqual(before);
  });

  test('a completed job whose stored result is missing answers 500 with a request id, never an empty 200', async () => {
    const { job_id } = await c.json<{ job_id: string }>(await c.post('/api/v1/jobs/crawlSite/submit', site()));
    await waitForStatus(c, job_id, ['completed']);
    await api.deps.db('job_results').where({ job_id }).delete();
    const res = await c.get(`/api/v1/jobs/${job_id}/results`);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ detail: expect.stringMatching(/^internal server error \(request id .+\)$/) });
  });

  test("a malformed id is 400; an unknown id or another client's job is 404 everywhere", async () => {
    for (const path of ['/api/v1/jobs/nope/status', '/api/v1/jobs/nope/results']) {
      const res = await c.get(path);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ detail: 'invalid job id format, expected UUID' });
    }
    expect((await c.del('/api/v1/jobs/nope')).status).toBe(400);
    // However long: it was a 422 "too_big" past 200 characters.
    const long = await c.get(`/api/v1/jobs/${'a'.repeat(300)}/status`);
    expect([long.status, await long.json()]).toEqual([400, { detail: 'invalid job id format, expected UUID' }]);
    const mine = await c.json<{ job_id: string }>(await c.post('/api/v1/jobs/crawlSite/submit', site()));
    const intruder = caller(api, bearer(await api.newClient('intruder')));
    for (const res of [
      await intruder.get(`/api/v1/jobs/${mine.job_id}/status`),
      await intruder.get(`/api/v1/jobs/${mine.job_id}/results`),
      await intruder.del(`/api/v1/jobs/${mine.job_id}`),
      await c.get('/api/v1/jobs/00000000-0000-4000-8000-000000000000/status'),
    ]) {
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ detail: 'job not found' });
    }
    const list = await intruder.json<{ total: number }>(await intruder.get('/api/v1/jobs/list'));
    expect(list.total).toBe(0);
  });

  test('the list pages newest first and filters by status and type', async () => {
    const lister = caller(api, bearer(await api.newClient('lister')));
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push(
        (await lister.json<{ job_id: string }>(await lister.post('/api/v1/jobs/crawlSite/submit', site()))).job_id,
      );
    const company = (
      await lister.json<{ job_id: string }>(await lister.post('/api/v1/jobs/crawlCompanyData/submit', queuedJob()))
    ).job_id;
    const page1 = await lister.json<{ total: number; page: number; page_size: number; jobs: { job_id: string }[] }>(
      await lister.get('/api/v1/jobs/list?page_size=2'),
    );
    expect(page1).toMatchObject({ total: 4, page: 1, page_size: 2 });
    expect(page1.jobs.map((j) => j.job_id)).toEqual([company, ids[2]]);
    const page2 = await lister.json<{ jobs: { job_id: string }[] }>(
      await lister.get('/api/v1/jobs/list?page_size=2&page=2'),
    );
    expect(page2.jobs.map((j) => j.job_id)).toEqual([ids[1], ids[0]]);
    const sites = await lister.json<{ total: number }>(await lister.get('/api/v1/jobs/list?type_filter=crawlSite'));
    expect(sites.total).toBe(3);
    const queued = await lister.json<{ jobs: { job_id: string; status: string }[] }>(
      await lister.get('/api/v1/jobs/list?status_filter=queued&type_filter=crawlCompanyData'),
    );
    expect(queued.jobs).toEqual([
      expect.objectContaining({ job_id: company, status: 'queued', type: 'crawlCompanyData' }),
    ]);
    expect((await lister.get('/api/v1/jobs/list?page_size=101')).status).toBe(422);
    expect((await lister.get('/api/v1/jobs/list?status_filter=done')).status).toBe(422);
    // An unknown filter is refused, as on the campaign lists, not ignored (an unfiltered list read as a filtered one).
    const unknown = await lister.get('/api/v1/jobs/list?status=failed');
    expect([unknown.status, await unknown.json()]).toEqual([
      422,
      { detail: [{ type: 'extra_forbidden', loc: ['query'], msg: 'Unknown field(s): status' }] },
    ]);
    const md = await (await lister.get('/api/v1/jobs/list?format=md')).text();
    expect(md).toContain('| job_id | type | status |');
  });
});

describe('cancel', () => {
  test('a queued job is cancelled at once, stays listed, has no results, and cannot be cancelled again', async () => {
    const { job_id } = await c.json<{ job_id: string }>(
      await c.post('/api/v1/jobs/crawlCompanyData/submit', queuedJob()),
    );
    const res = await c.del(`/api/v1/jobs/${job_id}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ success: true, job_id, status: 'cancelled', message: 'job cancelled' });
    expect((await c.json(await c.get(`/api/v1/jobs/${job_id}/status`))).status).toBe('cancelled');
    const results = await c.get(`/api/v1/jobs/${job_id}/results`);
    expect(results.status).toBe(410);
    expect(await results.json()).toMatchObject({
      success: false,
      status: 'cancelled',
      completed_at: expect.any(String),
    });
    const again = await c.del(`/api/v1/jobs/${job_id}`);
    expect(again.status).toBe(400);
    expect(await again.json()).toEqual({ detail: 'cannot cancel a cancelled job: it is already terminal' });
    const list = await c.json<{ jobs: { job_id: string }[] }>(await c.get('/api/v1/jobs/list?status_filter=cancelled'));
    expect(list.jobs.map((j) => j.job_id)).toContain(job_id);
  });

  test('a processing job stops within 3 seconds and its partial results are discarded', async () => {
    // A site whose page takes a minute to answer: the crawl is mid-request when the cancel comes.
    const slowSite = site({ delay_ms: 60000 });
    const { job_id } = await c.json<{ job_id: string }>(await c.post('/api/v1/jobs/crawlSite/submit', slowSite));
    await waitForStatus(c, job_id, ['processing']);
    while (sites.requests(slowSite.payload.url).length === 0) await new Promise((r) => setTimeout(r, 20));
    const cancelledAt = Date.now();
    expect((await c.del(`/api/v1/jobs/${job_id}`)).status).toBe(200);
    expect((await c.json(await c.get(`/api/v1/jobs/${job_id}/status`))).status).toBe('cancelled');
    // The worker hangs up on the site: the crawl stopped.
    const deadline = Date.now() + 5000;
    while (!sites.requests(slowSite.payload.url)[0]?.abortedAt && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect((sites.requests(slowSite.payload.url)[0]?.abortedAt ?? Infinity) - cancelledAt).toBeLessThan(3000);
    await new Promise((r) => setTimeout(r, 500));
    expect(await api.deps.db('job_results').where({ job_id }).first()).toBeUndefined();
    expect((await c.get(`/api/v1/jobs/${job_id}/results`)).status).toBe(410);
  });

  test("a cancelled job's result over 256 KB is deleted from storage too, not only its row", async () => {
    // The moment the discard is for: the work saved its result (large: it lives in the results
    // bucket), then the client's cancel came before completeJob, which finds the job cancelled.
    const { job_id } = await c.json<{ job_id: string }>(
      await c.post('/api/v1/jobs/crawlCompanyData/submit', queuedJob()),
    );
    await api.deps.db('jobs').where({ id: job_id }).update({ status: 'processing', started_at: new Date() });
    const { storage } = api.deps;
    const store = new JobResultStore(api.deps.db, storage);
    await store.save(job_id, { filler: 'x'.repeat(300 * 1024) });
    const { object_key } = await api.deps.db('job_results').where({ job_id }).first();
    expect(object_key).toBe(resultObjectKey(job_id));
    expect((await storage.get(storage.resultsBucket, object_key)).length).toBeGreaterThan(256 * 1024);
    expect((await c.del(`/api/v1/jobs/${job_id}`)).status).toBe(200);
    const lifecycle = createJobLifecycleActivities({
      config: api.deps.config,
      db: api.deps.db,
      storage,
      workerId: 'late-worker',
    } as ActivityDeps);
    expect(await lifecycle.completeJob({ jobId: job_id, resultsCount: 1 })).toEqual({ status: 'cancelled' });
    expect(await api.deps.db('job_results').where({ job_id }).first()).toBeUndefined();
    await expect(storage.get(storage.resultsBucket, object_key)).rejects.toThrow();
    expect((await c.get(`/api/v1/jobs/${job_id}/results`)).status).toBe(410);
  });

  test('a job that outlives its deadline is stopped and fails saying it ran out of time', async () => {
    // Submitted as the API does (job row, workflow start in the same transaction), except for a
    // deadline shortened to 3 s: the one thing a test cannot wait 10 minutes for.
    const creds = await api.newClient('deadline');
    const owner = caller(api, bearer(creds));
    const url = sites.url({ delay_ms: 60000 });
    const payload = CATALOG.crawlSite.payload.parse({ url }) as Record<string, unknown>;
    const id = randomUUID();
    const { config, temporal } = api.deps;
    await new JobRepository(api.deps.db, config.DATABASE_SCHEMA).submit(
      {
        id,
        clientId: creds.client_id,
        type: 'crawlSite',
        priority: 5,
        payload,
        payloadHash: payloadHash(payload),
        campaignId: null,
        workflowId: `job/${id}`,
        taskQueue: jobTaskQueue(config.TASK_QUEUE_PREFIX, CATALOG.crawlSite),
      },
      { dedupeWindowMs: 0 },
      async (job) => {
        const input = runJobInput(job, config);
        await temporal.client.workflow.start(runJob, {
          taskQueue: job.task_queue,
          workflowId: job.workflow_id,
          args: [{ ...input, limits: { ...input.limits, deadlineMs: 3000 } }],
        });
      },
    );
    const failed = await waitForStatus(owner, id, ['failed', 'completed', 'cancelled'], 30_000);
    expect(failed).toMatchObject({
      status: 'failed',
      error_message: "crawlSite ran out of time: the job's 3 seconds limit was reached before it finished",
    });
    // The crawl was stopped: the worker hung up on the slow site.
    expect(sites.requests(url)[0]?.abortedAt).toEqual(expect.any(Number));
    expect((await owner.get(`/api/v1/jobs/${id}/results`)).status).toBe(410);
  });

  test('completed and failed jobs cannot be cancelled', async () => {
    const done = await c.json<{ job_id: string }>(await c.post('/api/v1/jobs/crawlSite/submit', site()));
    await waitForStatus(c, done.job_id, ['completed']);
    const res = await c.del(`/api/v1/jobs/${done.job_id}`);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ detail: 'cannot cancel a completed job' });
    const bad = await c.json<{ job_id: string }>(await c.post('/api/v1/jobs/crawlSite/submit', site({ status: 404 })));
    await waitForStatus(c, bad.job_id, ['failed']);
    expect(await (await c.del(`/api/v1/jobs/${bad.job_id}`)).json()).toEqual({
      detail: 'cannot cancel a failed job: it is already terminal',
    });
  });
});
