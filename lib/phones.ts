import {
  findNumbers,
  isSupportedCountry,
  parsePhoneNumberFromString,
  type CountryCode,
  type PhoneNumber,
} from 'libphonenumber-js/max';

/**
 * Phone helpers shared by the job types (crawled pages, maps listings): one record shape,
 * the spec's (§2.2): raw as written, E.164, national format, line type and validity. Invalid
 * numbers keep their raw text.
 */

/** The line types of spec §2.2; libphonenumber's rarer ones (pager, UAN, ...) become UNKNOWN. */
export type PhoneType =
  'MOBILE' | 'FIXED_LINE' | 'FIXED_LINE_OR_MOBILE' | 'VOIP' | 'TOLL_FREE' | 'PREMIUM_RATE' | 'UNKNOWN';
const SPEC_TYPES = new Set<string>([
  'MOBILE',
  'FIXED_LINE',
  'FIXED_LINE_OR_MOBILE',
  'VOIP',
  'TOLL_FREE',
  'PREMIUM_RATE',
]);

export interface PhoneRecord {
  raw: string;
  e164: string | null;
  national: string | null;
  type: PhoneType;
  valid: boolean;
}

function record(raw: string, parsed: PhoneNumber | undefined): PhoneRecord {
  // Too short or too long to be a number at all: only the raw text is worth keeping.
  if (!parsed || !parsed.isPossible()) return { raw, e164: null, national: null, type: 'UNKNOWN', valid: false };
  const type = parsed.getType();
  return {
    raw,
    e164: parsed.number,
    national: parsed.formatNational(),
    type: type && SPEC_TYPES.has(type) ? (type as PhoneType) : 'UNKNOWN',
    valid: parsed.isValid(),
  };
}

/** One number as written (a tel: link, a listing's phone field), read in `region` unless it says +CC. */
export function parsePhone(raw: string, region?: CountryCode): PhoneRecord {
  const text = raw.trim();
  let parsed: PhoneNumber | undefined;
  try {
    parsed = parsePhoneNumberFromString(text, region ? { defaultCountry: region } : undefined);
  } catch {
    parsed = undefined;
  }
  return record(text, parsed);
}

/**
 * The valid numbers in a text (libphonenumber's matcher: it skips dates, prices and postcodes that
 * merely look like digits). National formats are read in `region`; without one only +CC numbers
 * match. The matcher costs 20-90 µs per group of digits it tries (5 MiB of "+1 1 1 1 1 7" lines in
 * one text: about 160 s), so it is handed each run of number characters apart, long runs in parts,
 * each distinct window read once, and READ_BUDGET digit groups per text in all: past hundreds of
 * numbers, a page's last ones are lost rather than the worker's time.
 */
