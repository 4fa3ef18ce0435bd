import { gunzipSync } from 'node:zlib';
import type { PageSource } from './fetch';

/**
 * Page URLs from a site's sitemaps (sitemaps.org protocol): the files robots.txt names, else
 * /sitemap.xml. A sitemap index is followed one level deep; gzipped files are unpacked. Sitemaps
 * only seed the frontier, so a missing or broken one is not an error.
 */
const MAX_SITEMAP_BYTES = 10 * 1024 * 1024;
const MAX_CHILD_SITEMAPS = 10;
const MAX_URLS = 5000;

export function parseSitemap(xml: string): { urls: string[]; sitemaps: string[] } {
  const locs = (tag: string) =>
    [...xml.matchAll(new RegExp(`<${tag}\\b[^>]*>[\\s\\S]*?<loc>\\s*(?:<!\\[CDATA\\[)?\\s*([^<\\]]+?)\\s*(?:\\]\\]>)?\\s*</loc>`, 'gi'))].map((m) => decodeXml(m[1] ?? ''));
  return { urls: locs('url'), sitemaps: locs('sitemap') };
}

function decodeXml(s: string): string {
  return s.replace(/&(amp|lt|gt|quot|apos|#\d+|#x[0-9a-f]+);/gi, (_, e: string) => {
    const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
    if (e[0] === '#') return String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10));
    return named[e.toLowerCase()] ?? _;
  });
}

/** URLs listed by the sitemaps (at most 5000), in file order; `errors` collects what could not be read. */
export async function sitemapUrls(source: PageSource, origin: string, declared: string[], signal: AbortSignal, errors: { url: string | null; error: string }[]): Promise<string[]> {
  const queue = declared.length ? [...declared] : [`${origin}/sitemap.xml`];
  const urls: string[] = [];
  let files = 0;
  while (queue.length && files <= MAX_CHILD_SITEMAPS && urls.length < MAX_URLS) {
    const url = queue.shift() as string;
    files++;
    try {
      const res = await source.fetchFile(url, signal, MAX_SITEMAP_BYTES);
      if (res.status < 200 || res.status >= 300) continue;
      const xml = res.body[0] === 0x1f && res.body[1] === 0x8b ? gunzipSync(res.body, { maxOutputLength: MAX_SITEMAP_BYTES }).toString('utf8') : res.text;
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
