import { CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createPeopleActivities, type PeoplePlan } from '../../activities/people/crawl-people';
import { createLogger } from '../../lib/logger';
import { OutboundClient } from '../../lib/outbound';
import { Storage } from '../../lib/storage';
import { createSearchClient } from '../../search/client';
import { bearer, ownQueues, startTestApi, testConfig, type TestApi } from '../support/api';
import { failure } from '../support/failure';
import { caller } from '../support/jobs';
import { startWebsite, type Website } from '../stand-ins/website';

// The crawlPeople activity in Temporal's MockActivityEnvironment (heartbeats, cancel) against the
// endless slow stand-in site. The job row comes from the real API; no worker polls its queue.
jest.setTimeout(60_000);

let site: Website;
let api: TestApi;

beforeAll(async () => {
  site = await startWebsite({ mode: 'slow', pageDelayMs: 100 });
  api = await startTestApi({ RATE_LIMIT_ENABLED: 'false', ...ownQueues('people-activity') });
});
afterAll(async () => {
  await api.close();
  await site.close();
});

test('crawlPeople heartbeats every page and stops its requests when cancelled', async () => {
  const c = caller(api, bearer(await api.newClient()));
  const url = `${site.baseUrl}/p/0`;
  const { job_id } = await c.json<{ job_id: string }>(
    await c.post('/api/v1/jobs/crawlPeople/submit', { payload: { url, max_pages: 100 } }),
  );
  const config = testConfig({ USER_URL_ALLOW_HOSTS: '127.0.0.1', SITE_DELAY_MS: '0' });
  const http = OutboundClient.fromConfig(config);
  const search = createSearchClient(config);
  try {
    const { planPeople, crawlPeople } = createPeopleActivities({
      config,
      db: api.deps.db,
      storage: Storage.fromConfig(config),
      search,
      logger: createLogger('silent'),
      http,
      workerId: 'mock',
    });
    const plan: PeoplePlan = await planPeople({ jobId: job_id, payload: { url, max_pages: 100 } });
    expect(plan).toMatchObject({ website: url, resolvedVia: 'payload', maxPages: 100 });
    const env = new MockActivityEnvironment();
    const beats: { pagesCrawled?: number }[] = [];
    env.on('heartbeat', (d: { pagesCrawled?: number }) => beats.push(d));
    const running = env.run(crawlPeople, { jobId: job_id, plan });
    while (!beats.some((b) => (b.pagesCrawled ?? 0) >= 5)) await new Promise((r) => setTimeout(r, 20));
    for (let n = 1; n <= 5; n++) expect(beats.some((b) => b.pagesCrawled === n)).toBe(true);
    const cancelledAt = Date.now();
    env.cancel();
    expect(await failure(running)).toBeInstanceOf(CancelledFailure);
    // Requests already on the wire still arrive, read by this busy process whenever it gets to them:
    // at most one per connection the crawl keeps to the host. Nothing is sent later.
    await new Promise((r) => setTimeout(r, 1000));
    expect(site.arrivedSince(cancelledAt)).toBeLessThanOrEqual(config.SITE_CONCURRENCY_PER_HOST);
    const total = site.total();
    await new Promise((r) => setTimeout(r, 500));
    expect(site.total()).toBe(total);
  } finally {
    await Promise.allSettled([http.close(), search.close()]);
  }
});
