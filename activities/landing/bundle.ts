import { load, type CheerioAPI } from 'cheerio';
import type { AnyNode } from 'domhandler';
import { CAPTURE_POLICY } from '../../jobs/crawl-landing';
import type { CachedResponse } from './browser';

/**
 * htmlparser2, as crawlSite parses (activities/site/extract/dom.ts): linear in one element's
 * attributes, where parse5 is quadratic (a hostile page's 40,000 attributes held the worker's event
 * loop 4.6 s, heartbeats and cancel included: issue 38 item 10). It reads some markup otherwise than
 * a browser does; `inert` takes away what a browser would read as more than htmlparser2 saw.
 */
const parseHtml = (html: string): CheerioAPI => load(html, { xml: { xmlMode: false, decodeEntities: true } });

/** Fetches a resource the page did not load itself (through the SSRF guard); null when it cannot. */
export type ResourceLoader = (url: string) => Promise<CachedResponse | null>;

export interface BundleOutcome {
  html: string;
  /** Resources left as links (not loadable, or over the size budget). */
  missing: string[];
}

// A url() with its URL quoted, or unquoted (no whitespace inside, as CSS has it). No two parts can
// take the same characters, so a long run of spaces is scanned once: the pattern it replaces was
// cubic in one (3,000 spaces in a style attribute held the worker 15 s).
const CSS_URL = /url\(\s*(?:"([^"]*)"|'([^']*)'|([^'"\s()]+))\s*\)/g;
const cssUrlOf = (m: RegExpMatchArray) => m[1] ?? m[2] ?? m[3];

/**
 * Whether an attribute runs script when followed: a `javascript:` or `vbscript:` value anywhere (an
 * SVG animation's `values`/`to` can set a link to one), and a `data:` document as a link target.
 * Judged as a browser parses URLs: tabs and line breaks inside (`java\tscript:`) and leading
 * spaces and control characters do not count.
 */
function scriptAttribute(name: string, value: string): boolean {
  let start = 0;
  while (start < value.length && value.charCodeAt(start) <= 0x20) start += 1;
  const url = value
    .slice(start)
    .replace(/[\t\n\r]/g, '')
    .toLowerCase();
  if (/^(javascript|vbscript):/.test(url)) return true;
  return /^(href|xlink:href|action|formaction)$/i.test(name) && url.startsWith('data:');
}

