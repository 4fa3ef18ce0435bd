/**
 * The public corpora bench:extract and bench:pipeline read: where they are and how to load them.
 *
 * Run as a script it lays them out as plain files under bench/data/extract/<corpus>/ (git-ignored:
 * the pages are other people's, see bench/data/SOURCES.md) from git copies of their repositories:
 *
 *   npx tsx bench/extract-corpora.ts --mirror /work/.mirror
 *   npx tsx bench/extract-corpora.ts --readability DIR --trafilatura DIR --fundus DIR   (a clone or a bare git dir each)
 *
 * The benches look for a corpus in bench/data/extract/<corpus>/ first, then in
 * ../shared/bench-data/extract/<corpus>/ (the same layout), so they never need the git copies.
 */
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import { gunzipSync } from 'node:zlib';
import path from 'node:path';
import { ROOT } from './support';

export const CORPORA = ['readability', 'trafilatura', 'fundus'] as const;
export type CorpusName = (typeof CORPORA)[number];

/** A page with its whole main text as ground truth (scored with token shingles). */
export interface TextPage {
  id: string;
  url: string;
  file: string;
  /** The text of the human-checked main content. */
  truth: string;
}

/** A page with snippets its main text must contain (`with`) and must not (`without`). */
export interface SnippetPage {
  id: string;
  url: string;
  file: string;
  with: string[];
  without: string[];
}

export type Corpus =
  | { name: 'readability'; kind: 'text'; dir: string; pages: TextPage[] }
  | { name: 'trafilatura'; kind: 'snippets'; dir: string; pages: SnippetPage[] }
  | { name: 'fundus'; kind: 'text'; dir: string; pages: TextPage[] };

const LOCAL = path.join(ROOT, 'bench/data/extract');
const SHARED = path.join(ROOT, '..', 'shared', 'bench-data', 'extract');

/** The folder holding a prepared corpus, or undefined when neither place has it. */
export function corpusDir(name: CorpusName): string | undefined {
  for (const base of [LOCAL, SHARED]) {
    const dir = path.join(base, name);
    if (existsSync(path.join(dir, 'corpus.json'))) return dir;
  }
  return undefined;
}

/**
 * The page's HTML as text. Bytes that are valid UTF-8 are read as UTF-8 (Readability's test pages
 * were re-saved as UTF-8 and keep their old `charset=gb2312`: decoding them as GB2312 garbled the
 * Chinese page and its score went to 0). Others are in their own encoding: the charset their
 * <meta> declares (UTF-8 when none, or one TextDecoder does not know), as a browser would without
 * the HTTP header.
 */
export function readPage(file: string): string {
  const bytes = readFileSync(file);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    // Not UTF-8: the declared charset below.
  }
  const head = bytes.subarray(0, 4096).toString('latin1');
  const declared = /<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)/i.exec(head)?.[1];
  if (declared && !/^utf-?8$/i.test(declared)) {
    try {
      return new TextDecoder(declared).decode(bytes);
    } catch {
      // An unknown label: fall through to UTF-8.
    }
  }
  return new TextDecoder('utf-8').decode(bytes);
}

/** Loads a prepared corpus (its page list and ground truth; HTML is read per page with readPage). */
export function loadCorpus(name: CorpusName, textOf: (html: string) => string): Corpus | undefined {
  const dir = corpusDir(name);
  if (!dir) return undefined;
  if (name === 'readability') {
    const pages: TextPage[] = [];
    for (const page of readdirSync(path.join(dir, 'pages')).sort()) {
      const folder = path.join(dir, 'pages', page);
      const expected = path.join(folder, 'expected.html');
      if (!existsSync(expected)) continue;
      // The test suite's pages were all saved as this URL (Readability resolves links against it).
      pages.push({
        id: page,
        url: 'http://fakehost/test/page.html',
        file: path.join(folder, 'source.html'),
        truth: textOf(readFileSync(expected, 'utf8')),
      });
    }
    return { name, kind: 'text', dir, pages };
  }
  if (name === 'fundus') {
    const truth = JSON.parse(readFileSync(path.join(dir, 'truth.json'), 'utf8')) as Record<
      string,
      { url: string; truth: string }
    >;
    const pages: TextPage[] = Object.entries(truth)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([id, t]) => ({ id, url: t.url, file: path.join(dir, 'pages', id), truth: t.truth }));
    return { name, kind: 'text', dir, pages };
  }
  const evaldata = JSON.parse(readFileSync(path.join(dir, 'evaldata.json'), 'utf8')) as Record<
    string,
    { file: string; with: string[]; without: string[] }
  >;
  // File names in git are as their authors' systems wrote them (some decomposed, some composed):
  // matched by their NFC form.
  const files = new Map(readdirSync(path.join(dir, 'pages')).map((f) => [f.normalize('NFC'), f]));
  const pages: SnippetPage[] = [];
  for (const [url, item] of Object.entries(evaldata).sort(([a], [b]) => (a < b ? -1 : 1))) {
    const file = files.get(item.file.normalize('NFC'));
    if (!file) continue;
    pages.push({ id: item.file, url, file: path.join(dir, 'pages', file), with: item.with, without: item.without });
  }
  return { name, kind: 'snippets', dir, pages };
}

