import { domainOf, phoneDigits } from './normalize';
import type { DedupeRecord } from './dedupe';

/**
 * Fuzzy de-duplication (issue 41): the same business or person written differently. Pure logic:
 * the keys a canonical record is found by (`fuzzyKeys`), and the score of a candidate against a
 * checked record (`scoreBusiness`, `scoreContact`) with the fields that agreed and their scores.
 *
 * The score is a Fellegi-Sunter match weight: each field compared adds its log2 likelihood ratio
 * (agreement on a rare value is strong evidence, disagreement counts against), a prior for "two
 * records the blocking put side by side are the same" is added, and the sum is turned into a
 * probability, the confidence the request's threshold is compared with. The weights are set by
 * hand from what each agreement means for listings and people (a shared phone is near proof, a
 * shared city weak) and checked on public data with ground truth (bench/dedupe-quality.ts).
 */

export const FUZZY_MATCH_TYPES = ['fuzzy_business', 'fuzzy_contact'] as const;
export type FuzzyMatchType = (typeof FUZZY_MATCH_TYPES)[number];

export interface FieldEvidence {
  /** 0-1: how alike the two values are (1 for equal). */
  score: number;
  agreed: boolean;
  /** The log2 weight the comparison added. */
  weight: number;
}

export interface FuzzyScore {
  confidence: number;
  /** The fields both records carry, compared: which agreed, with their scores. */
  fields: Partial<Record<string, FieldEvidence>>;
}

/** Legal forms that say nothing about which business it is, dropped from the end of a name. */
const LEGAL_FORMS = new Set([
  'ltd',
  'limited',
  'plc',
  'llp',
  'llc',
  'lllp',
  'inc',
  'incorporated',
  'corp',
  'corporation',
  'co',
  'company',
  'cos',
  'gmbh',
  'mbh',
  'ag',
  'kg',
  'ohg',
  'gbr',
  'ug',
  'ev',
  'se',
  'sarl',
  'sas',
  'sasu',
  'sa',
  'sl',
  'slu',
  'srl',
  'spa',
  'snc',
  'bv',
  'nv',
  'vof',
  'oy',
  'oyj',
  'ab',
  'as',
  'asa',
  'aps',
  'sp',
  'zoo',
  'kft',
  'zrt',
  'sro',
  'doo',
  'pty',
  'pte',
  'lp',
  'pc',
  'pllc',
  'lda',
  'ltda',
  'cia',
  'kk',
  'bhd',
  'sdn',
]);

