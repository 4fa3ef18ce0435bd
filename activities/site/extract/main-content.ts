import type { CheerioAPI } from 'cheerio';
import type { AnyNode, Element, ParentNode } from 'domhandler';
import { parseDocument } from 'htmlparser2';
import { HTML_BLOCKS } from '../../../lib/html-blocks';
import { jsonLdNodes, pageElements } from './dom';

/**
 * The main content of a page (the `fit` cleanup level): which elements hold the article or the
 * page's own text, with the page's chrome (menus, sidebars, share bars, comment threads, related
 * lists, cookie banners) left out.
 *
 * It scores the DOM as content scorers do (Mozilla Readability's and trafilatura's ideas, written
 * anew over the htmlparser2 tree every extractor here already shares):
 * 1. Paragraph-like elements of 25+ characters give points (one, one per comma, one per 100
 *    characters up to three) to their parent in full, their grandparent in half and up to three
 *    more ancestors in thirds. A candidate starts from its tag (div +5, lists and headings less)
 *    and, as weak evidence, from its class and id (`content`, `post` +25; `comment`, `share` -25);
 *    its final score is multiplied by the share of its text that is not link text.
 * 2. The best candidate moves up to an ancestor that several nearly as good candidates share, and
 *    takes in siblings that score well or read as paragraphs (sibling merging).
 * 3. Inside what was chosen, boilerplate goes: an element whose class says comments, share bar,
 *    related list, sidebar or banner (unless it holds most of the page's text: a class on an
 *    ancestor is never a reason to drop the article), and lists, tables, forms and divs whose text
 *    is mostly links, images or form fields rather than sentences.
 * 4. Each pass that finds less than a page's worth of text is tried again with one kind of
 *    evidence less (class hints for removal, class weights, conditional cleaning); the longest
 *    result wins. A page that never reaches that (a short company page) keeps its landmark
 *    (`<main>`, `<article>`) or its body without navigation, header, footer, sidebars and banners,
 *    so a page with readable text never comes back empty.
 *
 * The tree is walked with explicit stacks (pages nest thousands deep) and each element's counts are
 * computed once, bottom-up, so a pass is linear in the page.
 */

/**
 * Elements that never carry content a reader sees, removed with everything in them; and ruby
 * readings (`<rt>`, `<rp>`), which a reader sees above the word but which split it as text.
 */
const NEVER_CONTENT = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'iframe',
  'object',
  'embed',
  'svg',
  'canvas',
  'button',
  'select',
  'input',
  'textarea',
  'link',
  'meta',
  'head',
  'title',
  'dialog',
  'map',
  'audio',
  'video',
  'source',
  'track',
  'rt',
  'rp',
]);

/** Block-level elements: a div holding one of these is a container, not a paragraph. */
const BLOCKS = new Set([...HTML_BLOCKS, 'details', 'img', 'picture']);

/** Elements whose text is scored as a paragraph. */
const PARAGRAPHS = new Set(['p', 'pre', 'td', 'blockquote', 'dd', 'h2', 'h3', 'h4', 'h5', 'h6']);

const HEADINGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6']);

/** Shops' customer-review widgets (Judge.me, Yotpo, Stamped, Trustpilot...): visitors' posts, like comment threads. */
const REVIEW_WIDGETS = String.raw`product-?reviews|customer-?reviews|reviews?-?widget|jdgm-[\w-]*|spr-reviews?|yotpo[\w-]*|stamped-reviews?|trustpilot[\w-]*`;
/** A class or id that says "not the content": tested only with the OK pattern below, never on <body>. */
const UNLIKELY = new RegExp(
  String.raw`(^|\s)ad(\s|$)|-ad-|\bad-|\bads\b|adsense|advert|agegate|ai2html|banner|breadcrumbs?|combx|comment|community|consent|cookie|cover-wrap|disqus|extra|footer|gdpr|header|legends|menu|newsletter|popup|related|remark|replies|rss|(^|[^a-z])shar(e|ing)([^a-z]|$)|shoutbox|sidebar|skyscraper|social|sponsor|subscribe|supplemental|pagination|pager|promo|outbrain|taboola|yom-remote|${REVIEW_WIDGETS}`,
  'i',
);
/** ... unless it also says it is (part of) the content. */
const OK_MAYBE = /and|article|body|column|content|main|mathjax|shadow|story|entry|post-?text/i;
/** Class or id words that count against a candidate (weight -25). */
const NEGATIVE =
  /-ad-|hidden|^hid$| hid$| hid |^hid |banner|combx|comment|com-|contact|footer|gdpr|masthead|media|meta|outbrain|promo|related|scroll|share|shoutbox|sidebar|skyscraper|sponsor|shopping|tags|widget|byline|author-bio|newsletter|subscribe|cookie|consent/i;
/** Layout classes whose words read as NEGATIVE's but say nothing about content (see classWeight). */
const LAYOUT_WORDS = /(^|\s)(elementor-widget[\w-]*|(hidden|visible)-(xs|sm|md|lg|xl|xxl|print)(-[a-z]+)?)(?=\s|$)/g;
/** ... and for it (weight +25). */
const POSITIVE = /article|body|content|entry|hentry|h-entry|main|page|pagination|post|text|blog|story|prose/i;
/** Rating widgets (stars, "rate this recipe" prompts): a few short sentences that are never the page's text. */
const RATING = /(^|[\s_-])(ratings?|star-?rating|review-stars|rate-this|rating-widget)($|[\s_-])/i;
/** Share bars and their kin: dropped inside the content when short. */
const SHARE = /(\b|_)(share|sharedaddy|sharing|social|addthis|shariff)(\b|_)/i;
/** A post's furniture around its text: meta lines, tag and category lists, author boxes, "read also" teasers, print/share tools. */
const POST_FURNITURE =
  /(^|[\s_-])(entry-meta|post-meta|postmeta|postmetadata|post-info|entry-footer|entry-utility|post-footer|article-footer|post-tags|entry-tags|tags-links|cat-links|categories|tag-list|taglist|author-?(info|box|bio|container|card|description|details|profile)|post-author|authorbox|about-author|copyright|read-more|readmore|also-read|see-also|more-stories|more-articles|recommended|recirculation|article-tools|print-tools|post-navigation|nav-links|navigation|pagination|wp-block-buttons|sd-block|jp-relatedposts|yarpp|crp_related)($|[\s_-])/i;
/** Comment threads: dropped inside the content whatever their length (they are not the page's text). */
const COMMENTS = new RegExp(
  String.raw`(^|[\s_-])(comments?|comment-?list|commentlist|comments-area|comment-respond|respond|disqus_thread|disqus|replies|${REVIEW_WIDGETS})($|[\s_-])`,
  'i',
);
/** A byline's class: the author's name and the date, above or below the text. */
const BYLINE =
  /(^|[\s_-])(byline|bylines|author|authors|article-author|post-author|entry-author|dateline|writtenby|p-author)($|[\s_-])/i;
/** An advertisement's label, in the languages the corpora's pages are in. */
const AD_LABEL =
  /^\s*(advertisement|advertising|ads?|anzeige|werbung|publicit[ée]|publicidad|anuncio|pubblicit[àa]|reklama|реклама|广告|広告|광고)\s*$/iu;
/** Boxes of the site's other stories. */
const RECIRCULATION =
  /(^|[\s_-])(most-?(popular|read|viewed|shared|commented)|popular-(posts|stories|articles)|trending(-\w+)?|read-?next|up-?next|more-from|you-may-(also-)?like|related-(posts|articles|stories|content|links|news)|recirc(ulation)?|teasers|teaser-?(list|grid|row|group|wrapper|container|slider|carousel)|outbrain|taboola)($|[\s_-])/i;
