import createDOMPurify from 'dompurify';
import { JSDOM } from 'jsdom';

const SVG_NS = 'http://www.w3.org/2000/svg';

/**
 * A reference to anything outside the document: any URL but a same-document `#fragment`. The
 * look-ahead is only tried where the whitespace after `url(` ends (`\s` in it), so a long
 * whitespace run is scanned once, not once per space (that was quadratic: 160k spaces, 22 s).
 */
const EXTERNAL_URL_IN_CSS = /url\s*\(\s*(?!\s|['"]?\s*#)/i;
const isLocalHref = (value: string) => value.trim().startsWith('#');

export interface SanitizedSvg {
  svg: string;
  /** What was taken out: `script`, `attribute onload`, `href https://...` and so on (for logs and tests). */
  removed: string[];
}

export class InvalidSvgError extends Error {}

/**
 * Bounds checked on the text before jsdom sees it: its XML parser and serializer take seconds on a
 * few thousand nested elements (and overflow the stack at 10,000), and about 300 bytes of memory
 * per element, synchronously in the API process. Real drawings stay far below both.
 */
export const MAX_SVG_DEPTH = 256;
export const MAX_SVG_ELEMENTS = 20_000;
/**
 * jsdom and DOMPurify take time quadratic in one element's attributes (10,000 on one element: 1.2 s,
 * 40,000: 12.8 s), and linear in all of them; drawing tools write a few dozen per element at most.
 * One tag's length bounds the rest (a long path `d` is still far below it).
 */
export const MAX_SVG_ATTRIBUTES_PER_ELEMENT = 256;
export const MAX_SVG_ATTRIBUTES = 100_000;
export const MAX_SVG_TAG_CHARS = 1024 * 1024;

/** The index just after the first `token` from `from`, or the end of `text`. */
function after(text: string, token: string, from: number): number {
  const at = text.indexOf(token, from);
  return at === -1 ? text.length : at + token.length;
}

/** The index just after the `>` that ends a tag, skipping quoted attribute values. */
function tagEnd(text: string, from: number): number {
  return scanTag(text, from).end;
}

/**
 * Where a tag ends (just after its `>`, quoted values skipped) and how many attributes it holds:
 * every XML attribute is `name="value"`, so each `=` outside quotes is one.
 */
function scanTag(text: string, from: number): { end: number; attributes: number } {
  let quote = '';
  let attributes = 0;
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === '=') {
      attributes += 1;
    } else if (c === '>') {
      return { end: i + 1, attributes };
    }
  }
  return { end: text.length, attributes };
}

/**
 * The index just after a `<!DOCTYPE ...>` that starts at `from`, read as saxes (jsdom's XML parser)
 * reads it: quotes, and in the internal subset `[...]` also comments and processing instructions,
 * may hold `>` and `<!--`, so an entity value cannot hide the elements after it from the count.
 */
function doctypeEnd(text: string, from: number): number {
  let subset = false;
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (c === '"' || c === "'") i = after(text, c, i + 1) - 1;
    else if (!subset && c === '[') subset = true;
    else if (!subset && c === '>') return i + 1;
    else if (subset && c === ']') subset = false;
    else if (subset && text.startsWith('<!--', i)) i = after(text, '-->', i + 4) - 1;
    else if (subset && text.startsWith('<?', i)) i = after(text, '?>', i + 2) - 1;
  }
  return text.length;
}

/**
 * Refuses XML whose elements nest deeper than MAX_SVG_DEPTH or number more than MAX_SVG_ELEMENTS,
 * in one linear pass over the text. Comments, CDATA, processing instructions and the doctype hold
 * no elements; `<g/>` nests nothing. Well-formed XML has no `<` in text or attribute values, and
 * the parser stops at its first error, so it never builds more than this counts.
 */
function checkShape(text: string): void {
  let depth = 0;
  let elements = 0;
  let attributes = 0;
  for (let i = text.indexOf('<'); i !== -1; i = text.indexOf('<', i)) {
    if (text.startsWith('<!--', i)) i = after(text, '-->', i + 4);
    else if (text.startsWith('<![CDATA[', i)) i = after(text, ']]>', i + 9);
    else if (text.startsWith('<?', i)) i = after(text, '?>', i + 2);
    else if (text.startsWith('<!', i)) i = doctypeEnd(text, i + 2);
    else if (text.startsWith('</', i)) {
      i = tagEnd(text, i + 2);
      depth -= 1;
    } else {
      const start = i;
      const tag = scanTag(text, i + 1);
      i = tag.end;
      if (i - start > MAX_SVG_TAG_CHARS)
        throw new InvalidSvgError(`one of its tags is longer than ${MAX_SVG_TAG_CHARS} characters`);
      if (tag.attributes > MAX_SVG_ATTRIBUTES_PER_ELEMENT)
        throw new InvalidSvgError(`one of its elements has more than ${MAX_SVG_ATTRIBUTES_PER_ELEMENT} attributes`);
      attributes += tag.attributes;
      if (attributes > MAX_SVG_ATTRIBUTES)
        throw new InvalidSvgError(`it has more than ${MAX_SVG_ATTRIBUTES} attributes`);
      elements += 1;
      if (elements > MAX_SVG_ELEMENTS) throw new InvalidSvgError(`it has more than ${MAX_SVG_ELEMENTS} elements`);
      if (text[i - 2] !== '/') depth += 1;
      if (depth > MAX_SVG_DEPTH)
        throw new InvalidSvgError(`its elements are nested deeper than ${MAX_SVG_DEPTH} levels`);
    }
  }
}

