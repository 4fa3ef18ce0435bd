import type { TeamMember } from '../site/extract/team';
import { classifySocial } from '../site/extract/social';
import type { CompanyOfficer } from '../company/types';

/**
 * crawlPeople's pure part: people from a site's team pages, from its links to personal professional
 * profiles and from registry officers, merged into one list with the sources of each, with
 * seniority, a role filter and a guessed address where the company's e-mail pattern is known.
 */

export const SENIORITIES = ['executive', 'director', 'manager', 'staff'] as const;
export type Seniority = (typeof SENIORITIES)[number];

export interface Person {
  full_name: string;
  first_name: string | null;
  last_name: string | null;
  position: string | null;
  seniority: Seniority | null;
  email: string | null;
  email_guess: string | null;
  proflink_url: string | null;
  sources: string[];
}

/** A person as one source saw it, before merging. */
export interface Sighting {
  name: string;
  position: string | null;
  email: string | null;
  proflink_url: string | null;
  source: string;
}

const PARTICLES = new Set([
  'von',
  'van',
  'der',
  'de',
  'da',
  'di',
  'du',
  'del',
  'la',
  'le',
  'zu',
  'ten',
  'ter',
  'bin',
  'al',
]);
const TITLES = /^(dr|prof|mr|mrs|ms|mx|sir|dame)\.?$/i;

/** "Dr. Grace B. Hopper" -> Grace / Hopper (titles dropped; particles stay with the last name). */
export function splitName(fullName: string): { first: string | null; last: string | null } {
  const words = fullName
    .trim()
    .split(/\s+/)
    .filter((w) => !TITLES.test(w));
  if (words.length === 0) return { first: null, last: null };
  if (words.length === 1) return { first: words[0] ?? null, last: null };
  let lastStart = words.length - 1;
  while (lastStart > 1 && PARTICLES.has((words[lastStart - 1] ?? '').toLowerCase())) lastStart--;
  return { first: words[0] ?? null, last: words.slice(lastStart).join(' ') };
}

/** The key people are merged by: first and last name, without case, accents or titles. */
export function personKey(fullName: string): string {
  const { first, last } = splitName(fullName);
  return [first, last].filter(Boolean).join(' ').normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
}

/** Registry officers write "SURNAME, Given Names": the name as people write it. */
export function officerName(raw: string): string {
  const [last, given] = raw.split(',', 2).map((s) => s.trim());
  const name = given ? `${given} ${last ?? ''}` : raw;
  // Registry names are in capitals: "COOKSON" -> "Cookson", "McDONALD" stays recognisable enough.
  return name
    .split(/\s+/)
    .filter(Boolean)
    .map((w) => (w === w.toUpperCase() ? w.charAt(0) + w.slice(1).toLowerCase() : w))
    .join(' ');
}

const SENIORITY_RULES: [Seniority, RegExp][] = [
  [
    'executive',
    /\b(founder|co-?founder|owner|ceo|cto|cfo|coo|cmo|cio|chief|president|managing director|partner|chair(man|woman|person)?|geschäftsführer|inhaber)\b/i,
  ],
  ['director', /\b(director|vp|vice president|head of|head)\b/i],
  ['manager', /\b(manager|lead|leader|supervisor|principal)\b/i],
];

/** Seniority from a position's words; null without a position. */
export function seniorityOf(position: string | null): Seniority | null {
  if (!position) return null;
  for (const [level, re] of SENIORITY_RULES) if (re.test(position)) return level;
  return 'staff';
}

/** Words a role of the `roles` filter also matches. */
const ROLE_WORDS: Record<string, string[]> = {
  founder: ['founder', 'co-founder', 'cofounder', 'owner', 'inhaber'],
  executive: [
    'ceo',
    'cto',
    'cfo',
    'coo',
    'cmo',
    'chief',
    'president',
    'managing director',
    'founder',
    'owner',
    'director',
  ],
  sales: ['sales', 'business development', 'account', 'commercial', 'revenue'],
  marketing: ['marketing', 'brand', 'growth', 'communications', 'pr'],
  engineering: ['engineer', 'engineering', 'developer', 'cto', 'technology', 'technical', 'research'],
  finance: ['finance', 'cfo', 'accounting', 'accountant', 'controller'],
  hr: ['hr', 'human resources', 'people', 'talent', 'recruit'],
  operations: ['operations', 'coo', 'logistics', 'supply'],
  director: ['director'],
};

/** Whether a position matches any of the roles (their related words, else the role as a word). */
export function matchesRoles(position: string | null, roles: string[]): boolean {
  if (roles.length === 0) return true;
  if (!position) return false;
  const text = ` ${position.toLowerCase().replace(/[^\p{L}\p{N}-]+/gu, ' ')} `;
  return roles.some((role) =>
    (ROLE_WORDS[role.toLowerCase()] ?? [role.toLowerCase()]).some((w) => text.includes(` ${w} `)),
  );
}

/** Team members of one crawled page as sightings. */
export function teamSightings(page: { url: string; team: TeamMember[] }): Sighting[] {
  return page.team.map((m) => ({
    name: m.name,
    position: m.position,
    email: m.email,
    proflink_url: m.proflink_url,
    source: page.url,
  }));
}

/**
 * Personal professional profiles (proflink /in/ URLs) a page links to, as sightings named after the
 * profile's slug ("grace-hopper-3a1b2c" -> "Grace Hopper"); slugs that do not read as a first and a
 * last name are skipped.
 */
