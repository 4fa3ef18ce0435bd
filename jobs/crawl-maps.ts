import { z } from 'zod';
import { anyResult } from './fields';
import { MAX_JOB_DEADLINE } from './limits';
import type { JobSpec } from './types';

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

/** crawlMaps payload (spec §4.1 rule 2). */
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

/** crawlMaps: business listings from a maps provider. Worker side not built yet (501). */
export const crawlMaps: JobSpec<typeof crawlMapsPayload> = {
  type: 'crawlMaps',
  summary: 'Business listings from a maps service, by place URL or search query',
  payload: crawlMapsPayload,
  result: anyResult,
  defaultPriority: 0,
  queue: 'crawl-maps',
  limits: {
    activity: { ms: 8 * 60_000, why: 'spec §1.1: 20 results take 30-90 s; 500 results with photos need minutes, within the 10-minute job' },
    deadline: MAX_JOB_DEADLINE,
  },
  capacity: (config) => config.QUEUE_CAPACITY_CRAWL_MAPS,
  submitRoute: 'top-level',
  submitResponseSuccess: true,
  available: false,
  idapSource: 'crawl_maps',
};
