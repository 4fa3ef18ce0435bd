/**
 * The columns of a campaign or job export: one list, read by the csv, xlsx and ndjson writers
 * (api/exports/formats.ts), the OpenAPI description and the README. A row is one business.
 */
import type { WorkflowBusinessRow } from '../../db/repositories/exports';
import type { MapsBusiness } from '../../jobs/crawl-maps';
import { socialKeys } from '../../jobs/fields';
import type { VerifiedEmail } from '../../jobs/workflow';

export type CellKind = 'string' | 'number' | 'boolean' | 'list';
export type CellValue = string | number | boolean | string[] | null;

/** One business as exported; the writers turn it into cells through COLUMNS. */
export interface ExportRow {
  job_id: string;
  campaign_id: string | null;
  location: string | null;
  business_name: string | null;
  place_id: string;
  address: string | null;
  phone: string | null;
  website: string | null;
  rating: number | null;
  category: string | null;
  domain_filtered: boolean | null;
  filter_reason: string | null;
  spidersite_status: string | null;
  pages_crawled: number | null;
  spiderverify_status: string | null;
  best_email: string | null;
  best_email_status: string | null;
  best_email_score: number | null;
  emails: string[];
  valid_emails_count: number | null;
  phones_found: string[];
  social: Record<string, string | null>;
  industry: string | null;
}

export interface Column {
  name: string;
  kind: CellKind;
  description: string;
  get(row: ExportRow): CellValue;
}

const SOCIAL_PLATFORMS = Object.keys(socialKeys);

/** In export order. */
export const COLUMNS: readonly Column[] = [
  { name: 'job_id', kind: 'string', description: 'the crawlMaps job', get: (r) => r.job_id },
  { name: 'campaign_id', kind: 'string', description: 'empty outside a campaign', get: (r) => r.campaign_id },
  {
    name: 'location',
    kind: 'string',
    description: "the campaign location's display name; empty outside a campaign",
    get: (r) => r.location,
  },
  { name: 'business_name', kind: 'string', description: 'from the maps listing', get: (r) => r.business_name },
  { name: 'place_id', kind: 'string', description: "the maps provider's place id", get: (r) => r.place_id },
  { name: 'address', kind: 'string', description: 'from the maps listing', get: (r) => r.address },
  { name: 'phone', kind: 'string', description: 'from the maps listing', get: (r) => r.phone },
  { name: 'website', kind: 'string', description: 'from the maps listing', get: (r) => r.website },
  { name: 'rating', kind: 'number', description: 'maps rating', get: (r) => r.rating },
  {
    name: 'category',
    kind: 'string',
    description: "the listing's first maps category, when the provider gives one",
    get: (r) => r.category,
  },
  {
    name: 'domain_filtered',
    kind: 'boolean',
    description:
      'true: the website is a social network, review site, directory or marketplace and was not crawled; empty without a workflow',
    get: (r) => r.domain_filtered,
  },
  { name: 'filter_reason', kind: 'string', description: 'why it was filtered', get: (r) => r.filter_reason },
  {
    name: 'spidersite_status',
    kind: 'string',
    description: 'site stage: pending, processing, completed, failed, timed_out or skipped; empty without a workflow',
    get: (r) => r.spidersite_status,
  },
  { name: 'pages_crawled', kind: 'number', description: 'pages of the website crawled', get: (r) => r.pages_crawled },
  {
    name: 'spiderverify_status',
    kind: 'string',
    description: 'verify stage, as spidersite_status',
    get: (r) => r.spiderverify_status,
  },
  {
    name: 'best_email',
    kind: 'string',
    description:
      'the best address: valid before risky before unknown, higher score first, then addresses found but not verified in the order found; invalid addresses never',
    get: (r) => r.best_email,
  },
  {
    name: 'best_email_status',
    kind: 'string',
    description: 'valid, risky or unknown; empty when best_email was not verified',
    get: (r) => r.best_email_status,
  },
  {
    name: 'best_email_score',
    kind: 'number',
    description: 'verification score 0-100; empty when not verified',
    get: (r) => r.best_email_score,
  },
  { name: 'emails', kind: 'list', description: 'every address found on the website', get: (r) => r.emails },
  {
    name: 'valid_emails_count',
    kind: 'number',
    description: 'addresses verified valid',
    get: (r) => r.valid_emails_count,
  },
  { name: 'phones_found', kind: 'list', description: 'phone numbers found on the website', get: (r) => r.phones_found },
  ...SOCIAL_PLATFORMS.map((platform): Column => ({
    name: platform,
    kind: 'string',
    description: `${socialKeys[platform as keyof typeof socialKeys].description ?? platform} profile URL found on the website`,
    get: (r) => r.social[platform] ?? null,
  })),
  {
    name: 'industry',
    kind: 'string',
    description: "the company's industry read from its website",
    get: (r) => r.industry,
  },
];

export const COLUMN_NAMES = COLUMNS.map((c) => c.name);

/** The columns as one line per column, for the OpenAPI description and the README. */
export function describeColumns(): string {
  return COLUMNS.map((c) => `${c.name} (${c.kind}): ${c.description}`).join('; ');
}