/**
 * A label and a colon before a link to another story: "Read more:", "Lea también:", "LE PUEDE
 * INTERESAR:". The first alternative is a label of one to four words in any case (with the `i`
 * flag \p{Lu} matches a cased letter of either case: "Mehr zum Thema:"), its colon followed by a
 * space: "about:addons cleanup" is no label.
 */
const READ_ALSO =
  /^\s*(\p{Lu}{3,}(\s+\p{Lu}+){0,3}\s*:(?=\s)|(read|see|watch|listen|also|more|related|recommended|lea|lee|léase|mira|mire|vea|ver|más|también|le puede interesar|te puede interesar|siehe|lesen sie|lies|auch|mehr|weiterlesen|lire|à lire|voir|leggi|guarda|anche|czytaj|zobacz|leia|veja)\b[^:\n]{0,30}:)\s*\S/iu;
const READ_ALSO_TAGS = new Set(['p', 'div', 'h2', 'h3', 'h4', 'h5', 'h6', 'li', 'strong', 'b', 'span']);
const CAPTION = /(^|[\s_-])(caption|image-caption|img-caption|photo-credit|credit|credits|wp-caption-text)($|[\s_-])/i;
/** A caption's class, unless it says the box has none (`buzz_superlist_item no_caption`: a list item with its heading). */
const isCaptionBox = (match: string) =>
  CAPTION.test(match) && !/(^|[\s_-])(no|without)[-_]?caption($|[\s_-])/i.test(match);
/** Consent banners and modal dialogs: unlikely even where `content` is in the class (`modal-content cmp-content`). */
const OVERLAY =
  /(^|[\s_-])(modal(-(content|dialog|body|wrapper|container|inner|overlay|backdrop))?|cmp(-(content|container|banner|wrapper|root|modal|dialog|layer|overlay|popup))?|consent[\w-]*|cookie-?(law|notice|banner|bar|consent|policy|wall)|gdpr[\w-]*|onetrust[\w-]*|ot-sdk[\w-]*|cookiebot[\w-]*|usercentrics[\w-]*|didomi[\w-]*|qc-cmp2[\w-]*|sp_message[\w-]*|privacy-(banner|manager|center|notice))($|[\s_])/i;
const UNLIKELY_ROLES = new Set([
  'menu',
  'menubar',
  'complementary',
  'navigation',
  'alert',
  'alertdialog',
  'dialog',
  'banner',
  'contentinfo',
  'search',
]);
/** Landmarks of a page's chrome, for the fallback. */
const PROSE_BOXES = new Set(['div', 'section', 'article', 'main']);
const ENTRY = /(^|\s)(hentry|h-entry)(\s|$)/;
const CHROME_TAGS = new Set(['nav', 'header', 'footer', 'aside', 'form', 'amp-lightbox', 'amp-sidebar']);

/** Readability's threshold: a pass that finds fewer characters than this is tried again with less evidence. */
const PAGE_WORTH = 500;
const MIN_PARAGRAPH = 25;
/** The least text under a page's heading that reads as a short article (an audio page's intro). */
const SHORT_ARTICLE = 150;

interface Counts {
  /** Characters of text, whitespace runs counted once. */
  chars: number;
  /** ... of which inside links (in-page `#` links count 0.3). */
  linkChars: number;
  commas: number;
  paragraphs: number;
  images: number;
  listItems: number;
  inputs: number;
  headingChars: number;
  /** Characters inside ul/ol. */
  listChars: number;
  /** Characters inside paragraphs (p, pre, blockquote, h2-h6). */
  proseChars: number;
  /** Has an h1 or an itemprop=articleBody element inside (never "unlikely"). */
  anchorsContent: boolean;
  /** Has an h1 inside (or is one). */
  holdsH1: boolean;
}

interface Flags {
  stripUnlikely: boolean;
  weightClasses: boolean;
  cleanConditionally: boolean;
}

const isElement = (n: AnyNode): n is Element => n.type === 'tag' || n.type === 'script' || n.type === 'style';
const attr = (el: Element, name: string) => el.attribs[name] ?? '';
const childElements = (el: ParentNode) => el.children.filter(isElement);

/** Characters of the text with each whitespace run counted once (and none at the ends). */
function collapsedLength(text: string): number {
  let n = 0;
  let space = true;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const ws = c === 32 || c === 10 || c === 9 || c === 13 || c === 12 || c === 160;
    if (ws) {
      if (!space) n++;
      space = true;
    } else {
      n++;
      space = false;
    }
  }
  return space && n > 0 ? n - 1 : n;
}

function commasIn(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // , ، ﹐ ︐ ︑ ⹁ ⸴ ⸲ ， 、
    if (
      c === 44 ||
      c === 0x3001 ||
      c === 0x60c ||
      c === 0xfe50 ||
      c === 0xfe10 ||
      c === 0xfe11 ||
      c === 0x2e41 ||
      c === 0x2e34 ||
      c === 0x2e32 ||
      c === 0xff0c
    )
      n++;
  }
  return n;
}

/** Removes the node from its parent (domhandler keeps sibling links; cheerio's remove does the same). */
function detach(node: AnyNode): void {
  const parent = node.parent;
  if (!parent) return;
  const i = parent.children.indexOf(node);
  if (i >= 0) parent.children.splice(i, 1);
  if (node.prev) node.prev.next = node.next;
  if (node.next) node.next.prev = node.prev;
  node.parent = node.prev = node.next = null;
}

/** Elements of the subtree in document order (the root first), without recursion. */
function* elementsOf(root: Element, skip?: (el: Element) => boolean): Generator<Element> {
  const stack: Element[] = [root];
  while (stack.length) {
    const el = stack.pop() as Element;
    if (skip?.(el)) continue;
    yield el;
    for (let i = el.children.length - 1; i >= 0; i--) {
      const c = el.children[i] as AnyNode;
      if (isElement(c)) stack.push(c);
    }
  }
}

function isHidden(el: Element): boolean {
  if ('hidden' in el.attribs) return true;
  // The `hidden` class of every CSS framework (Bootstrap, Tailwind, Foundation: display none): a
  // paywall's or a sign-in box's alternatives wait there for a script to show one.
  if (/(^|\s)hidden(\s|$)/.test(attr(el, 'class'))) return true;
  if (attr(el, 'aria-hidden') === 'true' && !/fallback-image/.test(attr(el, 'class'))) return true;
  const style = attr(el, 'style');
  return style !== '' && /(^|;)\s*(display\s*:\s*none|visibility\s*:\s*hidden)/i.test(style);
}

/**
 * React's streaming server rendering sends a page's late parts as `<div hidden id="S:n">` at the end
 * of the body, with a `<template id="B:n">` where each belongs and a script that moves it there. No
 * script runs here, so the move is made here: else the article, hidden, is dropped with the hidden
 * elements (a news site whose every article came back empty).
 */
function revealStreamedBoundaries($: CheerioAPI): void {
  const parts = pageElements($)
    .named('div')
    .filter((el) => 'hidden' in el.attribs && el.attribs.id?.startsWith('S:'));
  for (const el of parts) {
    const part = $(el);
    const slot = $(`template[id="B:${part.attr('id')?.slice(2) ?? ''}"]`).first();
    if (slot.length) {
      slot.replaceWith(part.contents());
      part.remove();
    } else part.removeAttr('hidden');
  }
}

/** Paragraph text a <noscript> must hold to be the page's text rather than a "turn on JavaScript" notice. */
const NOSCRIPT_PROSE = 200;

/** Whether the element's paragraphs hold NOSCRIPT_PROSE characters. */
function holdsProse(el: Element): boolean {
  let chars = 0;
  for (const e of elementsOf(el)) if (e.name === 'p') chars += collapsedLength(textOf(e));
  return chars >= NOSCRIPT_PROSE;
}

