import { randomBytes } from 'node:crypto';
import TurndownService from 'turndown';

/**
 * Renders a JSON response as Markdown for `?format=md` (spec §1.2.5): scalars of an object as a
 * field/value table, arrays of objects as tables (one row per item), arrays of scalars as
 * bullet lists, nested objects as sub-sections.
 */
type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const isObject = (v: Json): v is { [k: string]: Json } => typeof v === 'object' && v !== null && !Array.isArray(v);
const isScalar = (v: Json) => v === null || typeof v !== 'object';

/**
 * Text from the data as it reads, never as markup: stored values come from crawled pages and inbound
 * mail, and a renderer would run their HTML (`<script>`, `<img onerror>`) or turn `[x](url)` into a
 * link. HTML-significant characters become entities and brackets are escaped; the table's own `|`
 * and line breaks (`<br>`, the one tag this renderer writes) keep a cell one cell.
 */
function text(raw: string): string {
  return raw
    .replace(/\\/g, '\\\\')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/([[\]|])/g, '\\$1')
    .replace(/\r?\n/g, '<br>');
}

function cell(v: Json): string {
  return text(v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));
}

function table(headers: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(headers), line(headers.map(() => '---')), ...rows.map(line)].join('\n');
}

function renderArray(items: Json[], depth: number): string {
  if (items.length === 0) return '_(none)_';
  if (items.every(isObject)) {
    const columns: string[] = [];
    for (const item of items) for (const k of Object.keys(item)) if (!columns.includes(k)) columns.push(k);
    return table(columns.map(text), items.map((item) => columns.map((c) => cell(item[c] ?? null))));
  }
  if (items.every(isScalar)) return items.map((v) => `- ${cell(v)}`).join('\n');
  return items.map((v, i) => `${'#'.repeat(Math.min(depth, 6))} ${i + 1}\n\n${render(v, depth + 1)}`).join('\n\n');
}

function render(value: Json, depth: number): string {
  if (Array.isArray(value)) return renderArray(value, depth);
  if (!isObject(value)) return cell(value);
  const scalars = Object.entries(value).filter(([, v]) => isScalar(v));
  const nested = Object.entries(value).filter(([, v]) => !isScalar(v));
  const parts: string[] = [];
  if (scalars.length) parts.push(table(['field', 'value'], scalars.map(([k, v]) => [cell(k), cell(v)])));
  for (const [k, v] of nested) parts.push(`${'#'.repeat(Math.min(depth, 6))} ${text(k)}\n\n${render(v, depth + 1)}`);
  return parts.join('\n\n') || '_(empty)_';
}

export function toMarkdown(value: unknown, title?: string): string {
  const json = JSON.parse(JSON.stringify(value ?? null)) as Json;
  const body = render(json, title ? 2 : 1);
  return `${title ? `# ${title}\n\n` : ''}${body}\n`;
}

/** Longer whitespace runs than this in a document's text lose the rest (no layout needs more). */
const WS_RUN_MAX = 64;

// One token at a time, each alternative linear: a run of whitespace, a character reference, a tag
// (up to the next `<` or `>`), other text; a `<` or `&` that starts none of these is text.
const TOKEN = /(\s+)|(&(?:#[xX][0-9a-fA-F]+|#[0-9]+|[A-Za-z][A-Za-z0-9]*);?)|<[^<>]*>|[^\s&<]+|[&<]/g;
// The named references that decode to whitespace (checked against the parser turndown uses).
const SPACE_NAMES = new Set(['nbsp', 'NonBreakingSpace', 'ensp', 'emsp', 'emsp13', 'emsp14', 'numsp', 'puncsp', 'thinsp', 'ThinSpace', 'hairsp', 'VeryThinSpace', 'MediumSpace', 'ThickSpace', 'NewLine', 'Tab']);

function isSpaceReference(reference: string): boolean {
  const name = reference.endsWith(';') ? reference.slice(1, -1) : reference.slice(1);
  if (!name.startsWith('#')) return SPACE_NAMES.has(name);
  const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
  return code <= 0x10ffff && /\s/.test(String.fromCodePoint(code));
}

/**
 * The HTML with each run of whitespace in its text (characters, `&nbsp;`, `&#160;`, ... whatever
 * JS `\s` matches) cut to WS_RUN_MAX. A run goes on across tags, as an element's text does
 * (`<i>&nbsp;</i><i>&nbsp;</i>`); whitespace inside a tag is left alone.
 */
function boundWhitespaceRuns(html: string): string {
  let out = '';
  let copied = 0;
  let run = 0;
  for (const m of html.matchAll(TOKEN)) {
    const [token, spaces, reference] = m;
    if (token.length > 1 && token.startsWith('<')) continue;
    const units = spaces !== undefined ? token.length : reference !== undefined && isSpaceReference(reference) ? 1 : 0;
    if (units === 0) {
      run = 0;
      continue;
    }
    const keep = Math.max(0, Math.min(units, WS_RUN_MAX - run));
    run += units;
    if (keep === units) continue;
    out += html.slice(copied, m.index) + (spaces !== undefined ? token.slice(0, keep) : '');
    copied = m.index + token.length;
  }
  return copied === 0 ? html : out + html.slice(copied);
}

/** Elements deeper than this are refused: turndown's parser slows down with depth (30k nested divs took 23 s) and its converter recurses (its stack ends near 2,000). */
export const MAX_HTML_DEPTH = 1000;

export class HtmlTooDeepError extends Error {
  override readonly name = 'HtmlTooDeepError';
  constructor() {
    super(`the HTML nests elements more than ${MAX_HTML_DEPTH} deep`);
  }
}

// Elements without content, and those a parser closes by itself (an unclosed <p> or <li> nests nothing).
const NO_DEPTH = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'param', 'source', 'track', 'wbr', 'p', 'li', 'dt', 'dd', 'tr', 'td', 'th', 'option', 'optgroup', 'thead', 'tbody', 'tfoot', 'colgroup', 'caption', 'rb', 'rt', 'rtc', 'rp']);
const TAG = /<(\/?)([A-Za-z][A-Za-z0-9-]*)[^<>]*>/g;
const RAW_TEXT_END: Record<string, RegExp> = { script: /<\/script/gi, style: /<\/style/gi };

