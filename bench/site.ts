/**
 * bench/site: the crawlSite engine on a generated 1,000-page local website (bench/site-server.ts,
 * its own process) next to a bare fetch loop over the same URLs at the same concurrency. Prints
 * pages/s for both, their ratio and the crawler's peak RSS, and writes JSON to bench/results/.
 *   npm run bench:site -- [--pages 1000] [--concurrency 4] [--latency 20] [--compendium 0|1] [--threads 1]
 * The crawler runs exactly as in the activity (SSRF-guarded client, robots.txt, frontier, one
 * parse and every extractor per page) minus Temporal and storage; politeness delay 0, like the
 * bare loop. `--latency` is the server's delay per answer in ms (real sites take 50-500 ms);
 * `--threads` the page threads that read pages (SITE_PAGE_THREADS; 0: on the crawl's event loop).
 */
import { createInterface } from 'node:readline';
import { crawl } from '../activities/site/crawler';
import { HttpPageSource } from '../activities/site/fetch';
import { pageThreads } from '../activities/site/page-threads';
import { OutboundClient } from '../lib/outbound';
import { args, load, serveScript, writeResult } from './support';

const USER_AGENT = 'leadjobs-crawler/1.0 (+https://github.com/leadjobs/leadjobs)';

async function main(): Promise<void> {
  const opts = args({ pages: 1000, concurrency: 4, latency: 20, compendium: 0, threads: 1 });
  const server = serveScript('bench/site-server.ts', {
    args: [String(opts.pages), String(opts.latency)],
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const base = await new Promise<string>((resolve, reject) => {
    createInterface({ input: server.stdout as NodeJS.ReadableStream }).once('line', resolve);
    server.once('exit', (code) => reject(new Error(`site server exited (${code})`)));
  });

  // Peak RSS while crawling, sampled; process.resourceUsage().maxRSS covers the whole process lifetime.
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);

  const http = new OutboundClient({ allowHosts: ['127.0.0.1'], userAgent: USER_AGENT });
  const source = new HttpPageSource(http, {
    userAgent: USER_AGENT,
    pageTimeoutMs: 15000,
    maxPageBytes: 5 * 1024 * 1024,
  });
  // Warm, as a worker's are after its first crawl: the threads load their modules before the clock starts.
  const pages = opts.threads > 0 ? pageThreads(opts.threads) : undefined;
  await pages?.warm();
  const started = performance.now();
  const outcome = await crawl(
    source,
    {
      url: `${base}/`,
      maxPages: opts.pages,
      extractTeam: true,
      compendium: { enabled: opts.compendium === 1, cleanupLevel: 'fit' },
      includePaths: [],
      excludePaths: [],
      respectRobots: true,
      timeLimitMs: 600_000,
    },
    { userAgent: USER_AGENT, concurrency: opts.concurrency, delayMs: 0, readPage: pages?.read },
    { signal: new AbortController().signal },
  );
  const crawlSeconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
  await http.close();
  await pages?.close();
  const crawled = outcome.data.pages.map((p) => p.final_url);
  if (outcome.data.pages_crawled !== opts.pages)
    throw new Error(
      `crawled ${outcome.data.pages_crawled} of ${opts.pages} pages: ${JSON.stringify(outcome.data.errors.slice(0, 3))}`,
    );

  // The same URLs, fetched and read as text by a bare loop (Node's fetch) at the same concurrency.
  const bare = await load(crawled.length, opts.concurrency, async (i) => {
    const res = await fetch(crawled[i] as string, { headers: { 'user-agent': USER_AGENT } });
    await res.text();
  });
  server.kill('SIGTERM');

  const r = (x: number) => Math.round(x * 100) / 100;
  const result = {
    pages: opts.pages,
    concurrency: opts.concurrency,
    server_latency_ms: opts.latency,
    compendium: opts.compendium === 1,
    page_threads: opts.threads,
    crawler: {
      pages: outcome.data.pages_crawled,
      seconds: r(crawlSeconds),
      pages_per_second: r(outcome.data.pages_crawled / crawlSeconds),
    },
    bare_fetch: { pages: crawled.length, seconds: r(bare.seconds), pages_per_second: r(crawled.length / bare.seconds) },
    ratio: r(outcome.data.pages_crawled / crawlSeconds / (crawled.length / bare.seconds)),
    crawler_peak_rss_mb: r(peakRss / 1024 / 1024),
    emails_found: outcome.data.emails.length,
    phones_found: outcome.data.phones.length,
  };
  process.stdout.write(
    `crawler    ${result.crawler.pages} pages in ${result.crawler.seconds} s = ${result.crawler.pages_per_second} pages/s\n` +
      `bare fetch ${result.bare_fetch.pages} pages in ${result.bare_fetch.seconds} s = ${result.bare_fetch.pages_per_second} pages/s\n` +
      `ratio ${result.ratio}x (target >= ${result.compendium ? '0.9 with the compendium, issue 36' : '0.8'}), crawler peak RSS ${result.crawler_peak_rss_mb} MB (target < 300)\n` +
      `concurrency ${opts.concurrency}, server latency ${opts.latency} ms, compendium ${result.compendium}; ${result.emails_found} emails, ${result.phones_found} phones\n`,
  );
  process.stdout.write(`${writeResult('site', result)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
