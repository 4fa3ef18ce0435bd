import type { AnyNode } from 'domhandler';
import { HTML_BLOCKS } from './html-blocks';

/**
 * HTML to Markdown from an already parsed DOM (domhandler's, as cheerio and htmlparser2 build it).
 *
 * The output follows turndown's conventions (CommonMark; the same block separation, whitespace
 * collapsing, escaping, list and code rules), which this service used before: a crawled page was
 * serialized, parsed a second time by turndown's own DOM and walked with a `textContent` read per
 * inline element. Reading the parsed page directly, in linear passes, is what makes the compendium
 * cheap enough to run on every crawled page (bench/extract and bench/site measure it; the
 * "same Markdown as turndown" share over the real-page corpora is in bench/README.md).
 *
 * Three passes over a tree of its own (the caller's DOM is left as it is):
 *   1. copy: elements and text (adjacent text merged, comments dropped), whitespace runs cut to
 *      WS_RUN_MAX, nesting refused beyond MAX_HTML_DEPTH;
 *   2. collapse: whitespace as a browser shows it (runs to one space, none at a block's edges, <pre> kept);
 *   3. convert: each element by its rule, with the text facts its rules need (blank, edge
 *      whitespace, first and last character) computed once per element, bottom-up.
 */

export interface DomMarkdownOptions {
  /** `*` (the compendium) or `_`. */
  emDelimiter?: '*' | '_';
  /** Fenced (```lang) or indented (four spaces) code blocks. */
  codeBlockStyle?: 'fenced' | 'indented';
  /** Elements dropped with their content (e.g. `script`). */
  remove?: string[];
}

/** Longer whitespace runs than this in a document's text lose the rest (no layout needs more). */
export const WS_RUN_MAX = 64;

/** Elements deeper than this are refused: conversion recurses, and no real document needs more. */
export const MAX_HTML_DEPTH = 1000;

export class HtmlTooDeepError extends Error {
  override readonly name = 'HtmlTooDeepError';
  constructor() {
    super(`the HTML nests elements more than ${MAX_HTML_DEPTH} deep`);
  }
}

interface TextNode {
  readonly kind: 'text';
  data: string;
  parent: ElementNode;
}

interface ElementNode {
  readonly kind: 'element';
  readonly name: string;
  readonly attribs: Record<string, string>;
  children: MdNode[];
  parent: ElementNode | null;
  // Text facts of the collapsed subtree (its textContent), filled by summarize().
  allSpace: boolean;
  /** The whitespace (JS `\s`) its text starts and ends with; for all-whitespace text, `lead` is all of it. */
  lead: string;
  trail: string;
  first: string;
  last: string;
  /** A void or meaningful-when-blank element somewhere below. */
  holdsMarked: boolean;
}

type MdNode = TextNode | ElementNode;

const BLOCKS = HTML_BLOCKS;
const VOIDS = new Set([
  'area',
  'base',
  'br',
  'col',
  'command',
  'embed',
  'hr',
  'img',
  'input',
  'keygen',
  'link',
  'meta',
  'param',
  'source',
  'track',
  'wbr',
]);
/** Kept even when they hold no text (a table's cells keep its shape, a link its target). */
const MEANINGFUL_WHEN_BLANK = new Set([
  'a',
  'table',
  'thead',
  'tbody',
  'tfoot',
  'th',
  'td',
  'iframe',
  'script',
  'audio',
  'video',
]);
const HEADINGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6']);

/** JavaScript's `\s`, by code: the whitespace that `trim` and `\s` mean. */
function isSpaceCode(c: number): boolean {
  return (
    (c >= 9 && c <= 13) ||
    c === 32 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}
/**
 * Whether the text holds a whitespace run longer than WS_RUN_MAX: one pass by code (the regex
 * /\s{65}/ tried 65 characters from every position, a tenth of a 1 MB page's conversion).
 */
function hasLongRun(text: string): boolean {
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    if (!isSpaceCode(text.charCodeAt(i))) run = 0;
    else if (++run > WS_RUN_MAX) return true;
  }
  return false;
}
const isAsciiSpace = (c: string) => c === ' ' || c === '\t' || c === '\n' || c === '\r';

// ---- 1. copy ------------------------------------------------------------------------------------

function newElement(name: string, attribs: Record<string, string>, parent: ElementNode | null): ElementNode {
  return {
    kind: 'element',
    name,
    attribs,
    children: [],
    parent,
    allSpace: true,
    lead: '',
    trail: '',
    first: '',
    last: '',
    holdsMarked: false,
  };
}

