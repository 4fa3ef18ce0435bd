import { z } from 'zod';

// Result `data` of each implemented job type, for the OpenAPI document (the worker writes them;
// the API returns them as stored). Spec §2.4 for crawlCompanyData.

const isoTime = z.string().describe('ISO 8601 timestamp');

export const companyRecordSchema = z.object({
  name: z.string().describe('official name'),
  source: z.enum(['us_registry', 'uk_registry']),
  source_id: z.string().describe('registry id: CIK (US) or company number (GB)'),
  country_code: z.string().describe('ISO 3166-1 alpha-2'),
  status: z.enum(['active', 'dissolved', 'liquidation']),
  legal_form: z.string().nullable().describe('e.g. plc, ltd, Inc'),
  registration_number: z.string(),
  incorporation_date: z.string().nullable(),
  address: z.object({
    line_1: z.string().nullable(),
    line_2: z.string().nullable().optional(),
    city: z.string().nullable().optional(),
    region: z.string().nullable().optional(),
    postal_code: z.string().nullable().optional(),
    country: z.string().nullable(),
  }).describe('search results carry only line_1 and country; lookup the parsed address'),
  industry: z.object({ sic_codes: z.array(z.string()), nace_codes: z.array(z.string()), description: z.string().nullable() }).nullable(),
  officers: z.array(z.object({
    name: z.string(),
    role: z.string().nullable(),
    appointed_on: z.string().nullable(),
    resigned_on: z.string().nullable(),
    nationality: z.string().nullable(),
    occupation: z.string().nullable(),
    country_of_residence: z.string().nullable(),
  })).describe('directors and officers (UK lookups only)'),
  financials: z.record(z.string(), z.unknown()).nullable(),
  vat_number: z.string().nullable(),
  tax_id: z.string().nullable().describe('EIN (US)'),
  lei: z.string().nullable(),
  dissolution_date: z.string().nullable(),
  metadata: z.object({
    cached: z.boolean(),
    retrieved_at: isoTime.describe('when the registry answered'),
    data_freshness: z.enum(['live', 'cached']),
    confidence_score: z.number().describe('1 for lookups; name similarity 0-1 for search results'),
    cache_expires_at: isoTime.nullable(),
  }),
  source_url: z.string().describe('the registry page of the record (provenance)'),
}).meta({ id: 'CompanyRecord' });

const answerMetadata = z.object({
  source: z.enum(['us_registry', 'uk_registry', 'eu_vies']),
  cached: z.boolean().describe('answered from the 24-hour registry cache, without a registry request'),
  retrieved_at: isoTime,
  cache_expires_at: isoTime,
});

export const companySearchResult = z.object({
  success: z.literal(true),
  query: z.string(),
  country: z.enum(['US', 'GB']),
  total_results: z.number().int(),
  sources_queried: z.array(z.string()),
  query_time_ms: z.number().int(),
  results: z.array(companyRecordSchema),
  metadata: answerMetadata.extend({ dedupe_stats: z.object({ processed: z.boolean() }) }),
}).meta({ id: 'CompanyDataSearchResult', description: 'crawlCompanyData, mode search' });

export const companyLookupResult = z.object({
  success: z.literal(true),
  country: z.enum(['US', 'GB']),
  query_time_ms: z.number().int(),
  data: companyRecordSchema,
  metadata: answerMetadata,
}).meta({ id: 'CompanyDataLookupResult', description: 'crawlCompanyData, mode lookup' });

export const companyVatResult = z.object({
  success: z.literal(true),
  query_time_ms: z.number().int(),
  data: z.object({
    valid: z.boolean(),
    vat_number: z.string().describe('without the country prefix, as VIES writes it'),
    country_code: z.string(),
    company_name: z.string().nullable().describe('the literal --- where the member state withholds it'),
    company_address: z.string().nullable().describe('the literal --- where the member state withholds it'),
    request_date: z.string(),
  }),
  metadata: answerMetadata,
}).meta({ id: 'CompanyDataVatResult', description: 'crawlCompanyData, mode vat' });

const socialKeys = {
  proflink: z.string().nullable().describe('LinkedIn'),
  microblog: z.string().nullable().describe('X / Twitter'),
  socialnet: z.string().nullable().describe('Facebook'),
  instagram: z.string().nullable(),
  youtube: z.string().nullable(),
  tiktok: z.string().nullable(),
  pinterest: z.string().nullable(),
  github: z.string().nullable(),
};

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

/** `data` of a completed job: one of the documented shapes, or another type's object. */
export const jobResultData = z
  .union([crawlSiteResult, companySearchResult, companyLookupResult, companyVatResult, z.record(z.string(), z.unknown())])
  .nullable()
  .describe('the job type\'s result; null until the job completes');
