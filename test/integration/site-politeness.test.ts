import { createServer } from 'node:http';
import { performance } from 'node:perf_hooks';
import { crawlRequest } from '../../activities/site/crawl';
import { crawl } from '../../activities/site/crawler';
import { HttpPageSource } from '../../activities/site/fetch';
import { crawlSitePayload } from '../../jobs/crawl-site';
import { OutboundClient } from '../../lib/outbound';
import { testConfig } from '../support/api';
import { listenLocal } from '../stand-ins/listen';

// Crawler politeness on the real crawl (activities/site/crawler.ts with the worker's settings from
// config, the real HTTP page source) against a site on 127.0.0.1 that counts the requests open at
// once: the pause between two page requests to one site (SITE_DELAY_MS, raised by robots.txt's
// Crawl-delay up to 5 s) and SITE_CONCURRENCY_PER_HOST. The pause is timed where the crawl hands a
// request to the page source: what follows (the address check, the connection) adds a latency of
// its own, and the site sees that too, so its arrival times are not what is checked.

/** The cap on robots.txt's Crawl-delay (lib/config.ts SITE_DELAY_MS, activities/site/crawler.ts). */
const CRAWL_DELAY_CAP_MS = 5000;

interface Site {
  baseUrl: string;
  /** Page requests that arrived (robots.txt and sitemap.xml aside). */
  pages: number;
  /** The most requests of any path that were open at once. */
  maxInFlight: number;
  close(): Promise<void>;
}

/** An endless site: page n links five new pages; each answers after `pageDelayMs`. */
async function startSite(options: { robotsTxt?: string; pageDelayMs?: number }): Promise<Site> {
  const site = { pages: 0, maxInFlight: 0 };
  let open = 0;
  const server = createServer((req, res) => {
    open++;
    site.maxInFlight = Math.max(site.maxInFlight, open);
    const answer = (status: number, type: string, body: string) => {
      open--;
      res.writeHead(status, { 'content-type': type }).end(body);
    };
    const path = req.url ?? '/';
    if (path === '/robots.txt')
      return options.robotsTxt === undefined
        ? answer(404, 'text/plain', '')
        : answer(200, 'text/plain', options.robotsTxt);
    if (path === '/sitemap.xml') return answer(404, 'text/plain', '');
    site.pages++;
    const n = Number(/^\/p\/(\d+)$/.exec(path)?.[1] ?? 0);
    const links = Array.from({ length: 5 }, (_, i) => `<a href="/p/${n * 5 + i + 1}">page ${n * 5 + i + 1}</a>`).join(
      ' ',
    );
    setTimeout(
      () => answer(200, 'text/html', `<html><body><h1>Page ${n}</h1>${links}</body></html>`),
      options.pageDelayMs ?? 0,
    );
  });
  const listening = await listenLocal(server);
  return Object.assign(site, { baseUrl: listening.baseUrl, close: listening.close });
}

/**
 * A crawl of `site` from /p/0 by the crawl with the settings the crawlSite activity takes from the
 * worker's config `env`, through the real HTTP page source, which notes when the crawl hands it each
 * page request (`handedOn`, performance.now() ms).
 */
async function crawlWith(
  site: Site,
  env: Record<string, string>,
  maxPages: number,
): Promise<{ pagesCrawled: number; handedOn: number[] }> {
  const config = testConfig({ USER_URL_ALLOW_HOSTS: '127.0.0.1', ...env });
  const http = OutboundClient.fromConfig(config);
  const handedOn: number[] = [];
  class NotingSource extends HttpPageSource {
    override fetchPage(...args: Parameters<HttpPageSource['fetchPage']>): ReturnType<HttpPageSource['fetchPage']> {
      handedOn.push(performance.now());
      return super.fetchPage(...args);
    }
  }
  try {
    const source = new NotingSource(http, {
      userAgent: config.SITE_USER_AGENT,
      pageTimeoutMs: config.SITE_PAGE_TIMEOUT_MS,
      maxPageBytes: config.SITE_MAX_PAGE_BYTES,
    });
    const request = crawlRequest(crawlSitePayload.parse({ url: `${site.baseUrl}/p/0`, max_pages: maxPages }));
    const settings = {
      userAgent: config.SITE_USER_AGENT,
      concurrency: config.SITE_CONCURRENCY_PER_HOST,
      delayMs: config.SITE_DELAY_MS,
    };
    const { data } = await crawl(source, request, settings, { signal: new AbortController().signal });
    return { pagesCrawled: data.pages_crawled, handedOn };
  } finally {
    await http.close();
  }
}

/** The pauses between consecutive page request starts, in ms. */
const gaps = (starts: number[]) => starts.slice(1).map((t, i) => t - (starts[i] as number));
/**
 * The gate times a start a moment before the page source is called, where the test notes it, and
 * that moment varies by a millisecond or so on a loaded machine; a missing pause shows as a gap of
 * a few ms, so 2% below the pause still tells a defect.
 */
const atLeast = (pauseMs: number) => pauseMs * 0.98;

let sites: Site[] = [];
afterEach(async () => {
  await Promise.all(sites.map((s) => s.close()));
  sites = [];
});
const site = async (options: Parameters<typeof startSite>[0]) => {
  const s = await startSite(options);
  sites.push(s);
  return s;
};

test('the crawl starts page requests to one site at least SITE_DELAY_MS apart', async () => {
  const s = await site({});
  const { pagesCrawled, handedOn } = await crawlWith(s, { SITE_DELAY_MS: '400' }, 5);
  expect(pagesCrawled).toBe(5);
  expect(s.pages).toBe(5);
  expect(handedOn).toHaveLength(5);
  for (const gap of gaps(handedOn)) expect(gap).toBeGreaterThanOrEqual(atLeast(400));
});

test("robots.txt's Crawl-delay for our agent raises the pause above SITE_DELAY_MS", async () => {
  const s = await site({ robotsTxt: 'User-agent: *\nCrawl-delay: 0.6\n' });
  const { pagesCrawled, handedOn } = await crawlWith(s, { SITE_DELAY_MS: '100' }, 4);
  expect(pagesCrawled).toBe(4);
  expect(s.pages).toBe(4);
  expect(handedOn).toHaveLength(4);
  for (const gap of gaps(handedOn)) expect(gap).toBeGreaterThanOrEqual(atLeast(600));
});

test(`a Crawl-delay of an hour is held to its cap of ${CRAWL_DELAY_CAP_MS / 1000} s: the crawl goes on at that pace`, async () => {
  // Without the cap the second page would be an hour away: the test's timeout is the only bound on that side.
  const s = await site({ robotsTxt: 'User-agent: *\nCrawl-delay: 3600\n' });
  const { pagesCrawled, handedOn } = await crawlWith(s, { SITE_DELAY_MS: '0' }, 2);
  expect(pagesCrawled).toBe(2);
  expect(s.pages).toBe(2);
  expect(handedOn).toHaveLength(2);
  for (const gap of gaps(handedOn)) expect(gap).toBeGreaterThanOrEqual(atLeast(CRAWL_DELAY_CAP_MS));
}, 30_000);

test('at most SITE_CONCURRENCY_PER_HOST requests are open to one host at once', async () => {
  // Slow pages and no pause: the crawl would open as many requests as it had loops.
  const s = await site({ pageDelayMs: 300 });
  expect((await crawlWith(s, { SITE_DELAY_MS: '0', SITE_CONCURRENCY_PER_HOST: '3' }, 12)).pagesCrawled).toBe(12);
  expect(s.maxInFlight).toBe(3);
});