/** The nodes as a tree of this module's own, under a root element that is no element of the page. */
function copy(nodes: readonly (AnyNode | string)[]): ElementNode {
  const root = newElement('#root', {}, null);
  let run = 0; // whitespace characters in a row, across tags (as a reader sees the text)
  const boundRuns = (text: string): string => {
    // Most text has no long run: only the runs at its two ends can join the ones around it.
    if (!hasLongRun(text)) {
      const lead = leadingSpace(text).length;
      if (lead === text.length) {
        if (run + lead <= WS_RUN_MAX) {
          run += lead;
          return text;
        }
      } else if (run + lead <= WS_RUN_MAX) {
        run = trailingSpace(text).length;
        return text;
      }
    }
    let out = '';
    let from = 0;
    for (let i = 0; i < text.length; i++) {
      if (!isSpaceCode(text.charCodeAt(i))) {
        run = 0;
        continue;
      }
      run++;
      if (run > WS_RUN_MAX) {
        out += text.slice(from, i);
        from = i + 1;
      }
    }
    return from === 0 ? text : out + text.slice(from);
  };
  // Text nodes side by side in the source (a page edited after parsing has them) are one text; a
  // comment between two keeps them two, as a browser's DOM has them.
  let joinsText = false;
  const add = (node: AnyNode | string, parent: ElementNode, depth: number): ElementNode => {
    if (typeof node === 'string' || node.type === 'text') {
      // As an HTML parser reads its input: a CR or CRLF is a line feed. Soft hyphens (`&shy;`, hyphenation
      // points a reader never sees unless a line breaks there) go: kept, they split the word for every
      // reader of the Markdown (search, a language model, a diff).
      const data = boundRuns(
        (typeof node === 'string' ? node : node.data).replace(/\r\n?/g, '\n').replace(/\u00ad/g, ''),
      );
      const prev = parent.children[parent.children.length - 1];
      if (joinsText && prev?.kind === 'text') prev.data += data;
      else parent.children.push({ kind: 'text', data, parent });
      joinsText = true;
      return parent;
    }
    joinsText = false;
    if (node.type === 'root') {
      for (const child of node.children) parent = add(child, parent, depth);
      return parent;
    }
    if (node.type !== 'tag' && node.type !== 'script' && node.type !== 'style') return parent;
    if (depth > MAX_HTML_DEPTH) throw new HtmlTooDeepError();
    const name = node.name.toLowerCase();
    // A heading opened directly inside a heading closes it (HTML's tree rule): the rest of the outer
    // heading's content follows it.
    if (HEADINGS.has(name) && HEADINGS.has(parent.name) && parent.parent) parent = parent.parent;
    const el = newElement(name, node.attribs, parent);
    parent.children.push(el);
    let into = el;
    for (const child of node.children) into = add(child, into, depth + 1);
    joinsText = false;
    // Content after a closed inner heading goes on where that heading's parent is.
    return into === el ? parent : into;
  };
  let into = root;
  for (const node of nodes) into = add(node, into, 1);
  return root;
}

// ---- 2. collapse --------------------------------------------------------------------------------

/**
 * Whitespace as rendered: a run of spaces, tabs and newlines reads as one space, none at the start
 * or end of a block or next to a <br>, and none doubled across inline elements; <pre> keeps its own.
 * Other whitespace (a no-break space) is text. Text left empty goes.
 */
function collapse(root: ElementNode): void {
  let prevText: TextNode | null = null;
  let keepLeadingSpace = false;
  const touch = (el: ElementNode) => {
    if (BLOCKS.has(el.name) || el.name === 'br') {
      if (prevText) prevText.data = prevText.data.replace(/ $/, '');
      prevText = null;
      keepLeadingSpace = false;
    } else if (VOIDS.has(el.name)) {
      // Around an inline void element (an image) a space stays.
      prevText = null;
      keepLeadingSpace = true;
    } else if (prevText) {
      keepLeadingSpace = false;
    }
  };
  const visit = (el: ElementNode) => {
    const kept: MdNode[] = [];
    for (const child of el.children) {
      if (child.kind === 'text') {
        let text = child.data.replace(/[ \r\n\t]+/g, ' ');
        if ((!prevText || prevText.data.endsWith(' ')) && !keepLeadingSpace && text.startsWith(' '))
          text = text.slice(1);
        if (!text) continue;
        child.data = text;
        prevText = child;
        kept.push(child);
        continue;
      }
      kept.push(child);
      touch(child);
      if (child.name !== 'pre' && child.children.length > 0) {
        visit(child);
        touch(child); // leaving it counts as much as entering it
      }
    }
    el.children = kept;
  };
  visit(root);
  // A final space goes, and a text node it leaves empty with it.
  const last = prevText as TextNode | null;
  if (last) {
    last.data = last.data.replace(/ $/, '');
    if (!last.data) last.parent.children = last.parent.children.filter((c) => c !== last);
  }
}

