import { randomUUID } from 'node:crypto';
import { NOT_A_WORKFLOW_JOB } from '../../api/workflow-results';
import { workflowResults, type WorkflowBusinessEntry, type WorkflowResults } from '../../jobs/workflow';
import { bearer, ownQueues, startTestApi, type TestApi } from '../support/api';
import { caller, waitForStatus, type Caller } from '../support/jobs';
import { startTestWorker, type TestWorker } from '../support/worker';
import { startDnsStandIn, type DnsStandIn } from '../stand-ins/dns';
import {
  leedsBakeries,
  startGooglePlacesStandIn,
  type GooglePlacesStandIn,
  type StandInPlace,
} from '../stand-ins/google-places';
import { startLeadSites, type LeadSites } from '../stand-ins/lead-sites';
import { startSmtpStandIn, type SmtpStandIn } from '../stand-ins/smtp';

// The maps -> site -> verify pipeline over HTTP through the real API and worker on the stack: maps
// listings from the Google Places stand-in whose websites are lead-sites stand-in sites, their
// e-mails verified against the DNS and SMTP stand-ins.
jest.setTimeout(180_000);

const KEY = 'AIzaStandInKey-0123456789';
const MAIL_DOMAIN = 'pipeline.test';

let places: GooglePlacesStandIn;
let sites: LeadSites;
let dns: DnsStandIn;
let smtp: SmtpStandIn;
let api: TestApi;
let worker: TestWorker;
let c: Caller;
let clientId: string;
let env: Record<string, string>;

beforeAll(async () => {
  [places, sites, smtp] = await Promise.all([
    startGooglePlacesStandIn({ apiKey: KEY, places: [] }),
    startLeadSites(),
    startSmtpStandIn({ catchAllDomain: 'catchall.test' }),
  ]);
  dns = await startDnsStandIn({
    [MAIL_DOMAIN]: { mx: [{ exchange: `mx.${MAIL_DOMAIN}`, priority: 10 }] },
    [`mx.${MAIL_DOMAIN}`]: { a: [smtp.address] },
  });
  env = {
    ...ownQueues('pipeline'),
    RATE_LIMIT_ENABLED: 'false',
    GOOGLE_PLACES_BASE_URL: places.baseUrl,
    GOOGLE_PLACES_API_KEY: KEY,
    DNS_SERVERS: dns.server,
    SMTP_PROBE_PORT: String(smtp.port),
    SMTP_HELO_NAME: 'probe.leadjobs.test',
    USER_URL_ALLOW_HOSTS: '127.0.0.0/8',
  };
  api = await startTestApi(env);
  worker = await startTestWorker({
    types: ['crawlMaps', 'crawlSite', 'crawlVerify'],
    identity: 'pipeline-worker',
    overrides: env,
  });
  const creds = await api.newClient();
  clientId = creds.client_id;
  c = caller(api, bearer(creds));
});

afterAll(async () => {
  await worker?.stop();
  await api?.close();
  await Promise.all([places?.close(), sites?.close(), dns?.close(), smtp?.close()]);
});

let placeCounter = 0;
/** A listing of the stand-in found by the search "<tag> in Leeds"; without website when none is given. */
function addPlace(tag: string, name: string, website: string | null): string {
  const template: StandInPlace = { ...(leedsBakeries(1)[0] as StandInPlace) };
  delete template.websiteUri;
  const id = `ChIJpipeline${tag}${String(placeCounter++).padStart(4, '0')}`;
  places.places.push({
    ...template,
    id,
    displayName: { text: name, languageCode: 'en' },
    ...(website ? { websiteUri: website } : {}),
    types: [tag],
    primaryType: tag,
    photos: [],
    reviews: [],
  });
  return id;
}

const tagOf = () => `pipe${randomUUID().slice(0, 8)}`;
const emailsParam = (...locals: string[]) => locals.map((l) => `${l}@${MAIL_DOMAIN}`).join(',');

async function submit(
  as: Caller,
  tag: string,
  workflow: Record<string, unknown> | null = { enabled: true },
): Promise<string> {
  const res = await as.post('/api/v1/jobs/crawlMaps/submit', {
    search_query: `${tag} in Leeds`,
    max_results: 10,
    ...(workflow ? { workflow } : {}),
  });
  expect(res.status).toBe(201);
  return (await as.json<{ job_id: string }>(res)).job_id;
}

async function results(as: Caller, path: string): Promise<WorkflowResults> {
  const res = await as.get(path);
  expect(res.status).toBe(200);
  const body = await as.json<WorkflowResults>(res);
  // Every field of spec §4.3 and §2.8, nothing else.
  expect(() => workflowResults.strict().parse(body)).not.toThrow();
  return body;
}