/** Drops what is never content: scripts, media, form controls, hidden elements, comments. */
function prune(root: Element): void {
  const doomed: AnyNode[] = [];
  const stack: AnyNode[] = [root];
  while (stack.length) {
    const node = stack.pop() as AnyNode;
    if (node.type === 'comment' || node.type === 'directive' || node.type === 'cdata') {
      doomed.push(node);
      continue;
    }
    if (!isElement(node)) continue;
    // A <noscript> holding paragraphs is what a reader without scripts is given, as a crawler is
    // (Blogger writes the post into a `<script type="text/template">` and again into a <noscript>).
    if (node.name === 'noscript' && holdsProse(node)) {
      node.name = 'div';
    } else if (node !== root && (NEVER_CONTENT.has(node.name) || isHidden(node))) {
      doomed.push(node);
      continue;
    }
    for (const c of node.children) stack.push(c);
  }
  for (const n of doomed) detach(n);
}

/** No text, no links, nothing: an element's counts before its children are added. */
const ZERO: Counts = {
  chars: 0,
  linkChars: 0,
  commas: 0,
  paragraphs: 0,
  images: 0,
  listItems: 0,
  inputs: 0,
  headingChars: 0,
  listChars: 0,
  proseChars: 0,
  anchorsContent: false,
  holdsH1: false,
};

/** Chinese, Japanese (kana) and Korean characters in a text. */
function wideIn(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c >= 0x3040 && c <= 0x30ff) || (c >= 0x3400 && c <= 0x9fff) || (c >= 0xac00 && c <= 0xd7af)) n++;
  }
  return n;
}

/** Every element's counts, computed once bottom-up, and the wide characters of all the text. */
function countAll(root: Element): { counts: Map<Element, Counts>; wide: number; mains: Element[] } {
  const counts = new Map<Element, Counts>();
  const mains: Element[] = [];
  let wide = 0;
  // Post-order with an explicit stack: [element, children visited?]
  const stack: [Element, boolean][] = [[root, false]];
  while (stack.length) {
    const top = stack[stack.length - 1] as [Element, boolean];
    const [el, visited] = top;
    if (!visited) {
      top[1] = true;
      for (const c of el.children) if (isElement(c)) stack.push([c, false]);
      continue;
    }
    stack.pop();
    const name = el.name;
    const c: Counts = {
      ...ZERO,
      anchorsContent: name === 'h1' || attr(el, 'itemprop') === 'articleBody',
      holdsH1: name === 'h1',
    };
    if (name === 'main' || attr(el, 'role') === 'main') mains.push(el);
    for (const child of el.children) {
      if (child.type === 'text') {
        const data = (child as unknown as { data: string }).data;
        c.chars += collapsedLength(data) + (/^\s/.test(data) && c.chars > 0 ? 1 : 0);
        c.commas += commasIn(data);
        wide += wideIn(data);
      } else if (isElement(child)) {
        const k = counts.get(child);
        if (!k) continue;
        c.chars += k.chars;
        c.linkChars += k.linkChars;
        c.commas += k.commas;
        c.paragraphs += k.paragraphs;
        c.images += k.images;
        c.listItems += k.listItems;
        c.inputs += k.inputs;
        c.headingChars += k.headingChars;
        c.listChars += k.listChars;
        c.proseChars += k.proseChars;
        c.anchorsContent ||= k.anchorsContent;
        c.holdsH1 ||= k.holdsH1;
      }
    }
    if (name === 'a') c.linkChars = (attr(el, 'href').startsWith('#') ? 0.3 : 1) * c.chars;
    if (name === 'p') c.paragraphs += 1;
    if (name === 'img') c.images += 1;
    if (name === 'li') c.listItems += 1;
    if (name === 'input' || name === 'select' || name === 'textarea') c.inputs += 1;
    if (HEADINGS.has(name)) c.headingChars = c.chars;
    if (name === 'ul' || name === 'ol') c.listChars = c.chars;
    if (PARAGRAPHS.has(name) && name !== 'td' && name !== 'dd') c.proseChars = c.chars;
    counts.set(el, c);
  }
  return { counts, wide, mains };
}

class Page {
  readonly counts: Map<Element, Counts>;
  readonly bodyChars: number;
  /** The page's <main> (or role=main) when it has exactly one. */
  readonly soleMain: Element | undefined;

  /**
   * A page's worth of text in its script: Chinese, Japanese and Korean say in one character what
   * takes a word elsewhere, so a whole news article can be 400 characters long.
   */
  readonly worth: number;

  constructor(readonly body: Element) {
    const { counts, wide, mains } = countAll(body);
    this.counts = counts;
    this.soleMain = mains.length === 1 ? mains[0] : undefined;
    this.bodyChars = this.count(body).chars;
    this.worth = wide > 0.3 * this.bodyChars ? PAGE_WORTH / 3 : PAGE_WORTH;
  }

  count(el: Element): Counts {
    return this.counts.get(el) ?? ZERO;
  }

  linkDensity(el: Element): number {
    const c = this.count(el);
    return c.chars === 0 ? 0 : c.linkChars / c.chars;
  }

  /** Class and id as evidence about an element: unlikely-looking and not saying it is the content. */
  isUnlikely(el: Element): boolean {
    if (el === this.body || el.name === 'a' || el.name === 'body' || el.name === 'html') return false;
    const role = attr(el, 'role');
    const match = `${attr(el, 'class')} ${attr(el, 'id')}`;
    // A comment thread is one even in a grid column (`comments-list columns`: Bulma's `column` is
    // on every box of such a page, so it says nothing about content).
    const overlay = OVERLAY.test(match);
    const hinted =
      (UNLIKELY.test(match) && (!OK_MAYBE.test(match) || COMMENTS.test(match))) ||
      overlay ||
      UNLIKELY_ROLES.has(role) ||
      (CHROME_TAGS.has(el.name) && el.name !== 'form');
    if (!hinted) return false;
    // A hint on an element that holds the article (its h1, its articleBody) or most of the page's
    // text is about the layout around it (`no-sidebar`, `has-header`), not about what it holds.
    const c = this.count(el);
    if (c.anchorsContent && el.name !== 'nav') return false;
    if (c.chars > 0.8 * this.bodyChars && this.bodyChars > 0) return false;
    if (el.name === 'header' && this.insideArticle(el)) return false;
    // Long prose with few links is what it reads as, whatever an id generated from a heading says
    // (`id="sharing-with-a-single-developer"`).
    // A consent dialog is long prose too.
    if (
      !overlay &&
      c.chars >= 1000 &&
      this.linkDensity(el) < 0.15 &&
      c.commas >= 5 &&
      c.paragraphs >= 2 &&
      PROSE_BOXES.has(el.name)
    )
      return false;
    return !this.insideTableOrCode(el);
  }

  /** The <article> holding the page's first h1, when it is in one: the page's own article. */
  get firstArticle(): Element | undefined {
    if (this.first === undefined) {
      const h1 = [...elementsOf(this.body)].find((el) => el.name === 'h1');
      this.first = (h1 && enclosing(h1, 'article')) ?? null;
    }
    return this.first ?? undefined;
  }

  private first?: Element | null;

  private insideArticle(el: Element): boolean {
    for (let p = el.parent; p && isElement(p); p = p.parent) if (p.name === 'article' || p.name === 'main') return true;
    return false;
  }

  private insideTableOrCode(el: Element): boolean {
    for (let p = el.parent; p && isElement(p); p = p.parent)
      if (p.name === 'table' || p.name === 'code' || p.name === 'pre') return true;
    return false;
  }

