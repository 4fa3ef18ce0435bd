import { crawlRequest } from '../../activities/site/crawl';
import { crawl, type CrawlOutcome } from '../../activities/site/crawler';
import { HttpPageSource } from '../../activities/site/fetch';
import { pageReaderOf, pageThreads, readOnLoop, type PageReader } from '../../activities/site/page-threads';
import { HeldResources } from '../../activities/deps';
import { crawlSitePayload } from '../../jobs/crawl-site';
import { OutboundClient } from '../../lib/outbound';
import { testConfig } from '../support/api';
import { startWebsite, type Website } from '../stand-ins/website';

// Pages read on the worker's page threads (SITE_PAGE_THREADS, activities/site/page-threads.ts) give
// the crawl exactly what reading them on the activity's event loop gives: the real crawl and HTTP
// page source against the stand-in website on 127.0.0.1, with the team and the compendium.
const config = testConfig({ USER_URL_ALLOW_HOSTS: '127.0.0.1', SITE_DELAY_MS: '0' });
let site: Website;
let http: OutboundClient;
beforeAll(async () => {
  site = await startWebsite();
  http = OutboundClient.fromConfig(config);
});
afterAll(async () => {
  await http.close();
  await site.close();
});

async function crawlWith(
  readPage: PageReader,
  signal = new AbortController().signal,
  timeLimitMs?: number,
): Promise<CrawlOutcome> {
  const source = new HttpPageSource(http, {
    userAgent: config.SITE_USER_AGENT,
    pageTimeoutMs: config.SITE_PAGE_TIMEOUT_MS,
    maxPageBytes: config.SITE_MAX_PAGE_BYTES,
  });
  const request = crawlRequest(
    crawlSitePayload.parse({
      url: site.baseUrl,
      max_pages: 20,
      extract_team: true,
      compendium: { enabled: true, cleanup_level: 'fit' },
    }),
  );
  if (timeLimitMs !== undefined) request.timeLimitMs = timeLimitMs;
  return crawl(
    source,
    request,
    { userAgent: config.SITE_USER_AGENT, concurrency: 2, delayMs: 0, readPage },
    { signal },
  );
}

test('a crawl read on page threads equals the same crawl read on the event loop', async () => {
  const threads = pageThreads(2);
  try {
    const onLoop = await crawlWith(readOnLoop);
    const onThreads = await crawlWith(threads.read);
    expect(onLoop.data.pages_crawled).toBeGreaterThan(3);
    expect(onLoop.data.emails.length).toBeGreaterThan(0);
    expect(onLoop.compendium).toContain('#');
    expect(onThreads).toEqual(onLoop);
  } finally {
    await threads.close();
  }
});

test("a cancel as a page goes to its thread rejects the crawl with the cancel's reason", async () => {
  const threads = pageThreads(1);
  const controller = new AbortController();
  try {
    const crawling = crawlWith(async (...args) => {
      controller.abort(new Error('job cancelled'));
      return threads.read(...args);
    }, controller.signal);
    await expect(crawling).rejects.toThrow('job cancelled');
  } finally {
    await threads.close();
  }
});

test('pages fetched when the time limit strikes are still read: the result has them, not a read error', async () => {
  const threads = pageThreads(1);
  // Long enough for the start page and its links on a busy machine (the thread warmed first).
  const LIMIT_MS = 3000;
  await threads.warm();
  try {
    // The contact page's read starts after the crawl's time limit has passed.
    const outcome = await crawlWith(
      async (...args) => {
        if (args[1].endsWith('/contact')) await new Promise((r) => setTimeout(r, LIMIT_MS + 500));
        return threads.read(...args);
      },
      undefined,
      LIMIT_MS,
    );
    expect(outcome.data.errors.map((e) => e.error)).toEqual(
      expect.arrayContaining([expect.stringContaining('crawl time limit')]),
    );
    expect(outcome.data.errors.filter((e) => e.error.includes('not readable'))).toEqual([]);
    expect(outcome.data.pages.map((p) => p.final_url)).toContain(`${site.baseUrl}/contact`);
  } finally {
    await threads.close();
  }
});

test('the worker reads on its event loop with SITE_PAGE_THREADS=0, else on one pool it closes when it stops', async () => {
  const held = new HeldResources();
  expect(pageReaderOf({ config: testConfig({ SITE_PAGE_THREADS: '0' }), held })).toBe(readOnLoop);
  const deps = { config: testConfig({ SITE_PAGE_THREADS: '1' }), held };
  const reader = pageReaderOf(deps);
  expect(reader).not.toBe(readOnLoop);
  expect(pageReaderOf(deps)).toBe(reader);
  const html = '<html><head><title>Bakery</title></head><body><p>Call hello@bakery.example</p></body></html>';
  const facts = await reader(
    html,
    'https://bakery.example/',
    { extractTeam: false, teamPage: false, companyPage: false, compendium: null },
    new AbortController().signal,
  );
  expect(facts).toMatchObject({ title: 'Bakery', emails: ['hello@bakery.example'] });
  await held.close();
  await expect(
    reader(
      html,
      'https://bakery.example/',
      { extractTeam: false, teamPage: false, companyPage: false, compendium: null },
      new AbortController().signal,
    ),
  ).rejects.toThrow('closed');
});