const entry = (body: WorkflowResults, placeId: string) =>
  body.businesses.find((b) => b.business_place_id === placeId) as WorkflowBusinessEntry;

describe('maps -> site -> verify pipeline', () => {
  let completedJob: string;
  let leadPlace: string;
  let leadSite: string;

  test('a site with leads is crawled and its e-mails verified; a facebook page is filtered; a business without website is skipped', async () => {
    const tag = tagOf();
    leadSite = await sites.ownHost({ emails: emailsParam('alice', 'info') });
    leadPlace = addPlace(tag, 'Pipeline Bakery', leadSite);
    const facebook = addPlace(tag, 'Social Bakery', 'https://www.facebook.com/socialbakery');
    const noSite = addPlace(tag, 'Offline Bakery', null);
    completedJob = await submit(c, tag);

    const body = await results(c, `/api/v1/jobs/${completedJob}/workflow-results`);
    expect(body).toMatchObject({
      success: true,
      has_results: true,
      job_id: completedJob,
      campaign_id: null,
      status: 'completed',
      progress: null,
      businesses_total: 3,
      businesses_with_domains: 2,
      businesses_filtered: 1,
      spidersite_completed: 1,
      spidersite_failed: 0,
      spiderverify_completed: 1,
      spiderverify_failed: 0,
      total_emails_found: 2,
      total_valid_emails: 1,
      spidersite_timed_out: false,
      spiderverify_timed_out: false,
      error_message: null,
    });
    expect(body.processing_time_seconds).toBeGreaterThan(0);
    // Maps order.
    expect(body.businesses.map((b) => b.business_place_id)).toEqual([leadPlace, facebook, noSite]);
    expect(entry(body, leadPlace)).toMatchObject({
      business_name: 'Pipeline Bakery',
      business_website: leadSite,
      domain_filtered: false,
      filter_reason: null,
      spidersite_status: 'completed',
      pages_crawled: 1,
      emails_found: [`alice@${MAIL_DOMAIN}`, `info@${MAIL_DOMAIN}`],
      spidersite_error: null,
      spiderverify_status: 'completed',
      valid_emails_count: 1,
      spiderverify_error: null,
    });
    expect(entry(body, leadPlace).emails_verified).toEqual(
      expect.arrayContaining([
        {
          email: `alice@${MAIL_DOMAIN}`,
          status: 'valid',
          score: 100,
          is_deliverable: true,
          is_free_email: false,
          is_disposable: false,
          is_role_account: false,
        },
        expect.objectContaining({ email: `info@${MAIL_DOMAIN}`, status: 'risky', is_role_account: true }),
      ]),
    );
    expect(entry(body, facebook)).toMatchObject({
      domain_filtered: true,
      filter_reason: 'social_media: facebook.com',
      spidersite_status: 'skipped',
      spiderverify_status: 'skipped',
      emails_found: [],
    });
    expect(entry(body, noSite)).toMatchObject({
      business_website: null,
      domain_filtered: false,
      spidersite_status: 'skipped',
      spiderverify_status: 'skipped',
    });
    // The filtered listing's site was never fetched; the lead site once.
    expect(sites.requests(leadSite)).toHaveLength(1);

    // The same body in YAML.
    const yaml = await c.get(`/api/v1/jobs/${completedJob}/workflow-results?wait=false&format=yaml`);
    expect(yaml.status).toBe(200);
    expect(await yaml.text()).toContain('status: completed');
  });

  test("the pipeline's businesses land in IDAP as one business per place, merged with its site data and verified e-mails", async () => {
    const db = api.deps.db;
    // Lead indexing and projection run after the pipeline's end; the rows are already written by then.
    const rows = (await db('idap_resources')
      .where({ client_id: clientId, resource_type: 'businesses' })
      .whereRaw(`data->>'place_id' = ?`, [leadPlace])) as {
      id: string;
      data: Record<string, unknown>;
      sources: string[];
    }[];
    expect(rows).toHaveLength(1);
    const business = rows[0] as { id: string; data: Record<string, unknown>; sources: string[] };
    expect(business.data).toMatchObject({ name: 'Pipeline Bakery', email: `alice@${MAIL_DOMAIN}` });
    expect(business.sources).toEqual(expect.arrayContaining(['crawl_maps', 'crawl_site']));
    const domain = new URL(leadSite).hostname;
    expect(
      await db('idap_resources')
        .where({ client_id: clientId, resource_type: 'businesses' })
        .whereRaw(`data->>'domain' = ?`, [domain]),
    ).toHaveLength(1);
    const email = (await db('idap_resources')
      .where({ client_id: clientId, resource_type: 'emails', natural_key: `alice@${MAIL_DOMAIN}` })
      .first()) as { data: Record<string, unknown> } | undefined;
    expect(email?.data).toMatchObject({ verified: true, verification_status: 'valid' });

    // And in lead search, as one lead with its verified e-mail.
    let hits: { doc_id: string; name: string | null; email: string | null; email_verified: boolean }[] = [];
    for (let i = 0; i < 150 && !hits.some((h) => h.doc_id === business.id); i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 200));
      const res = await c.get(
        `/api/v1/search/leads?query=${encodeURIComponent('Pipeline Bakery')}&email_verified=true`,
      );
      hits = (await c.json<{ hits: typeof hits }>(res)).hits ?? [];
    }
    expect(hits.filter((h) => h.doc_id === business.id)).toEqual([
      expect.objectContaining({ name: 'Pipeline Bakery', email: `alice@${MAIL_DOMAIN}`, email_verified: true }),
    ]);
  });

  test("a site whose start page answers 500 makes completed_with_errors; the other site's data is there", async () => {
    const tag = tagOf();
    const broken = addPlace(tag, 'Broken Bakery', await sites.ownHost({ status: 500 }));
    const good = addPlace(tag, 'Good Bakery', await sites.ownHost({ emails: emailsParam('bob') }));
    const jobId = await submit(c, tag);
    const body = await results(c, `/api/v1/jobs/${jobId}/workflow-results?wait=true`);
    expect(body).toMatchObject({
      success: true,
      has_results: true,
      status: 'completed_with_errors',
      spidersite_completed: 1,
      spidersite_failed: 1,
      total_valid_emails: 1,
    });
    expect(entry(body, broken)).toMatchObject({
      spidersite_status: 'failed',
      spidersite_error: expect.stringContaining('HTTP 500'),
      spiderverify_status: 'skipped',
    });
    expect(entry(body, good)).toMatchObject({
      spidersite_status: 'completed',
      spiderverify_status: 'completed',
      valid_emails_count: 1,
    });
  });

  test('wait=false while the sites are crawled answers processing with progress; wait=true then answers the end', async () => {
    const tag = tagOf();
    const slow = addPlace(tag, 'Slow Bakery', await sites.ownHost({ delay_ms: 5000, emails: emailsParam('alice') }));
    const jobId = await submit(c, tag);
    await waitForStatus(c, jobId, ['completed'], 60_000);
    let body = await results(c, `/api/v1/jobs/${jobId}/workflow-results?wait=false`);
    for (let i = 0; i < 50 && body.progress?.stage !== 'site'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      body = await results(c, `/api/v1/jobs/${jobId}/workflow-results?wait=false`);
    }
    expect(body).toMatchObject({
      success: false,
      has_results: false,
      status: 'processing',
      progress: { stage: 'site', businesses_total: 1, spidersite_done: 0, spiderverify_done: 0, percent: 0 },
    });
    expect(entry(body, slow).spidersite_status).toMatch(/pending|processing/);
    body = await results(c, `/api/v1/jobs/${jobId}/workflow-results`);
    expect(body).toMatchObject({ success: true, status: 'completed', progress: null, total_valid_emails: 1 });
  });

  test('cancelling the job\'s workflow while its pipeline runs (a campaign cancel) stops the stages; the pipeline fails "cancelled" and keeps what was stored', async () => {
    const tag = tagOf();
    const done = addPlace(tag, 'Done Bakery', await sites.ownHost({ emails: emailsParam('alice') }));
    const hangingUrl = await sites.ownHost({ delay_ms: 60_000, emails: emailsParam('bob') });
    const hanging = addPlace(tag, 'Hanging Bakery', hangingUrl);
    const jobId = await submit(c, tag);
    let body = await results(c, `/api/v1/jobs/${jobId}/workflow-results?wait=false`);
    for (
      let i = 0;
      i < 300 && !(entry(body, done)?.spiderverify_status === 'completed' && sites.requests(hangingUrl).length > 0);
      i++
    ) {
      await new Promise((r) => setTimeout(r, 100));
      body = await results(c, `/api/v1/jobs/${jobId}/workflow-results?wait=false`);
    }
    expect(body.status).toBe('processing');
    const cancelledAt = Date.now();
    await api.deps.temporal.client.workflow.getHandle(`job/${jobId}`).cancel();
    body = await results(c, `/api/v1/jobs/${jobId}/workflow-results`);
    expect(body).toMatchObject({ success: false, has_results: false, status: 'failed', error_message: 'cancelled' });
    expect(entry(body, done)).toMatchObject({
      spidersite_status: 'completed',
      spiderverify_status: 'completed',
      valid_emails_count: 1,
    });
    expect(entry(body, hanging)).toMatchObject({ spidersite_status: 'skipped', spidersite_error: 'cancelled' });
    const [request] = sites.requests(hangingUrl);
    expect(request?.abortedAt).toBeDefined();
    expect((request?.abortedAt ?? Infinity) - cancelledAt).toBeLessThan(3000);
    // The maps job itself stays completed.
    expect(await c.json(await c.get(`/api/v1/jobs/${jobId}/status`))).toMatchObject({ status: 'completed' });
  });

  test("errors: malformed ids, another client's job, a job without workflow, campaign paths", async () => {
    const detail = async (path: string, as: Caller = c) => {
      const res = await as.get(path);
      return { status: res.status, detail: ((await res.json()) as { detail: unknown }).detail };
    };
    expect(await detail('/api/v1/jobs/not-a-uuid/workflow-results')).toEqual({
      status: 400,
      detail: 'invalid job id format, expected UUID',
    });
    expect(await detail(`/api/v1/jobs/${randomUUID()}/workflow-results`)).toEqual({
      status: 404,
      detail: 'job not found',
    });
    const other = caller(api, bearer(await api.newClient('other')));
    expect(await detail(`/api/v1/jobs/${completedJob}/workflow-results?wait=false`, other)).toEqual({
      status: 404,
      detail: 'job not found',
    });
    const plain = await submit(c, tagOf(), null);
    expect(await detail(`/api/v1/jobs/${plain}/workflow-results`)).toEqual({ status: 400, detail: NOT_A_WORKFLOW_JOB });
    const disabled = await submit(c, tagOf(), { enabled: false });
    expect(await detail(`/api/v1/jobs/${disabled}/workflow-results`)).toEqual({
      status: 400,
      detail: NOT_A_WORKFLOW_JOB,
    });

    // Campaign rows written directly: the campaign API is another part of this work.
    const db = api.deps.db;
    const campaign = async (workflow: Record<string, unknown> | null) => {
      const id = randomUUID();
      await db('campaigns').insert({
        id,
        client_id: clientId,
        name: 'test campaign',
        search_terms: ['bakery'],
        max_results_per_location: 10,
        workflow: workflow ? JSON.stringify(workflow) : null,
        priority: 0,
        concurrency: 1,
        auto_submit: true,
        locations_total: 1,
        workflow_id: `campaign/${id}`,
        task_queue: 'unused',
      });
      return id;
    };
    const withWorkflow = await campaign({ enabled: true });
    const withoutWorkflow = await campaign(null);
    const path = (campaignId: string, jobId: string) =>
      `/api/v1/jobs/crawlMaps/campaigns/${campaignId}/jobs/${jobId}/results?wait=false`;
    expect(await detail(path('nope', completedJob))).toEqual({
      status: 400,
      detail: 'invalid campaign id format, expected UUID',
    });
    expect(await detail(path(withWorkflow, 'nope'))).toEqual({
      status: 400,
      detail: 'invalid job id format, expected UUID',
    });
    expect(await detail(path(randomUUID(), completedJob))).toEqual({ status: 404, detail: 'campaign not found' });
    expect(await detail(path(withWorkflow, completedJob), other)).toEqual({
      status: 404,
      detail: 'campaign not found',
    });
    // The job is not one of the campaign's.
    expect(await detail(path(withWorkflow, completedJob))).toEqual({ status: 404, detail: 'job not found' });
    await db('jobs').where({ id: completedJob }).update({ campaign_id: withWorkflow });
    const body = await results(c, path(withWorkflow, completedJob));
    expect(body).toMatchObject({
      job_id: completedJob,
      campaign_id: withWorkflow,
      status: 'completed',
      total_valid_emails: 1,
    });
    // UUIDs in any case, as everywhere else (the campaign id in upper case was "job not found").
    expect(await results(c, path(withWorkflow.toUpperCase(), completedJob.toUpperCase()))).toMatchObject({
      job_id: completedJob,
      campaign_id: withWorkflow,
      status: 'completed',
    });
    await db('jobs').where({ id: plain }).update({ campaign_id: withoutWorkflow });
    expect(await detail(path(withoutWorkflow, plain))).toEqual({
      status: 400,
      detail: 'campaign without workflow configuration',
    });
  });
});