  classWeight(el: Element, flags: Flags): number {
    if (!flags.weightClasses) return 0;
    // Microdata saying "this is the article's text" is the page's own word for it.
    let w = /articleBody|articlebody/.test(attr(el, 'itemprop')) ? 25 : 0;
    for (const raw of [attr(el, 'class'), attr(el, 'id')]) {
      // Elementor names every box of its layout a widget (`elementor-widget-wrap`,
      // `elementor-widget-text-editor`): its layout, not a sidebar's widgets. Bootstrap's
      // `hidden-xs`, `visible-md-block`, `hidden-print` hide a box on phones or on paper only.
      const value = raw.replace(LAYOUT_WORDS, ' ');
      if (!value.trim()) continue;
      if (NEGATIVE.test(value) || RATING.test(value)) w -= 25;
      if (POSITIVE.test(value)) w += 25;
    }
    return w;
  }
}

function tagBase(el: Element): number {
  switch (el.name) {
    case 'div':
      return 5;
    case 'article':
    case 'main':
      return 8;
    case 'pre':
    case 'td':
    case 'blockquote':
      return 3;
    case 'address':
    case 'ol':
    case 'ul':
    case 'dl':
    case 'dd':
    case 'dt':
    case 'li':
    case 'form':
      return -3;
    case 'h1':
    case 'h2':
    case 'h3':
    case 'h4':
    case 'h5':
    case 'h6':
    case 'th':
      return -5;
    default:
      return 0;
  }
}

/** Elements of the body in document order, without those the flags rule out. */
function liveElements(page: Page, flags: Flags): Element[] {
  const out: Element[] = [];
  for (const el of elementsOf(page.body, (e) => flags.stripUnlikely && page.isUnlikely(e))) out.push(el);
  return out;
}

/** The text length of the element's own inline runs (text and inline children between blocks), longest first. */
function inlineRuns(page: Page, el: Element): number[] {
  const runs: number[] = [];
  let run = 0;
  for (const child of el.children) {
    if (child.type === 'text') run += collapsedLength((child as unknown as { data: string }).data);
    else if (isElement(child)) {
      if (
        BLOCKS.has(child.name) ||
        (child.name === 'br' && child.next && isElement(child.next) && child.next.name === 'br')
      ) {
        if (run) runs.push(run);
        run = 0;
      } else run += page.count(child).chars;
    }
  }
  if (run) runs.push(run);
  return runs;
}

interface Attempt {
  nodes: Element[];
  chars: number;
  removed: Set<Element>;
}