// One window and one DOMPurify for the process: creating a JSDOM per upload costs tens of milliseconds.
let purifier: { window: JSDOM['window']; purify: ReturnType<typeof createDOMPurify>; removed: string[] } | undefined;

function getPurifier() {
  if (purifier) return purifier;
  const { window } = new JSDOM('');
  const purify = createDOMPurify(window);
  const removed: string[] = [];
  // DOMPurify's SVG profile already drops <script>, <foreignObject> and event handlers; these hooks
  // also drop references that would make a viewer fetch something (tracking pixels, remote
  // stylesheets and fonts, external <use>), so a stored SVG renders only what it contains.
  purify.addHook('uponSanitizeAttribute', (_node, data) => {
    const value = String(data.attrValue ?? '');
    const name = data.attrName.toLowerCase();
    if ((name === 'href' || name === 'xlink:href' || name === 'src') && !isLocalHref(value)) {
      removed.push(`${name} ${value.slice(0, 80)}`);
      data.keepAttr = false;
    } else if (EXTERNAL_URL_IN_CSS.test(value)) {
      removed.push(`${name} ${value.slice(0, 80)}`);
      data.keepAttr = false;
    }
  });
  purify.addHook('uponSanitizeElement', (node, data) => {
    if (data.tagName === 'style' && /@import|@font-face/i.test(node.textContent ?? '')) {
      removed.push('style with @import/@font-face');
      node.textContent = '';
    } else if (data.tagName === 'style' && EXTERNAL_URL_IN_CSS.test(node.textContent ?? '')) {
      removed.push('style with external url()');
      node.textContent = '';
    }
  });
  purifier = { window, purify, removed };
  return purifier;
}

/**
 * Parses `text` as an SVG document (XML; the root must be <svg> in the SVG namespace) and returns
 * it sanitised: no scripts, event handlers, foreignObject, javascript: links or external references
 * (href/xlink:href other than `#id`, url(...) outside the document, @import). The doctype (and so
 * any entity declarations) is dropped. Throws InvalidSvgError when it is not a well-formed SVG,
 * nests elements deeper than MAX_SVG_DEPTH, has more than MAX_SVG_ELEMENTS of them, or more
 * attributes than MAX_SVG_ATTRIBUTES_PER_ELEMENT on one or MAX_SVG_ATTRIBUTES in all, or a tag
 * longer than MAX_SVG_TAG_CHARS. Synchronous and CPU-bound: the API runs it in
 * lib/media/svg-worker.ts, off its event loop.
 */
export function sanitizeSvg(text: string): SanitizedSvg {
  const source = text.replace(/^\uFEFF/, '');
  checkShape(source);
  try {
    return sanitizeParsed(source);
  } catch (err) {
    if (err instanceof InvalidSvgError) throw err;
    // A document jsdom or DOMPurify cannot handle (a stack overflow, say) is the uploader's SVG
    // that cannot be processed, not a server error.
    throw new InvalidSvgError(
      `it could not be processed: ${err instanceof Error ? err.message : String(err)}`.slice(0, 300),
    );
  }
}

function sanitizeParsed(source: string): SanitizedSvg {
  const { window, purify, removed } = getPurifier();
  const doc = new window.DOMParser().parseFromString(source, 'image/svg+xml');
  const root = doc.documentElement;
  if (!root || root.localName === 'parsererror' || doc.getElementsByTagName('parsererror').length > 0) {
    const why = (doc.getElementsByTagName('parsererror')[0]?.textContent ?? root?.textContent ?? 'not XML')
      .trim()
      .slice(0, 200);
    throw new InvalidSvgError(`not a well-formed SVG document: ${why}`);
  }
  if (root.localName !== 'svg' || root.namespaceURI !== SVG_NS) {
    throw new InvalidSvgError(`the root element is <${root.nodeName}>, not an <svg> element in the SVG namespace`);
  }
  removed.length = 0;
  purify.sanitize(root, { USE_PROFILES: { svg: true, svgFilters: true }, ADD_TAGS: ['use'], IN_PLACE: true });
  const notes = [
    ...purify.removed.map((r) =>
      'element' in r ? `element ${(r.element as Element).nodeName}` : `attribute ${r.attribute?.name ?? '?'}`,
    ),
    ...removed,
  ];
  const svg = `<?xml version="1.0" encoding="UTF-8"?>\n${new window.XMLSerializer().serializeToString(root)}\n`;
  return { svg, removed: [...new Set(notes)] };
}
