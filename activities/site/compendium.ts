import { createHash } from 'node:crypto';
import type { CheerioAPI } from 'cheerio';
import { domToMarkdown, HtmlTooDeepError, type DomMarkdownOptions } from '../../lib/dom-markdown';
import { absoluteUrl, anchors, linesOf, loadHtml, pageElements } from './extract/dom';
import { mainContent } from './extract/main-content';

/**
 * The markdown compendium of a crawl (spec §2.3): every crawled page as one Markdown document.
 *   raw: the whole <body> converted (scripts, styles and templates dropped: they are not content).
 *   fit: the page's main content only, found by content scoring (extract/main-content.ts: the
 *        article or the page's own text without menus, sidebars, share bars, comments and
 *        banners); afterwards blocks whose text repeats on most pages (menus, footers the markup
 *        did not mark) are dropped, never all of a page's text.
 */
export type CleanupLevel = 'raw' | 'fit';

export interface CompendiumPage {
  url: string;
  title: string | null;
  /** The page's Markdown, split into blocks (paragraphs, list items, headings). */
  blocks: string[];
}

const MARKDOWN: DomMarkdownOptions = {
  codeBlockStyle: 'fenced',
  emDelimiter: '*',
  remove: ['script', 'style', 'noscript', 'template', 'iframe', 'object', 'canvas', 'svg'],
};

/** One page's Markdown blocks, at the given cleanup level. Mutates the document (call it last). */
export function pageMarkdown($: CheerioAPI, level: CleanupLevel, pageUrl?: string): string[] {
  // fit reads the page's JSON-LD and React's streamed parts first, and drops them itself.
  if (level !== 'fit') $('script, style, noscript, template').remove();
  // A script link is no link for a reader (nor one to hand anyone): its text stays, as text.
  for (const { el, href } of anchors($)) if (/^\s*(javascript|vbscript|data):/i.test(href)) delete el.attribs.href;
  if (pageUrl) absolutizeLinks($, pageUrl);
  // The converter reads the parsed page itself: no second parse.
  const nodes = level === 'fit' ? mainContent($) : (($('body').get(0) ?? $.root().get(0))?.children ?? []);
  let markdown: string;
  try {
    markdown = domToMarkdown(nodes, MARKDOWN);
  } catch (err) {
    if (!(err instanceof HtmlTooDeepError)) throw err;
    // Nested too deep to convert: the page's text, a block per line, is what it says.
    $('script, style, noscript, template').remove();
    return linesOf($.root().text());
  }
  return splitBlocks(markdown);
}

/** One HTML document as Markdown (the `markdown` command, and what a compendium holds per page). */
export function htmlToMarkdown(html: string, level: CleanupLevel, pageUrl?: string): string {
  return pageMarkdown(loadHtml(html), level, pageUrl).join('\n\n');
}

/** Links and images point where they point on the site: a compendium is read away from it. */
function absolutizeLinks($: CheerioAPI, pageUrl: string): void {
  const elements = pageElements($);
  const baseHref = elements.named('base').find((el) => el.attribs.href !== undefined)?.attribs.href;
  const base = (baseHref && absoluteUrl(baseHref, pageUrl)) || pageUrl;
  for (const [tag, name] of [
    ['a', 'href'],
    ['img', 'src'],
  ] as const) {
    for (const el of elements.named(tag)) {
      const value = el.attribs[name];
      if (!value || value.startsWith('#')) continue;
      const url = absoluteUrl(value, base);
      if (url) el.attribs[name] = url;
    }
  }
}

/** The line without the spaces and tabs at its end. */
function trimSpacesEnd(line: string): string {
  let end = line.length;
  while (end > 0 && (line[end - 1] === ' ' || line[end - 1] === '\t')) end--;
  return line.slice(0, end);
}

/** Blank-line separated blocks, list items each on their own, whitespace trimmed, empties dropped. */
export function splitBlocks(markdown: string): string[] {
  return (
    markdown
      .split(/\n{2,}/)
      // Per line and without a regex: `/[ \t]+\n/g` is quadratic in a long run of spaces inside a line.
      .map((b) => b.split('\n').map(trimSpacesEnd).join('\n').trim())
      .filter((b) => b.length > 0)
  );
}

const normalizeBlock = (b: string) => b.toLowerCase().replace(/\s+/g, ' ').trim();

/**
 * The whole document. With `fit`, a block that appears on more than half of the pages (and on at
 * least two) is boilerplate and dropped everywhere; headings are kept, so every page keeps its
 * section, and a page left with no text of its own keeps its blocks.
 */
export function buildCompendium(site: string, pages: CompendiumPage[], level: CleanupLevel): string {
  const sitePass = level === 'fit' && pages.length >= 2;
  // Each block is normalised once (a 1,000-page crawl has tens of thousands).
  const normalized = sitePass ? pages.map((page) => page.blocks.map(normalizeBlock)) : [];
  const seenOn = new Map<string, number>();
  for (const blocks of normalized) for (const b of new Set(blocks)) seenOn.set(b, (seenOn.get(b) ?? 0) + 1);
  const threshold = Math.max(2, Math.floor(pages.length / 2) + 1);
  const repeated = (b: string, p: number, i: number) =>
    sitePass && !b.startsWith('#') && (seenOn.get(normalized[p]?.[i] ?? '') ?? 0) >= threshold;

  const sections = pages.map((page, p) => {
    const kept = page.blocks.filter((b, i) => !repeated(b, p, i));
    // The site-level pass drops a page's chrome, never its text: a page whose every text block
    // repeats elsewhere (a near-copy of another page) keeps them all.
    const body = (kept.some((b) => !b.startsWith('#')) ? kept : page.blocks).join('\n\n');
    return `## ${page.title ?? page.url}\n\nSource: <${page.url}>\n\n${body}`.trimEnd();
  });
  return `# ${site}: website compendium\n\n${pages.length} page${pages.length === 1 ? '' : 's'}, cleanup level ${level}.\n\n${sections.join('\n\n---\n\n')}\n`;
}

export interface CompendiumObject {
  available: boolean;
  chars: number;
  cleanup_level: CleanupLevel;
  storage_location: string;
  download_url: string;
  filename: string;
  size_bytes: number;
  content_hash: string;
  estimated_tokens: number;
}

/** sha256 hex of the document's UTF-8 bytes: the object key derives from it, so a retry stores the same object. */
export function contentHash(markdown: string): string {
  return createHash('sha256').update(markdown, 'utf8').digest('hex');
}

/** Rough LLM token count: about four characters per token for English prose (OpenAI's rule of thumb). */
export function estimateTokens(chars: number): number {
  return Math.ceil(chars / 4);
}
