import { gunzipSync } from 'node:zlib';
import { MAX_CRAWL_URL_LENGTH } from '../../jobs/fields';
import type { PageSource } from './fetch';
import { URL_TOO_LONG } from './urls';

/**
 * Page URLs from a site's sitemaps (sitemaps.org protocol): the files robots.txt names, else
 * /sitemap.xml. A sitemap index is followed one level deep; gzipped files are unpacked. Sitemaps
 * only seed the frontier, so a missing or broken one is not an error.
 */
const MAX_SITEMAP_BYTES = 10 * 1024 * 1024;
const MAX_CHILD_SITEMAPS = 10;
const MAX_URLS = 5000;

/**
 * The `<loc>` of every `<url>` / `<sitemap>` entry, in file order. A forward scan with indexOf, not a
 * regex: a lazy `<url>[\s\S]*?<loc>` scanned to the end of the file for each entry without a `<loc>`,
 * so a hostile sitemap of "<url>" repeated blocked the worker (27 s for 512 KiB). (htmlparser2's XML
 * mode is quadratic on that input too: it unshifts each unclosed tag onto its stack.) What is read is
 * what that regex read: an entry takes the first well-formed `<loc>` after its opening tag; the text
 * is trimmed, may be wrapped in CDATA and holds no `<` or `]`.
 */
export function parseSitemap(xml: string): { urls: string[]; sitemaps: string[] } {
  // Tag names match in any case; lower-casing only A-Z keeps every index the same as in `xml`.
  const lower = xml.replace(/[A-Z]+/g, (s) => s.toLowerCase());
  return { urls: entryLocs(xml, lower, 'url'), sitemaps: entryLocs(xml, lower, 'sitemap') };
}

function entryLocs(xml: string, lower: string, tag: string): string[] {
  const out: string[] = [];
  let from = 0;
  for (;;) {
    const open = openingTagEnd(lower, `<${tag}`, from);
    if (open < 0) return out;
    const loc = firstLoc(xml, lower, open);
    // No <loc> is left, so no later entry has one either.
    if (!loc) return out;
    out.push(decodeXml(loc.text));
    from = loc.end;
  }
}

/** The index after the `>` of the first `<name` tag at or after `from` (`<url`, not `<urlset`), or -1. */
function openingTagEnd(lower: string, name: string, from: number): number {
  for (let at = lower.indexOf(name, from); at >= 0; at = lower.indexOf(name, at + 1)) {
    if (/[a-z0-9_]/.test(lower[at + name.length] ?? '')) continue;
    const close = lower.indexOf('>', at + name.length);
    // Without a `>` no later tag can close either.
    return close < 0 ? -1 : close + 1;
  }
  return -1;
}

/** The first well-formed `<loc>` at or after `from`, however many other entries lie between. */
function firstLoc(xml: string, lower: string, from: number): { text: string; end: number } | undefined {
  for (let at = lower.indexOf('<loc>', from); at >= 0; at = lower.indexOf('<loc>', at + 1)) {
    const loc = readLoc(xml, lower, at + 5);
    if (loc) return loc;
  }
  return undefined;
}

const isSpace = (c: string | undefined) => c !== undefined && /\s/.test(c);

/**
 * The text of a `<loc>` whose content starts at `start`, and the index after its `</loc>`; undefined
 * when it is not well formed. This is what the regex `\s*(?:<!\[CDATA\[)?\s*([^<\]]+?)\s*(?:\]\]>)?\s*</loc>`
 * matched, edge cases included (content of spaces only gives its last space).
 */
function readLoc(xml: string, lower: string, start: number): { text: string; end: number } | undefined {
  let p = start;
  while (isSpace(xml[p])) p++;
  if (lower.startsWith('<![cdata[', p)) {
    const found = readLocText(xml, lower, p + 9);
    if (found) return found;
  }
  return readLocText(xml, lower, start);
}

/** The loc text from `base` on: leading spaces, text without `<` or `]`, trailing spaces, then `]]>`? and `</loc>`. */
function readLocText(xml: string, lower: string, base: number): { text: string; end: number } | undefined {
  let first = base;
  while (isSpace(xml[first])) first++;
  let stop = first;
  while (stop < xml.length && xml[stop] !== '<' && xml[stop] !== ']') stop++;
  let end = stop;
  if (lower.startsWith(']]>', end)) {
    end += 3;
    while (isSpace(xml[end])) end++;
  }
  if (!lower.startsWith('</loc>', end)) return undefined;
  // Text of spaces only: the regex's lazy group took the last space.
  if (first === stop) return first > base ? { text: xml[first - 1] as string, end: end + 6 } : undefined;
  let last = stop;
  while (isSpace(xml[last - 1])) last--;
  return { text: xml.slice(first, last), end: end + 6 };
}

function decodeXml(s: string): string {
  return s.replace(/&(amp|lt|gt|quot|apos|#\d+|#x[0-9a-f]+);/gi, (_, e: string) => {
    const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
    if (e[0] === '#')
      return String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10));
    return named[e.toLowerCase()] ?? _;
  });
}

/** URLs listed by the sitemaps (at most 5000), in file order; `errors` collects what could not be read. */
export async function sitemapUrls(
  source: PageSource,
  origin: string,
  declared: string[],
  signal: AbortSignal,
  errors: { url: string | null; error: string }[],
): Promise<string[]> {
  const queue = declared.length ? [...declared] : [`${origin}/sitemap.xml`];
  const urls: string[] = [];
  let files = 0;
  while (queue.length && files <= MAX_CHILD_SITEMAPS && urls.length < MAX_URLS) {
    const url = queue.shift() as string;
    if (url.length > MAX_CRAWL_URL_LENGTH) {
      // Named by its start only: an index can list a URL of megabytes.
      errors.push({ url: `${url.slice(0, MAX_CRAWL_URL_LENGTH)}…`, error: `sitemap not read: ${URL_TOO_LONG}` });
      continue;
    }
    files++;
    try {
      const res = await source.fetchFile(url, signal, MAX_SITEMAP_BYTES);
      if (res.status < 200 || res.status >= 300) continue;
      const xml =
        res.body[0] === 0x1f && res.body[1] === 0x8b
          ? gunzipSync(res.body, { maxOutputLength: MAX_SITEMAP_BYTES }).toString('utf8')
          : res.text;
      const parsed = parseSitemap(xml);
      urls.push(...parsed.urls);
      queue.push(...parsed.sitemaps);
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      errors.push({ url, error: `sitemap not read: ${(err as Error).message}` });
    }
  }
  return urls.slice(0, MAX_URLS);
}
