import { CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createSiteActivities } from '../../activities/site/crawl';
import { crawl } from '../../activities/site/crawler';
import { HttpPageSource } from '../../activities/site/fetch';
import { createDb, type Db } from '../../db';
import { createLogger } from '../../lib/logger';
import { OutboundClient } from '../../lib/outbound';
import { Storage } from '../../lib/storage';
import { createSearchClient, type SearchClient } from '../../search/client';
import { testConfig } from '../support/api';
import { failure } from '../support/failure';
import { startWebsite, type Website } from '../stand-ins/website';

// The activity in Temporal's MockActivityEnvironment (heartbeats, cancel) and the crawl's time limit,
// against the endless slow stand-in site.
const UA = 'leadjobs-crawler/1.0 (+https://github.com/leadjobs/leadjobs)';
let site: Website;
let http: OutboundClient;
let db: Db;
let search: SearchClient;

beforeAll(async () => {
  site = await startWebsite({ mode: 'slow', pageDelayMs: 100 });
  http = new OutboundClient({ allowHosts: ['127.0.0.1'], userAgent: UA });
  const config = testConfig();
  db = createDb(config);
  search = createSearchClient(config);
});
afterAll(async () => {
  await Promise.allSettled([http.close(), db.destroy(), search.close()]);
  await site.close();
});

test('the activity heartbeats while crawling and stops its requests when cancelled', async () => {
  const config = testConfig({ USER_URL_ALLOW_HOSTS: '127.0.0.1', SITE_DELAY_MS: '0' });
  const { crawlSite } = createSiteActivities({
    config,
    db,
    storage: Storage.fromConfig(config),
    search,
    logger: createLogger('silent'),
    http,
    workerId: 'mock',
  });
  const env = new MockActivityEnvironment();
  const beats: { pagesCrawled: number }[] = [];
  env.on('heartbeat', (d: { pagesCrawled: number }) => beats.push(d));
  const running = env.run(crawlSite, {
    jobId: '00000000-0000-0000-0000-000000000000',
    clientId: 'cli_mock',
    payload: { url: `${site.baseUrl}/p/0`, max_pages: 100 },
  });
  while (beats.filter((b) => b.pagesCrawled >= 5).length === 0) await new Promise((r) => setTimeout(r, 20));
  // A heartbeat for every page: progress 1, 2, 3, ... all seen.
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
});

test('the time limit ends the crawl with what it has, and says so in errors', async () => {
  const source = new HttpPageSource(http, { userAgent: UA, pageTimeoutMs: 5000, maxPageBytes: 1 << 20 });
  const outcome = await crawl(
    source,
    {
      url: `${site.baseUrl}/p/0`,
      maxPages: 100,
      extractTeam: true,
      compendium: { enabled: true, cleanupLevel: 'fit' },
      includePaths: [],
      excludePaths: [],
      respectRobots: true,
      timeLimitMs: 1500,
    },
    { userAgent: UA, concurrency: 2, delayMs: 0 },
    { signal: new AbortController().signal },
  );
  // Ended by the limit, not timed here: short of max_pages (the endless site's 100 pages take 5 s
  // at 2 at a time), with the note the crawl writes only when its time-limit signal fired.
  expect(outcome.data.pages_crawled).toBeGreaterThan(3);
  expect(outcome.data.pages_crawled).toBeLessThan(100);
  expect(outcome.data.errors.at(-1)).toEqual({
    url: null,
    error: `crawl time limit of 2 s reached after ${outcome.data.pages_crawled} pages`,
  });
  expect(outcome.compendium).toContain('# Page 0');
});
