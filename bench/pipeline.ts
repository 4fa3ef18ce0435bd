/**
 * bench:pipeline: the whole page pipeline (`processPage`: links, emails, phones, socials, company
 * info, team, and the `fit` compendium markdown) over every HTML file of bench:extract's corpora,
 * real pages of every kind. Per page the CPU of the call (process.cpuUsage around it); the process's
 * memory every 100 pages; any page that throws; the slowest pages with the CPU of each extractor,
 * each run apart on its own parse of the page, to say which one is slow.
 *
 *   npm run bench:pipeline -- [--limit N] [--slowest 20] [--out FILE]
 *
 * The target (issue 36): no crash, no page over 250 ms of CPU, memory flat.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { guessRegion } from '../lib/phones';
import { pageMarkdown } from '../activities/site/compendium';
import { addressCountry, pageCompanyInfo } from '../activities/site/extract/company';
import { pageEmails, pagePhones } from '../activities/site/extract/contacts';
import { jsonLdNodes, loadHtml, visibleText } from '../activities/site/extract/dom';
import { pageSocialLinks } from '../activities/site/extract/social';
import { ldTeamMembers, structuredTeamMembers } from '../activities/site/extract/team';
import { processPage, type PageOptions } from '../activities/site/page';
import { allHtmlFiles, CORPORA, corpusDir, readPage } from './extract-corpora';
import { args, percentile, ROOT } from './support';

const LIMIT_MS = 250;
const OPTIONS: PageOptions = { extractTeam: true, teamPage: true, companyPage: true, compendium: 'fit' };

const cpuMs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

function timed<T>(fn: () => T): { ms: number; value: T } {
  const since = process.cpuUsage();
  const value = fn();
  return { ms: cpuMs(since), value };
}

/** Each extractor of processPage apart, on a fresh parse each, in processPage's order: CPU ms per step. */
function breakdown(html: string, url: string): Record<string, number> {
  const steps: Record<string, number> = {};
  const r = (x: number) => Math.round(x * 10) / 10;
  const fresh = () => loadHtml(html);
  steps.parse = r(timed(fresh).ms);
  const $ = fresh();
  const ld = timed(() => jsonLdNodes($));
  steps.jsonLd = r(ld.ms);
  const text = timed(() => visibleText($.root().children().toArray()));
  steps.visibleText = r(text.ms);
  const region = guessRegion({
    addressCountry: addressCountry(ld.value),
    lang: $('html').attr('lang'),
    hostname: new URL(url).hostname,
  });
  steps.links = r(timed(() => $('a[href], area[href]').each((_, el) => void $(el).attr('href'))).ms);
  steps.emails = r(timed(() => pageEmails($, text.value)).ms);
  steps.phones = r(timed(() => pagePhones($, text.value, region)).ms);
  steps.social = r(timed(() => pageSocialLinks($, ld.value)).ms);
  steps.company = r(timed(() => pageCompanyInfo($, ld.value, url)).ms);
  steps.teamLd = r(timed(() => ldTeamMembers(ld.value, url)).ms);
  steps.teamStructure = r(timed(() => structuredTeamMembers($, url)).ms);
  steps.markdownFit = r(timed(() => pageMarkdown($, 'fit')).ms);
  return steps;
}

interface PageRun {
  file: string;
  url: string;
  bytes: number;
  cpu_ms: number;
  wall_ms: number;
  error?: string;
}

/** The URL a page was fetched from (trafilatura's annotations say it), else a stand-in on its corpus. */
function pageUrls(): Map<string, string> {
  const urls = new Map<string, string>();
  const dir = corpusDir('trafilatura');
  if (dir) {
    const evaldata = JSON.parse(readFileSync(path.join(dir, 'evaldata.json'), 'utf8')) as Record<
      string,
      { file: string }
    >;
    for (const [url, item] of Object.entries(evaldata))
      urls.set(path.join(dir, 'pages', item.file).normalize('NFC'), url);
  }
  return urls;
}