test('the OpenAPI document describes both endpoints with the §4.3 body and resolvable references', async () => {
  const doc = (await (await fetch(`${api.url}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { responses: Record<string, unknown>; parameters?: { name: string }[] }>>;
    components: { schemas: Record<string, unknown> };
  };
  for (const path of [
    '/api/v1/jobs/{job_id}/workflow-results',
    '/api/v1/jobs/crawlMaps/campaigns/{campaign_id}/jobs/{job_id}/results',
  ]) {
    const op = doc.paths[path]?.get;
    expect(Object.keys(op?.responses ?? {})).toEqual(expect.arrayContaining(['200', '400', '404']));
    expect(op?.parameters?.map((p) => p.name)).toContain('wait');
  }
  expect(Object.keys(doc.components.schemas)).toEqual(
    expect.arrayContaining(['WorkflowResults', 'WorkflowBusinessEntry']),
  );
  for (const ref of JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? [])
    expect(Object.keys(doc.components.schemas)).toContain(ref.split('/').pop()?.replace('"', ''));
});

describe('time limits (shortened on the worker)', () => {
  beforeAll(async () => {
    await worker.stop();
    // One site at a time, 3 s per site, 15 s overall: the pipeline below reaches both limits. The first
    // hanging site has some 7 s of slack to start before the deadline leaves it less than its 3 s (at 11 s
    // overall a maps stage slowed by a loaded CI machine used up the 4 s of slack there were).
    worker = await startTestWorker({
      types: ['crawlMaps', 'crawlSite', 'crawlVerify'],
      identity: 'pipeline-worker-short',
      overrides: {
        ...env,
        WORKFLOW_BUSINESS_CONCURRENCY: '1',
        WORKFLOW_SITE_TIMEOUT_SECONDS: '3',
        WORKFLOW_OVERALL_TIMEOUT_SECONDS: '15',
      },
    });
  });

  test("sites that hang time out (their stage, then the overall deadline): partial with the other business's data", async () => {
    const tag = tagOf();
    const fast = addPlace(tag, 'Fast Bakery', await sites.ownHost({ emails: emailsParam('alice') }));
    const hanging: { place: string; url: string }[] = [];
    for (let i = 0; i < 5; i++) {
      const url = await sites.ownHost({ delay_ms: 60_000, emails: emailsParam('bob') });
      hanging.push({ place: addPlace(tag, `Hanging Bakery ${i}`, url), url });
    }
    // A slow maps stage: spec §8's "overall max 10 min" is the workflow's, maps -> site -> verify,
    // so its time counts. The overall limit ran from the pipeline's start, after the maps job.
    places.setDelay(4000);
    let jobId: string;
    try {
      jobId = await submit(c, tag);
      await waitForStatus(c, jobId, ['completed', 'failed'], 30_000);
    } finally {
      places.setDelay(0);
    }
    const body = await results(c, `/api/v1/jobs/${jobId}/workflow-results`);
    // 15 s from the maps job's start (plus the moments a stage takes to stop), not 4 + 15.
    expect(body.processing_time_seconds).toBeLessThan(17);
    expect(body).toMatchObject({
      success: true,
      has_results: true,
      status: 'partial',
      businesses_total: 6,
      spidersite_completed: 1,
      spidersite_failed: 5,
      spidersite_timed_out: true,
      spiderverify_timed_out: false,
      total_valid_emails: 1,
      progress: null,
    });
    expect(entry(body, fast)).toMatchObject({
      spidersite_status: 'completed',
      spiderverify_status: 'completed',
      valid_emails_count: 1,
    });
    for (const h of hanging) expect(entry(body, h.place).spidersite_status).toBe('timed_out');
    // The first hanging sites ran out of their stage's time, the one in flight at the deadline was cancelled: every request was hung up.
    expect(entry(body, hanging[0]?.place as string).spidersite_error).toContain('site stage timed out');
    // How many hanging sites were asked before the deadline depends on the machine's load (1-4: at
    // best 4 + 3 + 3 + 3 s have passed when the fourth starts).
    const requested = hanging.flatMap((h) => sites.requests(h.url));
    expect(requested.length).toBeGreaterThanOrEqual(1);
    expect(requested.every((r) => r.abortedAt !== undefined)).toBe(true);
    // The last one never started (4 + 4 x 3 s > 15 s): the deadline came first.
    expect(sites.requests(hanging[4]?.url as string)).toHaveLength(0);
  });
});