// ---- 3. convert ---------------------------------------------------------------------------------

/** textContent's facts, bottom-up, once per element. */
function summarize(el: ElementNode): void {
  let lead = '';
  let leadDone = false;
  let allSpace = true;
  let first = '';
  let last = '';
  let holdsMarked = false;
  for (const child of el.children) {
    let childAll: boolean;
    let childLead: string;
    let childFirst: string;
    let childLast: string;
    if (child.kind === 'text') {
      childAll = leadingSpace(child.data).length === child.data.length;
      childLead = childAll ? child.data : leadingSpace(child.data);
      childFirst = child.data.slice(0, 1);
      childLast = child.data.slice(-1);
    } else {
      summarize(child);
      childAll = child.allSpace;
      childLead = child.lead;
      childFirst = child.first;
      childLast = child.last;
      holdsMarked ||= child.holdsMarked || VOIDS.has(child.name) || MEANINGFUL_WHEN_BLANK.has(child.name);
    }
    if (!leadDone) {
      lead += childLead;
      if (!childAll) leadDone = true;
    }
    allSpace &&= childAll;
    if (!first) first = childFirst;
    if (childLast) last = childLast;
  }
  let trail = '';
  if (!allSpace) {
    for (let i = el.children.length - 1; i >= 0; i--) {
      const child = el.children[i] as MdNode;
      if (child.kind === 'text') {
        const t = trailingSpace(child.data);
        trail = t + trail;
        if (t.length < child.data.length) break;
      } else {
        trail = (child.allSpace ? child.lead : child.trail) + trail;
        if (!child.allSpace) break;
      }
    }
  }
  Object.assign(el, { allSpace, lead, trail, first, last, holdsMarked });
}

function leadingSpace(s: string): string {
  let i = 0;
  while (i < s.length && isSpaceCode(s.charCodeAt(i))) i++;
  return s.slice(0, i);
}

function trailingSpace(s: string): string {
  let i = s.length;
  while (i > 0 && isSpaceCode(s.charCodeAt(i - 1))) i--;
  return s.slice(i);
}

/** The text's characters, as they read (for a code block): a `<br>` is a line break there too. */
function textOf(node: MdNode): string {
  if (node.kind === 'text') return node.data;
  return node.name === 'br' ? '\n' : node.children.map(textOf).join('');
}

/** An attribute as an HTML parser reads it (a CR or CRLF is a line feed). */
const attr = (el: ElementNode, name: string): string | undefined => el.attribs[name]?.replace(/\r\n?/g, '\n');

const isBlank = (el: ElementNode) =>
  !VOIDS.has(el.name) && !MEANINGFUL_WHEN_BLANK.has(el.name) && el.allSpace && !el.holdsMarked;