/** Every HTML file of a prepared corpus (annotated or not): bench:pipeline runs them all. */
export function allHtmlFiles(name: CorpusName): string[] {
  const dir = corpusDir(name);
  if (!dir) return [];
  const out: string[] = [];
  const walk = (d: string) => {
    for (const f of readdirSync(d).sort()) {
      const p = path.join(d, f);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.html?$/i.test(f)) out.push(p);
    }
  };
  walk(path.join(dir, 'pages'));
  return out;
}

// ---- preparing the corpora from git copies -------------------------------------------------

interface Source {
  repository: string;
  commit: string;
  license: string;
}

function git(dir: string, args: string[]): string {
  return execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8', maxBuffer: 1 << 30 });
}

/** Extracts `paths` of the git copy's HEAD into a fresh temporary folder. */
function extract(dir: string, paths: string[]): string {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'bench-extract-'));
  const tar = execFileSync('git', ['-C', dir, 'archive', '--format=tar', 'HEAD', ...paths], { maxBuffer: 1 << 30 });
  execFileSync('tar', ['-x', '-C', tmp], { input: tar, maxBuffer: 1 << 30 });
  return tmp;
}

function writeManifest(out: string, source: Source, pages: number): void {
  writeFileSync(
    path.join(out, 'corpus.json'),
    `${JSON.stringify({ ...source, pages, prepared: new Date().toISOString() }, null, 2)}\n`,
  );
}

function prepareReadability(dir: string): number {
  const out = path.join(LOCAL, 'readability');
  rmSync(out, { recursive: true, force: true });
  mkdirSync(path.join(out, 'pages'), { recursive: true });
  const tmp = extract(dir, ['test/test-pages']);
  let pages = 0;
  for (const page of readdirSync(path.join(tmp, 'test/test-pages')).sort()) {
    const from = path.join(tmp, 'test/test-pages', page);
    if (!existsSync(path.join(from, 'source.html')) || !existsSync(path.join(from, 'expected.html'))) continue;
    mkdirSync(path.join(out, 'pages', page));
    for (const f of ['source.html', 'expected.html']) cpSync(path.join(from, f), path.join(out, 'pages', page, f));
    pages++;
  }
  rmSync(tmp, { recursive: true, force: true });
  writeManifest(
    out,
    {
      repository: 'https://github.com/mozilla/readability',
      commit: git(dir, ['log', '-1', '--format=%H']).trim(),
      license: 'Apache-2.0',
    },
    pages,
  );
  return pages;
}

function prepareTrafilatura(dir: string): number {
  const out = path.join(LOCAL, 'trafilatura');
  rmSync(out, { recursive: true, force: true });
  mkdirSync(path.join(out, 'pages'), { recursive: true });
  // evaluate.py reads a page from tests/cache first, then tests/eval: the same order here.
  const tmp = extract(dir, ['tests/eval', 'tests/cache', 'tests/evaldata.json']);
  let pages = 0;
  for (const sub of ['tests/eval', 'tests/cache']) {
    for (const f of readdirSync(path.join(tmp, sub))) {
      if (!/\.html?$/i.test(f)) continue;
      cpSync(path.join(tmp, sub, f), path.join(out, 'pages', f));
      pages++;
    }
  }
  cpSync(path.join(tmp, 'tests/evaldata.json'), path.join(out, 'evaldata.json'));
  rmSync(tmp, { recursive: true, force: true });
  writeManifest(
    out,
    {
      repository: 'https://github.com/adbar/trafilatura',
      commit: git(dir, ['log', '-1', '--format=%H']).trim(),
      license: 'Apache-2.0',
    },
    readdirSync(path.join(out, 'pages')).length,
  );
  return pages;
}

/** fundus's expected article: its summary (lead), then each section's headline and paragraphs. */
interface FundusArticle {
  body?: { summary?: string[]; sections?: { headline?: string[]; paragraphs?: string[] }[] } | null;
}

