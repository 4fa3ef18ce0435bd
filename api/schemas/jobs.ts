import { z } from 'zod';
import { JOB_STATUSES, JOB_TYPES, type JobType } from '../../lib/job-types';
import { jobResultData } from './results';

// ---- payloads (spec §4.1) ------------------------------------------------------------------

const httpUrl = (what: string) =>
  z.string().trim().min(1).refine((v) => {
    try {
      const u = new URL(v);
      return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname.length > 0;
    } catch {
      return false;
    }
  }, `${what} must be a valid http(s) URL`);

const PLACE_ID = /^[A-Za-z0-9_-]{16,}$/;
const isMapsUrlOrPlaceId = (v: string) => {
  if (PLACE_ID.test(v)) return true;
  try {
    const u = new URL(v);
    return (u.protocol === 'https:' || u.protocol === 'http:') && u.hostname.length > 0;
  } catch {
    return false;
  }
};

export const crawlMapsPayload = z
  .strictObject({
    url: z.string().trim().min(1).refine(isMapsUrlOrPlaceId, 'invalid maps URL or place id: expected a place URL, a short share link or a place id').optional()
      .describe('Place URL, short share link (maps.app.goo.gl/...) or place id'),
    search_query: z.string().trim().min(1).max(500).optional().describe('e.g. "bakery in Leeds"'),
    max_results: z.number().int().min(1).max(500).default(20),
    extract_reviews: z.boolean().default(false),
    dedupe_enabled: z.boolean().default(true),
    dedupe_unique_only: z.boolean().default(false),
    language: z.string().regex(/^[a-z]{2}(-[A-Z]{2})?$/).optional().describe('result language, e.g. en'),
    region: z.string().regex(/^[A-Z]{2}$/).optional().describe('ISO 3166-1 alpha-2 region bias, e.g. GB'),
    workflow: z.record(z.string(), z.unknown()).optional().describe('enables the maps -> site -> verify chain (campaigns)'),
  })
  .refine((p) => p.url !== undefined || p.search_query !== undefined, { message: 'either url or search_query must be provided', path: [] });

export const crawlSitePayload = z.strictObject({
  url: httpUrl('url'),
  max_pages: z.number().int().min(1).max(100).default(10),
  extract_team: z.boolean().default(true),
  compendium: z
    .strictObject({ enabled: z.boolean().default(false), cleanup_level: z.enum(['raw', 'fit']).default('fit') })
    .default({ enabled: false, cleanup_level: 'fit' }),
  include_paths: z.array(z.string().min(1).max(200)).max(50).default([]).describe('globs; only matching paths are crawled'),
  exclude_paths: z.array(z.string().min(1).max(200)).max(50).default([]).describe('globs; matching paths are skipped'),
  respect_robots: z.boolean().default(true),
  render_js: z.boolean().default(false).describe('render pages in Chromium (slower; for script-built sites)'),
  timeout_seconds: z.number().int().min(5).max(300).default(300).describe('whole-crawl limit (the site stage allows 5 minutes)'),
});

export const crawlVerifyPayload = z.strictObject({
  emails: z.array(z.string().trim().min(3).max(320)).min(1).max(1000),
  smtp_check: z.boolean().default(true).describe('probe the mailbox over SMTP (port 25); off = syntax, MX and lists only'),
});

export const crawlPeoplePayload = z
  .strictObject({
    url: httpUrl('url').optional().describe('company website to look for people on'),
    company_name: z.string().trim().min(1).max(200).optional(),
    company_domain: z.string().trim().min(3).max(253).optional(),
    max_results: z.number().int().min(1).max(200).default(50),
  })
  .refine((p) => p.url ?? p.company_domain ?? p.company_name, { message: 'one of url, company_domain or company_name must be provided', path: [] });

const COUNTRY_REGISTRIES = ['US', 'GB'] as const;
export const crawlCompanyDataPayload = z
  .strictObject({
    mode: z.enum(['search', 'lookup', 'vat']).default('search'),
    name: z.string().trim().min(1).max(200).optional(),
    country: z.string().trim().toUpperCase().pipe(z.enum(COUNTRY_REGISTRIES, { message: 'country must be US or GB' })).optional(),
    identifier: z.string().trim().min(1).max(20).optional(),
    vat_number: z.string().trim().transform((v) => v.replace(/[\s.-]/g, '').toUpperCase())
      .pipe(z.string().regex(/^[A-Z]{2}[0-9A-Z+*]{2,13}$/, 'vat_number must be an EU VAT number with its country prefix, e.g. DE282741168'))
      .optional(),
    limit: z.number().int().min(1).max(100).default(10),
    test: z.boolean().default(false).describe('routes the job to the test queue'),
  })
  .superRefine((p, ctx) => {
    const need = (field: 'name' | 'country' | 'identifier' | 'vat_number', why: string) => {
      if (p[field] === undefined) ctx.addIssue({ code: 'custom', path: [field], message: `${field} is required ${why}` });
    };
    if (p.mode === 'search') { need('name', 'for mode search'); need('country', 'for mode search'); }
    if (p.mode === 'lookup') {
      need('identifier', 'for mode lookup'); need('country', 'for mode lookup');
      if (p.identifier !== undefined && p.country === 'US' && !/^\d{1,10}$/.test(p.identifier)) {
        ctx.addIssue({ code: 'custom', path: ['identifier'], message: 'identifier must be a CIK number (up to 10 digits) for US' });
      }
      if (p.identifier !== undefined && p.country === 'GB' && !/^[A-Z0-9]{8}$/i.test(p.identifier)) {
        ctx.addIssue({ code: 'custom', path: ['identifier'], message: 'identifier must be an 8-character company number for GB' });
      }
    }
    if (p.mode === 'vat') need('vat_number', 'for mode vat');
  });