export function findPhonesInText(text: string, region?: CountryCode): PhoneRecord[] {
  const out: PhoneRecord[] = [];
  // What each window held, by its text: a window read before is not read again.
  const seen = new Map<string, Array<{ at: number; end: number; phone: PhoneRecord }>>();
  let budget = READ_BUDGET;

  // The spans of the numbers that start in text[from, to) (and end by `endBy`), read in the window
  // text[start, end); undefined once the budget is spent.
  const read = (
    start: number,
    from: number,
    to: number,
    end: number,
    endBy = end,
  ): Array<[number, number]> | undefined => {
    const window = text.slice(start, end);
    let numbers = seen.get(window);
    // A window read before costs one unit too: a page of the same window a million times is no cheaper to walk.
    const cost = 1 + (numbers ? 0 : (window.match(DIGIT_GROUP)?.length ?? 0));
    if (cost > budget) return undefined;
    budget -= cost;
    if (!numbers) {
      numbers = findNumbers(window, { defaultCountry: region, v2: true }).map((match) => ({
        at: match.startsAt,
        end: match.endsAt,
        phone: record(window.slice(match.startsAt, match.endsAt), match.number as PhoneNumber),
      }));
      seen.set(window, numbers);
    }
    const found: Array<[number, number]> = [];
    for (const { at, end: e, phone } of numbers) {
      if (start + at < from || start + at >= to || start + e > endBy) continue;
      out.push(phone);
      found.push([start + at, start + e]);
    }
    return found;
  };

  // Reads text[from, to) with the character before it and the text up to `end` after it. Two numbers
  // with a wide gap between ("020 7946 0958  020 7946 0959", a table row) read as one number, too
  // long to be valid: the pieces no number was found in are read again apart.
  const readPart = (
    from: number,
    to: number,
    end: number,
    notBefore: number,
    endBy = end,
  ): Array<[number, number]> | undefined => {
    const found = read(Math.max(from - 1, 0), Math.max(from, notBefore), to, end, endBy);
    if (!found) return undefined;
    const pieces = [...piecesOf(text.slice(from, to), WIDE_GAP)];
    for (const [a, b] of pieces.length > 1 ? pieces : []) {
      if (!phoneLike(text.slice(from + a, from + b)) || found.some(([s, e]) => s < from + b && e > from + a)) continue;
      const more = read(
        Math.max(from + a - 1, 0),
        Math.max(from + a, notBefore),
        from + b,
        Math.min(from + b + 1, end),
        endBy,
      );
      if (!more) return undefined;
      found.push(...more);
    }
    return found;
  };

  // A run longer than MAX_PART is a list of numbers (or junk). It is read in parts of up to MAX_PART
  // characters cut between groups of digits, each part starting where the last number found ended,
  // as the matcher goes on in a whole line. A number that reaches the end of a part that is not the
  // last may be cut there ("030 / 90 18 02 - 030" of "... - 030 / 90 18 03"): it is read in the next
  // part; so is the last half of a part in which no number was found. False once the budget is spent.
  const readList = (from: number, to: number, after: number): boolean => {
    let part: Array<[number, number]> = [];
    let notBefore = from;
    // Only the part that ends with the run's last digits sees the text after the run.
    let lastDigits = to;
    while (lastDigits > from && !/\p{Nd}/u.test(text.charAt(lastDigits - 1))) lastDigits--;
    const readOnePart = (last: boolean): boolean => {
      const [a, z] = [part[0], part.at(-1)];
      if (!a || !z) return true;
      const [start, end] = [a[0], z[1]];
      const windowEnd = end >= lastDigits ? after : end + 1;
      const found = phoneLike(text.slice(start, end))
        ? readPart(start, end, windowEnd, notBefore, last ? windowEnd : z[0])
        : [];
      if (found === undefined) return false;
      const resume = Math.max(notBefore, ...found.map(([, e]) => e));
      part = part.filter(([s, e]) => (resume > notBefore ? s >= resume : e > end - MAX_PART / 2));
      notBefore = resume;
      return true;
    };
    for (const [a, b] of piecesOf(text.slice(from, Math.min(to, from + MAX_LIST)), LIST_GAP)) {
      const piece: [number, number] = [from + a, from + b];
      if (b - a > MAX_PART) {
        if (!readOnePart(true)) return false;
        part = [];
        continue;
      }
      if (part[0] && piece[1] - part[0][0] > MAX_PART) {
        if (!readOnePart(false)) return false;
        part = part.filter(([s]) => piece[1] - s <= MAX_PART);
      }
      part.push(piece);
    }
    return readOnePart(true);
  };

  let lineEnd = -1;
  for (const run of text.matchAll(PHONE_RUN)) {
    const from = run.index;
    const to = from + run[0].length;
    // Looked up once per line: looked up from every run, a text without line breaks is read to its end each time.
    if (lineEnd < to) {
      const next = text.indexOf('\n', to);
      lineEnd = next < 0 ? text.length : next;
    }
    // The text after a run shows the matcher an extension ("ext. 204") or a letter that voids the number.
    const after = Math.min(to + AFTER_RUN, lineEnd);
    if (run[0].length > MAX_PART) {
      if (!readList(from, to, after)) break;
    } else if (phoneLike(run[0]) && readPart(from, to, after, from) === undefined) {
      break;
    }
  }
  return out;
}

// The characters the matcher reads as part of a number (libphonenumber-js's VALID_PUNCTUATION and
// PLUS_CHARS): digits, dashes, slashes, dots, its spaces (not tabs or line breaks), brackets, tildes, plus signs.
const RUN_CHAR =
  '[\\p{Nd}\\-\\u2010-\\u2015\\u2212\\u30fc\\uff0d/\\uff0f.\\uff0e \\u00a0\\u00ad\\u200b\\u2060\\u3000()\\uff08\\uff09\\uff3b\\uff3d[\\]~\\u2053\\u223c\\uff5e+\\uff0b]';
// A run shorter than six cannot hold six digits; the regex skips those fast ({6,} is slow on long runs).
const PHONE_RUN = new RegExp(`${RUN_CHAR}{6}${RUN_CHAR}*`, 'gu');
// The longest number as written is about 30 characters ("+44 (0) 20 7946 0958 ext. 12345", or 15
// digits spaced one by one); twice that still holds two numbers and a gap.
const MAX_PART = 64;
// The budget reads about 1,000 numbers, 16 KiB of a list; the rest of a longer run is not looked at.
const MAX_LIST = 16_384;
// Room for an extension after the run (" extension 12345") and the ":30" that makes it a time.
const AFTER_RUN = 16;
// The matcher's unit of work is a group of digits (a long one counts once per 8); each window costs
// one more. A number costs 4 to 7 (with the digits after it in its window), so a directory page of
// 700 numbers is read whole; the worst texts tried (5 MiB each) took 0.1-0.3 s.
const READ_BUDGET = 5_000;
const DIGIT_GROUP = /\p{Nd}{1,8}/gu;
// The gap between two numbers that the matcher reads as one (table cells: "020 7946 0958  020 7946
// 0959"): two spaces. It parts "030 / 1234 / 030 / 5678" and "0161 496 0000, 0161 496 0001" itself.
const WIDE_GAP = /[ \u00a0\u3000]{2}/u;
// Where a list may be cut: a gap with a space, a slash or a wide dash, as between two numbers.
const LIST_GAP = /[ \u00a0\u3000/\uff0f\u2012-\u2015\uff0d]/u;

