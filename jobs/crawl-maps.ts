import { z } from 'zod';
import { parsePlaceRef } from '../lib/maps-place';
import { domainOf } from '../lib/normalize';
import { MAX_JOB_DEADLINE } from './limits';
import { isObj, list, ProjectionBuilder, str, type Obj, type Projection } from './projection';
import type { JobSpec } from './types';
import { pipelineEnabled, workflowOptions } from './workflow';

export const MAPS_PROVIDERS = ['google_places', 'osm'] as const;
export type MapsProvider = (typeof MAPS_PROVIDERS)[number];

const latitude = z.number().min(-90).max(90);
const longitude = z.number().min(-180).max(180);

/** The provider a url is for: an openstreetmap.org URL is OSM's, every other accepted form Google's; undefined without a (valid) url. */
export function urlProvider(url: string | undefined): MapsProvider | undefined {
  if (url === undefined) return undefined;
  const ref = parsePlaceRef(url);
  return ref.kind === 'invalid' ? undefined : ref.kind === 'osm' ? 'osm' : 'google_places';
}

/** crawlMaps payload (spec §4.1 rule 2; provider and bounds are ours). */
export const crawlMapsPayload = z
  .strictObject({
    // Read as the worker reads it, so that what it could not use is refused here rather than queued to fail.
    url: z
      .string()
      .trim()
      .min(1)
      .superRefine((v, ctx) => {
        const ref = parsePlaceRef(v);
        if (ref.kind === 'invalid')
          ctx.addIssue({ code: 'custom', message: `invalid maps URL or place id: ${ref.reason}` });
      })
      .optional()
      .describe(
        'Google place id (maps_place_id of a result), google.com/maps/place URL (or a Maps URL with query_place_id), ' +
          'Google Maps share link (maps.app.goo.gl/..., goo.gl/maps/...) or, for provider osm, an openstreetmap.org node/way/relation URL. ' +
          'Other URLs are refused, maps.google.com/?cid= links too: the Places API looks places up by place id only',
      ),
    search_query: z.string().trim().min(1).max(500).optional().describe('e.g. "bakery in Leeds"'),
    max_results: z.number().int().min(1).max(500).default(20),
    extract_reviews: z.boolean().default(false),
    dedupe_enabled: z.boolean().default(true),
    dedupe_unique_only: z.boolean().default(false),
    dedupe_fuzzy: z
      .boolean()
      .default(false)
      .describe(
        'with dedupe_enabled: also fuzzy matching (POST /api/v1/dedupe/check with fuzzy): a listing whose name is similar to a stored business of the same city, phone or website is a duplicate',
      ),
    language: z
      .string()
      .regex(/^[a-z]{2}(-[A-Z]{2})?$/)
      .optional()
      .describe('result language, e.g. en'),
    region: z
      .string()
      .regex(/^[A-Z]{2}$/)
      .optional()
      .describe('ISO 3166-1 alpha-2 region: biases the search and reads national phone numbers'),
    provider: z
      .enum(MAPS_PROVIDERS)
      .optional()
      .describe(
        'google_places (Places API, New) or osm (Nominatim). Unset: the worker picks google_places when GOOGLE_PLACES_API_KEY is configured, else osm',
      ),
    bounds: z
      .strictObject({ low: z.strictObject({ latitude, longitude }), high: z.strictObject({ latitude, longitude }) })
      .optional()
      .describe('search area (south-west low, north-east high corner) for tiled searches beyond one query'),
    workflow: workflowOptions
      .optional()
      .describe('enables the maps -> site -> verify chain: GET /api/v1/jobs/{job_id}/workflow-results'),
  })
  .refine((p) => p.url !== undefined || p.search_query !== undefined, {
    message: 'either url or search_query must be provided',
    path: [],
  })
  .superRefine((p, ctx) => {
    // A url is one provider's: a provider given that cannot read it is refused here, not at the worker.
    const named = urlProvider(p.url);
    if (p.provider === undefined || named === undefined || p.provider === named) return;
    ctx.addIssue({
      code: 'custom',
      path: ['url'],
      message:
        named === 'osm'
          ? 'an openstreetmap.org URL needs provider osm'
          : 'provider osm needs an openstreetmap.org node, way or relation URL',
    });
  })
  .meta({ anyOf: [{ required: ['url'] }, { required: ['search_query'] }] });
export type CrawlMapsPayload = z.infer<typeof crawlMapsPayload>;

const coordinates = z.object({ lat: z.number(), lng: z.number(), latitude: z.number(), longitude: z.number() });

