import { bearer, ownQueues, startTestApi, type TestApi } from '../support/api';
import { caller } from '../support/jobs';
import { freePort } from '../support/processes';

const apis: TestApi[] = [];
afterAll(() => Promise.all(apis.map((a) => a.close())));

describe('queue limits and availability', () => {
  test('beyond the configured capacity a submission is 503 saying the queue is full', async () => {
    // crawlMaps because the spec names its capacity and its jobs here stay queued: nothing polls this
    // file's queues. The capacity is the task queue's: jobs queued on another queue (another
    // deployment's prefix sharing the database, or other test files') take none of its places.
    const api = await startTestApi(
      { RATE_LIMIT_ENABLED: 'false', QUEUE_CAPACITY_CRAWL_MAPS: '2', ...ownQueues('limits') },
      ['crawlMaps'],
    );
    const elsewhere = await startTestApi({ RATE_LIMIT_ENABLED: 'false', ...ownQueues('limits-elsewhere') }, [
      'crawlMaps',
    ]);
    apis.push(api, elsewhere);
    const other = caller(elsewhere, bearer(await elsewhere.newClient()));
    for (let i = 0; i < 3; i++) {
      expect((await other.post('/api/v1/jobs/crawlMaps/submit', { search_query: `florist ${i} in York` })).status).toBe(
        201,
      );
    }
    const c = caller(api, bearer(await api.newClient()));
    for (let i = 0; i < 2; i++) {
      const res = await c.post('/api/v1/jobs/crawlMaps/submit', {
        search_query: `bakery ${i} in Leeds`,
        max_results: 5,
      });
      expect(res.status).toBe(201);
      expect(await res.json()).toMatchObject({ success: true, type: 'crawlMaps', status: 'queued', from_cache: false });
    }
    const full = await c.post('/api/v1/jobs/crawlMaps/submit', { search_query: 'bakery 3 in Leeds' });
    expect(full.status).toBe(503);
    expect(full.headers.get('retry-after')).toBe('60');
    expect(await full.json()).toEqual({
      detail: 'queue is full: 2 crawlMaps jobs are already queued; try again later',
    });
    // A cancelled job frees its place.
    const { jobs } = await c.json<{ jobs: { job_id: string }[] }>(await c.get('/api/v1/jobs/list'));
    expect((await c.del(`/api/v1/jobs/${jobs[0]?.job_id}`)).status).toBe(200);
    expect((await c.post('/api/v1/jobs/crawlMaps/submit', { search_query: 'bakery 3 in Leeds' })).status).toBe(201);
  });

  test('with Temporal unreachable a submission is 503 queue service unavailable and leaves no job behind', async () => {
    const api = await startTestApi({ RATE_LIMIT_ENABLED: 'false', TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}` });
    apis.push(api);
    const creds = await api.newClient();
    const c = caller(api, bearer(creds));
    const res = await c.post('/api/v1/jobs/crawlSite/submit', { payload: { url: 'https://down.test/' } });
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ detail: 'queue service unavailable' });
    expect(await api.deps.db('jobs').where({ client_id: creds.client_id }).count('* as n').first()).toEqual({ n: '0' });
    expect(await api.deps.db('events').where({ client_id: creds.client_id }).count('* as n').first()).toEqual({
      n: '0',
    });
    const health = await c.json(await c.get('/api/v1/system/health'));
    expect(health).toMatchObject({ status: 'unhealthy', queue: 'unavailable', database: 'connected' });
  });
});