/** Six or more digits: the shortest numbers dialled with an area code. */
function phoneLike(run: string): boolean {
  return SIX_DIGITS.test(run);
}

const SIX_DIGITS = /^\P{Nd}*(?:\p{Nd}\P{Nd}*){6}/u;

/**
 * The pieces of a run between the gaps `gap` matches, as [start, end) offsets: from the first digit
 * (with a "+" or "(" before it) to the last (with a ")" after it).
 */
function* piecesOf(run: string, gap: RegExp): Generator<[number, number]> {
  let start = -1;
  let end = 0;
  for (const digits of run.matchAll(/\p{Nd}+/gu)) {
    if (start < 0) start = leadStart(run, digits.index, 0);
    else if (gap.test(run.slice(end, digits.index))) {
      const close = closeEnd(run, end, digits.index);
      yield [start, close];
      start = leadStart(run, digits.index, close);
    }
    end = digits.index + digits[0].length;
  }
  if (start >= 0) yield [start, closeEnd(run, end, run.length)];
}

function leadStart(run: string, at: number, floor: number): number {
  while (at > floor && '+\uff0b(\uff08[\uff3b'.includes(run.charAt(at - 1))) at--;
  return at;
}

function closeEnd(run: string, at: number, limit: number): number {
  while (at < limit && ')\uff09]\uff3d'.includes(run.charAt(at))) at++;
  return at;
}

/** Merges records that are the same number (by E.164; invalid ones by their digits), first one wins. */
export function uniquePhones(records: Iterable<PhoneRecord>): PhoneRecord[] {
  const seen = new Map<string, PhoneRecord>();
  for (const r of records) {
    const key = r.e164 ?? `raw:${r.raw.replace(/\D/g, '')}`;
    const known = seen.get(key);
    // A valid reading beats an invalid one of the same digits.
    if (!known || (!known.valid && r.valid)) seen.set(key, r);
  }
  return [...seen.values()];
}

const TLD_REGION: Record<string, CountryCode> = { uk: 'GB', gb: 'GB' };
const LANGUAGE_REGION: Record<string, CountryCode> = {
  de: 'DE',
  fr: 'FR',
  it: 'IT',
  es: 'ES',
  nl: 'NL',
  pl: 'PL',
  da: 'DK',
  sv: 'SE',
  nb: 'NO',
  fi: 'FI',
  cs: 'CZ',
  pt: 'PT',
  ja: 'JP',
};
const GENERIC_TLDS = new Set(['eu', 'io', 'co', 'me', 'tv', 'ai', 'fm', 'ly', 'to', 'cc', 'ws', 'app', 'dev']);

/**
 * The region a site's national-format numbers are most likely written in: a country named in its
 * structured address, else the region of its `lang` attribute (en-GB), else its country-code TLD,
 * else the country its language is mostly spoken in (de -> DE). Undefined when nothing tells.
 */
export function guessRegion(hints: {
  addressCountry?: string | null;
  lang?: string | null;
  hostname?: string | null;
}): CountryCode | undefined {
  const region = guessRegionCode(hints);
  return region && isSupportedCountry(region) ? region : undefined;
}

function guessRegionCode(hints: {
  addressCountry?: string | null;
  lang?: string | null;
  hostname?: string | null;
}): CountryCode | undefined {
  const country = hints.addressCountry?.trim().toUpperCase();
  if (country && /^[A-Z]{2}$/.test(country)) return (TLD_REGION[country.toLowerCase()] ?? country) as CountryCode;
  const [language, langRegion] = (hints.lang ?? '').toLowerCase().split(/[-_]/);
  if (langRegion && /^[a-z]{2}$/.test(langRegion))
    return (TLD_REGION[langRegion] ?? langRegion.toUpperCase()) as CountryCode;
  const tld = hints.hostname?.toLowerCase().split('.').at(-1);
  if (tld && /^[a-z]{2}$/.test(tld) && !GENERIC_TLDS.has(tld))
    return (TLD_REGION[tld] ?? tld.toUpperCase()) as CountryCode;
  if (language && LANGUAGE_REGION[language]) return LANGUAGE_REGION[language];
  if (tld === 'com' && language === 'en') return 'US';
  return undefined;
}
