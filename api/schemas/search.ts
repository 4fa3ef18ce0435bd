import { z } from 'zod';
import { JOB_TYPES } from '../../jobs';
import { countryCode } from '../../jobs/fields';
import { decodeLeadCursor, LEAD_SORTS, MAX_RESULT_WINDOW, type LeadCursor } from '../../search/leads';

const queryBool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

const DEEP_PAGE = `page x per_page may be at most ${MAX_RESULT_WINDOW}; to go further, follow next_cursor with cursor=`;

const leadCursor = z
  .string()
  .max(4096)
  .transform((text, ctx): LeadCursor => {
    const cursor = decodeLeadCursor(text);
    if (cursor) return cursor;
    ctx.addIssue({ code: 'custom', message: 'invalid cursor: pass next_cursor from the previous response as it is' });
    return z.NEVER;
  });

export const leadSearchQuery = z
  .strictObject({
    query: z
      .string()
      .trim()
      .max(500, 'query may be at most 500 characters')
      .optional()
      .describe('full text over company name, description and the site compendium; every word must appear'),
    email_verified: queryBool.optional().describe('only leads with (true) or without (false) a verified e-mail'),
    min_icp_score: z.coerce.number().int().min(0).max(100).optional(),
    industry: z.string().trim().min(1).max(200).optional().describe('category, case-insensitive exact match'),
    page: z.coerce
      .number()
      .int()
      .min(1)
      .optional()
      .describe(`1 by default; page x per_page at most ${MAX_RESULT_WINDOW} (deeper: cursor); not with cursor`),
    per_page: z.coerce.number().int().min(1).max(100).default(20),
    sort_by: z
      .enum(LEAD_SORTS)
      .optional()
      .describe(
        "_score (relevance, then newest; the default), or a field: highest first (name: A-Z); with a cursor, the cursor's sort unless given",
      ),
    cursor: leadCursor
      .optional()
      .describe('opaque, from next_cursor: the page after the one it came from, at any depth (same query and filters)'),
  })
  .superRefine((q, ctx) => {
    if (q.cursor && q.page !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['page'],
        message: 'page and cursor exclude each other: a cursor already says where the next page starts',
      });
    else if ((q.page ?? 1) * q.per_page > MAX_RESULT_WINDOW)
      ctx.addIssue({
        code: 'too_big',
        origin: 'number',
        maximum: Math.floor(MAX_RESULT_WINDOW / q.per_page),
        inclusive: true,
        input: q.page,
        path: ['page'],
        message: DEEP_PAGE,
      });
    if (q.cursor && q.sort_by !== undefined && q.sort_by !== q.cursor.sortBy)
      ctx.addIssue({
        code: 'custom',
        path: ['cursor'],
        message: `the cursor belongs to sort_by=${q.cursor.sortBy}; pass that sort_by or none`,
      });
  })
  .transform(({ cursor, ...q }) => ({
    ...q,
    page: q.page ?? 1,
    sort_by: q.sort_by ?? cursor?.sortBy ?? '_score',
    after: cursor?.after,
  }));

const bucket = z.object({ name: z.string(), count: z.number().int() });

export const leadHit = z
  .object({
    doc_id: z.string().describe('the business resource id'),
    idap_ref: z.string(),
    score: z.number(),
    name: z.string().nullable(),
    description: z.string().nullable(),
    category: z.string().nullable(),
    website: z.string().nullable(),
    email: z.string().nullable(),
    phone: z.string().nullable(),
    country: z.string().nullable(),
    rating: z.number().nullable(),
    reviews: z.number().int().nullable(),
    email_verified: z.boolean(),
    icp_score: z.number().int().min(0).max(100),
    job_id: z.string().nullable(),
    job_type: z.string().nullable(),
    indexed_at: z.string(),
  })
  .meta({ id: 'LeadHit' });

export const leadSearchResponse = z
  .object({
    success: z.boolean(),
    total: z.number().int(),
    hits: z.array(leadHit),
    facets: z.object({ categories: z.array(bucket) }),
    page: z.number().int().nullable().describe('null when the page was reached with a cursor'),
    per_page: z.number().int(),
    next_cursor: z
      .string()
      .nullable()
      .describe('pass as cursor= for the page after this one (also beyond the page limit); null after the last hit'),
  })
  .meta({ id: 'LeadSearchResponse' });

export const leadAggregationsQuery = z.strictObject({
  job_type: z.enum(JOB_TYPES).optional(),
});

export const leadAggregationsResponse = z
  .object({
    success: z.boolean(),
    total_documents: z.number().int(),
    by_job_type: z.array(bucket),
    by_category: z.array(bucket),
    by_country: z.array(bucket),
    avg_rating: z.number().nullable(),
    total_reviews: z.number().int(),
    verified_emails_count: z.number().int(),
    indexed_over_time: z.array(z.object({ date: z.string(), count: z.number().int() })),
    error: z.string().nullable(),
  })
  .meta({ id: 'LeadAggregationsResponse' });

export const icpBody = z.strictObject({
  industries: z
    .array(z.string().trim().min(1).max(100))
    .max(50)
    .default([])
    .describe("matched against a lead's category and description"),
  countries: z.array(countryCode('countries are ISO 3166-1 alpha-2 codes')).max(250).default([]),
});

export const icpResponse = z
  .object({
    industries: z.array(z.string()),
    countries: z.array(z.string()),
    updated_at: z.string().nullable(),
    requeued: z.number().int().optional().describe('leads queued for re-scoring (PUT only)'),
  })
  .meta({ id: 'IcpProfile' });
