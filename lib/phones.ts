import { findNumbers, isSupportedCountry, parsePhoneNumberFromString, type CountryCode, type PhoneNumber } from 'libphonenumber-js/max';

/**
 * Phone helpers shared by the job types (crawled pages, maps listings): one record shape,
 * the spec's (§2.2): raw as written, E.164, national format, line type and validity. Invalid
 * numbers keep their raw text.
 */

/** The line types of spec §2.2; libphonenumber's rarer ones (pager, UAN, ...) become UNKNOWN. */
export type PhoneType = 'MOBILE' | 'FIXED_LINE' | 'FIXED_LINE_OR_MOBILE' | 'VOIP' | 'TOLL_FREE' | 'PREMIUM_RATE' | 'UNKNOWN';
const SPEC_TYPES = new Set<string>(['MOBILE', 'FIXED_LINE', 'FIXED_LINE_OR_MOBILE', 'VOIP', 'TOLL_FREE', 'PREMIUM_RATE']);

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
 * merely look like digits), line by line. National formats are read in `region`; without one only
 * +CC numbers match.
 */
export function findPhonesInText(text: string, region?: CountryCode): PhoneRecord[] {
  const out: PhoneRecord[] = [];
  // The matcher tries (and throws on) every digit group; a page's text is mostly lines without a
  // phone-length run of digits, so only lines with one are handed to it.
  for (const line of text.split('\n')) {
    if (!PHONE_LIKE.test(line)) continue;
    for (const found of findNumbers(line, { defaultCountry: region, v2: true })) {
      out.push(record(line.slice(found.startsAt, found.endsAt), found.number as PhoneNumber));
    }
  }
  return out;
}

// Six or more digits, possibly broken by spaces, dots, dashes, slashes or brackets: the shortest numbers dialled with an area code.
const PHONE_LIKE = /\d(?:[\s()./-]{0,3}\d){5,}/;

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
const LANGUAGE_REGION: Record<string, CountryCode> = { de: 'DE', fr: 'FR', it: 'IT', es: 'ES', nl: 'NL', pl: 'PL', da: 'DK', sv: 'SE', nb: 'NO', fi: 'FI', cs: 'CZ', pt: 'PT', ja: 'JP' };
const GENERIC_TLDS = new Set(['eu', 'io', 'co', 'me', 'tv', 'ai', 'fm', 'ly', 'to', 'cc', 'ws', 'app', 'dev']);

/**
 * The region a site's national-format numbers are most likely written in: a country named in its
 * structured address, else the region of its `lang` attribute (en-GB), else its country-code TLD,
 * else the country its language is mostly spoken in (de -> DE). Undefined when nothing tells.
 */
export function guessRegion(hints: { addressCountry?: string | null; lang?: string | null; hostname?: string | null }): CountryCode | undefined {
  const region = guessRegionCode(hints);
  return region && isSupportedCountry(region) ? region : undefined;
}

function guessRegionCode(hints: { addressCountry?: string | null; lang?: string | null; hostname?: string | null }): CountryCode | undefined {
  const country = hints.addressCountry?.trim().toUpperCase();
  if (country && /^[A-Z]{2}$/.test(country)) return (TLD_REGION[country.toLowerCase()] ?? country) as CountryCode;
  const [language, langRegion] = (hints.lang ?? '').toLowerCase().split(/[-_]/);
  if (langRegion && /^[a-z]{2}$/.test(langRegion)) return (TLD_REGION[langRegion] ?? langRegion.toUpperCase()) as CountryCode;
  const tld = hints.hostname?.toLowerCase().split('.').at(-1);
  if (tld && /^[a-z]{2}$/.test(tld) && !GENERIC_TLDS.has(tld)) return (TLD_REGION[tld] ?? tld.toUpperCase()) as CountryCode;
  if (language && LANGUAGE_REGION[language]) return LANGUAGE_REGION[language];
  if (tld === 'com' && language === 'en') return 'US';
  return undefined;
}
