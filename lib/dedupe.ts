import { createHash } from 'node:crypto';
import { domainOf, normalizeEmail, normalizeProflinkUrl, normalizeText, phoneDigits } from './normalize';

/** Canonical record types (spec §2.7). */
export const RECORD_TYPES = ['business', 'contact', 'email', 'profile'] as const;
export type RecordType = (typeof RECORD_TYPES)[number];

/**
 * The fields a checked record may carry (spec §2.7), and `address`: the street address of a
 * business, which fuzzy matching compares (issue 41; in exact_hash too when given).
 */
export const RECORD_FIELDS = [
  'email',
  'full_name',
  'first_name',
  'last_name',
  'proflink_url',
  'position',
  'company_name',
  'company_domain',
  'maps_place_id',
  'website',
  'phone',
  'city',
  'country',
  'address',
] as const;
export type RecordField = (typeof RECORD_FIELDS)[number];
export type DedupeRecord = Partial<Record<RecordField, string | null>>;

/** Spec §4.6: matching order, first match wins. */
export const MATCH_TYPES = ['maps_place_id', 'email', 'proflink_url', 'phone', 'company_domain', 'exact_hash'] as const;
export type MatchType = (typeof MATCH_TYPES)[number];

/**
 * Confidence of each exact match type: a key equality, 1.0 (a unique record has 0.0). A match
 * counts as a duplicate when its confidence is at least the request's threshold (0-1, default
 * 0.5), which every exact match is; the fuzzy match types (lib/dedupe-fuzzy.ts, with `fuzzy`)
 * have confidences of their own that the threshold sorts.
 */
export const MATCH_CONFIDENCE: Record<MatchType, number> = {
  maps_place_id: 1,
  email: 1,
  proflink_url: 1,
  phone: 1,
  company_domain: 1,
  exact_hash: 1,
};

export type MatchKeys = Record<MatchType, string | null>;

/**
 * The normalised match keys of a record: place id trimmed, e-mail lower-cased, profile URL
 * normalised, phone digits, company domain (from company_domain, else website), and exact_hash:
 * SHA-256 over every field in normalised form (sorted keys), so records that differ only in case,
 * spacing or URL form hash alike.
 */
export function matchKeys(record: DedupeRecord): MatchKeys {
  const normalised: Record<string, string> = {};
  for (const field of RECORD_FIELDS) {
    const v = normaliseField(field, record[field]);
    if (v !== null) normalised[field] = v;
  }
  const sorted = Object.fromEntries(Object.entries(normalised).sort(([a], [b]) => (a < b ? -1 : 1)));
  return {
    maps_place_id: normalised.maps_place_id ?? null,
    email: normalised.email ?? null,
    proflink_url: normalised.proflink_url ?? null,
    phone: normalised.phone ?? null,
    company_domain: normalised.company_domain ?? domainOf(record.website),
    exact_hash: createHash('sha256').update(JSON.stringify(sorted)).digest('hex'),
  };
}

function normaliseField(field: RecordField, value: string | null | undefined): string | null {
  switch (field) {
    case 'maps_place_id':
      return value?.trim() || null;
    case 'email':
      return normalizeEmail(value);
    case 'proflink_url':
      return normalizeProflinkUrl(value);
    case 'phone':
      return phoneDigits(value);
    case 'company_domain':
    case 'website':
      return domainOf(value) ?? normalizeText(value);
    default:
      return normalizeText(value);
  }
}
