/**
 * The maps -> site -> verify pipeline ("workflow" in the spec, §2.8, §3, §4.2, §4.3): the options a
 * crawlMaps job or a campaign takes, the entry of one business and the results response. Plain
 * data and zod only (workflow-safe types): the API validates and documents with these, the pipeline
 * activities store rows of this shape, the exports read them.
 */
import { z } from 'zod';

/** `workflow` of a crawlMaps payload or a campaign: enables the chain and sets its stages' options. */
export const workflowOptions = z
  .strictObject({
    enabled: z.boolean().default(true).describe('false: maps only (the same as leaving workflow out)'),
    site: z
      .strictObject({
        max_pages: z.number().int().min(1).max(100).default(10).describe('pages crawled per business site'),
        extract_team: z.boolean().default(true),
        compendium: z
          .strictObject({ enabled: z.boolean().default(false), cleanup_level: z.enum(['raw', 'fit']).default('fit') })
          .default({ enabled: false, cleanup_level: 'fit' }),
      })
      .default({ max_pages: 10, extract_team: true, compendium: { enabled: false, cleanup_level: 'fit' } }),
    verify: z
      .strictObject({
        enabled: z.boolean().default(true).describe('false: the found e-mails are not verified'),
        smtp_check: z.boolean().default(true).describe('probe each mailbox over SMTP (as crawlVerify smtp_check)'),
      })
      .default({ enabled: true, smtp_check: true }),
  })
  .meta({
    id: 'WorkflowOptions',
    description:
      'The maps -> site -> verify chain: each business website is crawled (5 minutes per business), its e-mails verified (2 minutes per business), 10 minutes overall',
  });
export type WorkflowOptions = z.infer<typeof workflowOptions>;

/** True when a crawlMaps payload (as stored, defaults applied) asks for the pipeline. */
export function pipelineEnabled(payload: Record<string, unknown>): boolean {
  const w = payload.workflow;
  return typeof w === 'object' && w !== null && (w as { enabled?: unknown }).enabled !== false;
}

/** Spec §3 "Workflow result statuses". */
export const WORKFLOW_STATUSES = [
  'queued',
  'processing',
  'completed',
  'completed_with_errors',
  'failed',
  'partial',
] as const;
export type WorkflowStatus = (typeof WORKFLOW_STATUSES)[number];

/** A business's site or verify stage. `skipped`: not run (filtered, no website, no e-mails, verify disabled). */
export const STAGE_STATUSES = ['pending', 'processing', 'completed', 'failed', 'timed_out', 'skipped'] as const;
export type StageStatus = (typeof STAGE_STATUSES)[number];

/** Spec §2.8 campaign location statuses. */
/** A campaign ends at this age whatever is left (runCampaign's `endBy`): its jobs in flight cancelled, its pending locations skipped. */
export const CAMPAIGN_DAYS = 30;

export const LOCATION_STATUSES = ['pending', 'submitted', 'completed', 'failed', 'skipped'] as const;
export type LocationStatus = (typeof LOCATION_STATUSES)[number];

export const CAMPAIGN_STATUSES = ['running', 'completed', 'cancelled', 'failed'] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

/** One verified address of a business (spec §2.8 emails_verified). */
export const verifiedEmail = z.object({
  email: z.string(),
  status: z.enum(['valid', 'risky', 'invalid', 'unknown']),
  score: z.number().int(),
  is_deliverable: z.boolean(),
  is_free_email: z.boolean(),
  is_disposable: z.boolean(),
  is_role_account: z.boolean(),
});
export type VerifiedEmail = z.infer<typeof verifiedEmail>;

const socialMedia = z
  .record(z.string(), z.string().nullable())
  .describe('platform -> profile URL (as crawlSite social_media)');

/** Spec §2.8 workflow business entry. */
export const workflowBusinessEntry = z
  .object({
    business_name: z.string().nullable(),
    business_place_id: z.string(),
    business_address: z.string().nullable(),
    business_phone: z.string().nullable(),
    business_rating: z.number().nullable(),
    business_website: z.string().nullable(),
    domain_filtered: z
      .boolean()
      .describe('true: the website is a social network, review site, directory or marketplace; not crawled'),
    filter_reason: z.string().nullable().describe('why it was filtered, e.g. "social_media: facebook.com"'),
    spidersite_status: z.enum(STAGE_STATUSES),
    pages_crawled: z.number().int(),
    emails_found: z.array(z.string()),
    phones_found: z.array(z.string()),
    social_media: socialMedia,
    company_info: z
      .record(z.string(), z.unknown())
      .nullable()
      .describe('industry, key_services, target_audience, ... (as crawlSite company_info)'),
    team_members: z.array(z.record(z.string(), z.unknown())),
    compendium: z
      .record(z.string(), z.unknown())
      .nullable()
      .describe('as crawlSite compendium, when the site options enable it'),
    spidersite_error: z.string().nullable(),
    spiderverify_status: z.enum(STAGE_STATUSES),
    emails_verified: z.array(verifiedEmail),
    valid_emails_count: z.number().int(),
    spiderverify_error: z.string().nullable(),
  })
  .meta({ id: 'WorkflowBusinessEntry', description: 'spec §2.8' });
export type WorkflowBusinessEntry = z.infer<typeof workflowBusinessEntry>;

/** The counts of spec §4.3, of one job's businesses or (summed) of a campaign's. */
export const workflowTotals = {
  businesses_total: z.number().int(),
  businesses_with_domains: z.number().int().describe('businesses with a website (filtered ones included)'),
  businesses_filtered: z
    .number()
    .int()
    .describe('websites on social networks, review sites, directories or marketplaces: not crawled'),
  spidersite_completed: z.number().int(),
  spidersite_failed: z.number().int().describe('site stages that failed or timed out'),
  spiderverify_completed: z.number().int(),
  spiderverify_failed: z.number().int().describe('verify stages that failed or timed out'),
  total_emails_found: z.number().int(),
  total_valid_emails: z.number().int(),
};

/** Spec §4.3 (also GET /api/v1/jobs/{job_id}/workflow-results, where campaign_id is null). */
export const workflowResults = z
  .object({
    success: z.boolean(),
    has_results: z.boolean().describe('businesses_total > 0'),
    job_id: z.string(),
    campaign_id: z.string().nullable(),
    status: z.enum(WORKFLOW_STATUSES),
    progress: z
      .object({
        stage: z.enum(['maps', 'site', 'verify']),
        businesses_total: z.number().int(),
        spidersite_done: z.number().int(),
        spiderverify_done: z.number().int(),
        percent: z.number().describe('0-100'),
      })
      .nullable()
      .describe('while processing; null otherwise'),
    ...workflowTotals,
    businesses: z.array(workflowBusinessEntry),
    processing_time_seconds: z.number().nullable(),
    spidersite_timed_out: z.boolean(),
    spiderverify_timed_out: z.boolean(),
    error_message: z.string().nullable(),
  })
  .meta({ id: 'WorkflowResults', description: 'spec §4.3 workflow results of one crawlMaps job' });
export type WorkflowResults = z.infer<typeof workflowResults>;
