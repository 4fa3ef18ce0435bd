import { z } from 'zod';
import { countryIn, isoTime, trimmedPattern, WHITESPACE_CLASS } from './fields';
import { MAX_JOB_DEADLINE } from './limits';
import { isObj, list, ProjectionBuilder, str, type Obj, type Projection } from './projection';
import type { JobSpec } from './types';

const COUNTRY_REGISTRIES = ['US', 'GB'] as const;
/** What a VAT number may carry between its characters: JavaScript's \s, dots and hyphens. */
const SEPARATORS = `[${WHITESPACE_CLASS}.-]`;

/** crawlCompanyData payload (spec §4.1 rule 4). */
export const crawlCompanyDataPayload = z
  .strictObject({
    mode: z.enum(['search', 'lookup', 'vat']).default('search'),
    name: z.string().trim().min(1).max(200).optional(),
    country: countryIn(COUNTRY_REGISTRIES, 'country must be US or GB').optional(),
    identifier: z.string().trim().min(1).max(20).optional(),
    // Spaces, dots and hyphens anywhere are dropped; checked before upper-casing (which turns "ß" into "SS").
    vat_number: z
      .string()
      .transform((v) => v.replace(/[\s.-]/g, ''))
      .pipe(
        z
          .string()
          .regex(
            /^[A-Za-z]{2}[0-9A-Za-z+*]{2,13}$/,
            'vat_number must be an EU VAT number with its country prefix, e.g. DE282741168',
          ),
      )
      .transform((v) => v.toUpperCase())
      .meta({ pattern: `^${SEPARATORS}*(?:[A-Za-z]${SEPARATORS}*){2}(?:[0-9A-Za-z+*]${SEPARATORS}*){2,13}$` })
      .optional(),
    limit: z.number().int().min(1).max(100).default(10),
    test: z.boolean().default(false).describe('routes the job to the test queue'),
  })
  .superRefine((p, ctx) => {
    const need = (field: 'name' | 'country' | 'identifier' | 'vat_number', why: string) => {
      if (p[field] === undefined)
        ctx.addIssue({ code: 'custom', path: [field], message: `${field} is required ${why}` });
    };
    if (p.mode === 'search') {
      need('name', 'for mode search');
      need('country', 'for mode search');
    }
    if (p.mode === 'lookup') {
      need('identifier', 'for mode lookup');
      need('country', 'for mode lookup');
      if (p.identifier !== undefined && p.country === 'US' && !/^\d{1,10}$/.test(p.identifier)) {
        ctx.addIssue({
          code: 'custom',
          path: ['identifier'],
          message: 'identifier must be a CIK number (up to 10 digits) for US',
        });
      }
      if (p.identifier !== undefined && p.country === 'GB' && !/^[A-Z0-9]{8}$/i.test(p.identifier)) {
        ctx.addIssue({
          code: 'custom',
          path: ['identifier'],
          message: 'identifier must be an 8-character company number for GB',
        });
      }
    }
    if (p.mode === 'vat') need('vat_number', 'for mode vat');
  })
  .meta({
    // What each mode needs (search is the default), and the identifier's form per registry.
    allOf: [
      {
        if: { anyOf: [{ not: { required: ['mode'] } }, { properties: { mode: { const: 'search' } } }] },
        then: { required: ['name', 'country'] },
      },
      {
        if: { properties: { mode: { const: 'lookup' } }, required: ['mode'] },
        then: { required: ['identifier', 'country'] },
      },
      { if: { properties: { mode: { const: 'vat' } }, required: ['mode'] }, then: { required: ['vat_number'] } },
      {
        if: {
          properties: { mode: { const: 'lookup' }, country: { pattern: trimmedPattern('[Uu][Ss]') } },
          required: ['mode', 'country'],
        },
        then: { properties: { identifier: { pattern: trimmedPattern('[0-9]{1,10}') } } },
      },
      {
        if: {
          properties: { mode: { const: 'lookup' }, country: { pattern: trimmedPattern('[Gg][Bb]') } },
          required: ['mode', 'country'],
        },
        then: { properties: { identifier: { pattern: trimmedPattern('[A-Za-z0-9]{8}') } } },
      },
    ],
  });
export type CrawlCompanyDataPayload = z.infer<typeof crawlCompanyDataPayload>;

export const companyRecordSchema = z
  .object({
    name: z.string().describe('official name'),
    source: z.enum(['us_registry', 'uk_registry']),
    source_id: z.string().describe('registry id: CIK (US) or company number (GB)'),
    country_code: z.string().describe('ISO 3166-1 alpha-2'),
    status: z.enum(['active', 'dissolved', 'liquidation']),
    legal_form: z.string().nullable().describe('e.g. plc, ltd, Inc'),
    registration_number: z.string(),
    incorporation_date: z.string().nullable(),
    address: z
      .object({
        line_1: z.string().nullable(),
        line_2: z.string().nullable().optional(),
        city: z.string().nullable().optional(),
        region: z.string().nullable().optional(),
        postal_code: z.string().nullable().optional(),
        country: z.string().nullable(),
      })
      .describe('search results carry only line_1 and country; lookup the parsed address'),
    industry: z
      .object({ sic_codes: z.array(z.string()), nace_codes: z.array(z.string()), description: z.string().nullable() })
      .nullable(),
    officers: z
      .array(
        z.object({
          name: z.string(),
          role: z.string().nullable(),
          appointed_on: z.string().nullable(),
          resigned_on: z.string().nullable(),
          nationality: z.string().nullable(),
          occupation: z.string().nullable(),
          country_of_residence: z.string().nullable(),
        }),
      )
      .describe('directors and officers (UK lookups only)'),
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
  })
  .meta({ id: 'CompanyRecord' });

