import { bearer, ownQueues, startTestApi, type TestApi } from '../support/api';
import { caller, waitForStatus, type Caller } from '../support/jobs';
import { waitFor } from '../support/processes';
import { startScratchElasticsearch, type ScratchElasticsearch } from '../support/scratch-elasticsearch';
import { startTestWorker, type TestWorker } from '../support/worker';
import { startLeadSites, type LeadSites } from '../stand-ins/lead-sites';

// An Elasticsearch restart while jobs complete: a node of this test's own (the shared one keeps
// serving the other test files) is stopped, a job completes meanwhile, and once the node is back
// the lead index catches up from the outbox, keeping what it had before.
jest.setTimeout(180_000);

let es: ScratchElasticsearch;
let api: TestApi;
let worker: TestWorker;
let c: Caller;
let sites: LeadSites;

beforeAll(async () => {
  es = await startScratchElasticsearch();
  sites = await startLeadSites();
  const overrides = { RATE_LIMIT_ENABLED: 'false', ELASTICSEARCH_URL: es.url, ...ownQueues('es-restart') };
  api = await startTestApi(overrides);
  worker = await startTestWorker({ types: ['crawlSite'], identity: 'es-restart-worker', overrides });
  c = caller(api, bearer(await api.newClient()));
});

afterAll(async () => {
  await worker.stop();
  await api.close();
  await es.close();
  await sites.close();
});

const leadNames = async (): Promise<string[]> => {
  const res = await c.get('/api/v1/search/leads?sort_by=name&per_page=100');
  return res.status === 200 ? (await c.json<{ hits: { name: string }[] }>(res)).hits.map((h) => h.name) : [];
};

/** Crawls a new site (a business of its own) and returns its name, which becomes the lead's name. */
async function crawl(): Promise<string> {
  const url = await sites.ownHost();
  const { job_id } = await c.json<{ job_id: string }>(
    await c.post('/api/v1/jobs/crawlSite/submit', { payload: { url } }),
  );
  expect(await waitForStatus(c, job_id, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
  return String(new URL(url).searchParams.get('site'));
}

test('jobs complete while Elasticsearch is down, and their leads are indexed after it restarts', async () => {
  const first = await crawl();
  await waitFor(async () => (await leadNames()).includes(first), 30_000, 'the first lead');

  await es.stop();
  // Searching answers 503 while the index is unreachable; jobs do not notice.
  expect((await c.get('/api/v1/search/leads')).status).toBe(503);
  const second = await crawl();

  await es.start();
  await waitFor(
    async () => (await leadNames()).includes(second),
    60_000,
    'the lead of the job that completed during the outage',
  );
  expect(await leadNames()).toEqual([first, second].sort());
});