function fundusText(article: FundusArticle): string {
  const body = article.body;
  if (!body) return '';
  const parts = [...(body.summary ?? [])];
  for (const section of body.sections ?? []) parts.push(...(section.headline ?? []), ...(section.paragraphs ?? []));
  return parts.join('\n\n');
}

/**
 * flairNLP/fundus's parser test data: per publisher, pages saved as
 * `<country>/<Publisher>_<yyyy_mm_dd>.html.gz` (URL in `<country>/meta.info`) and one
 * `<Publisher>.json` holding what each version of that publisher's hand-written parser must extract,
 * versions in the order of their validity (`V1`, `V1_1`, ...). Each version has exactly one page, the
 * one whose crawl date falls in its validity, so the pages in date order pair with the versions in
 * order. A publisher whose page and version counts differ is left out rather than guessed at.
 */
function prepareFundus(dir: string): number {
  const out = path.join(LOCAL, 'fundus');
  rmSync(out, { recursive: true, force: true });
  mkdirSync(path.join(out, 'pages'), { recursive: true });
  const base = 'tests/resources/parser/test_data';
  const tmp = extract(dir, [base]);
  const truth: Record<string, { url: string; truth: string }> = {};
  let skipped = 0;
  for (const country of readdirSync(path.join(tmp, base)).sort()) {
    const cdir = path.join(tmp, base, country);
    if (!statSync(cdir).isDirectory() || !existsSync(path.join(cdir, 'meta.info'))) continue;
    const meta = JSON.parse(readFileSync(path.join(cdir, 'meta.info'), 'utf8')) as Record<string, { url: string }>;
    const files = readdirSync(cdir);
    for (const json of files.filter((f) => f.endsWith('.json')).sort()) {
      const publisher = json.slice(0, -'.json'.length);
      const versions = Object.values(
        JSON.parse(readFileSync(path.join(cdir, json), 'utf8')) as Record<string, FundusArticle>,
      );
      const dated = files
        .filter((f) => new RegExp(`^${publisher}_\\d{4}_\\d{2}_\\d{2}\\.html\\.gz$`).test(f) && meta[f])
        .sort();
      if (dated.length !== versions.length) {
        skipped++;
        continue;
      }
      dated.forEach((file, i) => {
        const text = fundusText(versions[i] as FundusArticle);
        if (!text.trim()) return;
        const id = `${country}/${file.slice(0, -'.gz'.length)}`;
        mkdirSync(path.join(out, 'pages', country), { recursive: true });
        writeFileSync(path.join(out, 'pages', id), gunzipSync(readFileSync(path.join(cdir, file))));
        truth[id] = { url: (meta[file] as { url: string }).url, truth: text };
      });
    }
  }
  rmSync(tmp, { recursive: true, force: true });
  writeFileSync(path.join(out, 'truth.json'), `${JSON.stringify(truth, null, 1)}\n`);
  const pages = Object.keys(truth).length;
  writeManifest(
    out,
    {
      repository: 'https://github.com/flairNLP/fundus',
      commit: git(dir, ['log', '-1', '--format=%H']).trim(),
      license: 'MIT',
    },
    pages,
  );
  if (skipped) console.log(`fundus: ${skipped} publisher(s) left out (their page and parser-version counts differ)`);
  return pages;
}

function main(): void {
  const argv = process.argv.slice(2);
  const opt = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const mirror = opt('mirror');
  const dirs: Record<CorpusName, string | undefined> = {
    readability: opt('readability') ?? (mirror && path.join(mirror, 'mozilla+readability/repo')),
    trafilatura: opt('trafilatura') ?? (mirror && path.join(mirror, 'adbar+trafilatura/repo')),
    fundus: opt('fundus') ?? (mirror && path.join(mirror, 'flairNLP+fundus/repo')),
  };
  if (!dirs.readability && !dirs.trafilatura && !dirs.fundus) {
    console.error(
      'usage: tsx bench/extract-corpora.ts --mirror DIR | --readability GITDIR --trafilatura GITDIR --fundus GITDIR',
    );
    process.exit(2);
  }
  if (dirs.readability)
    console.log(`readability: ${prepareReadability(dirs.readability)} pages -> ${path.join(LOCAL, 'readability')}`);
  if (dirs.trafilatura)
    console.log(`trafilatura: ${prepareTrafilatura(dirs.trafilatura)} pages -> ${path.join(LOCAL, 'trafilatura')}`);
  if (dirs.fundus) console.log(`fundus: ${prepareFundus(dirs.fundus)} pages -> ${path.join(LOCAL, 'fundus')}`);
}

if (require.main === module) main();
