import { z } from 'zod';
import { CATALOG, JOB_STATUSES } from '../../jobs';
import {
  CAMPAIGN_STATUSES,
  LOCATION_STATUSES,
  WORKFLOW_STATUSES,
  workflowOptions,
  workflowTotals,
} from '../../jobs/workflow';
import { uuidParam } from './params';

const isoTime = z.string().describe('ISO 8601');

// ---- requests -------------------------------------------------------------------------------

const cityRef = z
  .strictObject({
    city: z.string().trim().min(1).max(200).describe('city name, case- and accent-insensitive ("zurich" is Zürich)'),
    country: z
      .string()
      .trim()
      .min(2)
      .max(100)
      .describe('ISO 3166-1 alpha-2 code (GB) or English country name (United Kingdom)'),
  })
  .describe('the most populous city of that name in that country');

export const locationRef = z.union([
  z.number().int().min(1).max(2_147_483_647).describe('a city id from GET /api/v1/locations'),
  cityRef,
]);

export const campaignCreateBody = z
  .strictObject({
    name: z.string().trim().min(1).max(200),
    search_terms: z
      .array(z.string().trim().min(1).max(200))
      .min(1)
      .max(20)
      .describe('1-20 terms, e.g. ["bakery", "patisserie"]; repeated terms count once'),
    locations: z
      .array(locationRef)
      .min(1)
      .max(1000)
      .describe('1-1000 cities, each an id or {city, country}; one given twice counts once'),
    max_results_per_location: z
      .number()
      .int()
      .min(1)
      .max(500)
      .default(20)
      .describe("each location job's crawlMaps max_results"),
    dedupe_fuzzy: z
      .boolean()
      .default(false)
      .describe(
        "each location job's crawlMaps dedupe_fuzzy: the same business found again across the campaign's cities under a similar name is a duplicate",
      ),
    workflow: workflowOptions
      .optional()
      .describe('the maps -> site -> verify chain for every location job; absent: maps only'),
    priority: z
      .number()
      .int()
      .min(0)
      .max(10)
      .default(CATALOG.crawlMaps.defaultPriority)
      .describe('0-10, of every location job'),
    concurrency: z.number().int().min(1).max(50).default(5).describe('location jobs in flight at most'),
    auto_submit: z
      .boolean()
      .default(true)
      .describe('false: locations are submitted only when released by POST /api/v1/campaigns/{id}/next'),
  })
  .meta({ id: 'CampaignCreate' });
export type CampaignCreateBody = z.output<typeof campaignCreateBody>;

export const campaignIdParams = z.strictObject({ id: uuidParam('campaign id (UUID)') });
export const campaignJobsParams = z.strictObject({ campaign_id: uuidParam('campaign id (UUID)') });

export const campaignListQuery = z.strictObject({
  page: z.coerce.number().int().min(1).max(100_000).default(1),
  page_size: z.coerce.number().int().min(1).max(100).default(20),
});

export const campaignNextBody = z.strictObject({
  count: z.number().int().min(1).max(1000).describe('pending locations to release, in sequence order'),
});

const queryBool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

export const campaignJobsQuery = z.strictObject({
  status: z.enum(LOCATION_STATUSES).optional().describe('campaign location status'),
  job_status: z.enum(JOB_STATUSES).optional().describe("the location job's queue status"),
  page: z.coerce.number().int().min(1).max(100_000).default(1),
  page_size: z.coerce.number().int().min(1).max(100).default(50),
  include_summary: queryBool.default(true).describe('adds summary counts by location status'),
});

// ---- responses ------------------------------------------------------------------------------

const locationSummary = z
  .object(
    Object.fromEntries(LOCATION_STATUSES.map((s) => [s, z.number().int()])) as Record<
      (typeof LOCATION_STATUSES)[number],
      z.ZodNumber
    >,
  )
  .meta({ id: 'CampaignLocationSummary', description: 'locations by status' });

