import { z } from 'zod';
import { httpUrl, socialKeys } from './fields';
import { SITE_STAGE, MAX_JOB_DEADLINE } from './limits';
import type { JobSpec } from './types';

/** crawlSite payload (spec §4.1 rule 3; the keys beyond url, max_pages, extract_team and compendium are ours). */
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
export type CrawlSitePayload = z.infer<typeof crawlSitePayload>;

export const crawlSiteResult = z.object({
  url: z.string(),
  final_url: z.string().describe('the start page after redirects'),
  pages_crawled: z.number().int(),
  emails: z.array(z.string()).describe('lower-cased, de-duplicated'),
  phones: z.array(z.object({ raw: z.string(), e164: z.string().nullable(), national: z.string().nullable(), type: z.string().nullable(), valid: z.boolean() })),
  ...socialKeys,
  social_media: z.object(socialKeys).describe('the same profile links as the top-level keys'),
  company_info: z.object({
    name: z.string().nullable(),
    description: z.string().nullable(),
    industry: z.string().nullable(),
    key_services: z.array(z.string()).nullable(),
    target_audience: z.string().nullable(),
    address: z.string().nullable(),
    logo_url: z.string().nullable(),
  }),
  team_members: z.array(z.object({ name: z.string(), position: z.string().nullable(), email: z.string().nullable(), proflink_url: z.string().nullable(), photo_url: z.string().nullable() })),
  compendium: z.object({
    available: z.boolean(),
    chars: z.number().int(),
    cleanup_level: z.enum(['raw', 'fit']),
    storage_location: z.string().describe('s3://<bucket>/<key> in the client\'s media bucket'),
    download_url: z.string(),
    filename: z.string(),
    size_bytes: z.number().int(),
    content_hash: z.string().describe('sha256 of the Markdown'),
    estimated_tokens: z.number().int().describe('ceil(chars / 4)'),
  }).optional().describe('present when compendium.enabled'),
  pages: z.array(z.object({ url: z.string(), final_url: z.string(), status: z.number().int(), title: z.string().nullable(), redirect_chain: z.array(z.string()).optional() })),
  errors: z.array(z.object({ url: z.string().nullable(), error: z.string() })).describe('non-fatal, per page'),
}).meta({ id: 'CrawlSiteResult', description: 'crawlSite (spec §2.3)' });
export type CrawlSiteResult = z.infer<typeof crawlSiteResult>;

/** crawlSite: a company website crawled for leads (activities/site/). */
export const crawlSite: JobSpec<typeof crawlSitePayload> = {
  type: 'crawlSite',
  summary: 'Crawl a website and extract leads: emails, phones, social links, company info, team, optional Markdown compendium',
  payload: crawlSitePayload,
  result: crawlSiteResult,
  defaultPriority: 5,
  queue: 'crawl-site',
  limits: {
    activity: SITE_STAGE,
    // One activity of up to 5 minutes; a retry after a lost worker needs room, the spec caps the whole at 10.
    deadline: MAX_JOB_DEADLINE,
  },
  capacity: (config) => config.QUEUE_CAPACITY_CRAWL_SITE,
  submitRoute: 'typed',
  available: true,
};