const answerMetadata = z.object({
  source: z.enum(['us_registry', 'uk_registry', 'eu_vies']),
  cached: z.boolean().describe('answered from the 24-hour registry cache, without a registry request'),
  retrieved_at: isoTime,
  cache_expires_at: isoTime,
});

export const companySearchResult = z
  .object({
    success: z.literal(true),
    query: z.string(),
    country: z.enum(['US', 'GB']),
    total_results: z.number().int(),
    sources_queried: z.array(z.string()),
    query_time_ms: z.number().int(),
    results: z.array(companyRecordSchema),
    metadata: answerMetadata.extend({
      skipped_items: z
        .number()
        .int()
        .describe(
          'items of the registry answer left out because they cannot be a record (no company number or name); 0 when none',
        ),
      dedupe_stats: z.object({ processed: z.boolean() }),
    }),
  })
  .meta({ id: 'CompanyDataSearchResult', description: 'crawlCompanyData, mode search' });

export const companyLookupResult = z
  .object({
    success: z.literal(true),
    country: z.enum(['US', 'GB']),
    query_time_ms: z.number().int(),
    data: companyRecordSchema,
    metadata: answerMetadata,
  })
  .meta({ id: 'CompanyDataLookupResult', description: 'crawlCompanyData, mode lookup' });

export const companyVatResult = z
  .object({
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
  })
  .meta({ id: 'CompanyDataVatResult', description: 'crawlCompanyData, mode vat' });

/** The registries' activity queues, as the workflow looks them up (RunJobInput.queues). */
export const REGISTRY_QUEUE_KEYS = { sec: 'sec', companiesHouse: 'companiesHouse', vies: 'vies' } as const;

/**
 * crawlCompanyData: US SEC EDGAR, UK Companies House, EU VIES (activities/company/, steps in
 * workflows/company-data.ts). Every registry request is one activity on that registry's queue.
 */
export const crawlCompanyData: JobSpec<typeof crawlCompanyDataPayload> = {
  type: 'crawlCompanyData',
  summary: 'Company data from public registries (US SEC EDGAR, UK Companies House) and EU VAT checks (VIES)',
  payload: crawlCompanyDataPayload,
  result: z.union([companySearchResult, companyLookupResult, companyVatResult]),
  defaultPriority: 5,
  steps: 'crawlCompanyDataSteps',
  queue: 'crawl-company-data',
  testQueue: (payload) => payload.test,
  /**
   * Temporal's dispatch limiter is a token bucket whose burst is about its rate, so a full bucket plus
   * one second of refill can start twice the rate within one second (measured: 10 starts in one second
   * at rate 5). SEC counts any one-second window, so its queue runs at 40% of SEC_REQUESTS_PER_SECOND:
   * at most 80% of the limit in any second, the rest a margin for the jitter between dispatch and
   * request. Companies House counts a 5-minute window, where a burst of two is lost in the noise.
   * VIES publishes no limit.
   */
  activityQueues: (config) => [
    { key: REGISTRY_QUEUE_KEYS.sec, queue: 'registry-sec', perSecond: config.SEC_REQUESTS_PER_SECOND * 0.4 },
    {
      key: REGISTRY_QUEUE_KEYS.companiesHouse,
      queue: 'registry-companies-house',
      perSecond: config.COMPANIES_HOUSE_REQUESTS_PER_5_MIN / 300,
    },
    { key: REGISTRY_QUEUE_KEYS.vies, queue: 'registry-vies' },
  ],
  limits: {
    activity: { ms: 30_000, why: 'one registry request; the outbound client gives up after 20 s' },
    // A Companies House 429 can make the job wait up to 5 minutes for its window; the spec caps the whole at 10.
    deadline: MAX_JOB_DEADLINE,
  },
  submitRoute: 'typed',
  available: true,
  idapSource: 'crawl_company_data',
  project: (result) => projectCompanyData(result),
};

/** crawlCompanyData (§2.4): each company record as a company_registry resource. */
function projectCompanyData(r: Obj): Projection {
  const b = new ProjectionBuilder();
  const records = [...list(r.results), ...(isObj(r.data) && str(r.data.source_id) ? [r.data] : [])].filter(isObj);
  for (const rec of records) {
    const { metadata: _metadata, ...fields } = rec;
    b.add('company_registry', { ...fields, registry: str(rec.source), registry_id: str(rec.source_id) });
  }
  return b.build('crawl_company_data');
}
