import { crawl, type CrawlRequest } from '../../activities/site/crawler';
import type { FetchedFile, FetchedPage, PageSource } from '../../activities/site/fetch';

/**
 * A crawl over an in-memory web (the crawler only speaks to its PageSource): which hosts does a
 * company website crawl visit? Subdomains of the company's registrable domain, nothing else.
 */
function memoryWeb(pages: Record<string, string>): PageSource & { fetched: string[] } {
  const fetched: string[] = [];
  return {
    fetched,
    async fetchPage(url: string): Promise<FetchedPage> {
      fetched.push(url);
      const html = pages[url];
      const base = { url, finalUrl: url, redirectChain: [url], contentType: 'text/html' };
      return html === undefined ? { ...base, status: 404, html: '<p>not found</p>' } : { ...base, status: 200, html };
    },
    async fetchFile(): Promise<FetchedFile> {
      return { status: 404, body: Buffer.alloc(0), text: '' };
    },
    async close() {},
  };
}

const links = (...urls: string[]) =>
  `<html><body>${urls.map((u) => `<a href="${u}">${u}</a>`).join(' ')}</body></html>`;
const request = (url: string): CrawlRequest => ({
  url,
  maxPages: 20,
  extractTeam: false,
  compendium: { enabled: false, cleanupLevel: 'fit' },
  includePaths: [],
  excludePaths: [],
  respectRobots: true,
  timeLimitMs: 10_000,
});
const run = (web: PageSource, url: string) =>
  crawl(
    web,
    request(url),
    { userAgent: 'test-crawler/1.0', concurrency: 2, delayMs: 0 },
    { signal: new AbortController().signal },
  );

test('a crawl of www.acme.co.uk follows shop.acme.co.uk and acme.co.uk, never other.co.uk', async () => {
  const web = memoryWeb({
    'https://www.acme.co.uk/': links(
      'https://shop.acme.co.uk/',
      'https://acme.co.uk/about',
      'https://other.co.uk/',
      'https://co.uk/',
    ),
    'https://shop.acme.co.uk/': links('https://other.co.uk/contact', 'https://www.acme.co.uk/'),
    'https://acme.co.uk/about': '<p>About us: info@acme.co.uk</p>',
  });
  const { data } = await run(web, 'https://www.acme.co.uk/');
  expect(web.fetched.sort()).toEqual([
    'https://acme.co.uk/about',
    'https://shop.acme.co.uk/',
    'https://www.acme.co.uk/',
  ]);
  expect(data.pages_crawled).toBe(3);
  expect(data.emails).toEqual(['info@acme.co.uk']);
});

test('alice.github.io does not crawl bob.github.io', async () => {
  const web = memoryWeb({
    'https://alice.github.io/': links('https://bob.github.io/', 'https://alice.github.io/blog'),
    'https://alice.github.io/blog': '<p>blog</p>',
  });
  await run(web, 'https://alice.github.io/');
  expect(web.fetched.sort()).toEqual(['https://alice.github.io/', 'https://alice.github.io/blog']);
});