export const crawlLandingPayload = z.strictObject({
  url: httpUrl('url'),
  ad_id: z.string().max(200).optional(),
  test: z.boolean().default(false),
  options: z
    .strictObject({
      capture_screenshot: z.boolean().default(true),
      capture_full_page: z.boolean().default(true),
      capture_html_bundle: z.boolean().default(true),
      extract_content: z.boolean().default(false),
      dismiss_popups: z.boolean().default(true),
      scroll_for_lazy_load: z.boolean().default(true),
      viewport: z.strictObject({ width: z.number().int().min(320).max(3840), height: z.number().int().min(320).max(2160) }).default({ width: 1366, height: 768 }),
      timeout_seconds: z.number().int().min(3).max(90).default(45),
      max_redirects: z.number().int().min(0).max(20).default(10),
    })
    .prefault({}),
});

export const crawlPublicSocialPayload = z
  .strictObject({
    username: z.string().trim().regex(/^@?[A-Za-z0-9._]{1,30}$/, 'username may hold letters, digits, . and _ (at most 30)').optional(),
    profile_url: httpUrl('profile_url').optional(),
    platform: z.enum(['instagram']).default('instagram'),
  })
  .refine((p) => p.username !== undefined || p.profile_url !== undefined, { message: 'either username or profile URL must be provided', path: [] });

export const PAYLOAD_SCHEMAS: Record<JobType, z.ZodType> = {
  crawlMaps: crawlMapsPayload,
  crawlSite: crawlSitePayload,
  crawlVerify: crawlVerifyPayload,
  crawlPeople: crawlPeoplePayload,
  crawlCompanyData: crawlCompanyDataPayload,
  crawlLanding: crawlLandingPayload,
  crawlPublicSocial: crawlPublicSocialPayload,
};

/** Spec §4.1: crawlMaps 0; crawlCompanyData and crawlPublicSocial 5; the others (not given) 5. */
export const DEFAULT_PRIORITY: Record<JobType, number> = {
  crawlMaps: 0, crawlSite: 5, crawlVerify: 5, crawlPeople: 5, crawlCompanyData: 5, crawlLanding: 5, crawlPublicSocial: 5,
};

// ---- request bodies -------------------------------------------------------------------------

export const priority = z.number().int().min(0).max(10).describe('0-10; higher runs first');

export const genericSubmitBody = z.strictObject({
  type: z.enum(JOB_TYPES),
  payload: z.record(z.string(), z.unknown()).nullish().describe('validated per type'),
  priority: priority.nullish(),
});

export const typedSubmitBody = z.strictObject({
  payload: z.record(z.string(), z.unknown()).describe('validated per type'),
  priority: priority.nullish(),
});

/** crawlMaps: the payload keys sit at the top level of the body (the spec's examples), with priority. */
export const crawlMapsSubmitBody = z.record(z.string(), z.unknown()).describe('crawlMaps payload keys at the top level, plus priority (0-10, default 0)');

// ---- responses (spec §2.1) ------------------------------------------------------------------

const isoTime = z.string().describe('ISO 8601');

export const jobSubmitResponse = z.object({
  job_id: z.string().uuid(),
  type: z.enum(JOB_TYPES),
  status: z.enum(JOB_STATUSES),
  created_at: isoTime,
  from_cache: z.boolean(),
  message: z.string(),
  success: z.boolean().optional().describe('present for crawlMaps submissions'),
}).meta({ id: 'JobSubmitResponse' });

export const jobStatusResponse = z.object({
  job_id: z.string().uuid(),
  type: z.enum(JOB_TYPES),
  status: z.enum(JOB_STATUSES),
  priority: z.number().int(),
  created_at: isoTime,
  started_at: isoTime.nullable(),
  completed_at: isoTime.nullable(),
  processing_time_seconds: z.number().nullable(),
  worker_id: z.string().nullable(),
  results_count: z.number().int().nullable(),
  error_message: z.string().nullable(),
  campaign_id: z.string().nullable(),
  message: z.string(),
}).meta({ id: 'JobStatusResponse' });

export const unifiedJobResponse = z.object({
  success: z.boolean(),
  job_id: z.string().uuid(),
  type: z.enum(JOB_TYPES),
  status: z.enum(JOB_STATUSES),
  processing_time_seconds: z.number().nullable(),
  worker_id: z.string().nullable(),
  completed_at: isoTime.nullable(),
  data: jobResultData,
  error_message: z.string().nullable(),
  message: z.string().optional().describe('present while queued/processing and for cancelled jobs'),
}).meta({ id: 'UnifiedJobResponse' });

export const jobListItem = jobStatusResponse.omit({ message: true }).meta({ id: 'JobListItem' });

export const jobListQuery = z.object({
  status_filter: z.enum(JOB_STATUSES).optional(),
  type_filter: z.enum(JOB_TYPES).optional(),
  page: z.coerce.number().int().min(1).default(1),
  page_size: z.coerce.number().int().min(1).max(100).default(50),
});

export const jobListResponse = z.object({
  total: z.number().int(),
  page: z.number().int(),
  page_size: z.number().int(),
  jobs: z.array(jobListItem),
}).meta({ id: 'JobListResponse' });

export const jobIdParams = z.object({ job_id: z.string().describe('job id (UUID)') });

export const cancelResponse = z.object({
  success: z.boolean(),
  job_id: z.string().uuid(),
  status: z.literal('cancelled'),
  message: z.string(),
}).meta({ id: 'JobCancelResponse' });
