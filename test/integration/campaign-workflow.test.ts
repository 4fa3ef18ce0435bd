import type { IssuedCredentials } from '../../lib/credentials';
import { workflowResults, type WorkflowBusinessEntry, type WorkflowResults } from '../../jobs/workflow';
import { bearer, ownQueues, startTestApi, type TestApi } from '../support/api';
import { caller, type Caller } from '../support/jobs';
import { SseReader } from '../support/sse';
import { startTestWorker, type TestWorker } from '../support/worker';
import { startDnsStandIn, type DnsStandIn } from '../stand-ins/dns';
import {
  cityPlaces,
  startGooglePlacesStandIn,
  type GooglePlacesStandIn,
  type StandInPlace,
} from '../stand-ins/google-places';
import { startLeadSites, type LeadSites } from '../stand-ins/lead-sites';
import { startSmtpStandIn, type SmtpStandIn } from '../stand-ins/smtp';

// The issue's end-to-end case: a 3-location campaign with the maps -> site -> verify workflow, over
// HTTP through the real API and worker on the stack, against stand-in Google Places (places per
// city), company websites (each on a loopback address of its own) and DNS + SMTP for verification.
// Leeds has a bakery with a site and one whose "website" is a Facebook page; Manchester one with a
// site and one without; Bristol one whose site never answers. The site stage is shortened to 8 s,
// so Bristol's job ends `partial` while the others complete.
jest.setTimeout(180_000);

const KEY = 'AIzaStandInKey-campaign-workflow-0123';
const MAIL_DOMAIN = 'campaign-workflow.test';

let places: GooglePlacesStandIn;
let sites: LeadSites;
let dns: DnsStandIn;
let smtp: SmtpStandIn;
let api: TestApi;
let worker: TestWorker;
let creds: IssuedCredentials;
let c: Caller;
const readers: SseReader[] = [];

/** One place of `city` with `website` (none when null). */
function place(city: string, n: number, name: string, website: string | null): StandInPlace {
  const [p] = cityPlaces(city, 'bakery', n);
  const { websiteUri: _none, ...rest } = { ...(p as StandInPlace), id: `ChIJcampaignWorkflow${city}${n}` };
  return { ...rest, displayName: { text: name, languageCode: 'en' }, ...(website ? { websiteUri: website } : {}) };
}

beforeAll(async () => {
  [sites, smtp] = await Promise.all([startLeadSites(), startSmtpStandIn({ catchAllDomain: 'catchall.test' })]);
  dns = await startDnsStandIn({
    [MAIL_DOMAIN]: { mx: [{ exchange: `mx.${MAIL_DOMAIN}`, priority: 10 }] },
    [`mx.${MAIL_DOMAIN}`]: { a: [smtp.address] },
  });
  const mail = (...locals: string[]) => locals.map((l) => `${l}@${MAIL_DOMAIN}`).join(',');
  places = await startGooglePlacesStandIn({
    apiKey: KEY,
    byCity: true,
    places: [
      place('Leeds', 1, 'Leeds Crust', await sites.ownHost({ emails: mail('alice', 'info') })),
      place('Leeds', 2, 'Leeds Social Bakery', 'https://www.facebook.com/leedssocialbakery'),
      place('Manchester', 1, 'Manchester Loaf', await sites.ownHost({ emails: mail('bob') })),
      place('Manchester', 2, 'Manchester Offline', null),
      place('Bristol', 1, 'Bristol Slow', await sites.ownHost({ delay_ms: 120_000 })),
    ],
  });
  const env = {
    ...ownQueues('campaign-workflow'),
    RATE_LIMIT_ENABLED: 'false',
    GOOGLE_PLACES_BASE_URL: places.baseUrl,
    GOOGLE_PLACES_API_KEY: KEY,
    DNS_SERVERS: dns.server,
    SMTP_PROBE_PORT: String(smtp.port),
    SMTP_HELO_NAME: 'probe.leadjobs.test',
    USER_URL_ALLOW_HOSTS: '127.0.0.0/8',
    WORKFLOW_SITE_TIMEOUT_SECONDS: '8',
  };
  api = await startTestApi(env);
  worker = await startTestWorker({
    types: ['crawlMaps', 'crawlSite', 'crawlVerify'],
    identity: 'campaign-workflow-worker',
    overrides: env,
  });
  creds = await api.newClient();
  c = caller(api, bearer(creds));
});

