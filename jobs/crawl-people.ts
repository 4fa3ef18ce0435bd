import { z } from 'zod';
import { domainOf } from '../lib/normalize';
import { crawlCompanyData, REGISTRY_QUEUE_KEYS } from './crawl-company-data';
import { countryIn, crawlUrl } from './fields';
import { MAX_JOB_DEADLINE, SITE_STAGE } from './limits';
import { isObj, list, ProjectionBuilder, str, type Obj, type Projection } from './projection';
import type { JobSpec } from './types';

/** crawlPeople payload (the spec names the type only; this shape is ours). */
export const crawlPeoplePayload = z
  .strictObject({
    url: crawlUrl('url').optional().describe('company website to look for people on'),
    company_name: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .optional()
      .describe("resolved to a website through the client's IDAP businesses, else a registry search (with country)"),
    company_domain: z.string().trim().min(3).max(253).optional(),
    country: countryIn(['US', 'GB'], 'country must be US or GB')
      .optional()
      .describe('the registry searched for company_name (US SEC EDGAR, UK Companies House)'),
    max_results: z.number().int().min(1).max(200).default(50),
    max_pages: z
      .number()
      .int()
      .min(1)
      .max(100)
      .default(30)
      .describe('pages of the site crawled at most (team, about and contact pages first)'),
    roles: z
      .array(z.string().trim().min(2).max(50))
      .max(20)
      .default([])
      .describe('only people whose position matches one of these, e.g. ["founder", "sales"]; empty: everyone'),
  })
  .superRefine((p, ctx) => {
    if (p.url === undefined && p.company_domain === undefined && p.company_name === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: [],
        message: 'one of url, company_domain or company_name must be provided',
      });
    }
    if (p.company_domain !== undefined && !domainOf(p.company_domain))
      ctx.addIssue({
        code: 'custom',
        path: ['company_domain'],
        message: 'company_domain must be a domain name such as acme.co.uk',
      });
    if (p.country !== undefined && p.company_name === undefined)
      ctx.addIssue({ code: 'custom', path: ['country'], message: 'country is only used with company_name' });
  })
  .meta({
    anyOf: [{ required: ['url'] }, { required: ['company_domain'] }, { required: ['company_name'] }],
    dependentRequired: { country: ['company_name'] },
  });
export type CrawlPeoplePayload = z.infer<typeof crawlPeoplePayload>;

export const personSchema = z.object({
  full_name: z.string(),
  first_name: z.string().nullable(),
  last_name: z.string().nullable(),
  position: z.string().nullable(),
  seniority: z
    .enum(['executive', 'director', 'manager', 'staff'])
    .nullable()
    .describe('from the position; null without one'),
  email: z.string().nullable().describe('an address the site shows for the person'),
  email_guess: z
    .string()
    .nullable()
    .describe(
      "a GUESS from the company's address pattern (email_pattern), never verified; null when the person has an email or no pattern is known",
    ),
  proflink_url: z.string().nullable().describe('personal professional profile (LinkedIn /in/)'),
  sources: z.array(z.string()).describe('every page (or registry record) the person was seen on'),
  canonical_id: z.number().int().nullable().describe('the contact record in the de-duplication store'),
  dedupe_unique: z.boolean().describe("false when the client's store already held the person before this job"),
});

export const crawlPeopleResult = z
  .object({
    company: z.object({
      name: z.string().nullable(),
      domain: z.string().nullable(),
      website: z.string().nullable().describe('the site crawled; null when none could be resolved'),
      resolved_via: z.enum(['payload', 'idap_business', 'registry']).nullable().describe('how the website was found'),
      resolution: z.string().describe('what was looked at to find the website, and why it failed when it did'),
      registry: z
        .object({ source: z.string(), source_id: z.string(), name: z.string(), source_url: z.string() })
        .nullable()
        .describe('the registry record whose officers were used'),
    }),
    people: z.array(personSchema),
    people_count: z.number().int(),
    email_pattern: z
      .object({ pattern: z.string(), domain: z.string(), examples: z.number().int() })
      .nullable()
      .describe('learnt from people whose known address fits it'),
    pages_crawled: z.number().int(),
    sources_used: z.array(z.enum(['site', 'proflink', 'uk_registry', 'us_registry'])),
    errors: z
      .array(z.object({ url: z.string().nullable(), error: z.string() }))
      .describe('non-fatal: pages that failed, the crawl of an unreachable site'),
  })
  .meta({ id: 'CrawlPeopleResult', description: 'crawlPeople' });
export type CrawlPeopleResult = z.infer<typeof crawlPeopleResult>;

/** crawlPeople: the people of a company (activities/people/, steps in workflows/people.ts). */
export const crawlPeople: JobSpec<typeof crawlPeoplePayload> = {
  type: 'crawlPeople',
  summary: 'People of a company: team pages, personal profile links and registry officers, merged and de-duplicated',
  payload: crawlPeoplePayload,
  result: crawlPeopleResult,
  defaultPriority: 5,
  queue: 'crawl-people',
  steps: 'crawlPeopleSteps',
  // A company name with a country is searched at its registry: the registry queues of crawlCompanyData, with their limits.
  activityQueues: (config) =>
    (crawlCompanyData.activityQueues?.(config) ?? []).filter((q) => q.key !== REGISTRY_QUEUE_KEYS.vies),
  limits: {
    activity: { ...SITE_STAGE, why: 'a site-like crawl of team pages: the site stage limit' },
    deadline: MAX_JOB_DEADLINE,
  },
  submitRoute: 'typed',
  available: true,
  idapSource: 'crawl_people',
  project: (result, job) => projectPeople(result, job),
};

/**
 * crawlPeople: the company's business (by its domain), each person as a contact related to it (known
 * addresses also as emails; guesses never), and personal profiles as proflink_profiles of the contact.
 */
function projectPeople(r: Obj, job: { jobId: string }): Projection {
  const b = new ProjectionBuilder();
  const company = isObj(r.company) ? r.company : {};
  const domain = str(company.domain);
  const website = str(company.website);
  const business = domain
    ? b.add('businesses', {
        website: website ? new URL(website).origin : null,
        domain,
        name: str(company.name),
        job_id: job.jobId,
        job_type: 'crawlPeople',
      })
    : undefined;
  for (const p of list(r.people).filter(isObj)) {
    const contact = b.add('contacts', {
      full_name: str(p.full_name),
      first_name: str(p.first_name),
      last_name: str(p.last_name),
      position: str(p.position),
      seniority: str(p.seniority),
      email: str(p.email),
      email_guess: str(p.email_guess),
      proflink_url: str(p.proflink_url),
      sources: list(p.sources),
      company_domain: domain,
      company_name: str(company.name),
    });
    b.relate(business, contact);
    const email = str(p.email);
    if (email?.includes('@'))
      b.relate(
        contact,
        b.add('emails', {
          address: email,
          domain: email.split('@')[1] ?? null,
          verified: null,
          verification_status: null,
        }),
      );
    const proflink = str(p.proflink_url);
    if (proflink) {
      const profile = b.add('proflink_profiles', { url: proflink, kind: 'person', full_name: str(p.full_name) });
      b.relate(contact, profile);
      b.relate(business, profile);
    }
  }
  return b.build('crawl_people');
}