function grab(page: Page, flags: Flags): Attempt | null {
  const live = liveElements(page, flags);
  const liveSet = new Set(live);
  const scores = new Map<Element, number>();
  const init = (el: Element) => {
    let s = scores.get(el);
    if (s === undefined) {
      s = tagBase(el) + page.classWeight(el, flags);
      scores.set(el, s);
    }
    return s;
  };
  const award = (paragraph: Element | null, parent: Element, chars: number, commas: number) => {
    const points = 1 + commas + Math.min(Math.floor(chars / 100), 3);
    let level = 0;
    // Level 0 is the paragraph's parent (or, for a div's own text, the div itself).
    for (
      let a: ParentNode | null = paragraph ? paragraph.parent : parent;
      a && isElement(a) && level < 5;
      a = a.parent, level++
    ) {
      if (!liveSet.has(a) && a !== page.body) break;
      const divider = level === 0 ? 1 : level === 1 ? 2 : level * 3;
      scores.set(a, init(a) + points / divider);
      if (a === page.body) break;
    }
  };

  for (const el of live) {
    if (el === page.body) continue;
    const c = page.count(el);
    if (
      PARAGRAPHS.has(el.name) ||
      (el.name === 'section' && !el.children.some((ch) => isElement(ch) && BLOCKS.has(ch.name)))
    ) {
      if (c.chars >= MIN_PARAGRAPH) award(el, el, c.chars, c.commas);
      continue;
    }
    if (
      el.name === 'div' ||
      el.name === 'section' ||
      el.name === 'article' ||
      el.name === 'main' ||
      (el.name === 'span' && el.parent && isElement(el.parent) && el.parent.name === 'div')
    ) {
      const hasBlock = el.children.some((ch) => isElement(ch) && BLOCKS.has(ch.name));
      if (!hasBlock) {
        // A div of inline content reads as a paragraph of its parent.
        if (c.chars >= MIN_PARAGRAPH && el.name !== 'span') award(el, el, c.chars, c.commas);
      } else {
        // Text runs between a container's blocks (`<div>text<br><br>text<div>...`) are paragraphs of it.
        for (const run of inlineRuns(page, el))
          if (run >= MIN_PARAGRAPH) award(null, el, run, Math.floor((c.commas * run) / Math.max(c.chars, 1)));
      }
    }
  }
  if (scores.size === 0) return null;

  const final = new Map<Element, number>();
  for (const [el, s] of scores) final.set(el, s * (1 - page.linkDensity(el)));
  const ranked = [...final.entries()].filter(([el]) => el !== page.body).sort((a, b) => b[1] - a[1]);
  if (ranked.length === 0) return null;
  let [top, topScore] = ranked[0] as [Element, number];
  // Paragraphs straight in the body (a hand-written page): the body is the article, as a whole,
  // rather than its best paragraph with those siblings that pass for paragraphs.
  if ((final.get(page.body) ?? 0) > topScore) {
    const nodes = [page.body];
    const removed = clean(page, nodes, flags);
    trimTail(page, nodes, removed);
    return { nodes, chars: charsWithout(page, page.body, removed), removed };
  }

  // A page that appends the next articles as the reader scrolls holds several <article>s: the page's
  // own is the one with its first heading, even when a later one is longer.
  // Nothing then climbs out of it.
  let pool = ranked;
  let ceiling: Element = page.body;
  {
    const own = page.firstArticle;
    const mine = enclosing(top, 'article');
    if (own && mine && mine !== own && !contains(mine, own) && !contains(own, mine)) {
      const inOwn = ranked.find(([el, sc]) => contains(own, el) && sc >= 0.3 * topScore);
      if (inOwn) {
        [top, topScore] = inOwn;
        pool = ranked.filter(([el]) => contains(own, el));
        ceiling = own.parent && isElement(own.parent) ? own.parent : page.body;
      }
    }
  }
  // The page's one <main> (or role=main) is its author's word for where the content is: a box
  // outside it that scores better (a homepage's slideshow above the fold) gives way to the best
  // candidate inside it, when that one holds a fair share of the score. Nothing then climbs out.
  const main = page.soleMain;
  if (pool === ranked && main && !contains(main, top) && !contains(top, main)) {
    const inMain = ranked.find(([el, sc]) => (el === main || contains(main, el)) && sc >= 0.3 * topScore);
    if (inMain) {
      [top, topScore] = inMain;
      pool = ranked.filter(([el]) => el === main || contains(main, el));
      ceiling = main.parent && isElement(main.parent) ? main.parent : page.body;
    }
  }
  // Several nearly as good candidates under one ancestor: the article is that ancestor.
  const alternatives = pool
    .filter(([el]) => el !== top)
    .slice(0, 4)
    .filter(([, s]) => s / topScore >= 0.75)
    .map(([el]) => el);
  if (alternatives.length >= 3) {
    for (let a = top.parent; a && isElement(a) && a !== ceiling; a = a.parent) {
      const contained = alternatives.filter((alt) => contains(a as Element, alt)).length;
      if (contained >= 3) {
        top = a;
        break;
      }
    }
  }
  // Up while the parent scores better (the article's wrapper gathered points from more paragraphs).
  {
    let last = final.get(top) ?? topScore;
    const floor = last / 3;
    for (let p = top.parent; p && isElement(p) && p !== ceiling; p = p.parent) {
      const ps = final.get(p);
      if (ps === undefined) continue;
      if (ps < floor) break;
      if (ps > last) {
        top = p;
        break;
      }
      last = ps;
    }
  }
  // Up while what the parent adds is prose too (page builders put one article's sections in
  // separate boxes): few links, most of it in paragraphs, none of it looking like chrome. A level
  // that adds only headings (an Elementor section's title widget beside its text widget) is passed
  // through: the level above is judged by all it adds.
  {
    let from = top;
    for (let p = top.parent; p && isElement(p) && p !== ceiling; p = p.parent) {
      if (readsAsProse(page, p, flags, from)) {
        top = p;
        from = p;
        continue;
      }
      const added = page.count(p);
      const had = page.count(from);
      const headingsOnly =
        added.chars - had.chars <= added.headingChars - had.headingChars && added.linkChars <= had.linkChars;
      if (!headingsOnly) break;
    }
  }
  // A row or body of a data table stands for the text around the table, not for itself.
  if (['tr', 'tbody', 'thead', 'tfoot', 'td', 'th'].includes(top.name)) {
    for (let p = top.parent; p && isElement(p) && p !== page.body; p = p.parent) {
      if (p.name === 'table') {
        top = p;
        if (isDataTable(p)) {
          for (let q = p.parent; q && isElement(q) && q !== page.body; q = q.parent) {
            if (final.has(q)) {
              top = q;
              break;
            }
          }
        }
        break;
      }
    }
  }
  // An only child stands for its parent.
  while (top.parent && isElement(top.parent) && top.parent !== ceiling && childElements(top.parent).length === 1)
    top = top.parent;
  topScore = final.get(top) ?? topScore;

  // Siblings that score well, share the candidate's class, or read as paragraphs join it.
  const nodes: Element[] = [];
  const parent = top.parent;
  const siblings = parent && isElement(parent) ? childElements(parent) : [top];
  const threshold = Math.max(10, topScore * 0.2);
  const topClass = attr(top, 'class');
  const topHasH1 = page.count(top).holdsH1;
  const topTitled = top.name === 'article' && topHasH1;
  for (const sib of siblings) {
    if (sib === top) {
      nodes.push(sib);
      continue;
    }
    if (flags.stripUnlikely && !liveSet.has(sib)) continue;
    // A box of the site's other stories beside the article is not more of it.
    if (RECIRCULATION.test(`${attr(sib, 'class')} ${attr(sib, 'id')}`)) continue;
    // Nor is a rating widget, whose prompts read as short sentences.
    if (RATING.test(`${attr(sib, 'class')} ${attr(sib, 'id')}`)) continue;
    // Two titled articles side by side are two articles (the next one appended as the reader scrolls).
    if (topTitled && holdsTitledArticle(sib)) continue;
    let bonus = 0;
    if (topClass && attr(sib, 'class') === topClass) bonus += topScore * 0.2;
    const s = final.get(sib);
    if (s !== undefined && s + bonus >= threshold) {
      nodes.push(sib);
      continue;
    }
    // A box of the same kind whose paragraphs sit too deep to have scored it (the article's first
    // part in a wrapper of its own, the rest in sibling boxes) joins when it reads as prose.
    if (
      topClass &&
      attr(sib, 'class') === topClass &&
      page.count(sib).chars >= PAGE_WORTH / 2 &&
      readsAsProse(page, sib, flags)
    ) {
      nodes.push(sib);
      continue;
    }
    // The page's heading with the prose under it (a homepage's "Welcome" and its lead paragraph
    // in a box of their own, beside a longer box of testimonials or teasers) is the page's text.
    if (!topHasH1 && page.count(sib).holdsH1 && readsAsProse(page, sib, flags)) {
      nodes.push(sib);
      continue;
    }
    if (sib.name === 'p' || (sib.name === 'div' && !sib.children.some((ch) => isElement(ch) && BLOCKS.has(ch.name)))) {
      const c = page.count(sib);
      const ld = page.linkDensity(sib);
      if (c.chars > 80 && ld < 0.25) nodes.push(sib);
      else if (c.chars > 0 && c.chars <= 80 && ld === 0 && /\.( |$)/.test(textOf(sib))) nodes.push(sib);
    }
  }

  // The article's body split over repeated wrappers (`div.story-body-supplemental > div.story-body`
  // twice, an inset between them; a page builder's `div.headline-with-text > div.container > div.row
  // > div.col-md-8` once per section): the same box in the like-classed siblings of the nearest
  // wrapper that repeats, up to four levels above the candidate, joins too.
  if (firstClass(top)) {
    let wrapper = parent && isElement(parent) ? parent : null;
    for (let level = 1; wrapper && wrapper !== ceiling && wrapper !== page.body && level <= 4; level++) {
      const cls = attr(wrapper, 'class');
      const outer: ParentNode | null = wrapper.parent;
      const peers = cls && outer && isElement(outer) ? childElements(outer) : [];
      if (peers.some((u) => u !== wrapper && attr(u, 'class') === cls)) {
        const before: Element[] = [];
        const after: Element[] = [];
        let seen = false;
        for (const peer of peers) {
          if (peer === wrapper) seen = true;
          else if (attr(peer, 'class') === cls && !(flags.stripUnlikely && !liveSet.has(peer))) {
            const taken = new Set<Element>();
            const skip = (e: Element) =>
              (e.parent !== null && taken.has(e.parent as Element)) || (flags.stripUnlikely && page.isUnlikely(e));
            for (const el of elementsOf(peer, skip)) {
              if (
                el.name === top.name &&
                firstClass(el) === firstClass(top) &&
                page.count(el).chars >= MIN_PARAGRAPH &&
                readsAsProse(page, el, flags)
              ) {
                taken.add(el);
                (seen ? after : before).push(el);
              }
            }
          }
        }
        nodes.unshift(...before);
        nodes.push(...after);
        break;
      }
      wrapper = outer && isElement(outer) ? outer : null;
    }
  }
  const removed = clean(page, nodes, flags);
  trimTail(page, nodes, removed);
  let chars = 0;
  for (const n of nodes) chars += charsWithout(page, n, removed);
  return { nodes, chars, removed };
}

/**
 * Whether the element's text, less `without`'s (and, with the flags, less what looks unlikely), is
 * prose: a paragraph's worth at least, few links, most of it in paragraphs.
 */
function readsAsProse(page: Page, el: Element, flags: Flags, without?: Element): boolean {
  const whole = page.count(el);
  const mine = without ? page.count(without) : ZERO;
  let chars = whole.chars - mine.chars;
  let links = whole.linkChars - mine.linkChars;
  let prose = whole.proseChars - mine.proseChars;
  if (flags.stripUnlikely) {
    const uncount = (e: Element) => {
      const u = page.count(e);
      chars -= u.chars;
      links -= u.linkChars;
      prose -= u.proseChars;
      return true;
    };
    // Walks the element without `without`, and without descending into what it discounts.
    for (const e of elementsOf(el, (e) => e === without || (e !== el && page.isUnlikely(e) && uncount(e)))) void e;
  }
  return chars >= MIN_PARAGRAPH && links / chars <= 0.15 && prose / chars >= 0.6;
}

const firstClass = (el: Element) => attr(el, 'class').trim().split(/\s+/)[0] ?? '';

function hasH1(el: Element): boolean {
  for (const e of elementsOf(el)) if (e.name === 'h1') return true;
  return false;
}

/** Whether the element is, or holds, an <article> with its own h1. */
function holdsTitledArticle(el: Element): boolean {
  for (const e of elementsOf(el)) if (e.name === 'article' && hasH1(e)) return true;
  return false;
}

