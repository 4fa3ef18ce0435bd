import { bearer, ownQueues, startTestApi, type TestApi } from '../support/api';
import { caller, waitForStatus, type Caller } from '../support/jobs';
import { waitFor } from '../support/processes';
import { startScratchElasticsearch, type ScratchElasticsearch } from '../support/scratch-elasticsearch';
import { startTestWorker, type TestWorker } from '../support/worker';

// An Elasticsearch restart while jobs complete: a node of this test's own (the shared one keeps
// serving the other test files) is stopped, a job completes meanwhile, and once the node is back
// the lead index catches up from the outbox, keeping what it had before.
jest.setTimeout(180_000);

let es: ScratchElasticsearch;
let api: TestApi;
let worker: TestWorker;
let c: Caller;

beforeAll(async () => {
  es = await startScratchElasticsearch();
  const overrides = { RATE_LIMIT_ENABLED: 'false', ELASTICSEARCH_URL: es.url, ...ownQueues('es-restart') };
  api = await startTestApi(overrides, ['crawlSite']);
  worker = await startTestWorker({ types: ['crawlSite'], identity: 'es-restart-worker', overrides });
  c = caller(api, bearer(await api.newClient()));
});

afterAll(async () => {
  await worker.stop();
  await api.close();
  await es.close();
});

const leadNames = async (): Promise<string[]> => {
  const res = await c.get('/api/v1/search/leads?sort_by=name&per_page=100');
  return res.status === 200 ? (await c.json<{ hits: { name: string }[] }>(res)).hits.map((h) => h.name) : [];
};

async function crawl(host: string): Promise<void> {
  const { job_id } = await c.json<{ job_id: string }>(await c.post('/api/v1/jobs/crawlSite/submit', { payload: { url: `https://${host}/?results=1` } }));
  expect(await waitForStatus(c, job_id, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
}

test('jobs complete while Elasticsearch is down, and their leads are indexed after it restarts', async () => {
  const first = `before-${Date.now()}.test`;
  await crawl(first);
  await waitFor(async () => (await leadNames()).includes(first), 30_000, 'the first lead');

  await es.stop();
  // Searching answers 503 while the index is unreachable; jobs do not notice.
  expect((await c.get('/api/v1/search/leads')).status).toBe(503);
  const second = `during-${Date.now()}.test`;
  await crawl(second);

  await es.start();
  await waitFor(async () => (await leadNames()).includes(second), 60_000, 'the lead of the job that completed during the outage');
  expect(await leadNames()).toEqual([first, second].sort());
});
