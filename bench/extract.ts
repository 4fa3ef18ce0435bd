/**
 * bench:extract: how well the compendium's `fit` (and `raw`) conversion finds a page's main content,
 * side by side in one run with Mozilla Readability.js 0.6 (on jsdom) and trafilatura 2.0 (Python).
 *
 *   npm run bench:extract -- [--corpus readability|trafilatura|fundus]... [--extractor fit|raw|readability|trafilatura]...
 *                            [--limit N] [--out FILE]
 *
 * Corpora (bench/data/SOURCES.md; lay them out first with bench/extract-corpora.ts):
 *   readability: the page's whole main text is the ground truth, scored as the article-extraction
 *     benchmark scores it: 4-token shingles, per page precision and recall (tp/fp/fn normalised per
 *     page), averaged over pages, F1 the harmonic mean of the two averages.
 *   trafilatura: snippets per page that must be in the output and snippets that must not, scored as
 *     trafilatura's evaluation does: counts summed over all pages, then precision, recall and F1.
 *   fundus: news articles of 42 countries with the body fundus's per-publisher parsers extract,
 *     scored with token shingles as readability is.
 * Readability.js and trafilatura are installed by the bench into .stack/bench-extract/ (npm --prefix
 * and a virtualenv), not into the project.
 */
import { spawn, execFileSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { JSDOM, VirtualConsole } from 'jsdom';
import * as compendium from '../activities/site/compendium';
import { loadHtml, visibleText } from '../activities/site/extract/dom';
import { CORPORA, loadCorpus, readPage, type Corpus, type CorpusName } from './extract-corpora';
import { percentile, ROOT } from './support';

const EXTRACTORS = ['fit', 'raw', 'readability', 'trafilatura'] as const;
type ExtractorName = (typeof EXTRACTORS)[number];
const TOOLS = path.join(ROOT, '.stack/bench-extract');
const WARM_UP = 3;

interface Extracted {
  text: string;
  /** Wall time of the page, and the CPU the extractor's process spent on it (the figure a busy machine moves least). */
  ms: number;
  cpu_ms: number;
  error?: string;
}

interface Extractor {
  name: ExtractorName;
  extract(page: { id: string; url: string; html: string }): Promise<Extracted>;
  close(): Promise<void>;
}

// ---- markdown to the plain text that is scored ----------------------------------------------

/**
 * An inline link as the converter writes it: `[text](destination "title")`, where the text may hold
 * escaped brackets (`[\\[4\\]](#cite_note-4)`: a footnote), the destination escaped parentheses
 * (`/wiki/Groundhog_Day_\\(film\\)`) or spaces inside `<...>`, and the title parentheses of its
 * own. Group 1 is the text.
 */
const LINK = String.raw`\[((?:\\.|[^\]\\])*)\]\((?:<[^>\n]*>|(?:\\.|[^)\\\s])*)(?:\s+"(?:\\.|[^"\\])*")?\)`;

/**
 * The words a reader sees in a compendium page's Markdown: link and image syntax, emphasis,
 * heading, quote and list markers, code fences and table pipes removed. Code is read as written:
 * the lines of a fenced block as they are, a code span's text without its backticks (an
 * underscore in `lower_bound` is no emphasis). Line by line with simple patterns (no nesting, no
 * backtracking over a whole page).
 */
export function markdownToText(markdown: string): string {
  const out: string[] = [];
  let fence: string | undefined;
  for (let line of markdown.split('\n')) {
    const marker = /^\s*(```|~~~)/.exec(line)?.[1];
    if (marker && (fence === undefined || marker === fence)) {
      fence = fence === undefined ? marker : undefined;
      continue;
    }
    if (fence !== undefined) {
      out.push(line);
      continue;
    }
    if (/^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/.test(line)) continue; // table rule
    if (/^\s*([-*_]\s*){3,}$/.test(line)) continue; // horizontal rule
    line = line
      .replace(/^\s{0,3}#{1,6}\s+/, '')
      .replace(/^\s*(>\s?)+/, '')
      .replace(/^\s*([-*+]|\d+[.)])\s+/, '');
    // Links and images first (a link's text may be a code span), then code spans split the line:
    // emphasis and escapes are read only between them.
    line = line
      .replace(new RegExp(`!${LINK}`, 'g'), '')
      .replace(new RegExp(LINK, 'g'), '$1')
      .replace(/<(https?:[^>\s]+)>/g, '$1');
    const parts = line.split(/(`+)([^`]*?)\1/);
    let text = '';
    for (let i = 0; i < parts.length; i += 3) {
      text += inlineText(parts[i] ?? '');
      text += parts[i + 2] ?? '';
    }
    out.push(text.replace(/\s*\|\s*/g, ' '));
  }
  return out.join('\n');
}

/** Markdown's inline syntax outside code: emphasis, stray backticks, escapes. */
function inlineText(text: string): string {
  return text
    .replace(/(\*\*|__)(?=\S)([^*_]*?\S)\1/g, '$2')
    .replace(/(\*|_)(?=\S)([^*_]*?\S)\1/g, '$2')
    .replace(/`+/g, '')
    .replace(/\\([\\`*_{}[\]()#+\-.!|>~])/g, '$1');
}

// ---- scoring --------------------------------------------------------------------------------

// Python's `\w+` (the benchmark's tokeniser): letters, digits and underscore in any script.
const TOKEN = /[\p{L}\p{N}_]+/gu;

function shingles(text: string, n = 4): Map<string, number> {
  const tokens = text.match(TOKEN) ?? [];
  const out = new Map<string, number>();
  for (let i = 0; i < Math.max(1, tokens.length - n + 1); i++) {
    const shingle = tokens.slice(i, i + n);
    if (shingle.length === 0) continue;
    const key = shingle.join('\u0001');
    out.set(key, (out.get(key) ?? 0) + 1);
  }
  return out;
}

/** True positive, false positive and false negative shingles, normalised to sum to 1 (the benchmark's). */
export function shingleMatch(truth: string, predicted: string): [number, number, number] {
  const t = shingles(truth);
  const p = shingles(predicted);
  let tp = 0;
  let fp = 0;
  let fn = 0;
  for (const key of new Set([...t.keys(), ...p.keys()])) {
    const a = t.get(key) ?? 0;
    const b = p.get(key) ?? 0;
    tp += Math.min(a, b);
    fp += Math.max(0, b - a);
    fn += Math.max(0, a - b);
  }
  const s = tp + fp + fn;
  return s > 0 ? [tp / s, fp / s, fn / s] : [0, 0, 0];
}

const precisionOf = (tp: number, fp: number, fn: number) =>
  fp === 0 && fn === 0 ? 1 : tp === 0 && fp === 0 ? 0 : tp / (tp + fp);
const recallOf = (tp: number, fp: number, fn: number) =>
  fp === 0 && fn === 0 ? 1 : tp === 0 && fn === 0 ? 0 : tp / (tp + fn);
const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);

/** The benchmark's metrics over pages: mean precision (pages with output), mean recall (pages with truth), F1 of the two. */
export function shingleMetrics(counts: [number, number, number][]): { f1: number; precision: number; recall: number } {
  const precision = mean(counts.filter(([tp, fp]) => tp + fp > 0).map(([tp, fp, fn]) => precisionOf(tp, fp, fn)));
  const recall = mean(counts.filter(([tp, , fn]) => tp + fn > 0).map(([tp, fp, fn]) => recallOf(tp, fp, fn)));
  return { f1: (2 * precision * recall) / (precision + recall), precision, recall };
}

const norm = (s: string) => s.replace(/\s+/g, ' ').trim();

/** trafilatura's per page counts: `with` snippets found (tp) or not (fn), `without` snippets found (fp) or not (tn). */
export function snippetCounts(
  page: { with: string[]; without: string[] },
  output: string,
): [number, number, number, number] {
  const text = norm(output);
  const tp = page.with.filter((w) => text.includes(norm(w))).length;
  const fp = page.without.filter((w) => text.includes(norm(w))).length;
  return [tp, fp, page.with.length - tp, page.without.length - fp];
}

// ---- extractors -----------------------------------------------------------------------------

type ToMarkdown = (html: string, url: string, level: 'fit' | 'raw') => string;
type HtmlToMarkdown = (html: string, level: 'fit' | 'raw', pageUrl?: string) => string;

/**
 * The compendium's per page conversion: its `htmlToMarkdown(html, level, pageUrl)` (the `markdown`
 * command's) where compendium.ts exports it, else what the crawl runs: parse, then pageMarkdown's
 * blocks (looked up at run time, so that the bench also scores the code from before that export).
 */
const exported = (compendium as Record<string, unknown>).htmlToMarkdown;
const toMarkdown: ToMarkdown =
  typeof exported === 'function'
    ? (html, url, level) => (exported as HtmlToMarkdown)(html, level, url)
    : (html, _url, level) => compendium.pageMarkdown(loadHtml(html), level).join('\n\n');
const converter = typeof exported === 'function' ? 'htmlToMarkdown' : 'pageMarkdown(loadHtml(html))';

/** Starts timing a page: the returned function gives the wall and CPU milliseconds since. */
function startClock(): () => { ms: number; cpu_ms: number } {
  const t = performance.now();
  const cpu = process.cpuUsage();
  return () => {
    const used = process.cpuUsage(cpu);
    return { ms: performance.now() - t, cpu_ms: (used.user + used.system) / 1000 };
  };
}

function ours(level: 'fit' | 'raw'): Extractor {
  return {
    name: level,
    async extract({ html, url }) {
      const clock = startClock();
      try {
        const markdown = toMarkdown(html, url, level);
        return { text: markdownToText(markdown), ...clock() };
      } catch (err) {
        return { text: '', ...clock(), error: String(err) };
      }
    },
    async close() {},
  };
}

function installOnce(what: string, marker: string, install: () => void): void {
  if (existsSync(marker)) return;
  console.log(`installing ${what} into ${TOOLS} ...`);
  mkdirSync(TOOLS, { recursive: true });
  install();
}

function readability(): Extractor {
  installOnce('@mozilla/readability 0.6.0', path.join(TOOLS, 'node_modules/@mozilla/readability/package.json'), () =>
    execFileSync(
      'npm',
      ['install', '--prefix', TOOLS, '--no-save', '--no-audit', '--no-fund', '@mozilla/readability@0.6.0'],
      { stdio: 'inherit' },
    ),
  );
  const { Readability } = createRequire(path.join(TOOLS, 'package.json'))('@mozilla/readability') as {
    Readability: new (doc: unknown) => { parse(): { textContent?: string | null } | null };
  };
  // jsdom reports every stylesheet it cannot parse: not the bench's business.
  const virtualConsole = new VirtualConsole();
  return {
    name: 'readability',
    async extract({ html, url }) {
      const clock = startClock();
      try {
        const dom = new JSDOM(html, { url, virtualConsole });
        const article = new Readability(dom.window.document).parse();
        const times = clock();
        dom.window.close();
        return { text: article?.textContent ?? '', ...times };
      } catch (err) {
        return { text: '', ...clock(), error: String(err) };
      }
    },
    async close() {},
  };
}

// trafilatura 2.0.0 with the versions of its dependencies of its release (December 2024): the
// newest htmldate needs lxml 6, and lxml 5.2+ moved lxml.html.clean (which justext imports) out.
const TRAFILATURA = [
  'trafilatura==2.0.0',
  'htmldate==1.9.3',
  'courlan==1.3.2',
  'justext==3.0.1',
  'lxml==5.3.0',
  'lxml_html_clean==0.4.1',
];

function trafilatura(): Extractor {
  const python = path.join(TOOLS, 'venv/bin/python');
  installOnce('trafilatura 2.0.0 (virtualenv)', path.join(TOOLS, 'venv/.trafilatura-2.0.0'), () => {
    execFileSync('python3', ['-m', 'venv', path.join(TOOLS, 'venv')], { stdio: 'inherit' });
    execFileSync(python, ['-m', 'pip', 'install', '--quiet', ...TRAFILATURA], { stdio: 'inherit' });
    writeFileSync(path.join(TOOLS, 'venv/.trafilatura-2.0.0'), '');
  });
  const child: ChildProcessWithoutNullStreams = spawn(python, [path.join(ROOT, 'bench/extract-trafilatura.py')], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stderr.on('data', (d: Buffer) => process.stderr.write(d));
  const kill = () => child.kill('SIGTERM');
  process.once('exit', kill);
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return {
    name: 'trafilatura',
    async extract({ id, url, html }) {
      child.stdin.write(`${JSON.stringify({ id, url, html })}\n`);
      const next = await lines.next();
      if (next.done) throw new Error('the trafilatura worker ended');
      const answer = JSON.parse(next.value) as {
        id: string;
        text: string;
        ms: number;
        cpu_ms: number;
        error: string | null;
      };
      if (answer.id !== id) throw new Error(`the trafilatura worker answered ${answer.id} for ${id}`);
      return {
        text: answer.text,
        ms: answer.ms,
        cpu_ms: answer.cpu_ms,
        ...(answer.error ? { error: answer.error } : {}),
      };
    },
    async close() {
      child.stdin.end();
      await new Promise((resolve) => child.once('exit', resolve));
      process.removeListener('exit', kill);
    },
  };
}

const MAKERS: Record<ExtractorName, () => Extractor> = {
  fit: () => ours('fit'),
  raw: () => ours('raw'),
  readability,
  trafilatura,
};

// ---- the run --------------------------------------------------------------------------------

interface Row {
  extractor: ExtractorName;
  pages: number;
  f1: number;
  precision: number;
  recall: number;
  /** Pages whose output has no word although the ground truth has some. */
  empty: number;
  errors: number;
  ms_p50: number;
  ms_p99: number;
  cpu_ms_p50: number;
  cpu_ms_p99: number;
}

function gitHead(): string | undefined {
  try {
    const head = execFileSync('git', ['-C', ROOT, 'rev-parse', 'HEAD'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    const dirty = execFileSync('git', ['-C', ROOT, 'status', '--porcelain', '--', 'activities/site'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    return dirty ? `${head} + uncommitted changes in activities/site` : head;
  } catch {
    return undefined;
  }
}

function parseArgs(): { corpora: CorpusName[]; extractors: ExtractorName[]; limit: number; out: string } {
  const argv = process.argv.slice(2);
  const corpora: CorpusName[] = [];
  const extractors: ExtractorName[] = [];
  let limit = Infinity;
  let out = path.join(ROOT, 'bench/results/extract.json');
  for (let i = 0; i < argv.length; i++) {
    const value = argv[i + 1];
    const fail = (msg: string) => {
      console.error(msg);
      process.exit(2);
    };
    switch (argv[i]) {
      case '--corpus':
        if (!CORPORA.includes(value as CorpusName)) fail(`--corpus: one of ${CORPORA.join(', ')}`);
        corpora.push(value as CorpusName);
        i++;
        break;
      case '--extractor':
        if (!EXTRACTORS.includes(value as ExtractorName)) fail(`--extractor: one of ${EXTRACTORS.join(', ')}`);
        extractors.push(value as ExtractorName);
        i++;
        break;
      case '--limit':
        limit = Number(value);
        if (!(limit > 0)) fail('--limit: a positive number');
        i++;
        break;
      case '--out':
        if (!value) fail('--out: a file');
        out = path.resolve(value as string);
        i++;
        break;
      default:
        fail(`unknown argument ${argv[i]}`);
    }
  }
  return {
    corpora: corpora.length ? corpora : [...CORPORA],
    extractors: extractors.length ? extractors : [...EXTRACTORS],
    limit,
    out,
  };
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;
const r1 = (x: number) => Math.round(x * 10) / 10;

async function runCorpus(
  corpus: Corpus,
  extractors: Extractor[],
  limit: number,
): Promise<{ rows: Row[]; pages: Record<string, unknown[]> }> {
  const pages = corpus.pages.slice(0, limit);
  const perPage: Record<string, unknown[]> = {};
  const rows: Row[] = [];
  for (const ex of extractors) {
    const times: number[] = [];
    const cpuTimes: number[] = [];
    // Unmeasured first: the JIT (and Python's first imports of lxml's parts) would make the first
    // pages' times those of a cold start, which a crawl of thousands of pages does not see.
    for (const page of pages.slice(0, WARM_UP))
      await ex.extract({ id: page.id, url: page.url, html: readPage(page.file) });
    const shingleCounts: [number, number, number][] = [];
    const snippet = [0, 0, 0, 0];
    let empty = 0;
    let errors = 0;
    const details: unknown[] = [];
    for (const page of pages) {
      const html = readPage(page.file);
      const got = await ex.extract({ id: page.id, url: page.url, html });
      times.push(got.ms);
      cpuTimes.push(got.cpu_ms);
      if (got.error) errors++;
      const words = (got.text.match(TOKEN) ?? []).length;
      if (corpus.kind === 'text') {
        const p = page as (typeof corpus.pages)[number];
        const counts = shingleMatch(p.truth, got.text);
        shingleCounts.push(counts);
        const truthWords = (p.truth.match(TOKEN) ?? []).length;
        if (words === 0 && truthWords > 0) empty++;
        details.push({
          id: page.id,
          precision: r3(precisionOf(...counts)),
          recall: r3(recallOf(...counts)),
          chars: got.text.length,
          ms: r1(got.ms),
          cpu_ms: r1(got.cpu_ms),
          ...(got.error ? { error: got.error } : {}),
        });
      } else {
        const p = page as (typeof corpus.pages)[number];
        const counts = snippetCounts(p, got.text);
        counts.forEach((c, i) => (snippet[i] = (snippet[i] ?? 0) + c));
        if (words === 0 && p.with.length > 0) empty++;
        details.push({
          id: page.id,
          url: page.url,
          tp: counts[0],
          fp: counts[1],
          fn: counts[2],
          tn: counts[3],
          chars: got.text.length,
          ms: r1(got.ms),
          cpu_ms: r1(got.cpu_ms),
          ...(got.error ? { error: got.error } : {}),
        });
      }
    }
    let metrics: { f1: number; precision: number; recall: number };
    if (corpus.kind === 'text') metrics = shingleMetrics(shingleCounts);
    else {
      const [tp = 0, fp = 0, fn = 0] = snippet;
      const precision = tp + fp ? tp / (tp + fp) : 0;
      const recall = tp + fn ? tp / (tp + fn) : 0;
      metrics = { f1: 2 * tp + fp + fn ? (2 * tp) / (2 * tp + fp + fn) : 0, precision, recall };
    }
    const sorted = [...times].sort((a, b) => a - b);
    const sortedCpu = [...cpuTimes].sort((a, b) => a - b);
    rows.push({
      extractor: ex.name,
      pages: pages.length,
      f1: r3(metrics.f1),
      precision: r3(metrics.precision),
      recall: r3(metrics.recall),
      empty,
      errors,
      ms_p50: r1(percentile(sorted, 50)),
      ms_p99: r1(percentile(sorted, 99)),
      cpu_ms_p50: r1(percentile(sortedCpu, 50)),
      cpu_ms_p99: r1(percentile(sortedCpu, 99)),
    });
    perPage[ex.name] = details;
    console.log(`  ${corpus.name} / ${ex.name}: done (${pages.length} pages)`);
  }
  return { rows, pages: perPage };
}

function table(name: string, rows: Row[]): string {
  const lines = [
    `${name} (${rows[0]?.pages ?? 0} pages)`,
    '| extractor | F1 | precision | recall | pages with no text | ms/page p50 / p99 | CPU ms/page p50 / p99 |',
    '|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.extractor} | ${r.f1.toFixed(3)} | ${r.precision.toFixed(3)} | ${r.recall.toFixed(3)} | ${r.empty} of ${r.pages}${r.errors ? ` (${r.errors} errors)` : ''} | ${r.ms_p50} / ${r.ms_p99} | ${r.cpu_ms_p50} / ${r.cpu_ms_p99} |`,
    ),
  ];
  return lines.join('\n');
}

async function main(): Promise<void> {
  const { corpora, extractors: names, limit, out } = parseArgs();
  const extractors = names.map((n) => MAKERS[n]());
  const result: Record<string, unknown> = {
    date: new Date().toISOString(),
    load_average: os.loadavg().map((x) => Math.round(x * 100) / 100),
    converter,
    commit: gitHead(),
    corpora: {},
  };
  const tables: string[] = [];
  try {
    for (const name of corpora) {
      const corpus = loadCorpus(name, (html) => visibleText(loadHtml(html).root().children().toArray()));
      if (!corpus) {
        console.error(
          `corpus ${name}: not prepared (run: npx tsx bench/extract-corpora.ts --mirror DIR; see bench/data/SOURCES.md)`,
        );
        continue;
      }
      const { rows, pages } = await runCorpus(corpus, extractors, limit);
      (result.corpora as Record<string, unknown>)[name] = {
        dir: corpus.dir,
        scoring:
          corpus.kind === 'text'
            ? 'token shingles (article-extraction-benchmark)'
            : 'with/without snippets (trafilatura)',
        rows,
        pages,
      };
      tables.push(table(name, rows));
    }
  } finally {
    for (const ex of extractors) await ex.close();
  }
  console.log(`\n${tables.join('\n\n')}`);
  console.log(
    `\nload average at the end: ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')} (wall times are only comparable on a quiet machine; CPU times less affected)`,
  );
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`\nwritten: ${out}`);
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