/** The element with the most text (the first of equals); undefined for none. */
function largest(els: Element[], page: Page): Element | undefined {
  let best: Element | undefined;
  for (const el of els) if (!best || page.count(el).chars > page.count(best).chars) best = el;
  return best;
}

/** The nearest ancestor (or the element itself) with this tag name. */
function enclosing(el: Element, name: string): Element | undefined {
  for (let p: ParentNode | null = el; p && isElement(p); p = p.parent) if (p.name === name) return p;
  return undefined;
}

function contains(ancestor: Element, el: Element): boolean {
  for (let p: ParentNode | null = el; p; p = p.parent) if (p === ancestor) return true;
  return false;
}

function textOf(el: Element): string {
  const parts: string[] = [];
  const stack: AnyNode[] = [el];
  while (stack.length) {
    const n = stack.pop() as AnyNode;
    if (n.type === 'text') parts.push((n as unknown as { data: string }).data);
    else if (isElement(n)) for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i] as AnyNode);
  }
  return parts.join('').trim();
}

/** The element's characters less those of removed elements inside it. */
function charsWithout(page: Page, el: Element, removed: Set<Element>): number {
  if (removed.has(el)) return 0;
  let chars = page.count(el).chars;
  for (const r of removed) if (contains(el, r) && !hasRemovedAncestor(r, el, removed)) chars -= page.count(r).chars;
  return Math.max(0, chars);
}

function hasRemovedAncestor(el: Element, stop: Element, removed: Set<Element>): boolean {
  for (let p = el.parent; p && isElement(p) && p !== stop; p = p.parent) if (removed.has(p)) return true;
  return false;
}

/** What goes from inside the chosen elements: chrome by class (when it does not hold the text), and link, image or form clutter. */
function clean(page: Page, nodes: Element[], flags: Flags): Set<Element> {
  const removed = new Set<Element>();
  // Code is kept as written (a highlighter's `token comment` span is no comment thread), and what is
  // inside a data table is its data: neither is cleaned inside.
  const sealed = new Set<Element>();
  const inDataTable = new Set<Element>();
  const skip = (e: Element) =>
    removed.has(e) || (e.parent !== null && (removed.has(e.parent as Element) || sealed.has(e.parent as Element)));
  for (const root of nodes) {
    for (const el of elementsOf(root, skip)) {
      if (el.parent && inDataTable.has(el.parent as Element)) inDataTable.add(el);
      if (el === root) continue;
      if (el.name === 'pre' || el.name === 'code') sealed.add(el);
      const c = page.count(el);
      const match = `${attr(el, 'class')} ${attr(el, 'id')}`;
      const name = el.name;
      // Comment threads, whatever their size, unless they are where the article is.
      if (COMMENTS.test(match) && !c.anchorsContent && !/\b(article|entry|post)-?(body|content|text)\b/i.test(match)) {
        removed.add(el);
        continue;
      }
      // Boxes of other stories (most popular, most read, trending, read next), whatever their size:
      // they are the site's, not the article's, unless they hold most of what was chosen.
      if (RECIRCULATION.test(match) && !c.anchorsContent && c.chars < 0.5 * page.count(root).chars) {
        removed.add(el);
        continue;
      }
      // A byline (the author's name, the date): the page's metadata, not the article's text.
      if (BLOCKS.has(name) && BYLINE.test(match) && c.chars < 100 && !c.anchorsContent) {
        removed.add(el);
        continue;
      }
      // An advertisement's label left where the advertisement was (its script did not run here).
      if (c.chars > 0 && c.chars < 20 && AD_LABEL.test(textOf(el))) {
        removed.add(el);
        continue;
      }
      // The candidate was scored without what looks unlikely, so it is chosen without it too.
      if (flags.stripUnlikely && page.isUnlikely(el)) {
        removed.add(el);
        continue;
      }
      if (
        (SHARE.test(match) || POST_FURNITURE.test(match) || RATING.test(match)) &&
        c.chars < PAGE_WORTH &&
        !c.anchorsContent
      ) {
        removed.add(el);
        continue;
      }
      // "Read more: <another story>" between the paragraphs, in the page's language.
      if (
        READ_ALSO_TAGS.has(name) &&
        c.chars < 300 &&
        !c.anchorsContent &&
        READ_ALSO.test(textOf(el)) &&
        page.linkDensity(el) > 0.3
      ) {
        removed.add(el);
        continue;
      }
      // Captions and photo credits describe the pictures, which the text does not carry (as
      // trafilatura; Readability keeps them): on news pages they were the most kept text no
      // reader of the article's text counts as the article.
      if (name === 'figcaption' || (isCaptionBox(match) && c.chars < 400 && !c.anchorsContent)) {
        removed.add(el);
        continue;
      }
      if ((name === 'h1' || name === 'h2' || name === 'h3') && page.classWeight(el, flags) < 0) {
        removed.add(el);
        continue;
      }
      // (A definition list is not cleaned: its terms and definitions are text, a formula's
      // images between them no picture gallery.)
      if (
        flags.cleanConditionally &&
        (name === 'form' ||
          name === 'fieldset' ||
          name === 'table' ||
          name === 'ul' ||
          name === 'ol' ||
          name === 'div' ||
          name === 'section' ||
          name === 'aside' ||
          name === 'nav' ||
          name === 'footer') &&
        !inDataTable.has(el) &&
        fishy(page, el, flags)
      ) {
        removed.add(el);
      } else if (isDataGrid(page, el)) inDataTable.add(el);
    }
  }
  return removed;
}

/**
 * What follows an article on news sites: subscribe, follow us, get our app, copyright and reprint
 * notices, "advertise with us", dates and bylines. Trailing blocks that say so are dropped, from the end up to the
 * first block that does not (so a sentence of the article that mentions a newsletter stays).
 */
function trimTail(page: Page, nodes: Element[], removed: Set<Element>): void {
  const leaves: Element[] = [];
  // A data table is one leaf, and never a stub: its cells are data, not a page's furniture.
  const tables = new Set<Element>();
  const skip = (e: Element) => removed.has(e) || (e.parent !== null && tables.has(e.parent as Element));
  for (const root of nodes) {
    for (const el of elementsOf(root, skip)) {
      if (el !== root && isDataGrid(page, el)) {
        tables.add(el);
        leaves.push(el);
        continue;
      }
      if (!TAIL_BLOCKS.has(el.name) || page.count(el).chars === 0) continue;
      // Leaf blocks only: a block with blocks inside is represented by them.
      if (el.children.some((ch) => isElement(ch) && BLOCKS.has(ch.name) && page.count(ch).chars > 0)) continue;
      leaves.push(el);
    }
  }
  // A stub is shorter than a sentence.
  const stubChars = 45;
  // Before the first heading, the same stubs are a category, a date, a breadcrumb.
  {
    for (let i = 0; i < leaves.length - 1; i++) {
      const el = leaves[i] as Element;
      if (HEADINGS.has(el.name) || tables.has(el)) break;
      const text = textOf(el);
      if (text.length >= stubChars || SENTENCE_END.test(text) || page.count(el).images > 0) break;
      // A table of contents (links to the article's own sections) is where the article starts.
      if (linksWithin(el)) break;
      removed.add(el);
    }
  }
  for (let i = leaves.length - 1; i > 0; i--) {
    const el = leaves[i] as Element;
    if (tables.has(el)) break;
    const text = textOf(el);
    // A short line that is no sentence (a date, a name, "Impressum", "Last modified:") ends an
    // article's text only as its page's furniture.
    const stub = text.length < stubChars && !SENTENCE_END.test(text) && page.count(el).images === 0;
    if (!stub && (page.count(el).chars > 400 || !TAIL_PROMO.test(text))) break;
    removed.add(el);
  }
}

