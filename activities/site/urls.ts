import picomatch from 'picomatch';
import { MAX_CRAWL_URL_LENGTH } from '../../jobs/fields';
import { registrableDomain } from '../../lib/normalize';

/**
 * URL normalisation for the crawl frontier, so that one page is fetched once however it is linked:
 * http(s) only, host lower-cased without the root dot, default port and fragment dropped, tracking
 * parameters removed and the rest sorted. urlKey() goes further for de-duplication only:
 * `index.html` and a trailing slash name the same page as the directory, but the fetch keeps the
 * path as linked, since some servers answer only one of the two spellings.
 */

// A longer URL (MAX_CRAWL_URL_LENGTH) is no page or sitemap worth a fetch, and every URL costs a
// robots.txt check and the path filters in proportion to its length (a start URL that long is refused
// at submission).
export const URL_TOO_LONG = `its URL is longer than ${MAX_CRAWL_URL_LENGTH.toLocaleString('en')} characters`;

const TRACKING_PARAM =
  /^(utm_\w+|gclid|dclid|fbclid|msclkid|mc_cid|mc_eid|yclid|_ga|_gl|_hsenc|_hsmi|ref|ref_src|igshid|si)$/i;
const INDEX_FILE = /\/(index|default)\.(html?|php|aspx?)$/i;

/** The normalised absolute URL, or undefined for other schemes (mailto:, javascript:, data:) and junk. */
export function normalizeUrl(raw: string, base?: string | URL): string | undefined {
  let url: URL;
  try {
    url = new URL(raw.trim(), base);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.username || url.password) return undefined;
  url.hash = '';
  url.hostname = url.hostname.toLowerCase().replace(/\.+$/, '');
  // URL already drops the scheme's default port.
  url.pathname = url.pathname.replace(/\/{2,}/g, '/');
  const params = [...url.searchParams].filter(([name]) => !TRACKING_PARAM.test(name));
  params.sort(([a, av], [b, bv]) => (a === b ? av.localeCompare(bv) : a.localeCompare(b)));
  url.search = params.length ? new URLSearchParams(params).toString() : '';
  return url.href;
}

/** The frontier's key of a normalised URL: no index file, no trailing slash, http and https alike. */
export function urlKey(normalized: string): string {
  const url = new URL(normalized);
  let path = url.pathname.replace(INDEX_FILE, '/');
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  return `${url.host}${path}${url.search}`;
}

/**
 * The site a host belongs to: its registrable domain, so www.acme.co.uk, shop.acme.co.uk and
 * acme.co.uk are one company website while other.co.uk (and, by the private suffixes of the
 * Public Suffix List, bob.github.io next to alice.github.io) is another. Hosts without one (IP
 * addresses, localhost) are a site of their own, minus a `www.` or `m.` prefix.
 */
export function siteKey(hostname: string): string {
  return (
    registrableDomain(hostname) ??
    hostname
      .toLowerCase()
      .replace(/\.+$/, '')
      .replace(/^(www\d?|m)\./, '')
  );
}

/** Whether a URL belongs to the site (compared by siteKey). */
export function isSameSite(url: string, siteKeys: ReadonlySet<string>): boolean {
  try {
    return siteKeys.has(siteKey(new URL(url).hostname));
  } catch {
    return false;
  }
}

// Links to these are files, not pages: skipped before any request.
const NON_PAGE_EXTENSION =
  /\.(pdf|jpe?g|png|gif|webp|avif|svg|ico|bmp|tiff?|mp[34]|m4a|mov|avi|webm|wav|ogg|zip|gz|tgz|rar|7z|exe|dmg|msi|apk|docx?|xlsx?|pptx?|odt|ods|csv|css|js|mjs|json|xml|rss|atom|woff2?|ttf|eot|ics|vcf)$/i;

export function looksLikePage(url: string): boolean {
  try {
    return !NON_PAGE_EXTENSION.test(new URL(url).pathname);
  } catch {
    return false;
  }
}

/** Paths that usually hold contact details and people: crawled before the others. */
const CONTACT_PATH =
  /(contact|kontakt|about|ueber|uber|über|team|people|staff|leadership|management|imprint|impressum|legal|mentions-legales|privacy|datenschutz|company|unternehmen|who-we-are)/i;

export function isContactLike(url: string): boolean {
  try {
    return CONTACT_PATH.test(decodeURIComponent(new URL(url).pathname));
  } catch {
    return false;
  }
}

/**
 * The payload's include_paths / exclude_paths globs, matched against the URL's path. A glob
 * without a leading slash or star is anchored at the root ("blog/**" is "/blog/**"); matching is
 * case-insensitive and ignores a trailing slash. No include globs means every path is included.
 */
export function pathFilter(include: string[], exclude: string[]): (url: string) => boolean {
  // The payload schema refuses braces, extglobs and more than two stars in a segment (jobs/crawl-site.ts
  // globProblem); turned off here too, so a glob can never be read as more than its text.
  const compile = (globs: string[]) =>
    globs.map((g) =>
      picomatch(/^[/*]/.test(g) ? g : `/${g}`, { nocase: true, dot: true, nobrace: true, noextglob: true }),
    );
  const inc = compile(include);
  const exc = compile(exclude);
  return (url) => {
    let path: string;
    try {
      // "/about" also matches "/about/": a trailing slash is a spelling, not another page.
      path = decodeURIComponent(new URL(url).pathname).replace(/(.)\/$/, '$1');
    } catch {
      return false;
    }
    if (inc.length && !inc.some((m) => m(path))) return false;
    return !exc.some((m) => m(path));
  };
}
