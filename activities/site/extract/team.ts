import type { CheerioAPI } from 'cheerio';
import type { AnyNode, Element } from 'domhandler';
import { decodeCfEmail, emailForm, emailsFromMailto } from '../../../lib/emails';
import { classifySocial } from './social';
import { absoluteUrl, clean, ldList, ldText, pageElements, typesOf, type JsonLdNode } from './dom';

/** A team member of the crawlSite result (spec §2.8 team_members). */
export interface TeamMember {
  name: string;
  position: string | null;
  email: string | null;
  proflink_url: string | null;
  photo_url: string | null;
}

function personFromLd(node: JsonLdNode, base: string): TeamMember | undefined {
  const name = ldText(node.name) ?? clean([ldText(node.givenName), ldText(node.familyName)].filter(Boolean).join(' '));
  if (!name) return undefined;
  const linkedIn = ldList(node.sameAs)
    .map((s) => (typeof s === 'string' ? classifySocial(s) : undefined))
    .find((s) => s?.key === 'proflink');
  const ldEmail = ldText(node.email);
  const email = ldEmail ? emailForm(ldEmail) : undefined;
  return {
    name,
    position: ldText(node.jobTitle) ?? ldText(node.roleName) ?? null,
    email: email ?? null,
    proflink_url: linkedIn?.url ?? null,
    photo_url: absoluteUrl(ldText(node.image), base) ?? null,
  };
}

/** JSON-LD Person nodes, top-level or nested as an organization's employee/member/founder. */
export function ldTeamMembers(ld: JsonLdNode[], base: string): TeamMember[] {
  const people: JsonLdNode[] = [];
  for (const node of ld) {
    if (typesOf(node).includes('Person')) people.push(node);
    for (const field of ['employee', 'employees', 'member', 'founder', 'founders', 'members']) {
      for (const p of ldList(node[field]))
        if (p && typeof p === 'object' && typesOf(p as JsonLdNode).includes('Person')) people.push(p as JsonLdNode);
    }
  }
  return people.map((p) => personFromLd(p, base)).filter((m): m is TeamMember => m !== undefined);
}

// A person's name: two to four capitalised words (initials, hyphens, apostrophes, particles allowed).
const NAME_WORD = "(?:\\p{Lu}[\\p{L}'’.-]*|\\p{Lu}\\.)";
const PARTICLE = '(?:von|van|der|de|da|di|du|del|la|le|zu|ten|ter|bin|al)';
const PERSON_NAME = new RegExp(
  `^(?:(?:Dr|Prof|Mr|Mrs|Ms|Mx)\\.?\\s+)*${NAME_WORD}(?:\\s+(?:${PARTICLE}\\s+)*${NAME_WORD}){1,3}$`,
  'u',
);
// Headings that look like names but are section titles.
const NOT_A_NAME =
  /\b(team|our|about|contact|us|services?|company|news|blog|careers?|jobs|history|mission|values|leadership|management|board|meet|get|in|touch|the|and|for|with|of|privacy|policy|terms|home|welcome|kontakt|impressum|unser|über|uns|read|more|learn|view|all)\b/i;

export function looksLikePersonName(text: string): boolean {
  return text.length <= 60 && PERSON_NAME.test(text) && !NOT_A_NAME.test(text);
}

/** `h2, h3, h4, h5, h6, strong, b, [class*="name" i], [itemprop="name"]`, read off the page's one walk (dom.ts pageElements). */
const NAME_TAGS = new Set(['h2', 'h3', 'h4', 'h5', 'h6', 'strong', 'b']);
const isNameElement = (el: Element) =>
  NAME_TAGS.has(el.name) || /name/i.test(el.attribs.class ?? '') || el.attribs.itemprop === 'name';

/**
 * People on a team page, from its structure: each element whose text is a person's name, inside the
 * largest enclosing "card" that holds no other name; the card's short texts give the position, its
 * links the email and LinkedIn profile, its image the photo. A name alone is not enough: the card
 * must also show a position, a photo, an email or a LinkedIn link.
 */
export function structuredTeamMembers($: CheerioAPI, base: string): TeamMember[] {
  // Each element's text is read once, and the nesting is walked up from each name (never searched
  // down from each ancestor): a hostile page's thousands of name-like elements, flat or nested,
  // took minutes that way (cubic).
  const names = new Map<Element, string>();
  for (const el of pageElements($).all.filter(isNameElement)) {
    const text = clean($(el).text());
    if (text !== undefined && looksLikePersonName(text)) names.set(el, text);
  }
  // The innermost name element only (a <strong> inside an <h3> counts once): an element with a
  // name element of the same text inside is not one.
  const outer = new Set<Element>();
  for (const [el, text] of names) {
    for (let up = el.parent; up && up.type === 'tag'; up = up.parent) {
      if (names.get(up as Element) === text) outer.add(up as Element);
    }
  }
  const nameEls = [...names.keys()].filter((el) => !outer.has(el));
  // How many names each element holds (its descendants only).
  const namesInside = new Map<AnyNode, number>();
  for (const el of nameEls) {
    for (let up = el.parent; up; up = up.parent) namesInside.set(up, (namesInside.get(up) ?? 0) + 1);
  }
  const members: TeamMember[] = [];
  for (const el of nameEls) {
    const name = names.get(el) as string;
    // The largest enclosing element that holds no other name, below body, main and html.
    let card: Element = el;
    for (let up = el.parent; up && up.type === 'tag' && !CARD_LIMITS.has((up as Element).name); up = up.parent) {
      if ((namesInside.get(up) ?? 0) > 1) break;
      card = up as Element;
    }
    if (card === el) continue;
    const member = cardMember($, card, name, base);
    if (member.position || member.photo_url || member.email || member.proflink_url) members.push(member);
  }
  return members;
}