// Markdown's syntax in text is escaped: anywhere for \ * ` [ ] _, at the text's start for what
// starts a block (a list item, a heading, a quote, a fence, a setext underline).
const ESCAPES: [RegExp, string][] = [
  [/\\/g, '\\\\'],
  [/\*/g, '\\*'],
  [/^-/g, '\\-'],
  [/^\+ /g, '\\+ '],
  [/^(=+)/g, '\\$1'],
  [/^(#{1,6}) /g, '\\$1 '],
  [/`/g, '\\`'],
  [/^~~~/g, '\\~~~'],
  [/\[/g, '\\['],
  [/\]/g, '\\]'],
  [/^>/g, '\\>'],
  [/_/g, '\\_'],
  [/^(\d+)\. /g, '$1\\. '],
  // CommonMark's other ordered-list marker (`19) Ingrid Goes West`), which turndown left as it was.
  [/^(\d+)\) /g, '$1\\) '],
];
const NEEDS_ESCAPE = /[\\*`[\]_]|^[-+=#~>\d]/;

export function escapeMarkdown(text: string): string {
  if (!NEEDS_ESCAPE.test(text)) return text;
  let out = text;
  for (const [pattern, replacement] of ESCAPES) out = out.replace(pattern, replacement);
  return out;
}

const cleanAttribute = (value: string | undefined) => (value ? value.replace(/(\n+\s*)+/g, '\n') : '');
const linkDestination = (url: string) => {
  const escaped = url.replace(/([<>()])/g, '\\$1');
  return escaped.includes(' ') ? `<${escaped}>` : escaped;
};
const linkTitle = (title: string) => (title ? ` "${title.replace(/"/g, '\\"')}"` : '');

const trimLeadingNewlines = (s: string) => {
  let i = 0;
  while (s[i] === '\n') i++;
  return s.slice(i);
};
const trimTrailingNewlines = (s: string) => {
  let i = s.length;
  while (i > 0 && s[i - 1] === '\n') i--;
  return s.slice(0, i);
};
const trimNewlines = (s: string) => trimTrailingNewlines(trimLeadingNewlines(s));

/** Appends a part: the newlines between two parts are the most either asks for, at most two (a blank line). */
function join(parts: string[], replacement: string): void {
  const tail = parts.pop() ?? '';
  const head = trimTrailingNewlines(tail);
  const rest = trimLeadingNewlines(replacement);
  const newlines = Math.max(tail.length - head.length, replacement.length - rest.length);
  if (head) parts.push(head);
  if (newlines > 0) parts.push('\n\n'.slice(0, newlines));
  if (rest) parts.push(rest);
}

class Converter {
  private readonly remove: Set<string>;
  constructor(private readonly options: Required<Omit<DomMarkdownOptions, 'remove'>> & { remove: Set<string> }) {
    this.remove = options.remove;
  }

  content(el: ElementNode, code: boolean): string {
    const parts: string[] = [];
    for (let i = 0; i < el.children.length; i++) {
      const child = el.children[i] as MdNode;
      const replacement =
        child.kind === 'text'
          ? code
            ? child.data
            : escapeMarkdown(child.data)
          : this.element(child, i, code || child.name === 'code');
      join(parts, replacement);
    }
    return parts.join('');
  }

  private element(el: ElementNode, index: number, code: boolean): string {
    let content = this.content(el, code);
    const { leading, trailing } = this.flanking(el, index);
    if (leading || trailing) content = content.trim();
    return leading + this.rule(el, index, content) + trailing;
  }

  /** The whitespace an inline element's text starts and ends with goes outside its markup (`**a** b`, not `**a **b`), once. */
  private flanking(el: ElementNode, index: number): { leading: string; trailing: string } {
    if (BLOCKS.has(el.name)) return { leading: '', trailing: '' };
    if (el.allSpace) {
      const ascii = asciiPrefix(el.lead);
      return { leading: ascii && this.flanked(el, index, -1) ? el.lead.slice(ascii.length) : el.lead, trailing: '' };
    }
    const leadAscii = asciiPrefix(el.lead);
    const trailAscii = asciiSuffix(el.trail);
    return {
      leading: leadAscii && this.flanked(el, index, -1) ? el.lead.slice(leadAscii.length) : el.lead,
      trailing:
        trailAscii && this.flanked(el, index, 1) ? el.trail.slice(0, el.trail.length - trailAscii.length) : el.trail,
    };
  }

  /** Whether the neighbour on that side already has a space there (an inline one: a block ends the line). */
  private flanked(el: ElementNode, index: number, side: -1 | 1): boolean {
    const sibling = el.parent?.children[index + side];
    if (!sibling) return false;
    if (sibling.kind === 'text') return side < 0 ? sibling.data.endsWith(' ') : sibling.data.startsWith(' ');
    if (BLOCKS.has(sibling.name)) return false;
    return (side < 0 ? sibling.last : sibling.first) === ' ';
  }

  private rule(el: ElementNode, index: number, content: string): string {
    const { name } = el;
    const block = BLOCKS.has(name);
    if (isBlank(el)) return block ? '\n\n' : '';
    const siblings = el.parent?.children ?? [];
    if (name === 'p') return `\n\n${content}\n\n`;
    if (name === 'br') return '  \n';
    if (HEADINGS.has(name)) return `\n\n${'#'.repeat(Number(name[1]))} ${content}\n\n`;
    if (name === 'blockquote') return `\n\n${trimNewlines(content).replace(/^/gm, '> ')}\n\n`;
    if (name === 'ul' || name === 'ol') {
      const parent = el.parent;
      const lastElement = parent ? [...parent.children].reverse().find((c) => c.kind === 'element') : undefined;
      return parent?.name === 'li' && lastElement === el ? `\n${content}` : `\n\n${content}\n\n`;
    }
    if (name === 'li') return this.listItem(el, index, content);
    // A <pre> is a code block whether or not a <code> holds its text (Pygments and Rouge write
    // `<div class="highlight"><pre><span ...>`): its lines and characters as written, unescaped.
    const firstChild = el.children[0];
    if (name === 'pre')
      return firstChild?.kind === 'element' && firstChild.name === 'code'
        ? this.codeBlock(firstChild)
        : this.codeBlock(el);
    if (name === 'hr') return '\n\n* * *\n\n';
    const href = name === 'a' ? attr(el, 'href') : undefined;
    if (href) return `[${content}](${linkDestination(href)}${linkTitle(cleanAttribute(attr(el, 'title')))})`;
    if (name === 'em' || name === 'i')
      return content.trim() ? `${this.options.emDelimiter}${content}${this.options.emDelimiter}` : '';
    if (name === 'strong' || name === 'b') return content.trim() ? `**${content}**` : '';
    if (name === 'code' && !(el.parent?.name === 'pre' && siblings.length === 1)) return inlineCode(content);
    if (name === 'img') {
      const src = attr(el, 'src');
      return src
        ? `![${escapeMarkdown(cleanAttribute(attr(el, 'alt')))}](${linkDestination(src)}${linkTitle(cleanAttribute(attr(el, 'title')))})`
        : '';
    }
    if (this.remove.has(name)) return '';
    return block ? `\n\n${content}\n\n` : content;
  }

  private listItem(el: ElementNode, index: number, content: string): string {
    const parent = el.parent;
    let prefix = '-   ';
    if (parent?.name === 'ol') {
      const start = parent.attribs.start;
      const position = parent.children.filter((c) => c.kind === 'element').indexOf(el);
      prefix = `${start ? Number(start) + position : position + 1}.  `;
    }
    const paragraph = content.endsWith('\n');
    const body = (trimNewlines(content) + (paragraph ? '\n' : '')).replace(/\n/g, `\n${' '.repeat(prefix.length)}`);
    return prefix + body + (parent && index < parent.children.length - 1 ? '\n' : '');
  }

  private codeBlock(code: ElementNode): string {
    const text = textOf(code);
    if (this.options.codeBlockStyle === 'indented') return `\n\n    ${text.replace(/\n/g, '\n    ')}\n\n`;
    const language = /language-(\S+)/.exec(code.attribs.class ?? '')?.[1] ?? '';
    let fence = 3;
    for (const m of text.matchAll(/^`{3,}/gm)) fence = Math.max(fence, m[0].length + 1);
    const marks = '`'.repeat(fence);
    return `\n\n${marks}${language}\n${text.replace(/\n$/, '')}\n${marks}\n\n`;
  }
}

function asciiPrefix(s: string): string {
  let i = 0;
  while (i < s.length && isAsciiSpace(s[i] as string)) i++;
  return s.slice(0, i);
}

function asciiSuffix(s: string): string {
  let i = s.length;
  while (i > 0 && isAsciiSpace(s[i - 1] as string)) i--;
  return s.slice(i);
}

/** Inline code in the fewest backticks that its own backticks do not close, padded where it starts or ends with one. */
function inlineCode(content: string): string {
  if (!content) return '';
  const code = content.replace(/\r?\n|\r/g, ' ');
  const pad = /^`|^ .*?[^ ].* $|`$/.test(code) ? ' ' : '';
  const runs = new Set(code.match(/`+/g) ?? []);
  let delimiter = '`';
  while (runs.has(delimiter)) delimiter += '`';
  return delimiter + pad + code + pad + delimiter;
}

/**
 * The nodes (in order, as one document; a string is text) as Markdown, without leading newlines
 * or trailing whitespace. Throws HtmlTooDeepError for nesting beyond MAX_HTML_DEPTH.
 */
export function domToMarkdown(nodes: readonly (AnyNode | string)[], options: DomMarkdownOptions = {}): string {
  const root = copy(nodes);
  collapse(root);
  summarize(root);
  const converter = new Converter({
    emDelimiter: options.emDelimiter ?? '_',
    codeBlockStyle: options.codeBlockStyle ?? 'indented',
    remove: new Set(options.remove ?? []),
  });
  const markdown = converter.content(root, false);
  let start = 0;
  while (start < markdown.length && (markdown[start] === '\n' || markdown[start] === '\r' || markdown[start] === '\t'))
    start++;
  return markdown.slice(start).trimEnd();
}