// Best first; invalid addresses are never offered as the best one.
const STATUS_RANK: Record<string, number> = { valid: 0, risky: 1, unknown: 2 };

/**
 * The address a user should write to: verified ones by status (valid, risky, unknown) then score,
 * then addresses found but not (yet) verified in the order found. Null when there is none.
 */
export function bestEmail(
  found: readonly string[],
  verified: readonly Pick<VerifiedEmail, 'email' | 'status' | 'score'>[],
): { email: string; status: string | null; score: number | null } | null {
  const ranked = verified
    .filter((v) => v.status in STATUS_RANK)
    .map((v, i) => ({ v, i }))
    .sort(
      (a, b) => (STATUS_RANK[a.v.status] ?? 9) - (STATUS_RANK[b.v.status] ?? 9) || b.v.score - a.v.score || a.i - b.i,
    );
  const top = ranked[0]?.v;
  if (top) return { email: top.email, status: top.status, score: top.score };
  const seen = new Set(verified.map((v) => v.email.toLowerCase()));
  const unverified = found.find((e) => !seen.has(e.toLowerCase()));
  return unverified === undefined ? null : { email: unverified, status: null, score: null };
}

const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const record = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

// Stored jsonb is read defensively: one odd row must not cut a 100k-row download off halfway.
function verifiedList(v: unknown): Pick<VerifiedEmail, 'email' | 'status' | 'score'>[] {
  if (!Array.isArray(v)) return [];
  return v
    .map(record)
    .filter((e) => typeof e.email === 'string' && typeof e.status === 'string')
    .map((e) => ({ email: e.email as string, status: e.status as VerifiedEmail['status'], score: num(e.score) ?? 0 }));
}

/** A business of a job with the maps -> site -> verify pipeline. */
export function rowFromWorkflow(r: WorkflowBusinessRow, category: string | null): ExportRow {
  const business = record(r.business);
  const site = record(r.site);
  const social = record(site.social_media);
  const verified = verifiedList(r.emails_verified);
  const found = strings(site.emails_found);
  const best = bestEmail(found, verified);
  const emails = [...found];
  for (const v of verified) if (!emails.some((e) => e.toLowerCase() === v.email.toLowerCase())) emails.push(v.email);
  return {
    job_id: r.job_id,
    campaign_id: r.campaign_id,
    location: r.location,
    business_name: text(business.business_name),
    place_id: r.place_id,
    address: text(business.business_address),
    phone: text(business.business_phone),
    website: text(business.business_website),
    rating: num(business.business_rating),
    category,
    domain_filtered: r.domain_filtered,
    filter_reason: r.filter_reason,
    spidersite_status: r.site_status,
    pages_crawled: num(site.pages_crawled) ?? 0,
    spiderverify_status: r.verify_status,
    best_email: best?.email ?? null,
    best_email_status: best?.status ?? null,
    best_email_score: best?.score ?? null,
    emails,
    valid_emails_count: r.valid_emails_count,
    phones_found: strings(site.phones_found),
    social: Object.fromEntries(SOCIAL_PLATFORMS.map((p) => [p, text(social[p])])),
    industry: text(record(site.company_info).industry),
  };
}

/** A business of a campaign job without the pipeline: the maps listing, stage columns empty. */
export function rowFromMaps(
  b: Partial<MapsBusiness>,
  job: { jobId: string; campaignId: string | null; location: string | null },
): ExportRow {
  return {
    job_id: job.jobId,
    campaign_id: job.campaignId,
    location: job.location,
    business_name: text(b.business_name) ?? text(b.name),
    place_id: text(b.place_id) ?? text(b.maps_place_id) ?? '',
    address: text(b.address),
    phone: text(b.phone),
    website: text(b.website),
    rating: num(b.rating),
    category: text(strings(b.categories)[0]),
    domain_filtered: null,
    filter_reason: null,
    spidersite_status: null,
    pages_crawled: null,
    spiderverify_status: null,
    best_email: null,
    best_email_status: null,
    best_email_score: null,
    emails: [],
    valid_emails_count: null,
    phones_found: [],
    social: Object.fromEntries(SOCIAL_PLATFORMS.map((p) => [p, null])),
    industry: null,
  };
}

// OWASP CSV injection: a cell a spreadsheet would read as a formula (or a DDE call) starts with one of
// these. A leading LF counts too: a reader that ends rows at LF would start a row with what follows it.
const FORMULA_START = /^[=+\-@\t\r\n]/;
// + or - followed only by digits and phone punctuation holds no function or DDE call: phone numbers
// ("+44 113 496 0000") and negative numbers stay as they are instead of gaining a quote.
const PHONE_OR_NUMBER = /^[+-][\d\s()./-]*$/;

/** The text as a spreadsheet should show it: a would-be formula gets a leading single quote. */
export function neutralise(s: string): string {
  return FORMULA_START.test(s) && !PHONE_OR_NUMBER.test(s) ? `'${s}` : s;
}
