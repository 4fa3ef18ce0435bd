import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { z } from 'zod';
import { domainOf } from '../lib/normalize';
import { crawlUrl, socialKeys } from './fields';
import { SITE_STAGE, MAX_JOB_DEADLINE } from './limits';
import { isObj, list, ProjectionBuilder, str, type Obj, type Projection } from './projection';
import type { JobSpec } from './types';

/** crawlSite payload (spec §4.1 rule 3; the keys beyond url, max_pages, extract_team and compendium are ours). */
const GLOB_RULES =
  '`*` (within a path segment), `**` (across segments), `?` and [classes]; at most two `*` in one segment; no {braces} or extglobs (one glob per alternative instead)';

/**
 * Why a path glob is refused, if it is. Globs are compiled to backtracking regexes (picomatch), so
 * a client's glob must not make matching a long link path explode: three `*` in one segment cost
 * the cube of the segment's length (1 s for a 2,000-character path), more grow faster, and braces and
 * extglobs multiply the alternatives. A `**` segment, or one `*` in each of several segments, stays linear.
 */
export function globProblem(glob: string): string | undefined {
  if (/[{}]/.test(glob)) return 'braces ({a,b}) are not supported: give each alternative as a glob of its own';
  if (/[@!+*?]\(/.test(glob))
    return 'extglobs such as +(a|b) are not supported: give each alternative as a glob of its own';
  for (const segment of glob.split('/')) {
    const stars = segment === '**' ? 1 : (segment.replace(/\*+/g, '*').match(/\*/g) ?? []).length;
    if (stars > 2) return `at most two * wildcards per path segment ("${segment}" has ${stars})`;
  }
  return undefined;
}

const pathGlob = z
  .string()
  .min(1)
  .max(200)
  .superRefine((g, ctx) => {
    const problem = globProblem(g);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

export const crawlSitePayload = z.strictObject({
  url: crawlUrl('url'),
  max_pages: z.number().int().min(1).max(100).default(10),
  extract_team: z.boolean().default(true),
  compendium: z
    .strictObject({ enabled: z.boolean().default(false), cleanup_level: z.enum(['raw', 'fit']).default('fit') })
    .default({ enabled: false, cleanup_level: 'fit' }),
  include_paths: z
    .array(pathGlob)
    .max(50)
    .default([])
    .describe(`globs; only matching paths are crawled. ${GLOB_RULES}`),
  exclude_paths: z.array(pathGlob).max(50).default([]).describe(`globs; matching paths are skipped. ${GLOB_RULES}`),
  respect_robots: z.boolean().default(true),
  render_js: z.boolean().default(false).describe('render pages in Chromium (slower; for script-built sites)'),
  timeout_seconds: z
    .number()
    .int()
    .min(5)
    .max(300)
    .default(300)
    .describe('whole-crawl limit (the site stage allows 5 minutes)'),
  ai_extraction: z
    .boolean()
    .default(false)
    .describe(
      "fill company_info from the site's compendium with one of the client's LLM integrations (/api/v1/integrations); without a usable one the reason is in errors",
    ),
});
export type CrawlSitePayload = z.infer<typeof crawlSitePayload>;

export const crawlSiteResult = z
  .object({
    url: z.string(),
    final_url: z.string().describe('the start page after redirects'),
    pages_crawled: z.number().int(),
    emails: z.array(z.string()).describe('lower-cased, de-duplicated'),
    phones: z.array(
      z.object({
        raw: z.string(),
        e164: z.string().nullable(),
        national: z.string().nullable(),
        type: z.string().nullable(),
        valid: z.boolean(),
      }),
    ),
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
    team_members: z.array(
      z.object({
        name: z.string(),
        position: z.string().nullable(),
        email: z.string().nullable(),
        proflink_url: z.string().nullable(),
        photo_url: z.string().nullable(),
      }),
    ),
    compendium: z
      .object({
        available: z.boolean(),
        chars: z.number().int(),
        cleanup_level: z.enum(['raw', 'fit']),
        storage_location: z.string().describe("s3://<bucket>/<key> in the client's media bucket"),
        download_url: z.string(),
        filename: z.string(),
        size_bytes: z.number().int(),
        content_hash: z.string().describe('sha256 of the Markdown'),
        estimated_tokens: z.number().int().describe('ceil(chars / 4)'),
      })
      .optional()
      .describe('present when compendium.enabled'),
    pages: z.array(
      z.object({
        url: z.string(),
        final_url: z.string(),
        status: z.number().int(),
        title: z.string().nullable(),
        redirect_chain: z.array(z.string()).optional(),
      }),
    ),
    ai_extraction: z
      .object({
        integration_id: z.number().int().describe('the id of GET /api/v1/integrations/{integration_id}'),
        provider: z.string(),
        model: z.string(),
        fields: z.array(z.string()).describe('company_info fields the model filled'),
      })
      .optional()
      .describe('present when ai_extraction filled company_info'),
    errors: z
      .array(z.object({ url: z.string().nullable(), error: z.string() }))
      .describe("non-fatal, per page (and the AI extraction's, with url null)"),
  })
  .meta({ id: 'CrawlSiteResult', description: 'crawlSite (spec §2.3)' });
export type CrawlSiteResult = z.infer<typeof crawlSiteResult>;

/** crawlSite: a company website crawled for leads (activities/site/). */
export const crawlSite: JobSpec<typeof crawlSitePayload> = {
  type: 'crawlSite',
  summary:
    'Crawl a website and extract leads: emails, phones, social links, company info, team, optional Markdown compendium',
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
  idapSource: 'crawl_site',
  project: (result, job) => projectSite(result, job),
  compendiumLocation: (result) =>
    isObj(result.compendium) && result.compendium.available !== false ? str(result.compendium.storage_location) : null,
};

/**
 * crawlSite (§2.3): the site's business (keyed by its domain), the domain, every e-mail and phone,
 * the team as contacts, and the company's LinkedIn page as a proflink profile; all related to the
 * business, e-mails also to the domain.
 */
function projectSite(r: Obj, job: { jobId: string }): Projection {
  const b = new ProjectionBuilder();
  const website = str(r.final_url) ?? str(r.url);
  const domain = domainOf(website);
  if (!website || !domain) return b.build('crawl_site');
  const info = isObj(r.company_info) ? r.company_info : {};
  const phones = list(r.phones).filter(isObj);
  const emails = list(r.emails)
    .map(str)
    .filter((e): e is string => !!e && e.includes('@'));
  const firstPhone = phones.map((p) => str(p.e164)).find((p) => !!p) ?? null;
  const compendium = isObj(r.compendium) && r.compendium.available !== false ? r.compendium : undefined;
  const country = countryOf(firstPhone, domain);

  const business = b.add('businesses', {
    website: origin(website),
    domain,
    // No name is better than the domain as one: merged into its maps listing (by domain), the listing's name stays.
    name: str(info.name),
    description: str(info.description),
    category: str(info.industry),
    address: str(info.address),
    logo_url: str(info.logo_url),
    email: emails[0] ?? null,
    phone: firstPhone,
    country,
    social_media: isObj(r.social_media) ? r.social_media : null,
    compendium_location: compendium ? str(compendium.storage_location) : null,
    compendium_url: compendium ? str(compendium.download_url) : null,
    // The lead index reads the compendium from this job's stored result, never from compendium_location.
    compendium_job_id: compendium ? job.jobId : null,
    job_id: job.jobId,
    job_type: 'crawlSite',
  });
  const domainNode = b.add('domains', { domain, website: origin(website) });
  b.relate(business, domainNode);
  for (const address of emails) {
    // No `verified: false`: upserts skip nulls but not false, and a re-crawl must not undo a verification verdict.
    const e = b.add('emails', {
      address,
      domain: address.split('@')[1] ?? null,
      verified: null,
      verification_status: null,
    });
    b.relate(business, e);
    if (domainOf(address.split('@')[1]) === domain) b.relate(domainNode, e);
  }
  for (const p of phones) {
    const number = str(p.e164);
    if (!number || p.valid === false) continue;
    b.relate(business, b.add('phones', { number, type: str(p.type), national: str(p.national), raw: str(p.raw) }));
  }
  const companyName = str(info.name);
  for (const m of list(r.team_members).filter(isObj)) {
    const contact = b.add('contacts', {
      full_name: str(m.name),
      position: str(m.position),
      email: str(m.email),
      proflink_url: str(m.proflink_url),
      photo_url: str(m.photo_url),
      company_domain: domain,
      company_name: companyName,
    });
    b.relate(business, contact);
    const proflink = str(m.proflink_url);
    if (proflink)
      b.relate(contact, b.add('proflink_profiles', { url: proflink, kind: 'person', full_name: str(m.name) }));
  }
  const companyProflink = str(r.proflink);
  if (companyProflink)
    b.relate(business, b.add('proflink_profiles', { url: companyProflink, kind: 'company', name: companyName }));
  return b.build('crawl_site');
}

function origin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

/** The lead's country: the region of its first phone number, else a country-code TLD. */
function countryOf(e164: string | null, domain: string): string | null {
  const region = e164 ? parsePhoneNumberFromString(e164)?.country : undefined;
  if (region) return region;
  const tld = domain.split('.').pop()?.toUpperCase() ?? '';
  if (tld === 'UK') return 'GB';
  return /^[A-Z]{2}$/.test(tld) && !['IO', 'AI', 'CO', 'ME', 'TV', 'CC', 'FM', 'LY'].includes(tld) ? tld : null;
}
