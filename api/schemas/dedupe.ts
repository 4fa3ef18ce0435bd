import { z } from 'zod';
import { NOT_BLANK_PATTERN } from '../../jobs/fields';
import { MATCH_TYPES, RECORD_FIELDS, RECORD_TYPES } from '../../lib/dedupe';
import { FUZZY_MATCH_TYPES } from '../../lib/dedupe-fuzzy';
import { hasControlCharacter, NO_CONTROL_CHARACTERS } from '../../lib/emails';

// ---- requests (spec §4.6) -------------------------------------------------------------------

const field = z.string().max(2000).nullish();
// Control characters are no part of any address (lib/emails.ts); the stored record is mailed later.
const emailField = field.refine((v) => v == null || !hasControlCharacter(v), NO_CONTROL_CHARACTERS);

/** A checked record (spec §2.7): the listed fields only, at least one of them non-empty. */
export const dedupeRecord = z
  .strictObject(
    Object.fromEntries(RECORD_FIELDS.map((f) => [f, f === 'email' ? emailField : field])) as Record<
      (typeof RECORD_FIELDS)[number],
      typeof field
    >,
  )
  .refine((r) => Object.values(r).some((v) => typeof v === 'string' && v.trim() !== ''), {
    message: 'record must carry at least one non-empty field',
    path: [],
  })
  .meta({
    id: 'DedupeRecord',
    description: 'A lead record to check; fields as in spec §2.7, at least one of them a string that is not blank',
    anyOf: RECORD_FIELDS.map((f) => ({
      required: [f],
      properties: { [f]: { type: 'string', pattern: NOT_BLANK_PATTERN } },
    })),
  });

const recordType = z.enum(RECORD_TYPES).describe('business, contact, email or profile');
const addToCanonical = z.boolean().default(true).describe('store a unique record in the canonical store');
const campaignId = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .optional()
  .describe(
    "scopes matching (and the stored record) to this campaign; without it a record matches any of the client's records",
  );
const threshold = z
  .number()
  .min(0)
  .max(1)
  .default(0.5)
  .describe(
    'minimum confidence for a match to count. Exact matches have confidence 1.0, so any threshold accepts them; a fuzzy match (with `fuzzy`) counts when its confidence is at least this',
  );
const fuzzy = z
  .boolean()
  .default(false)
  .describe(
    'also match fuzzily, after the exact match types: `fuzzy_business` (record_type business: a similar company_name, ignoring case, accents, punctuation, & / and and legal forms, ' +
      'corroborated by the same city with no country disagreeing, the same phone or the same website; address compared when both carry one) and `fuzzy_contact` ' +
      '(record_type contact: the same last name and company domain, the first name equal, an initial, a short form or a letter or two apart). ' +
      'The match carries its confidence and an explanation. Without it the answers are the exact-only ones',
  );

export const dedupeCheckBody = z.strictObject({
  record: dedupeRecord,
  record_type: recordType,
  add_to_canonical: addToCanonical,
  campaign_id: campaignId,
  threshold,
  fuzzy,
});

export const dedupeCheckBatchBody = z.strictObject({
  records: z.array(dedupeRecord).min(1).max(100).describe('1-100 records, checked in order'),
  record_type: recordType,
  add_to_canonical: addToCanonical,
  campaign_id: campaignId,
  threshold,
  fuzzy,
  idempotency_key: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .describe('the same key returns the same response for 5 minutes'),
});

export const canonicalIdParams = z.strictObject({
  id: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER).describe('canonical record id'),
});

export const canonicalMergeBody = z.strictObject({
  record_ids: z
    .array(z.number().int().min(1).max(Number.MAX_SAFE_INTEGER))
    .min(1)
    .max(100)
    .describe('1-100 canonical record ids of the same record_type'),
});

export const canonicalListQuery = z.strictObject({
  record_type: z.enum(RECORD_TYPES).optional(),
  campaign_id: z.string().min(1).max(200).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  offset: z.coerce.number().int().min(0).default(0),
});