export const campaignCreatedResponse = z
  .object({
    campaign_id: z.string().uuid(),
    status: z.enum(CAMPAIGN_STATUSES),
    locations_total: z.number().int(),
    created_at: isoTime,
  })
  .meta({ id: 'CampaignCreated' });

export const campaignRecord = z
  .object({
    campaign_id: z.string().uuid(),
    name: z.string(),
    status: z.enum(CAMPAIGN_STATUSES),
    search_terms: z.array(z.string()),
    locations_total: z.number().int().describe('(search term, city) pairs'),
    max_results_per_location: z.number().int(),
    dedupe_fuzzy: z.boolean(),
    workflow: workflowOptions.nullable(),
    priority: z.number().int(),
    concurrency: z.number().int(),
    auto_submit: z.boolean(),
    created_at: isoTime,
    completed_at: isoTime.nullable(),
    summary: locationSummary,
    progress: z.object({
      done: z.number().int().describe('completed + failed + skipped'),
      total: z.number().int(),
      percent: z.number().describe('0-100, one decimal'),
    }),
    totals: z.object({
      businesses: z.number().int().describe('businesses found by the completed locations (sum of results_count)'),
      emails_found: z.number().int().describe('e-mails the pipeline found on their sites'),
      valid_emails: z.number().int().describe('e-mails the pipeline verified as valid'),
    }),
    error_message: z.string().nullable(),
  })
  .meta({ id: 'Campaign' });

export const campaignListResponse = z
  .object({
    total: z.number().int(),
    page: z.number().int(),
    page_size: z.number().int(),
    campaigns: z.array(campaignRecord).describe('newest first'),
  })
  .meta({ id: 'CampaignList' });

export const campaignNextResponse = z
  .object({
    success: z.boolean(),
    campaign_id: z.string().uuid(),
    released: z.number().int().describe('locations released now (fewer than count when fewer were pending)'),
    pending_remaining: z.number().int().describe('pending locations not released yet'),
  })
  .meta({ id: 'CampaignNext' });

export const campaignJobItem = z
  .object({
    job_id: z.string().nullable().describe('null before submission'),
    location_id: z.number().int(),
    search_string: z.string(),
    display_name: z.string(),
    status: z.enum(LOCATION_STATUSES),
    job_status: z.enum(JOB_STATUSES).nullable(),
    results_count: z.number().int().nullable(),
    error_message: z.string().nullable(),
    submitted_at: isoTime.nullable(),
    completed_at: isoTime.nullable(),
    sequence_order: z.number().int(),
  })
  .meta({ id: 'CampaignJobItem', description: 'spec §2.8' });

export const campaignJobsResponse = z
  .object({
    campaign_id: z.string(),
    total: z.number().int(),
    page: z.number().int(),
    page_size: z.number().int(),
    jobs: z.array(campaignJobItem).describe('in sequence order'),
    summary: locationSummary.optional().describe('with include_summary (default true)'),
  })
  .meta({ id: 'CampaignJobs', description: 'spec §4.3' });

export const campaignWorkflowResults = z
  .object({
    success: z.boolean().describe('true once the campaign has completed'),
    campaign_id: z.string(),
    status: z.enum(CAMPAIGN_STATUSES),
    locations: z.object({ summary: locationSummary }),
    ...workflowTotals,
    spidersite_timed_out: z.boolean().describe('some job reached its site deadline'),
    spiderverify_timed_out: z.boolean().describe('some job reached its verify deadline'),
    jobs: z
      .array(
        z.object({
          job_id: z.string(),
          location_id: z.number().int(),
          display_name: z.string(),
          status: z
            .enum(WORKFLOW_STATUSES)
            .describe("the job's workflow status (spec §3); details at GET /api/v1/jobs/{job_id}/workflow-results"),
          businesses_total: z.number().int(),
          total_valid_emails: z.number().int(),
        }),
      )
      .describe('every submitted location, in sequence order'),
  })
  .meta({ id: 'CampaignWorkflowResults', description: 'campaign-wide workflow results: sums over every location job' });