afterAll(async () => {
  await Promise.all(readers.map((r) => r.close()));
  await worker?.stop();
  await api?.close();
  await Promise.all([places?.close(), sites?.close(), dns?.close(), smtp?.close()]);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const entry = (body: WorkflowResults, name: string) =>
  body.businesses.find((b) => b.business_name === name) as WorkflowBusinessEntry;

interface JobItem {
  job_id: string;
  search_string: string;
  status: string;
  job_status: string;
  results_count: number;
}

test('a 3-location campaign with the workflow: filtered directory site, a hanging site ends partial, summary counts, campaign.terminal, export', async () => {
  const created = await c.post('/api/v1/campaigns', {
    name: 'bakeries with e-mails',
    search_terms: ['bakery'],
    locations: [
      { city: 'Leeds', country: 'GB' },
      { city: 'Manchester', country: 'GB' },
      { city: 'Bristol', country: 'GB' },
    ],
    max_results_per_location: 5,
    workflow: { enabled: true, site: { max_pages: 3 }, verify: { smtp_check: true } },
  });
  expect(created.status).toBe(201);
  const { campaign_id: id } = await c.json<{ campaign_id: string }>(created);
  const sse = await new SseReader().open(
    `${api.url}/api/v1/events/stream?token=${encodeURIComponent(`${creds.client_id}:${creds.api_key}:${creds.api_secret}`)}&campaign_id=${id}&last_event_id=0`,
  );
  readers.push(sse);

  // The campaign ends only once every location's pipeline has ended.
  let record: Record<string, unknown> = {};
  for (let i = 0; i < 600 && (record.status ?? 'running') === 'running'; i++) {
    record = await c.json(await c.get(`/api/v1/campaigns/${id}`));
    if (record.status === 'running') await sleep(200);
  }
  expect(record).toMatchObject({
    status: 'completed',
    summary: { pending: 0, submitted: 0, completed: 3, failed: 0, skipped: 0 },
    progress: { done: 3, total: 3, percent: 100 },
    totals: { businesses: 5, emails_found: 3, valid_emails: 2 },
  });

  const items = await c.json<{ jobs: JobItem[]; summary: Record<string, number> }>(
    await c.get(`/api/v1/jobs/crawlMaps/campaigns/${id}/jobs`),
  );
  expect(items.summary).toEqual({ pending: 0, submitted: 0, completed: 3, failed: 0, skipped: 0 });
  expect(items.jobs.map((j) => [j.search_string, j.status, j.job_status, j.results_count])).toEqual([
    ['bakery in Leeds, GB', 'completed', 'completed', 2],
    ['bakery in Manchester, GB', 'completed', 'completed', 2],
    ['bakery in Bristol, GB', 'completed', 'completed', 1],
  ]);
  const [leedsJob, manchesterJob, bristolJob] = items.jobs.map((j) => j.job_id);

  const results = async (jobId: string | undefined): Promise<WorkflowResults> => {
    const res = await c.get(`/api/v1/jobs/crawlMaps/campaigns/${id}/jobs/${jobId}/results?wait=false`);
    expect(res.status).toBe(200);
    const body = await c.json<WorkflowResults>(res);
    expect(() => workflowResults.strict().parse(body)).not.toThrow();
    return body;
  };

  const leeds = await results(leedsJob);
  expect(leeds).toMatchObject({
    success: true,
    has_results: true,
    campaign_id: id,
    status: 'completed',
    businesses_total: 2,
    businesses_filtered: 1,
    total_emails_found: 2,
    total_valid_emails: 1,
  });
  expect(entry(leeds, 'Leeds Social Bakery')).toMatchObject({
    domain_filtered: true,
    spidersite_status: 'skipped',
    spiderverify_status: 'skipped',
    emails_found: [],
  });
  expect(entry(leeds, 'Leeds Social Bakery').filter_reason).toMatch(/facebook\.com/);
  const crust = entry(leeds, 'Leeds Crust');
  expect(crust).toMatchObject({
    domain_filtered: false,
    spidersite_status: 'completed',
    spiderverify_status: 'completed',
    valid_emails_count: 1,
  });
  expect(crust.emails_verified.map((e) => [e.email, e.status]).sort()).toEqual([
    [`alice@${MAIL_DOMAIN}`, 'valid'],
    [`info@${MAIL_DOMAIN}`, 'risky'],
  ]);

  const manchester = await results(manchesterJob);
  expect(manchester).toMatchObject({ status: 'completed', businesses_total: 2, total_valid_emails: 1 });
  expect(entry(manchester, 'Manchester Offline')).toMatchObject({
    business_website: null,
    spidersite_status: 'skipped',
    domain_filtered: false,
  });

  // The site that never answers: its stage timed out, the job's results are partial but successful.
  const bristol = await results(bristolJob);
  expect(bristol).toMatchObject({
    success: true,
    has_results: true,
    status: 'partial',
    spidersite_timed_out: true,
    businesses_total: 1,
  });
  expect(entry(bristol, 'Bristol Slow').spidersite_status).toBe('timed_out');

  // The campaign-wide aggregate adds the three up.
  const aggregate = await c.json<Record<string, unknown>>(await c.get(`/api/v1/campaigns/${id}/workflow-results`));
  expect(aggregate).toMatchObject({
    campaign_id: id,
    businesses_total: 5,
    businesses_filtered: 1,
    total_emails_found: 3,
    total_valid_emails: 2,
    spidersite_timed_out: true,
  });

  const terminal = await sse.waitFor((e) => e.event === 'campaign.terminal');
  expect(terminal.data).toMatchObject({
    campaign_id: id,
    status: 'completed',
    success_pct: 100,
    completed: 3,
    businesses_total: 5,
    total_valid_emails: 2,
  });

  // The export has one row per business, each with its best e-mail.
  const ndjson = await (await c.get(`/api/v1/campaigns/${id}/export?format=ndjson`)).text();
  const rows = ndjson
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(rows).toHaveLength(5);
  expect(rows.find((r) => r.business_name === 'Leeds Crust')).toMatchObject({
    best_email: `alice@${MAIL_DOMAIN}`,
    best_email_status: 'valid',
  });
  expect(rows.find((r) => r.business_name === 'Leeds Social Bakery')).toMatchObject({
    domain_filtered: true,
    best_email: null,
  });
});
