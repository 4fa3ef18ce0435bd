import * as cheerio from 'cheerio';
import type { AnyNode, Element } from 'domhandler';
import { HTML_BLOCKS } from '../../../lib/html-blocks';

/**
 * Parsing once per page, and the small DOM helpers every extractor shares. htmlparser2 (cheerio's
 * `xml: {xmlMode: false}`) builds the tree several times faster than parse5 and is forgiving
 * enough for extraction; nothing here needs the HTML5 tree-construction corner cases.
 */
export function loadHtml(html: string): cheerio.CheerioAPI {
  return cheerio.load(html, { xml: { xmlMode: false, decodeEntities: true } });
}

/** The document's elements in document order, and by tag name. */
export interface PageElements {
  all: readonly Element[];
  named(name: string): readonly Element[];
}

const ELEMENTS = new WeakMap<cheerio.CheerioAPI, PageElements>();

/**
 * One walk of the document serves every extractor's "each <a href>", "the first <title>": a CSS
 * selector walks the whole document again each time (a dozen walks a page were a fifth of
 * processPage). Built on first use and kept with the document; it is valid while the document
 * keeps its elements (the compendium, which changes it, comes last and only edits attributes
 * before it reads the index).
 */
export function pageElements($: cheerio.CheerioAPI): PageElements {
  let index = ELEMENTS.get($);
  if (!index) {
    const all: Element[] = [];
    const byName = new Map<string, Element[]>();
    const stack: AnyNode[] = [...($.root().get(0)?.children ?? [])].reverse();
    for (let node = stack.pop(); node; node = stack.pop()) {
      if (node.type !== 'tag' && node.type !== 'script' && node.type !== 'style') continue;
      all.push(node);
      const named = byName.get(node.name);
      if (named) named.push(node);
      else byName.set(node.name, [node]);
      for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i] as AnyNode);
    }
    index = { all, named: (name) => byName.get(name) ?? [] };
    ELEMENTS.set($, index);
  }
  return index;
}

/** An element's text as cheerio reads it (`$(el).text()`); '' for no element. */
export const textOf = ($: cheerio.CheerioAPI, el: Element | undefined): string => (el ? $(el).text() : '');

/** The `<a href>` elements (with their href), in document order. */
export function anchors($: cheerio.CheerioAPI): { el: Element; href: string }[] {
  return pageElements($)
    .named('a')
    .flatMap((el) => (el.attribs.href === undefined ? [] : [{ el, href: el.attribs.href }]));
}

const HIDDEN = new Set(['script', 'style', 'noscript', 'template', 'svg', 'head', 'iframe', 'object', 'canvas']);
const BLOCK = new Set([...HTML_BLOCKS, 'br', 'label']);

/**
 * The text a visitor sees (no script, style or template contents), with a line break between
 * blocks so that numbers and addresses of neighbouring elements do not run into each other.
 */
export function visibleText(nodes: AnyNode | AnyNode[]): string {
  const parts: string[] = [];
  const walk = (node: AnyNode) => {
    if (node.type === 'text') {
      parts.push((node as unknown as { data: string }).data);
      return;
    }
    if (node.type !== 'tag' && node.type !== 'root') return;
    const el = node as Element;
    if (node.type === 'tag' && HIDDEN.has(el.name)) return;
    const block = node.type === 'tag' && BLOCK.has(el.name);
    if (block) parts.push('\n');
    for (const child of el.children) walk(child);
    if (block) parts.push('\n');
  };
  for (const n of Array.isArray(nodes) ? nodes : [nodes]) walk(n);
  return linesOf(parts.join('').replace(/[ \t\f\v\u00a0]+/g, ' ')).join('\n');
}

// The text's non-empty lines, each trimmed: split and trimmed rather than replaced with a regex of
// whitespace around a newline, which is quadratic in a long run of whitespace without one (a hostile
// page's 80k carriage returns took 5.5 s).
export function linesOf(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
}

/** Collapses whitespace; undefined for empty text. */
export function clean(text: string | undefined | null): string | undefined {
  const t = text?.replace(/\s+/g, ' ').trim();
  return t ? t : undefined;
}

/** An absolute http(s) URL from an attribute value, or undefined. */
export function absoluteUrl(value: string | undefined, base: string): string | undefined {
  if (!value) return undefined;
  try {
    const url = new URL(value.trim(), base);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

export type JsonLdNode = Record<string, unknown>;

/**
 * Every object of the page's JSON-LD blocks, flattened: top-level arrays and `@graph` lists are
 * opened, nested objects (an Organization's employees, a Person's worksFor) are kept in place.
 * Malformed blocks are skipped; nodes past MAX_LD_NODES are not read.
 */
export function jsonLdNodes($: cheerio.CheerioAPI): JsonLdNode[] {
  const out: JsonLdNode[] = [];
  const push = (value: unknown) => {
    if (out.length >= MAX_LD_NODES) return;
    if (Array.isArray(value)) value.forEach(push);
    else if (value && typeof value === 'object') {
      const node = value as JsonLdNode;
      if (Array.isArray(node['@graph'])) push(node['@graph']);
      if (node['@type'] !== undefined) out.push(node);
    }
  };
  for (const el of pageElements($).named('script')) {
    if (el.attribs.type?.trim().toLowerCase() !== 'application/ld+json') continue;
    const raw = el.children
      .map((c) => (c.type === 'text' ? c.data : ''))
      .join('')
      .trim();
    if (!raw) continue;
    try {
      push(JSON.parse(raw));
    } catch {
      // Some sites put trailing commas or several objects in one block: skip rather than guess.
    }
  }
  return out;
}

// A page describes itself in a few dozen nodes; every extractor walks them all (60,000 organisations,
// each with a telephone to parse, took 3 s and gave as many phones).
const MAX_LD_NODES = 1000;

/** The node's @type values. */
export function typesOf(node: JsonLdNode): string[] {
  const t = node['@type'];
  return (Array.isArray(t) ? t : [t]).filter((x): x is string => typeof x === 'string');
}

/** A JSON-LD value as text: strings as they are, {name} / {@value} / {url} objects by that field. */
export function ldText(value: unknown): string | undefined {
  if (typeof value === 'string') return clean(value);
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) return ldText(value[0]);
  if (value && typeof value === 'object') {
    const v = value as Record<string, unknown>;
    return ldText(v.name ?? v['@value'] ?? v.url ?? v.contentUrl);
  }
  return undefined;
}

/** A JSON-LD value as a list of values (arrays stay, single values become one-element lists). */
export function ldList(value: unknown): unknown[] {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : [value];
}