export function proflinkSightings(page: { url: string; social: string[] }): Sighting[] {
  const out: Sighting[] = [];
  for (const href of page.social) {
    const found = classifySocial(href);
    if (found?.key !== 'proflink' || !found.url.includes('/in/')) continue;
    const slug = decodeURIComponent(found.url.split('/in/')[1]?.replace(/\/.*$/, '') ?? '');
    const words = slug.split('-').filter((w) => /^\p{L}+$/u.test(w));
    // A trailing id ("3a1b2c") is dropped by the letters-only filter only when it has digits; keep 2-3 words.
    if (words.length < 2 || words.length > 3) continue;
    const name = words.map((w) => w.charAt(0).toUpperCase() + w.slice(1).toLowerCase()).join(' ');
    out.push({ name, position: null, email: null, proflink_url: found.url, source: page.url });
  }
  return out;
}

/** Current (not resigned) registry officers as sightings citing the registry page. */
export function officerSightings(officers: CompanyOfficer[], sourceUrl: string): Sighting[] {
  return officers
    .filter((o) => !o.resigned_on)
    .map((o) => ({
      name: officerName(o.name),
      position: o.role ? o.role.replace(/-/g, ' ') : null,
      email: null,
      proflink_url: null,
      source: sourceUrl,
    }));
}

/**
 * One person per name (first + last, without case and titles) or per shared e-mail / profile URL:
 * fields filled from the first source that has them, every source listed once, in order seen.
 */
export function mergeSightings(sightings: Sighting[]): Person[] {
  const people: Person[] = [];
  const byKey = new Map<string, Person>();
  for (const s of sightings) {
    const keys = [
      `name:${personKey(s.name)}`,
      s.email ? `email:${s.email.toLowerCase()}` : '',
      s.proflink_url ? `proflink:${s.proflink_url.toLowerCase()}` : '',
    ].filter(Boolean);
    let person = keys.map((k) => byKey.get(k)).find((p) => p !== undefined);
    if (!person) {
      const { first, last } = splitName(s.name);
      person = {
        full_name: s.name.trim(),
        first_name: first,
        last_name: last,
        position: null,
        seniority: null,
        email: null,
        email_guess: null,
        proflink_url: null,
        sources: [],
      };
      people.push(person);
    }
    person.position ??= s.position;
    person.email ??= s.email;
    person.proflink_url ??= s.proflink_url;
    if (!person.sources.includes(s.source)) person.sources.push(s.source);
    for (const k of [`name:${personKey(person.full_name)}`, ...keys]) byKey.set(k, person);
  }
  for (const p of people) p.seniority = seniorityOf(p.position);
  return people;
}

/**
 * Folds a second entry for one person (the canonical store matched them: the same person under
 * another spelling) into the first: every source once, empty fields filled from the second. A
 * position brings its seniority; an address, known from either, replaces the pattern's guess
 * (email_guess is null when the person has an email).
 */
export function absorbPerson(into: Person, other: Person): void {
  for (const s of other.sources) if (!into.sources.includes(s)) into.sources.push(s);
  if (into.position === null && other.position !== null) {
    into.position = other.position;
    into.seniority = seniorityOf(other.position);
  }
  into.email ??= other.email;
  into.proflink_url ??= other.proflink_url;
  into.email_guess = into.email ? null : (into.email_guess ?? other.email_guess);
}

type Pattern =
  | 'first.last'
  | 'firstlast'
  | 'first_last'
  | 'first-last'
  | 'flast'
  | 'f.last'
  | 'first'
  | 'last'
  | 'lastf'
  | 'last.first';
const PATTERNS: Record<Pattern, (f: string, l: string) => string> = {
  'first.last': (f, l) => `${f}.${l}`,
  firstlast: (f, l) => `${f}${l}`,
  first_last: (f, l) => `${f}_${l}`,
  'first-last': (f, l) => `${f}-${l}`,
  flast: (f, l) => `${f.charAt(0)}${l}`,
  'f.last': (f, l) => `${f.charAt(0)}.${l}`,
  first: (f) => f,
  last: (_f, l) => l,
  lastf: (f, l) => `${l}${f.charAt(0)}`,
  'last.first': (f, l) => `${l}.${f}`,
};

const asciiWord = (s: string | null) =>
  (s ?? '')
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z]/g, '');

/**
 * The company's address pattern, learnt from people whose known address fits one (the most common
 * wins; ties go to the more specific pattern, in PATTERNS order), with the domain of those addresses.
 */
export function emailPattern(people: Person[]): { pattern: Pattern; domain: string; examples: number } | null {
  const counts = new Map<string, { pattern: Pattern; domain: string; examples: number }>();
  for (const p of people) {
    const [local, domain] = (p.email ?? '').toLowerCase().split('@');
    const f = asciiWord(p.first_name);
    const l = asciiWord(p.last_name);
    if (!local || !domain || !f) continue;
    for (const [pattern, build] of Object.entries(PATTERNS) as [Pattern, (f: string, l: string) => string][]) {
      if (!l && pattern !== 'first') continue;
      if (build(f, l) !== local) continue;
      const key = `${pattern}@${domain}`;
      const entry = counts.get(key) ?? { pattern, domain, examples: 0 };
      entry.examples++;
      counts.set(key, entry);
      break;
    }
  }
  let best: { pattern: Pattern; domain: string; examples: number } | null = null;
  for (const entry of counts.values()) if (!best || entry.examples > best.examples) best = entry;
  return best;
}

/** Fills email_guess for people without a known address, by the pattern (a guess: never verified). */
export function guessEmails(people: Person[], pattern: { pattern: Pattern; domain: string } | null): void {
  if (!pattern) return;
  for (const p of people) {
    if (p.email) continue;
    const f = asciiWord(p.first_name);
    const l = asciiWord(p.last_name);
    if (!f || (!l && pattern.pattern !== 'first')) continue;
    p.email_guess = `${PATTERNS[pattern.pattern](f, l)}@${pattern.domain}`;
  }
}