// ---- responses ------------------------------------------------------------------------------

const ALL_MATCH_TYPES = [...MATCH_TYPES, ...FUZZY_MATCH_TYPES] as const;
const matchType = z
  .enum(ALL_MATCH_TYPES)
  .nullable()
  .describe(
    'the first key that matched, in the order maps_place_id, email, proflink_url, phone, company_domain, exact_hash; then, with `fuzzy`, fuzzy_business or fuzzy_contact',
  );
/** Why a fuzzy match matched: each field both records carry, compared. */
const explanation = z
  .record(
    z.string(),
    z.object({
      score: z.number().min(0).max(1).describe('how alike the two values are (1 when equal)'),
      agreed: z.boolean(),
      weight: z.number().describe('the log2 likelihood ratio the comparison added to the match weight'),
    }),
  )
  .describe(
    'fuzzy matches only: the fields compared (company_name, city, country, phone, website, address; first_name, last_name, company_domain) and whether each agreed',
  )
  .meta({ id: 'DedupeMatchExplanation' });

export const dedupeCheckResponse = z
  .object({
    success: z.boolean(),
    is_duplicate: z.boolean(),
    confidence: z.number().describe('1.0 for exact matches, 0.0 when unique'),
    matched_record_id: z.number().int().nullable(),
    match_type: matchType,
    canonical_id: z.number().int().nullable().describe('when unique and added'),
    explanation: explanation.optional(),
    added_to_canonical: z.boolean(),
    skipped: z.boolean(),
    reason: z.string().nullable().describe('dedupe_not_configured when de-duplication is disabled'),
  })
  .meta({ id: 'DedupeCheckResponse' });

export const dedupeCheckBatchResponse = z
  .object({
    success: z.boolean(),
    unique: z.array(dedupeRecord),
    duplicates: z.array(
      z.object({
        record: dedupeRecord,
        matched_canonical_id: z.number().int(),
        confidence: z.number(),
        match_type: z.enum(ALL_MATCH_TYPES),
        explanation: explanation.optional(),
      }),
    ),
    stats: z.object({
      total_checked: z.number().int(),
      unique_count: z.number().int(),
      duplicate_count: z.number().int(),
      added_to_canonical: z.number().int().describe('records added to the canonical store'),
      skipped: z.boolean(),
      reason: z.string().nullable(),
    }),
  })
  .meta({ id: 'DedupeCheckBatchResponse' });

export const canonicalRecord = z
  .object({
    id: z.number().int(),
    record_hash: z.string().describe('SHA-256 of the normalised record'),
    record_type: z.enum(RECORD_TYPES),
    email: z.string().nullable(),
    full_name: z.string().nullable(),
    company_name: z.string().nullable(),
    company_domain: z.string().nullable(),
    maps_place_id: z.string().nullable(),
    proflink_url: z.string().nullable(),
    phone: z.string().nullable(),
    city: z.string().nullable(),
    country: z.string().nullable(),
    source_worker: z.string(),
    campaign_id: z.string().nullable(),
    created_at: z.string().describe('ISO 8601'),
  })
  .meta({ id: 'CanonicalRecord' });

export const canonicalListResponse = z
  .object({
    success: z.boolean(),
    records: z.array(canonicalRecord),
    total: z.number().int(),
    limit: z.number().int(),
    offset: z.number().int(),
  })
  .meta({ id: 'CanonicalListResponse' });

export const canonicalMergeResponse = z
  .object({
    success: z.boolean(),
    canonical_id: z.number().int(),
    merged_record_ids: z.array(z.number().int()),
    undo_until: z
      .string()
      .describe('ISO 8601: until then POST .../unmerge restores the records (DEDUPE_MERGE_UNDO_DAYS after the merge)'),
  })
  .meta({ id: 'DedupeMergeResponse' });

export const canonicalUnmergeResponse = z
  .object({
    success: z.boolean(),
    canonical_id: z.number().int(),
    unmerged_record_ids: z.array(z.number().int()),
  })
  .meta({ id: 'DedupeUnmergeResponse' });