/** How deep the HTML's tags nest, read in one linear pass (raw text of script and style skipped). */
export function nestingDepth(html: string): number {
  let depth = 0;
  let deepest = 0;
  TAG.lastIndex = 0;
  for (let m = TAG.exec(html); m; m = TAG.exec(html)) {
    const name = (m[2] as string).toLowerCase();
    if (NO_DEPTH.has(name)) continue;
    if (m[1]) {
      depth = Math.max(0, depth - 1);
      continue;
    }
    if (m[0].endsWith('/>')) continue;
    const rawEnd = RAW_TEXT_END[name];
    if (rawEnd) {
      rawEnd.lastIndex = TAG.lastIndex;
      const end = rawEnd.exec(html);
      if (!end) break;
      TAG.lastIndex = end.index;
      continue;
    }
    depth += 1;
    deepest = Math.max(deepest, depth);
  }
  return deepest;
}

/** Turndown's options, and the elements dropped with their content (e.g. `script`). */
export type HtmlToMarkdownOptions = Omit<TurndownService.Options, 'linkStyle' | 'linkReferenceStyle'> & { remove?: string[] };

/**
 * A converter from HTML to Markdown: the one way this service runs turndown (mail bodies given only
 * as HTML, crawled pages for the compendium). Turndown is quadratic in long whitespace runs: its
 * final `replace(/[\t\r\n\s]+$/, '')` in every run of its output, and its edge-whitespace regex in a
 * run that ends an inline element's text. 160k spaces in a <pre> took ~21 s of synchronous work, and
 * a page or a mail body may have MBs of them. So the text's runs are cut first (boundWhitespaceRuns),
 * and turndown's final trim is done here, in linear time: runs that elements make (a <br> is "  \n",
 * an empty cell or code block a few more) never reach its regex. Ordinary documents convert as before.
 * Reference-style links are left out: turndown appends them in the step this replaces.
 */
export function htmlToMarkdownConverter(options: HtmlToMarkdownOptions = {}): (html: string) => string {
  const { remove = [], ...turndownOptions } = options;
  const turndown = new TurndownService(turndownOptions);
  // The DOM lib is not in this project's types, so the tag names go in as Turndown's own filter type.
  if (remove.length > 0) turndown.remove(remove as unknown as TurndownService.Filter);
  // The element each document is wrapped in, named anew each time so that no document can close it.
  let root = '';
  let markdown = '';
  turndown.addRule('wholeDocument', {
    filter: (node) => {
      if (node.nodeName !== root.toUpperCase()) return false;
      // Turndown trims an inline element's content when its text starts or ends with whitespace;
      // the document's own edges are trimmed below, as turndown trims them.
      Object.assign(node, { flankingWhitespace: { leading: '', trailing: '' } });
      return true;
    },
    // The document's Markdown before turndown's final trim; turndown itself is left with ''.
    replacement: (content) => {
      markdown = content;
      return '';
    },
  });
  return (html) => {
    if (nestingDepth(html) > MAX_HTML_DEPTH) throw new HtmlTooDeepError();
    root = `x-markdown-${randomBytes(8).toString('hex')}`;
    markdown = '';
    turndown.turndown(`<${root}>${boundWhitespaceRuns(html)}</${root}>`);
    // A raw-text element left open (<script>, <plaintext>) reads the closing tag as its text.
    const text = markdown.replaceAll(`</${root}>`, '');
    // Turndown's trim: newlines and tabs at the start, any whitespace at the end.
    let start = 0;
    while (start < text.length && '\n\r\t'.includes(text[start] as string)) start++;
    return text.slice(start).trimEnd();
  };
}