/** Removes event handlers and script URLs from every element (the bundle's and the plain snapshot's). */
function stripScriptAttributes($: CheerioAPI): void {
  for (const el of $('*').toArray()) {
    const attribs = 'attribs' in el ? el.attribs : {};
    for (const [name, value] of Object.entries(attribs)) {
      if (/^on/i.test(name) || scriptAttribute(name, value)) $(el).removeAttr(name);
    }
  }
}
// An @import up to its `;`, which is looked for only up to the next `@` (a sheet of `@import a`
// without one was quadratic).
const CSS_IMPORT = /@import\s+(?:url\(\s*)?(['"]?)([^'")\s;]+)\1[^;@]*;/g;

/**
 * What no stored capture keeps, bundled or not: scripts and what embeds or loads other documents
 * (iframe srcdoc runs script of its own), resource hints to other hosts, meta refresh and base.
 */
const REMOVED =
  'script, noscript, iframe, frame, frameset, object, embed, noembed, noframes, xmp, plaintext, link[rel~="preload"], link[rel~="modulepreload"], link[rel~="prefetch"], link[rel~="preconnect"], link[rel~="dns-prefetch"], meta[http-equiv="refresh" i], base';

/**
 * What is taken away before a stored document is written, for every stored document: REMOVED,
 * handlers and script URLs, and what a browser re-parsing the file would read as markup where the
 * sanitiser's parser read text. Comments go (a browser ends one at `--!>`, htmlparser2 does not: the
 * markup after it was inside the comment here and live there), as do noembed, noframes, xmp and
 * plaintext (raw text in one parser, markup in the other, inside SVG or MathML). A `<` in a style
 * sheet is written as the CSS escape `\3c ` (the same character to CSS): a style that a browser puts
 * in MathML or SVG (`<math><mtext><table><mglyph><style>`) is parsed as markup there, and an
 * `<img onerror>` in it came alive; parse5 let that one through too.
 */
function inert($: CheerioAPI): void {
  $(REMOVED).remove();
  stripScriptAttributes($);
  const comments: AnyNode[] = [];
  const walk = (node: AnyNode) => {
    if (node.type === 'comment') comments.push(node);
    else if ('children' in node) for (const child of node.children) walk(child);
  };
  for (const node of $.root().toArray()) walk(node);
  $(comments).remove();
  for (const el of $('style').toArray()) {
    const css = $(el).text();
    if (css.includes('<')) $(el).text(css.replace(/</g, '\\3c '));
  }
}

/**
 * The document as stored: CAPTURE_POLICY as its first element (after the doctype), so that it
 * holds before anything a browser parses, wherever the file is opened (a meta policy cannot
 * sandbox; the API's capture route adds that), and no referrer to the hosts of images left as links.
 */
function serialize($: CheerioAPI): string {
  const policy = `<meta http-equiv="Content-Security-Policy" content="${CAPTURE_POLICY}"><meta name="referrer" content="no-referrer">`;
  const html = $.html();
  const doctype = /^\s*<!doctype[^>]*>/i.exec(html);
  return doctype ? `${doctype[0]}${policy}${html.slice(doctype[0].length)}` : `${policy}${html}`;
}

/**
 * A self-contained copy of the rendered page: stylesheets inlined as <style> (their url()s and
 * @imports resolved), images and icons as data: URIs, scripts, event handlers, <noscript>, frames
 * and preloads removed, links absolute. Resources come from what the page loaded (`cached`), else
 * from `load`. Past `maxBytes` of inlined data the remaining resources stay absolute links.
 */
export async function bundleHtml(
  html: string,
  baseUrl: string,
  cached: Map<string, CachedResponse>,
  load_: ResourceLoader,
  maxBytes: number,
): Promise<BundleOutcome> {
  // A page over the limit on its own is not parsed at all.
  if (Buffer.byteLength(html) > maxBytes) throw new BundleTooLargeError(maxBytes);
  const $ = parseHtml(html);
  const missing: string[] = [];
  // Everything the bundle adds counts: data URIs, stylesheets and their @imports (these did not, and
  // a page of large stylesheets was stored past LANDING_MAX_BUNDLE_BYTES).
  let budget = maxBytes - Buffer.byteLength(html) - 512;
  const abs = (u: string | undefined, base = baseUrl): string | null => {
    if (!u || u.startsWith('data:') || u.startsWith('#')) return null;
    try {
      return new URL(u, base).href;
    } catch {
      return null;
    }
  };
  const get = async (url: string): Promise<CachedResponse | null> => {
    const hit = cached.get(url) ?? (await load_(url));
    if (!hit || hit.status >= 300) return null;
    return hit;
  };
  const dataUri = async (url: string, fallbackType: string): Promise<string | null> => {
    const res = await get(url);
    if (!res) {
      missing.push(url);
      return null;
    }
    const size = Math.ceil(res.body.length * 1.37);
    if (size > budget) {
      missing.push(url);
      return null;
    }
    budget -= size;
    const type = (res.contentType.split(';')[0] ?? '').trim() || fallbackType;
    return `data:${type};base64,${res.body.toString('base64')}`;
  };
  const inlineCss = async (css: string, cssUrl: string, depth: number): Promise<string> => {
    let out = css;
    if (depth < 3) {
      for (const m of [...css.matchAll(CSS_IMPORT)]) {
        const url = abs(m[2], cssUrl);
        const res = url ? await get(url) : null;
        if (res && res.body.length > budget) missing.push(url as string);
        const fits = res && url && res.body.length <= budget;
        if (fits) budget -= res.body.length;
        out = out.replace(m[0], fits ? await inlineCss(res.body.toString('utf8'), url, depth + 1) : '');
      }
    }
    const replacements = new Map<string, string>();
    for (const m of [...out.matchAll(CSS_URL)]) {
      const url = abs(cssUrlOf(m), cssUrl);
      if (!url || replacements.has(m[0])) continue;
      const uri = await dataUri(url, 'application/octet-stream');
      replacements.set(m[0], uri ? `url("${uri}")` : `url("${url}")`);
    }
    // One pass for all of them (a split and join per URL was size × URLs).
    return replacements.size === 0 ? out : out.replace(CSS_URL, (m) => replacements.get(m) ?? m);
  };

  $(REMOVED).remove();
  stripScriptAttributes($);
  for (const el of $('link[rel~="stylesheet"]').toArray()) {
    const url = abs($(el).attr('href'));
    const res = url ? await get(url) : null;
    if (!url || !res) {
      if (url) missing.push(url);
      $(el).remove();
      continue;
    }
    if (res.body.length > budget) {
      // Over the size budget: linked from where it lives.
      missing.push(url);
      $(el).attr('href', url);
      continue;
    }
    budget -= res.body.length;
    const media = $(el).attr('media');
    const style = $('<style></style>').text(await inlineCss(res.body.toString('utf8'), url, 0));
    if (media) style.attr('media', media);
    $(el).replaceWith(style);
  }
  for (const el of $('style').toArray()) {
    // Not CSS_URL.test: a global regex's test leaves its lastIndex behind, and matchAll starts
    // there, so the first url() was skipped (and with one, all of them).
    const css = $(el).html() ?? '';
    if (css.includes('url(') || css.includes('@import')) $(el).text(await inlineCss(css, baseUrl, 0));
  }
  for (const el of $('img[src], input[type="image"][src], link[rel~="icon"][href], video[poster]').toArray()) {
    const attr = el.tagName === 'link' ? 'href' : el.tagName === 'video' ? 'poster' : 'src';
    const url = abs($(el).attr(attr));
    if (!url) continue;
    const uri = await dataUri(url, 'image/png');
    $(el).attr(attr, uri ?? url);
  }
  for (const el of $('[style]').toArray()) {
    const css = $(el).attr('style') ?? '';
    if (css.includes('url(')) $(el).attr('style', await inlineCss(css, baseUrl, 3));
  }
  for (const el of $('a[href], form[action], area[href]').toArray()) {
    const attr = el.tagName === 'form' ? 'action' : 'href';
    const url = abs($(el).attr(attr));
    if (url) $(el).attr(attr, url);
  }
  // Everything else (videos, audio) is linked from where it lives.
  for (const el of $('video[src], audio[src], source[src], track[src]').toArray()) {
    const url = abs($(el).attr('src'));
    if (url) $(el).attr('src', url);
  }
  const head = $('head');
  if (head.length)
    head.prepend(`<meta name="leadjobs-captured-from" content="${$('<i></i>').text(baseUrl).html() ?? ''}">`);
  inert($);
  const out = serialize($);
  // The budget is counted as the bundle grows; this is the guarantee.
  if (Buffer.byteLength(out) > maxBytes) throw new BundleTooLargeError(maxBytes);
  return { html: out, missing: [...new Set(missing)] };
}

/** The bundle would be larger than LANDING_MAX_BUNDLE_BYTES. */
export class BundleTooLargeError extends Error {
  override readonly name = 'BundleTooLargeError';
  constructor(readonly maxBytes: number) {
    super(`the page is larger than LANDING_MAX_BUNDLE_BYTES (${maxBytes} bytes)`);
  }
}

/**
 * The simple snapshot when bundling fails: the HTML as it was, with everything a bundle loses
 * (REMOVED), handlers and script URLs removed. It is stored as text/html in the client's public
 * bucket too, so it must not keep what runs or loads script: iframe srcdoc, meta refresh,
 * object/embed and base all survived here before (issue 38 item 5).
 */
export function plainSnapshot(html: string): string {
  const $ = parseHtml(html);
  inert($);
  return serialize($);
}