const words = (text: string): string[] =>
  text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/\s*[&+]\s*/g, ' and ')
    .replace(/['’`´]/g, '')
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);

/**
 * A business name for comparison: accents, case and punctuation gone, `&` and `+` as "and", legal
 * forms at the end dropped (`Northgate & Sons Bakers Ltd` and `Northgate and Sons Bakers` give
 * `northgate and sons bakers`), a leading "the" dropped. Null when nothing is left.
 */
export function businessNameKey(name: string | null | undefined): string | null {
  if (!name) return null;
  return memo(nameKeys, name, nameKeyOf);
}

/**
 * Keys of the texts seen lately: a batch compares each record with up to a hundred others, and the
 * Unicode normalisation is most of a comparison's cost. Bounded: cleared past 20,000 entries.
 */
const nameKeys = new Map<string, string | null>();
const plainKeys = new Map<string, string | null>();
function memo(cache: Map<string, string | null>, text: string, compute: (t: string) => string | null): string | null {
  const hit = cache.get(text);
  if (hit !== undefined) return hit;
  if (cache.size >= 20_000) cache.clear();
  const key = compute(text);
  cache.set(text, key);
  return key;
}

function nameKeyOf(name: string): string | null {
  const w = words(name);
  while (w.length > 1 && LEGAL_FORMS.has(w[w.length - 1] as string)) w.pop();
  if (w.length > 1 && w[0] === 'the') w.shift();
  return w.length > 0 ? w.join(' ') : null;
}

/** A place, person or address part for comparison: accents, case and punctuation gone. */
export function plainKey(text: string | null | undefined): string | null {
  if (!text) return null;
  return memo(plainKeys, text, (t) => {
    const w = words(t);
    return w.length > 0 ? w.join(' ') : null;
  });
}

/** A person's first and last name, from first_name/last_name or else from full_name (first and last word). */
export function personName(r: DedupeRecord): { first: string | null; last: string | null } {
  const first = plainKey(r.first_name);
  const last = plainKey(r.last_name);
  if (first || last) return { first, last: last ? (last.split(' ').pop() as string) : null };
  const w = plainKey(r.full_name)?.split(' ') ?? [];
  if (w.length === 0) return { first: null, last: null };
  if (w.length === 1) return { first: null, last: w[0] as string };
  return { first: w[0] as string, last: w[w.length - 1] as string };
}

/** The domain a record's business lives at: company_domain, else website, else the e-mail's. */
export function recordDomain(r: DedupeRecord): string | null {
  return domainOf(r.company_domain) ?? domainOf(r.website) ?? domainOf(r.email);
}

/**
 * Whether two records could be one business or person at all, before they are scored: their names
 * share a word's first three letters. A batch compares each new record with the batch's earlier
 * ones, and most pairs are not worth a score.
 */
export function mayMatch(a: DedupeRecord, b: DedupeRecord): boolean {
  const y = blockWords(b);
  for (const w of blockWords(a)) if (y.has(w)) return true;
  return false;
}

function blockWords(r: DedupeRecord): Set<string> {
  const { first, last } = personName(r);
  const text = [businessNameKey(r.company_name), first, last].filter(Boolean).join(' ');
  return new Set(
    text
      .split(' ')
      .filter(Boolean)
      .map((w) => w.slice(0, 3)),
  );
}

/**
 * The keys a canonical record is found by when fuzzy matching is asked for (blocking, as
 * record-linkage tools do: only records sharing a key are scored):
 * - `blocks`, for businesses: the first four letters of each word of the name key (of three letters
 *   or more; a one-word name keeps its word) and, for a longer word, the word itself, each with the
 *   place it is in (the first word of the city, else the country), and the house number with the
 *   street's first word of the address. A start catches a word's other endings (`bakers`, `bakery`),
 *   the whole word is rarer; the search reads a few hundred rows a key at most and ranks the records
 *   by the rarity of the keys they share (db/repositories/dedupe.ts fuzzyCandidates).
 * - `person`, for people: their company domain with their last name (first names then compared).
 * - `name`: the business name key itself.
 */
export function fuzzyKeys(r: DedupeRecord): { name: string | null; person: string | null; blocks: string[] } {
  const { last } = personName(r);
  const domain = recordDomain(r);
  const name = businessNameKey(r.company_name);
  const blocks = new Set<string>();
  if (name) {
    const place = plainKey(r.city)?.split(' ')[0] ?? plainKey(r.country) ?? '';
    const words = name.split(' ');
    for (const w of words) {
      if (w.length < 3 && words.length > 1) continue;
      blocks.add(`${place}|${w.slice(0, 4)}`);
      // The whole word too when it is longer: rarer than its start (`kalo` begins many names, `kalomerbi`
      // few), so the candidate search ranks the records that share it first.
      if (w.length > 4) blocks.add(`${place}|=${w}`);
    }
    const address = plainKey(r.address)?.split(' ') ?? [];
    const number = address.findIndex((w) => /^\d+[a-z]?$/.test(w));
    const street = number >= 0 ? address.slice(number + 1).find((w) => w.length >= 3) : undefined;
    if (street) blocks.add(`@${address[number]}|${street.slice(0, 4)}`);
  }
  return { name, person: domain && last ? `${domain}|${last}` : null, blocks: [...blocks] };
}

/** pg_trgm's trigrams of a text: per word, padded with two spaces before and one after. */
function trigrams(text: string): Set<string> {
  const out = new Set<string>();
  for (const w of text.split(' ')) {
    if (!w) continue;
    const padded = `  ${w} `;
    for (let i = 0; i + 3 <= padded.length; i++) out.add(padded.slice(i, i + 3));
  }
  return out;
}

/** Trigram similarity as pg_trgm computes it (shared trigrams over all trigrams of both). */
export function trigramSimilarity(a: string, b: string): number {
  const x = trigrams(a);
  const y = trigrams(b);
  if (x.size === 0 || y.size === 0) return 0;
  let shared = 0;
  for (const t of x) if (y.has(t)) shared++;
  return shared / (x.size + y.size - shared);
}

/**
 * Two words alike as names are written: equal, one of three letters or more the start of the other
 * (`deli`, `delicatessen`), or of five letters or more one typo apart after the same first letter
 * (`bakers`, `bakres`).
 */
const sameWord = (a: string, b: string) =>
  a === b ||
  (a.length >= 3 && b.length >= 3 && (a.startsWith(b) || b.startsWith(a))) ||
  (a.length >= 5 && b.length >= 5 && a[0] === b[0] && withinOneEdit(a, b));

/** The words of `a` that no word of `b` matches. */
const unmatched = (a: string[], b: string[]) => a.filter((w) => !b.some((x) => sameWord(w, x)));

/** Whether every word of one text is matched in the other (`spago` in `spago los angeles`, `new york` in `new york city`). */
export function contained(a: string, b: string): boolean {
  const x = a.split(' ');
  const y = b.split(' ');
  return unmatched(x, y).length === 0 || unmatched(y, x).length === 0;
}

/**
 * How alike two name keys are: the best of their trigram similarity, their word overlap (shared
 * words over the shorter name's, so `arnie mortons of chicago` and `arnie mortons` are alike; from
 * two words on) and containment (every word of one in the other: `katsu`, `restaurant katsu`: 0.85).
 */
export function nameSimilarity(a: string, b: string): number {
  if (a === b) return 1;
  if (contained(a, b)) return Math.max(0.85, trigramSimilarity(a, b));
  const tri = trigramSimilarity(a, b);
  const wa = new Set(a.split(' '));
  const wb = new Set(b.split(' '));
  const shorter = wa.size <= wb.size ? wa : wb;
  const longer = shorter === wa ? wb : wa;
  let shared = 0;
  for (const w of shorter) if (longer.has(w)) shared++;
  const overlap = shorter.size >= 2 ? (0.9 * shared) / shorter.size : 0;
  return Math.max(tri, overlap);
}

/**
 * Whether two names or addresses carry different numbers (`Leeds Bakery 1` and `Leeds Bakery 2`,
 * `1 Briggate` and `2 Briggate`): branches and neighbours, however alike the rest reads.
 */
export function numbersDiffer(a: string, b: string): boolean {
  const numbers = (t: string) => new Set(t.split(' ').filter((w) => /^\d+[a-z]?$/.test(w)));
  const x = numbers(a);
  const y = numbers(b);
  if (x.size === 0 || y.size === 0) return false;
  return x.size !== y.size || [...x].some((n) => !y.has(n));
}

/**
 * Whether two business names clearly differ (both given; neither's words all in the other and not
 * much alike, or different numbers): with fuzzy matching, such businesses sharing a phone or a
 * website domain are two (a hotel's cafe and its dining room, a group's brands), not one.
 */
export function namesDiffer(a: string | null | undefined, b: string | null | undefined): boolean {
  const x = businessNameKey(a);
  const y = businessNameKey(b);
  return x !== null && y !== null && keysDiffer(x, y);
}

/** namesDiffer on name keys: each has a word the other lacks (`cafe ritz carlton`, `dining room ritz carlton`), or other numbers. */
function keysDiffer(x: string, y: string): boolean {
  return numbersDiffer(x, y) || !contained(x, y);
}

/** Log2 weights of each comparison (see the module comment). */
const W = {
  prior: -6,
  name: [
    [0.95, 7],
    [0.8, 5],
    [0.65, 3],
    [0.5, 1],
  ] as [number, number][],
  nameDisagree: -6,
  cityAgree: 2.5,
  cityDisagree: -5,
  countryAgree: 0.5,
  countryDisagree: -10,
  phoneAgree: 8,
  phoneDisagree: -1.5,
  domainAgree: 7,
  domainDisagree: -2,
  addressAgree: [
    [0.75, 5],
    [0.5, 2],
  ] as [number, number][],
  addressDisagree: -3,
  firstNameEqual: 8,
  firstNamePrefix: 5,
  firstNameInitial: 4,
  firstNameClose: 4,
  firstNameDisagree: -8,
  lastNameAgree: 3,
  sameDomain: 2,
};

const step = (score: number, steps: [number, number][], below: number) =>
  steps.find(([min]) => score >= min)?.[1] ?? below;
const toConfidence = (weight: number) => Math.round((1 / (1 + 2 ** -weight)) * 1000) / 1000;

/** The last seven digits: a number written with or without its country or area code. */
const phoneTail = (v: string | null | undefined) => {
  const d = phoneDigits(v);
  return d && d.length >= 7 ? d.slice(-7) : null;
};

type Compared = Partial<Record<string, FieldEvidence>>;

/** Cities agree when one's words are all in the other's (`new york`, `new york city`). */
function compareCity(fields: Compared, a: string | null, b: string | null): number {
  if (!a || !b) return 0;
  const ok = a === b || contained(a, b);
  const weight = ok ? W.cityAgree : W.cityDisagree;
  fields.city = { score: ok ? 1 : round(trigramSimilarity(a, b)), agreed: ok, weight };
  return weight;
}

function compareExact(
  fields: Compared,
  field: string,
  a: string | null,
  b: string | null,
  agree: number,
  disagree: number,
): number {
  if (!a || !b) return 0;
  const ok = a === b;
  const weight = ok ? agree : disagree;
  fields[field] = { score: ok ? 1 : 0, agreed: ok, weight };
  return weight;
}

/**
 * A business record against a candidate found by its name: name (the key above), city, country,
 * phone (last seven digits), website domain and address compared. It is a match only when the
 * names are alike and something besides the name agrees (the city or the address with no country
 * disagreeing, the phone, or the website): a name alone is no proof (two "Royal Oak" pubs). Names
 * or addresses with different numbers disagree (branches, neighbours).
 */
export function scoreBusiness(record: DedupeRecord, candidate: DedupeRecord): FuzzyScore | null {
  const a = businessNameKey(record.company_name);
  const b = businessNameKey(candidate.company_name);
  if (!a || !b) return null;
  // Most pairs a batch compares are other businesses: their names say so before anything else is read.
  if (keysDiffer(a, b))
    return { confidence: 0, fields: { company_name: { score: 0, agreed: false, weight: W.nameDisagree } } };
  const fields: Compared = {};
  const sim = nameSimilarity(a, b);
  const nameWeight = step(sim, W.name, W.nameDisagree);
  fields.company_name = { score: round(sim), agreed: nameWeight > 0, weight: nameWeight };
  let weight = W.prior + nameWeight;
  weight += compareCity(fields, plainKey(record.city), plainKey(candidate.city));
  weight += compareExact(
    fields,
    'country',
    plainKey(record.country),
    plainKey(candidate.country),
    W.countryAgree,
    W.countryDisagree,
  );
  weight += compareExact(
    fields,
    'phone',
    phoneTail(record.phone),
    phoneTail(candidate.phone),
    W.phoneAgree,
    W.phoneDisagree,
  );
  weight += compareExact(
    fields,
    'website',
    recordDomain({ ...record, email: null }),
    recordDomain({ ...candidate, email: null }),
    W.domainAgree,
    W.domainDisagree,
  );
  const addrA = plainKey(record.address);
  const addrB = plainKey(candidate.address);
  if (addrA && addrB) {
    const s = nameSimilarity(addrA, addrB);
    const w = numbersDiffer(addrA, addrB) ? W.addressDisagree : step(s, W.addressAgree, W.addressDisagree);
    fields.address = { score: round(s), agreed: w > 0, weight: w };
    weight += w;
  }
  const corroborated =
    (fields.country?.agreed !== false &&
      (fields.city?.agreed || (fields.address?.agreed && (fields.address.score ?? 0) >= 0.75))) ||
    fields.phone?.agreed ||
    fields.website?.agreed;
  if (!fields.company_name.agreed || !corroborated) return { confidence: 0, fields };
  return { confidence: toConfidence(weight), fields };
}

/**
 * A person against a candidate of the same company domain and last name: first names compared as
 * people write them (equal; one the other's initial, `J.` and `John`; one a prefix of the other of
 * three letters or more, `Chris` and `Christopher`; or one or two letters apart, `Jon` and `John`).
 */
export function scoreContact(record: DedupeRecord, candidate: DedupeRecord): FuzzyScore | null {
  const a = personName(record);
  const b = personName(candidate);
  const da = recordDomain(record);
  const db = recordDomain(candidate);
  if (!a.last || !b.last || !da || !db || a.last !== b.last || da !== db) return null;
  const fields: Compared = {
    last_name: { score: 1, agreed: true, weight: W.lastNameAgree },
    company_domain: { score: 1, agreed: true, weight: W.sameDomain },
  };
  let weight = W.prior + W.lastNameAgree + W.sameDomain;
  if (!a.first || !b.first) return { confidence: 0, fields };
  const [x, y] = a.first.length <= b.first.length ? [a.first, b.first] : [b.first, a.first];
  let first: [number, number];
  if (x === y) first = [1, W.firstNameEqual];
  else if (x.length === 1 && y.startsWith(x)) first = [0.5, W.firstNameInitial];
  else if (x.length >= 3 && y.startsWith(x)) first = [0.8, W.firstNamePrefix];
  else if (x.length >= 3 && editDistance(x, y) <= (y.length >= 6 ? 2 : 1)) first = [0.7, W.firstNameClose];
  else first = [0, W.firstNameDisagree];
  fields.first_name = { score: first[0], agreed: first[1] > 0, weight: first[1] };
  weight += first[1];
  if (!fields.first_name.agreed) return { confidence: 0, fields };
  return { confidence: toConfidence(weight), fields };
}

const round = (x: number) => Math.round(x * 1000) / 1000;

/**
 * Whether two words are at most one edit apart (editDistance(a, b) <= 1: a letter changed, added or
 * dropped, or two neighbours swapped) in one pass without a table: a batch asks this of every word
 * pair its names compare, and the table was a fifth of a fuzzy check-batch's CPU.
 */
export function withinOneEdit(a: string, b: string): boolean {
  if (a === b) return true;
  if (Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  if (a.length === b.length)
    return (
      a.slice(i + 1) === b.slice(i + 1) || (a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2))
    );
  const [long, short] = a.length > b.length ? [a, b] : [b, a];
  return long.slice(i + 1) === short.slice(i);
}

/** Edit distance with a swap of two neighbouring letters as one edit (optimal string alignment; short strings: words, first names). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= b.length; j++) (d[0] as number[])[j] = j;
  for (let i = 1; i <= a.length; i++) {
    const row = d[i] as number[];
    const up = d[i - 1] as number[];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min((up[j] as number) + 1, (row[j - 1] as number) + 1, (up[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        v = Math.min(v, ((d[i - 2] as number[])[j - 2] as number) + 1);
      row[j] = v;
    }
  }
  return (d[a.length] as number[])[b.length] as number;
}