/** Whether the element holds a link to a place on its own page (`#section`). */
function linksWithin(el: Element): boolean {
  for (const e of elementsOf(el)) if (e.name === 'a' && /^#./.test(attr(e, 'href'))) return true;
  return false;
}

/** How a sentence ends, in Latin and in CJK punctuation. */
const SENTENCE_END = /[.!?…"»”)。！？」』）]$/;

const TAIL_BLOCKS = new Set([
  'p',
  'div',
  'li',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'blockquote',
  'section',
  'dd',
  'dt',
  'address',
]);
const TAIL_PROMO =
  /subscri(be|ption)|suscr[ií]b|abonn|newsletter|sign up|regístrate|follow (us|the|@)|s[ií]guenos|folgen sie|download (our|the)|descarga (nuestra|la app)|copyright|©|all rights reserved|derechos reservados|alle rechte|tous droits|reprint|reproducci[oó]n|telegram|whatsapp|canal de youtube|youtube channel|advertise with|is not responsible for|no se hace responsable|^※|会員(限定|登録)|有料会員/i;

/** Conditional cleaning: a container whose text is links, images, fields or headings rather than prose. */
function fishy(page: Page, el: Element, flags: Flags): boolean {
  const c = page.count(el);
  if (c.anchorsContent) return false;
  if (el.name === 'table' && isDataTable(el)) return false;
  const weight = page.classWeight(el, flags);
  if (weight < 0 && c.commas < 10 && c.chars < PAGE_WORTH) return true;
  if (c.commas >= 10) return false;
  const isList = el.name === 'ul' || el.name === 'ol' || (c.chars > 0 && c.listChars / c.chars > 0.9);
  const ld = page.linkDensity(el);
  const headingDensity = c.chars > 0 ? c.headingChars / c.chars : 0;
  if (c.images > 1 && c.paragraphs / c.images < 0.5 && el.name !== 'figure') return true;
  if (!isList && c.listItems - 100 > c.paragraphs) return true;
  if (c.inputs > Math.floor(c.paragraphs / 3)) return true;
  if (!isList && headingDensity < 0.9 && c.chars < MIN_PARAGRAPH && (c.images === 0 || c.images > 2) && ld > 0)
    return true;
  if (!isList && weight < 25 && ld > 0.2) return true;
  if (weight >= 25 && ld > 0.5) return true;
  // A short list of links is a box of other stories when its links point to stories; links to a
  // changelog's bug reports, to products, to a wiki's articles are what the text lists.
  if (isList && ld > 0.5 && c.chars < PAGE_WORTH && storyLinkShare(page, el) >= 0.5) return true;
  if (c.images === 0 && c.chars === 0) return true;
  return false;
}

/**
 * The share of the element's link text whose links point to a story (isStoryLink): related
 * stories and teasers do; a product's or a bug's page, a search, a home page do not.
 */
function storyLinkShare(page: Page, el: Element): number {
  let story = 0;
  let all = 0;
  for (const a of elementsOf(el)) {
    if (a.name !== 'a') continue;
    const chars = page.count(a).chars;
    all += chars;
    if (isStoryLink(attr(a, 'href'))) story += chars;
  }
  return all === 0 ? 0 : story / all;
}

/**
 * Whether an address's path names a story: a date in it (`/2024/08/01/`), three words in a row
 * (`how-the-government-raises`), or a story's number after a word (`/news/business-45814459`,
 * `-ld.1161246`) or alone (`/123456789`). Read segment by segment, without a regex that could
 * backtrack over a long path.
 */
function isStoryLink(href: string): boolean {
  let path = href.trim().replace(/^[a-z][a-z0-9+.-]*:/i, '');
  if (path.startsWith('//')) {
    const slash = path.indexOf('/', 2);
    path = slash < 0 ? '' : path.slice(slash);
  }
  const end = path.search(/[?#]/);
  if (end >= 0) path = path.slice(0, end);
  if (/\/\d{4}\/\d{1,2}\//.test(path)) return true;
  for (const segment of path.split('/')) {
    if (/^\d{6,}(\.|$)/.test(segment) || /\p{L}[-_.]\d{5,}/u.test(segment)) return true;
    let words = 0;
    for (const word of segment.replace(/\.\w{1,5}$/, '').split(/[-_]/)) {
      words = /^\p{L}+$/u.test(word) ? words + 1 : 0;
      if (words >= 3) return true;
    }
  }
  return false;
}

/** A data table whose cells are data: a table of links is a navigation box laid out as a grid. */
function isDataGrid(page: Page, el: Element): boolean {
  return el.name === 'table' && page.linkDensity(el) <= 0.5 && isDataTable(el);
}

function isDataTable(table: Element): boolean {
  if (attr(table, 'role') === 'presentation' || attr(table, 'datatable') === '0') return false;
  if (attr(table, 'summary')) return true;
  let rows = 0;
  let cols = 0;
  for (const el of elementsOf(table)) {
    if (el !== table && el.name === 'table') return false;
    if (
      el.name === 'caption' ||
      el.name === 'th' ||
      el.name === 'thead' ||
      el.name === 'tfoot' ||
      el.name === 'colgroup'
    )
      return true;
    if (el.name === 'tr') {
      rows++;
      cols = Math.max(cols, childElements(el).length);
    }
  }
  return rows >= 10 || cols > 4 || rows * cols > 10;
}

/** The fallback: the page's landmark, or its body, without its chrome. */
function landmark(page: Page): Attempt {
  const all = [...elementsOf(page.body)];
  const main =
    all.find((el) => el.name === 'main' || attr(el, 'role') === 'main' || attr(el, 'itemprop') === 'articleBody') ??
    largest(
      all.filter((el) => el.name === 'article' && page.count(el).chars > 0),
      page,
    ) ??
    // A post marked up as one (the hAtom/h-entry microformat of WordPress themes, schema.org microdata) is its page's content too.
    largest(
      all.filter(
        (el) =>
          (ENTRY.test(attr(el, 'class')) ||
            /schema\.org\/(\w*Article|BlogPosting|Report)\b/.test(attr(el, 'itemtype'))) &&
          page.count(el).chars > 0,
      ),
      page,
    );
  const root = main && page.count(main).chars > 0 ? main : page.body;
  const removed = new Set<Element>();
  for (const el of elementsOf(root, (e) => removed.has(e))) {
    if (el === root) continue;
    const c = page.count(el);
    if (c.anchorsContent && el.name !== 'nav') continue;
    const role = attr(el, 'role');
    const match = `${attr(el, 'class')} ${attr(el, 'id')}`;
    const chrome =
      ['nav', 'header', 'footer', 'aside'].includes(el.name) ||
      UNLIKELY_ROLES.has(role) ||
      (/cookie|consent|gdpr|newsletter|popup|modal|breadcrumb/i.test(match) && !OK_MAYBE.test(match)) ||
      COMMENTS.test(match) ||
      SHARE.test(match) ||
      POST_FURNITURE.test(match);
    if (chrome && c.chars < 0.5 * page.count(root).chars) removed.add(el);
  }
  const nodes = root === page.body ? childElements(root) : [root];
  const textual = root === page.body ? page.body.children.filter((n) => n.type === 'text') : [];
  let chars = 0;
  for (const n of nodes) chars += charsWithout(page, n, removed);
  for (const t of textual) chars += collapsedLength((t as unknown as { data: string }).data);
  return { nodes: root === page.body ? [root] : nodes, chars, removed };
}

const PASSES: Flags[] = [
  { stripUnlikely: true, weightClasses: true, cleanConditionally: true },
  { stripUnlikely: false, weightClasses: true, cleanConditionally: true },
  { stripUnlikely: false, weightClasses: false, cleanConditionally: true },
  { stripUnlikely: false, weightClasses: false, cleanConditionally: false },
];

/** The page's main content as HTML (what mainContent chose, serialized). Mutates the document, as mainContent does. */
export function mainContentHtml($: CheerioAPI): string {
  return mainContent($)
    .map((n) => (typeof n === 'string' ? n : $.html(n)))
    .join('');
}

/**
 * The page's main content, in order, for the Markdown converter: nodes of the document (a string
 * between them is text). Mutates the document: call it last (after every other extractor has
 * read the page).
 */
export function mainContent($: CheerioAPI): (AnyNode | string)[] {
  const elements = pageElements($);
  const body = elements.named('body')[0] ?? elements.all[0];
  if (!body) return [];
  const metas = elements.named('meta');
  const summary = (
    metas.find((m) => m.attribs.property === 'og:description')?.attribs.content ??
    metas.find((m) => m.attribs.name?.toLowerCase() === 'description')?.attribs.content ??
    ''
  ).trim();
  const declared = declaredArticleBody($);
  // Last of the reads of the page's index: this moves elements.
  revealStreamedBoundaries($);
  prune(body);
  const page = new Page(body);
  let best: Attempt | null = null;
  for (const flags of PASSES) {
    const attempt = grab(page, flags);
    if (!attempt) continue;
    if (!best || attempt.chars > best.chars) best = attempt;
    if (attempt.chars >= page.worth) break;
  }
  if (!best || best.chars < page.worth) {
    // Short of a page's worth of scored text, the page's own content without its chrome is the
    // better reading (a team page of cards is not an article), even where a pass with less
    // evidence found a longer paragraph in the footer. But a short article is still one: what was
    // found holds the page's heading and a paragraph under it, where the fallback would be the
    // whole body (no landmark, no <article>), menus and all.
    const fallback = landmark(page);
    const shortArticle =
      best !== null &&
      best.chars >= SHORT_ARTICLE &&
      fallback.nodes[0] === page.body &&
      best.nodes.some((n) => page.count(n).holdsH1);
    if (!best || (fallback.chars > 0 && !shortArticle)) best = fallback;
  }
  // The page shows less than it declares (a paywall's teaser, a body rendered by script): the
  // article as its JSON-LD gives it, or, when the page shows nothing at all, its own summary, under
  // the page's heading.
  const stated =
    declared && collapsedLength(declared) > 1.5 * best.chars + 200
      ? declared
      : best.chars < MIN_PARAGRAPH && collapsedLength(summary) > best.chars
        ? summary
        : undefined;
  const titles = new Set(
    [elements.named('title')[0], metas.find((m) => m.attribs.property === 'og:title')].flatMap((el) =>
      el ? ((el.name === 'title' ? textOf(el) : (el.attribs.content ?? '')).toLowerCase().match(WORDS) ?? []) : [],
    ),
  );
  if (stated) {
    const h1 = [...elementsOf(body)].find((el) => el.name === 'h1');
    const heading = h1 && !repeatsTitle(h1, titles) ? h1 : undefined;
    const paragraphs = stated
      .split(/\\n|\n/)
      .map((p) => p.trim())
      .filter(Boolean);
    return parseDocument(
      [heading ? $.html(heading) : '', ...paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`)].join('\n'),
    ).children;
  }
  // The headline is the first h1 or h2 that repeats the title (a section heading or a kicker
  // may come before it), as Readability looks for it.
  const headline = firstHeading(best, (h) => repeatsTitle(h, titles));
  if (headline) best.removed.add(headline);
  for (const el of best.removed) detach(el);
  for (const n of best.nodes) bareMarkup(n);
  return best.nodes.flatMap((n, i) => [...(i > 0 ? ['\n'] : []), ...(n === body ? n.children : [n])]);
}

const WORDS = /[\p{L}\p{N}]+/gu;

/** The first h1 or h2 of the chosen content that passes the test. */
function firstHeading(best: Attempt, test: (el: Element) => boolean): Element | undefined {
  for (const root of best.nodes)
    for (const el of elementsOf(root, (e) => best.removed.has(e)))
      if ((el.name === 'h1' || el.name === 'h2') && test(el)) return el;
  return undefined;
}

/**
 * Whether a heading repeats the page's title (the words of its `<title>` and `og:title`, where
 * sites add their name and a separator): most of the heading's characters are in those words. The
 * compendium heads each page with its title, and a reader does not read the headline twice (nor
 * do Readability, trafilatura or the corpora's annotators count it as the article's text).
 */
function repeatsTitle(heading: Element, titleWords: Set<string>): boolean {
  if (titleWords.size === 0) return false;
  const words = textOf(heading).toLowerCase().match(WORDS) ?? [];
  const all = words.reduce((n, w) => n + w.length, 0);
  const shared = words.filter((w) => titleWords.has(w)).reduce((n, w) => n + w.length, 0);
  return all > 0 && shared / all >= 0.75;
}

/** What the Markdown converter reads of an element: where a link or an image points, its words, a list's start, a code block's language. */
const MARKDOWN_ATTRIBUTES = new Set(['href', 'src', 'alt', 'title', 'start', 'class']);

/**
 * The chosen content without what the Markdown converter never reads (style, data-*, event
 * handlers, ids, microdata), without comments and a table's column widths (colgroup), and without
 * the spans and fonts that only carried them (syntax highlighting puts one around every token):
 * highlighted code then reads exactly as plain code, and mainContentHtml's HTML is only what counts.
 */
function bareMarkup(root: Element): void {
  const elements = [...elementsOf(root)];
  for (const el of elements) {
    // An image inlined as a data: URI is a lazy loader's placeholder or the picture's bytes as
    // text (base64 or raw SVG markup): no address a reader can follow, so no image in the text.
    if (el.name === 'img' && /^\s*data:/i.test(el.attribs.src ?? '')) delete el.attribs.src;
    for (const name of Object.keys(el.attribs)) {
      if (
        !MARKDOWN_ATTRIBUTES.has(name) ||
        (name === 'class' && !(el.name === 'code' && /language-/.test(el.attribs.class ?? '')))
      )
        delete el.attribs[name];
    }
    for (const child of [...el.children])
      if (child.type === 'comment' || (child.type === 'tag' && (child.name === 'colgroup' || child.name === 'col')))
        detach(child);
  }
  for (const el of elements)
    if (el !== root && (el.name === 'span' || el.name === 'font') && Object.keys(el.attribs).length === 0) unwrap(el);
}

/** Puts the element's children where it is. */
function unwrap(el: Element): void {
  const parent = el.parent;
  if (!parent) return;
  const i = parent.children.indexOf(el);
  if (i < 0) return;
  const kids = el.children;
  for (const k of kids) k.parent = parent;
  parent.children.splice(i, 1, ...kids);
  const first = kids[0];
  const last = kids[kids.length - 1];
  if (first && last) {
    first.prev = el.prev;
    last.next = el.next;
    if (el.prev) el.prev.next = first;
    if (el.next) el.next.prev = last;
  } else {
    if (el.prev) el.prev.next = el.next;
    if (el.next) el.next.prev = el.prev;
  }
  el.children = [];
  el.parent = el.prev = el.next = null;
}

/** The longest `articleBody` the page's JSON-LD declares (schema.org Article and its kinds). */
function declaredArticleBody($: CheerioAPI): string | undefined {
  let longest: string | undefined;
  for (const node of jsonLdNodes($)) {
    const text = node.articleBody;
    if (typeof text === 'string' && text.length > (longest?.length ?? 0)) longest = text;
  }
  return longest;
}

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