function main(): void {
  const opts = args({ limit: Infinity, slowest: 20 });
  const outIndex = process.argv.indexOf('--out');
  const out =
    outIndex > 0 ? path.resolve(process.argv[outIndex + 1] as string) : path.join(ROOT, 'bench/results/pipeline.json');
  const files = CORPORA.flatMap((c) => allHtmlFiles(c).map((file) => ({ corpus: c, file }))).slice(0, opts.limit);
  if (files.length === 0) {
    console.error('no corpus prepared (run: npx tsx bench/extract-corpora.ts --mirror DIR; see bench/data/SOURCES.md)');
    process.exit(2);
  }
  const urls = pageUrls();
  const runs: PageRun[] = [];
  const memory: { pages: number; rss_mb: number; heap_mb: number }[] = [];
  const mb = (x: number) => Math.round((x / 1048576) * 10) / 10;
  const sample = (pages: number) => {
    const m = process.memoryUsage();
    memory.push({ pages, rss_mb: mb(m.rss), heap_mb: mb(m.heapUsed) });
  };
  sample(0);
  for (const [i, { corpus, file }] of files.entries()) {
    const html = readPage(file);
    const url =
      urls.get(file.normalize('NFC')) ??
      (corpus === 'readability'
        ? 'http://fakehost/test/page.html'
        : `https://example.org/${encodeURIComponent(path.basename(file))}`);
    const rel = path.relative(ROOT, file);
    const since = process.cpuUsage();
    const t = performance.now();
    try {
      processPage(html, url, OPTIONS);
      runs.push({
        file: rel,
        url,
        bytes: Buffer.byteLength(html),
        cpu_ms: cpuMs(since),
        wall_ms: performance.now() - t,
      });
    } catch (err) {
      runs.push({
        file: rel,
        url,
        bytes: Buffer.byteLength(html),
        cpu_ms: cpuMs(since),
        wall_ms: performance.now() - t,
        error: err instanceof Error ? (err.stack ?? err.message) : String(err),
      });
    }
    if ((i + 1) % 100 === 0) {
      sample(i + 1);
      process.stdout.write(`\r${i + 1} of ${files.length} pages`);
    }
  }
  sample(files.length);
  process.stdout.write('\n');

  const r1 = (x: number) => Math.round(x * 10) / 10;
  const cpu = runs.map((x) => x.cpu_ms).sort((a, b) => a - b);
  const slowest = [...runs].sort((a, b) => b.cpu_ms - a.cpu_ms).slice(0, opts.slowest);
  const crashes = runs.filter((x) => x.error);
  const over = runs.filter((x) => x.cpu_ms > LIMIT_MS);
  const detailed = slowest.map((x) => ({
    ...x,
    cpu_ms: r1(x.cpu_ms),
    wall_ms: r1(x.wall_ms),
    steps: breakdown(readPage(path.join(ROOT, x.file)), x.url),
  }));

  const result = {
    date: new Date().toISOString(),
    load_average: os.loadavg().map((x) => Math.round(x * 100) / 100),
    pages: runs.length,
    cpu_ms: {
      p50: r1(percentile(cpu, 50)),
      p95: r1(percentile(cpu, 95)),
      p99: r1(percentile(cpu, 99)),
      max: r1(cpu.at(-1) ?? NaN),
      total_s: r1(cpu.reduce((a, b) => a + b, 0) / 1000),
    },
    over_limit: over.map((x) => ({ file: x.file, cpu_ms: r1(x.cpu_ms) })),
    crashes: crashes.map((x) => ({ file: x.file, url: x.url, error: x.error })),
    memory,
    slowest: detailed,
  };
  console.log(
    `${runs.length} pages: CPU per page p50 ${result.cpu_ms.p50} / p95 ${result.cpu_ms.p95} / p99 ${result.cpu_ms.p99} / max ${result.cpu_ms.max} ms; ${over.length} over ${LIMIT_MS} ms; ${crashes.length} crashed`,
  );
  console.log(`memory (RSS MB every 100 pages): ${memory.map((m) => m.rss_mb).join(' ')}`);
  console.log(`\nslowest ${detailed.length} (CPU ms; the extractors apart):`);
  console.log('| page | KB | CPU ms | slowest steps |');
  console.log('|---|---|---|---|');
  for (const x of detailed) {
    const top = Object.entries(x.steps)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 3)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
    console.log(
      `| ${x.file.replace('bench/data/extract/', '')} | ${Math.round(x.bytes / 1024)} | ${x.cpu_ms} | ${top} |`,
    );
  }
  for (const c of crashes) console.log(`\ncrash: ${c.file}\n${c.error}`);
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`\nwritten: ${out}`);
}

main();
