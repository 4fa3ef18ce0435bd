import createDOMPurify from 'dompurify';
import { JSDOM } from 'jsdom';

const SVG_NS = 'http://www.w3.org/2000/svg';

/** A reference to anything outside the document: any URL but a same-document `#fragment`. */
const EXTERNAL_URL_IN_CSS = /url\s*\(\s*(?!['"]?\s*#)/i;
const isLocalHref = (value: string) => value.trim().startsWith('#');

export interface SanitizedSvg {
  svg: string;
  /** What was taken out: `script`, `attribute onload`, `href https://...` and so on (for logs and tests). */
  removed: string[];
}

export class InvalidSvgError extends Error {}

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
 * any entity declarations) is dropped. Throws InvalidSvgError when it is not a well-formed SVG.
 */
export function sanitizeSvg(text: string): SanitizedSvg {
  const { window, purify, removed } = getPurifier();
  const doc = new window.DOMParser().parseFromString(text.replace(/^\uFEFF/, ''), 'image/svg+xml');
  const root = doc.documentElement;
  if (!root || root.localName === 'parsererror' || doc.getElementsByTagName('parsererror').length > 0) {
    const why = (doc.getElementsByTagName('parsererror')[0]?.textContent ?? root?.textContent ?? 'not XML').trim().slice(0, 200);
    throw new InvalidSvgError(`not a well-formed SVG document: ${why}`);
  }
  if (root.localName !== 'svg' || root.namespaceURI !== SVG_NS) {
    throw new InvalidSvgError(`the root element is <${root.nodeName}>, not an <svg> element in the SVG namespace`);
  }
  removed.length = 0;
  purify.sanitize(root, { USE_PROFILES: { svg: true, svgFilters: true }, ADD_TAGS: ['use'], IN_PLACE: true });
  const notes = [
    ...purify.removed.map((r) => ('element' in r ? `element ${(r.element as Element).nodeName}` : `attribute ${r.attribute?.name ?? '?'}`)),
    ...removed,
  ];
  const svg = `<?xml version="1.0" encoding="UTF-8"?>\n${new window.XMLSerializer().serializeToString(root)}\n`;
  return { svg, removed: [...new Set(notes)] };
}