/** One business of a crawlMaps result: every field of spec §2.2, under both names where the spec shows two. */
export const mapsBusiness = z
  .object({
    business_name: z.string(),
    name: z.string().describe('same as business_name'),
    address: z.string().nullable(),
    phone: z.string().nullable().describe('as the provider wrote it'),
    phone_e164: z.string().nullable(),
    phone_national: z.string().nullable(),
    phone_type: z
      .enum(['MOBILE', 'FIXED_LINE', 'FIXED_LINE_OR_MOBILE', 'VOIP', 'TOLL_FREE', 'PREMIUM_RATE', 'UNKNOWN'])
      .nullable(),
    phone_valid: z.boolean(),
    image_url: z
      .string()
      .nullable()
      .describe("first photo in the client's media bucket; the source URL if storing failed; null without photos"),
    website: z.string().nullable(),
    rating: z.number().nullable(),
    review_count: z.number().int().nullable(),
    reviews_count: z.number().int().nullable().describe('same as review_count'),
    hours: z.record(z.string(), z.string()).nullable().describe('lowercase day -> "09:00-17:00" ranges or "Closed"'),
    categories: z.array(z.string()),
    place_id: z.string(),
    maps_place_id: z.string().describe('same as place_id'),
    maps_url: z.string().nullable(),
    coordinates: coordinates.nullable(),
    photos: z.array(z.string()).describe('provider photo URLs'),
    price_level: z.enum(['$', '$$', '$$$', '$$$$']).optional().describe('absent when the provider has none'),
    popular_times: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('only when the provider has it (neither does)'),
    amenities: z.array(z.string()),
    accessibility: z.string().nullable(),
    business_status: z.string().nullable(),
    country_code: z.string().nullable(),
    reviews: z
      .array(
        z.object({
          author: z.string().nullable(),
          rating: z.number().nullable(),
          text: z.string().nullable(),
          published_at: z.string().nullable(),
        }),
      )
      .optional()
      .describe('with extract_reviews'),
    dedupe_unique: z.boolean().optional().describe('with dedupe_enabled: true = first time seen'),
  })
  .meta({ id: 'MapsBusiness' });
export type MapsBusiness = z.infer<typeof mapsBusiness>;

export const crawlMapsResult = z
  .object({
    businesses: z.array(mapsBusiness),
    results_count: z.number().int(),
    provider: z.enum(MAPS_PROVIDERS),
    query: z.string().describe('the search query, or the place URL / id'),
    tiles_searched: z.number().int().optional().describe('tiled searches only'),
  })
  .meta({ id: 'CrawlMapsResult', description: 'crawlMaps (spec §2.2)' });
export type CrawlMapsResult = z.infer<typeof crawlMapsResult>;

/** The OSM activity queues, as the workflow looks them up (RunJobInput.queues). */
export const MAPS_QUEUE_KEYS = { nominatim: 'nominatim', overpass: 'overpass' } as const;

/**
 * crawlMaps: business listings from Google Places (New) or OpenStreetMap (activities/maps/, steps in
 * workflows/maps.ts). Google runs as one activity on the job's queue; every Nominatim request is one
 * activity on the Nominatim queue, whose rate limit holds for all workers together.
 */
export const crawlMaps: JobSpec<typeof crawlMapsPayload> = {
  type: 'crawlMaps',
  summary: 'Business listings from a maps service, by place URL or search query',
  payload: crawlMapsPayload,
  result: crawlMapsResult,
  defaultPriority: 0,
  steps: 'crawlMapsSteps',
  pipeline: pipelineEnabled,
  queue: 'crawl-maps',
  /**
   * Nominatim's policy is an absolute maximum of 1 request per second (Overpass: the same, fair use). The queue's dispatch limit
   * keeps OSM requests from filling the workers' slots; the 1-per-second spacing itself is kept by
   * the activity with a Postgres advisory lock held 1.1 s from each request's start
   * (activities/pacing.ts), because Temporal's token bucket lets bursts through.
   */
  activityQueues: () => [
    { key: MAPS_QUEUE_KEYS.nominatim, queue: 'osm-nominatim', perSecond: 0.5 },
    { key: MAPS_QUEUE_KEYS.overpass, queue: 'osm-overpass', perSecond: 0.5 },
  ],
  limits: {
    activity: {
      ms: 8 * 60_000,
      why: 'spec §1.1: 20 results take 30-90 s; 500 results with photos need minutes, within the 10-minute job',
    },
    deadline: MAX_JOB_DEADLINE,
  },
  capacity: (config) => config.QUEUE_CAPACITY_CRAWL_MAPS,
  submitRoute: 'top-level',
  submitResponseSuccess: true,
  available: true,
  idapSource: 'crawl_maps',
  project: (result, job) => projectMaps(result, job),
};

/**
 * crawlMaps (§2.2): each business keyed by its place id, with its domain and phone, related. A site
 * later crawled for the same domain relates to the same domain resource.
 */
function projectMaps(r: Obj, job: { jobId: string }): Projection {
  const b = new ProjectionBuilder();
  for (const biz of list(r.businesses).filter(isObj)) {
    const placeId = str(biz.place_id);
    if (!placeId) continue;
    const website = str(biz.website);
    const domain = domainOf(website);
    const phone = biz.phone_valid === true ? str(biz.phone_e164) : null;
    const categories = list(biz.categories)
      .map(str)
      .filter((c): c is string => !!c);
    const business = b.add('businesses', {
      place_id: placeId,
      maps_place_id: placeId,
      name: str(biz.business_name),
      address: str(biz.address),
      website,
      domain,
      phone,
      category: categories[0] ?? null,
      categories,
      maps_rating: typeof biz.rating === 'number' ? biz.rating : null,
      rating: typeof biz.rating === 'number' ? biz.rating : null,
      review_count: typeof biz.review_count === 'number' ? biz.review_count : null,
      country: str(biz.country_code),
      coordinates: isObj(biz.coordinates) ? biz.coordinates : null,
      image_url: str(biz.image_url),
      maps_url: str(biz.maps_url),
      job_id: job.jobId,
      job_type: 'crawlMaps',
    });
    if (domain && website) b.relate(business, b.add('domains', { domain, website }));
    if (phone)
      b.relate(
        business,
        b.add('phones', {
          number: phone,
          type: str(biz.phone_type),
          national: str(biz.phone_national),
          raw: str(biz.phone),
        }),
      );
  }
  return b.build('crawl_maps');
}
