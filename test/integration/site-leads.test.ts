import { crawlSiteResult } from '../../jobs/crawl-site';
import { bearer, ownQueues, startTestApi, type TestApi } from '../support/api';
import { caller, waitForStatus, type Caller } from '../support/jobs';
import { waitFor } from '../support/processes';
import { startTestWorker, type TestWorker } from '../support/worker';
import { startWebsite, type Website } from '../stand-ins/website';

// From a real crawl to the data plane: the crawlSite result of the stand-in company website is
// projected into IDAP resources and indexed as a lead whose compendium is searchable.
jest.setTimeout(120_000);

const workerEnv = {
  ...ownQueues('site-leads'),
  USER_URL_ALLOW_HOSTS: '127.0.0.1',
  SITE_DELAY_MS: '0',
  SITE_PAGE_TIMEOUT_MS: '3000',
};
let api: TestApi;
let worker: TestWorker;
let site: Website;
let c: Caller;

interface Resource {
  idap_ref: string;
  resource_id: string;
  data: Record<string, unknown>;
  related?: Record<string, Record<string, unknown>[]>;
}

beforeAll(async () => {
  site = await startWebsite();
  api = await startTestApi({ RATE_LIMIT_ENABLED: 'false', ...ownQueues('site-leads') });
  worker = await startTestWorker({ types: ['crawlSite'], identity: 'site-leads-worker', overrides: workerEnv });
  c = caller(api, bearer(await api.newClient()));
});
afterAll(async () => {
  await worker.stop();
  await api.close();
  await site.close();
});

async function crawl(payload: Record<string, unknown>, as: Caller = c): Promise<string> {
  const res = await as.post('/api/v1/jobs/crawlSite/submit', { payload: { url: `${site.baseUrl}/`, ...payload } });
  expect(res.status).toBe(201);
  const { job_id } = await as.json<{ job_id: string }>(res);
  expect(await waitForStatus(as, job_id, ['completed', 'failed'], 90_000)).toMatchObject({ status: 'completed' });
  return job_id;
}

const leadNames = async (as: Caller, query = ''): Promise<string[]> =>
  (
    await as.json<{ hits: { name: string }[] }>(await as.get(`/api/v1/search/leads?sort_by=name&query=${query}`))
  ).hits.map((h) => h.name);

const businesses = async (): Promise<Resource[]> => {
  const res = await c.get('/api/v1/idap/businesses?include=emails,phones,contacts,domains,proflink_profiles');
  expect(res.status).toBe(200);
  return (await c.json<{ items: Resource[] }>(res)).items;
};

test('a crawled site becomes a business with its domain, e-mails, phones and team, and a searchable lead', async () => {
  const jobId = await crawl({ max_pages: 20, compendium: { enabled: true, cleanup_level: 'fit' } });
  // The result is what the OpenAPI document says it is (CrawlSiteResult).
  const envelope = await c.json<{ data: unknown }>(await c.get(`/api/v1/jobs/${jobId}/results`));
  expect(() => crawlSiteResult.strict().parse(envelope.data)).not.toThrow();

  await waitFor(async () => (await businesses()).length === 1, 30_000, 'the business resource');
  const [business] = await businesses();
  expect(business?.data).toMatchObject({
    name: 'Acme Widgets Ltd',
    description: 'Precision widgets for manufacturers since 1901.',
    category: 'Industrial manufacturing',
    website: site.baseUrl,
    country: 'GB',
    source: 'crawl_site',
    job_id: jobId,
  });
  const related = business?.related ?? {};
  expect((related.emails ?? []).map((e) => e.address).sort()).toEqual([
    'ada@acme-widgets.co.uk',
    'grace@acme-widgets.co.uk',
    'press@acme-widgets.co.uk',
    'sales@acme-widgets.co.uk',
    'support@acme-widgets.co.uk',
  ]);
  expect((related.phones ?? []).map((p) => p.number)).toEqual(
    expect.arrayContaining(['+441614960123', '+4930901820', '+14155552671']),
  );
  expect((related.contacts ?? []).map((p) => p.full_name).sort()).toEqual([
    'Ada Lovelace',
    'Alan Turing',
    'Grace Hopper',
  ]);
  expect((related.domains ?? []).length).toBe(1);
  expect((related.proflink_profiles ?? []).map((p) => p.url)).toContain(
    'https://www.linkedin.com/company/acme-widgets',
  );

  // "generations" appears only on the About page, so only the compendium can match it.
  await waitFor(
    async () => (await c.json<{ total: number }>(await c.get('/api/v1/search/leads?query=generations'))).total === 1,
    30_000,
    'the lead',
  );
  const hits = (
    await c.json<{ hits: Record<string, unknown>[] }>(await c.get('/api/v1/search/leads?query=generations'))
  ).hits;
  expect(hits[0]).toMatchObject({
    doc_id: business?.resource_id,
    name: 'Acme Widgets Ltd',
    category: 'Industrial manufacturing',
    job_id: jobId,
    job_type: 'crawlSite',
    country: 'GB',
  });
});

test('crawling the same site again updates the same resources instead of adding new ones', async () => {
  const before = await c.json<{ total: number }>(await c.get('/api/v1/idap/emails/stats'));
  const jobId = await crawl({ max_pages: 19 });
  expect(await businesses()).toHaveLength(1);
  expect(await c.json<{ total: number }>(await c.get('/api/v1/idap/emails/stats'))).toMatchObject({
    total: before.total,
  });
  await waitFor(
    async () =>
      (await c.json<{ hits: { job_id: string }[] }>(await c.get('/api/v1/search/leads'))).hits[0]?.job_id === jobId,
    30_000,
    'the lead of the second crawl',
  );
  expect((await c.json<{ total: number }>(await c.get('/api/v1/search/leads'))).total).toBe(1);
});

test("a business imported naming another client's compendium (its location or its job) does not make that compendium searchable", async () => {
  // Client B crawls the site for real: its compendium, in B's bucket, holds "generations".
  const b = caller(api, bearer(await api.newClient('other client')));
  const bJob = await crawl({ max_pages: 20, compendium: { enabled: true, cleanup_level: 'fit' } }, b);
  const { data } = await b.json<{ data: { compendium: { storage_location: string } } }>(
    await b.get(`/api/v1/jobs/${bJob}/results`),
  );
  expect(data.compendium.storage_location).toMatch(/^s3:\/\//);
  await waitFor(async () => (await leadNames(b, 'generations')).length === 1, 30_000, "B's lead");

  // Client A imports businesses that name B's compendium object, and B's job.
  const res = await c.post('/api/v1/idap/businesses/import', {
    records: [
      {
        data: {
          name: 'Borrowed Location',
          website: 'https://borrowed-location.example',
          compendium_location: data.compendium.storage_location,
        },
      },
      {
        data: {
          name: 'Borrowed Job',
          website: 'https://borrowed-job.example',
          job_id: bJob,
          job_type: 'crawlSite',
          compendium_job_id: bJob,
        },
      },
    ],
  });
  expect(res.status).toBe(200);
  await waitFor(
    async () => (await leadNames(c)).includes('Borrowed Location') && (await leadNames(c)).includes('Borrowed Job'),
    30_000,
    'the imported leads',
  );

  // A finds "generations" only through the compendium of its own crawl (kept through the re-crawl without one).
  expect(await leadNames(c, 'generations')).toEqual(['Acme Widgets Ltd']);
  expect(await leadNames(b, 'generations')).toEqual(['Acme Widgets Ltd']);
});