const CARD_LIMITS = new Set(['body', 'main', 'html']);

/** What a card's fields are read from: its elements below it, in document order. */
interface CardParts {
  links: string[];
  cfEmail?: string;
  /** Elements whose class says position, role, title or job, or itemprop="jobTitle". */
  positioned: Element[];
  /** Short-text candidates: p, span, div, h4-h6, em and small elements without child elements. */
  leaves: Element[];
  image?: Element;
}

const POSITION_CLASS = /position|role|title|job/i;
const LEAF_NAMES = new Set(['p', 'span', 'div', 'h4', 'h5', 'h6', 'em', 'small']);

/**
 * One walk of the card's descendants for every field (six selector searches before: a card is the
 * largest element around one name, on a long page a whole section, and wikipedia-2 spent a fifth
 * of its pipeline CPU in them).
 */
function cardParts(card: Element): CardParts {
  const parts: CardParts = { links: [], positioned: [], leaves: [] };
  const walk = (parent: Element) => {
    for (const node of parent.children) {
      if (node.type !== 'tag' && node.type !== 'script' && node.type !== 'style') continue;
      const el = node as Element;
      const a = el.attribs;
      if (el.name === 'a' && a.href !== undefined) parts.links.push(a.href);
      if (parts.cfEmail === undefined && a['data-cfemail'] !== undefined) parts.cfEmail = a['data-cfemail'];
      if ((a.class !== undefined && POSITION_CLASS.test(a.class)) || a.itemprop === 'jobTitle')
        parts.positioned.push(el);
      if (
        LEAF_NAMES.has(el.name) &&
        !el.children.some((c) => c.type === 'tag' || c.type === 'script' || c.type === 'style')
      )
        parts.leaves.push(el);
      if (el.name === 'img' && !parts.image) parts.image = el;
      walk(el);
    }
  };
  walk(card);
  return parts;
}

function cardMember($: CheerioAPI, card: Element, name: string, base: string): TeamMember {
  const parts = cardParts(card);
  let email: string | null = null;
  let proflink: string | null = null;
  for (const href of parts.links) {
    if (!email && /^mailto:/i.test(href)) email = emailsFromMailto(href)[0] ?? null;
    const cf = /\/cdn-cgi\/l\/email-protection#([0-9a-f]+)/i.exec(href);
    const decoded = cf?.[1] ? decodeCfEmail(cf[1]) : undefined;
    if (!email && decoded) email = emailForm(decoded);
    const social = /^https?:/i.test(href) ? classifySocial(href) : undefined;
    if (!proflink && social?.key === 'proflink' && social.url.includes('/in/')) proflink = social.url;
  }
  const decodedSpan = parts.cfEmail ? decodeCfEmail(parts.cfEmail) : undefined;
  if (!email && decodedSpan) email = emailForm(decodedSpan);

  const text = (el: Element) => clean($(el).text());
  let position: string | null = null;
  for (const el of parts.positioned) {
    const t = text(el);
    if (t !== name) {
      position = t ?? null;
      break;
    }
  }
  if (!position) {
    // The first short text of the card that is neither the name nor a link or an address.
    for (const el of parts.leaves) {
      const t = text(el);
      if (t && t !== name && t.length <= 80 && !/@|\d{3,}|https?:/.test(t)) {
        position = t;
        break;
      }
    }
  }
  const src = parts.image?.attribs.src ?? parts.image?.attribs['data-src'];
  return { name, position, email, proflink_url: proflink, photo_url: absoluteUrl(src, base) ?? null };
}

/** Merges members found on several pages and by both methods: one entry per name, fields filled in. */
export function mergeTeam(lists: TeamMember[][]): TeamMember[] {
  const byName = new Map<string, TeamMember>();
  for (const list of lists) {
    for (const m of list) {
      const key = m.name.toLowerCase().replace(/\s+/g, ' ');
      const known = byName.get(key);
      if (!known) byName.set(key, { ...m });
      else for (const f of ['position', 'email', 'proflink_url', 'photo_url'] as const) known[f] ??= m[f];
    }
  }
  return [...byName.values()];
}
