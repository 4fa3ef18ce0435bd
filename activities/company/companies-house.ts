import { OutboundError, type OutboundClient, type OutboundResponse } from '../../lib/outbound';
import {
  CompanyNotFoundError,
  InvalidInputError,
  RegistryAuthError,
  RegistryRateLimitedError,
  RegistryUnavailableError,
  type CompanyAddress,
  type CompanyOfficer,
  type CompanyRecord,
  type CompanyStatus,
  liveMetadata,
} from './types';

/**
 * UK Companies House public data API (../shared/providers.md, "UK Companies House"): search by name
 * and lookup by company number, mapped to the spec's company record. No retries here: a 429 becomes
 * RegistryRateLimitedError with the time until the window resets, so the activity can set
 * ApplicationFailure's nextRetryDelay instead of hammering a 600-requests-per-5-minutes limit.
 */

export const COMPANIES_HOUSE_BASE_URL = 'https://api.company-information.service.gov.uk';
const REGISTRY = 'UK Companies House';
/** The public page of a company; the API host is not meant for people. */
const PUBLIC_PAGE_BASE = 'https://find-and-update.company-information.service.gov.uk/company/';
/** When a 429 carries neither X-Ratelimit-Reset nor Retry-After: one minute, a fifth of the window. */
const DEFAULT_RETRY_AFTER_MS = 60_000;
/** The API's largest officers page; companies with more officers than this are rare. */
const OFFICERS_PAGE_SIZE = 100;

export interface CompaniesHouseOptions {
  /** Default COMPANIES_HOUSE_BASE_URL; tests point it at a stand-in. */
  baseUrl?: string;
  apiKey: string;
  http: OutboundClient;
}

/** Wire shapes, only the fields we read. */
interface ChAddress {
  premises?: string;
  address_line_1?: string;
  address_line_2?: string;
  locality?: string;
  region?: string;
  postal_code?: string;
  country?: string;
}

interface ChSearchItem {
  company_number: string;
  title: string;
  company_status?: string;
  company_type?: string;
  date_of_creation?: string;
  date_of_cessation?: string;
  address_snippet?: string;
  address?: ChAddress;
}

interface ChProfile {
  company_name: string;
  company_number: string;
  company_status?: string;
  type?: string;
  date_of_creation?: string;
  date_of_cessation?: string;
  sic_codes?: string[];
  registered_office_address?: ChAddress;
}

interface ChOfficer {
  name: string;
  officer_role?: string;
  appointed_on?: string;
  resigned_on?: string;
  nationality?: string;
  occupation?: string;
  country_of_residence?: string;
}

const STATUS: Record<string, CompanyStatus> = {
  active: 'active',
  open: 'active',
  registered: 'active',
  dissolved: 'dissolved',
  'converted-closed': 'dissolved',
  closed: 'dissolved',
  removed: 'dissolved',
  liquidation: 'liquidation',
  administration: 'liquidation',
  'insolvency-proceedings': 'liquidation',
  receivership: 'liquidation',
  'voluntary-arrangement': 'liquidation',
};

export class CompaniesHouseClient {
  private readonly baseUrl: string;
  private readonly authorization: string;
  private readonly http: OutboundClient;

  constructor(opts: CompaniesHouseOptions) {
    this.baseUrl = (opts.baseUrl ?? COMPANIES_HOUSE_BASE_URL).replace(/\/+$/, '');
    // The key is the Basic user name with an empty password.
    this.authorization = `Basic ${Buffer.from(`${opts.apiKey}:`).toString('base64')}`;
    this.http = opts.http;
  }

  /** Companies whose name matches `name`, best first as the registry ranks them; address is line_1 and country only. */
  async search(name: string, limit: number, signal?: AbortSignal): Promise<CompanyRecord[]> {
    const query = new URLSearchParams({ q: name, items_per_page: String(limit), start_index: '0' });
    const res = await this.get(`/search/companies?${query.toString()}`, signal);
    if (res.status === 404) return [];
    const body = parseJson<{ items?: ChSearchItem[] }>(res);
    const retrievedAt = new Date().toISOString();
    return (body.items ?? []).slice(0, limit).map((item) => ({
      ...baseRecord(item.company_number, item.title, item.company_status, item.company_type, retrievedAt, nameSimilarity(name, item.title)),
      incorporation_date: item.date_of_creation ?? null,
      dissolution_date: item.date_of_cessation ?? null,
      address: {
        line_1: item.address ? lineOne(item.address) : (item.address_snippet ?? null),
        country: item.address?.country ?? null,
      },
    }));
  }

  /** The full record of one company: parsed address, SIC codes and officers (two requests). */
  async lookup(companyNumber: string, signal?: AbortSignal): Promise<CompanyRecord> {
    const record = await this.profile(companyNumber, signal);
    return { ...record, officers: await this.officers(record.source_id, signal) };
  }

  /**
   * One request: the company profile with its parsed address and SIC codes, officers left empty.
   * The crawlCompanyData workflow calls profile and officers as separate rate-limited activities.
   */
  async profile(companyNumber: string, signal?: AbortSignal): Promise<CompanyRecord> {
    const number = normalizeCompanyNumber(companyNumber);
    const res = await this.get(`/company/${number}`, signal);
    if (res.status === 404) throw new CompanyNotFoundError(REGISTRY, number);
    const profile = parseJson<ChProfile>(res);
    return {
      ...baseRecord(profile.company_number, profile.company_name, profile.company_status, profile.type, new Date().toISOString(), 1.0),
      incorporation_date: profile.date_of_creation ?? null,
      dissolution_date: profile.date_of_cessation ?? null,
      address: parsedAddress(profile.registered_office_address ?? {}),
      industry: { sic_codes: profile.sic_codes ?? [], nace_codes: [], description: null },
    };
  }

  /** One request: the company's officers (the API's largest page). */
  async officers(companyNumber: string, signal?: AbortSignal): Promise<CompanyOfficer[]> {
    const number = normalizeCompanyNumber(companyNumber);
    const res = await this.get(`/company/${number}/officers?items_per_page=${OFFICERS_PAGE_SIZE}`, signal);
    // A company that never filed officers has no officers resource: that is an empty list, not an error.
    return res.status === 404 ? [] : (parseJson<{ items?: ChOfficer[] }>(res).items ?? []).map(toOfficer);
  }

  /** GET with auth; returns 2xx and 404 answers, throws the typed error for everything else. */
  private async get(path: string, signal?: AbortSignal): Promise<OutboundResponse> {
    let res: OutboundResponse;
    try {
      res = await this.http.fetch(`${this.baseUrl}${path}`, { headers: { authorization: this.authorization, accept: 'application/json' }, signal, provider: 'companies_house' });
    } catch (err) {
      // The caller's abort (Temporal cancellation) and the SSRF guard's refusal are not outages.
      if (signal?.aborted || !(err instanceof OutboundError) || err.kind === 'blocked') throw err;
      throw new RegistryUnavailableError(REGISTRY, err.message, { cause: err });
    }
    if ((res.status >= 200 && res.status < 300) || res.status === 404) return res;
    if (res.status === 401) throw new RegistryAuthError(REGISTRY);
    if (res.status === 429) throw new RegistryRateLimitedError(REGISTRY, retryAfterMs(res.headers));
    throw new RegistryUnavailableError(REGISTRY, `HTTP ${res.status}`);
  }
}

function baseRecord(
  number: string,
  name: string,
  status: string | undefined,
  type: string | undefined,
  retrievedAt: string,
  confidence: number,
): Omit<CompanyRecord, 'address' | 'incorporation_date' | 'dissolution_date'> {
  return {
    name,
    source: 'uk_registry',
    source_id: number,
    country_code: 'GB',
    status: STATUS[status ?? ''] ?? 'active',
    legal_form: type ?? null,
    registration_number: number,
    industry: null,
    officers: [],
    financials: null,
    vat_number: null,
    tax_id: null,
    lei: null,
    metadata: liveMetadata(retrievedAt, confidence),
    source_url: `${PUBLIC_PAGE_BASE}${encodeURIComponent(number)}`,
  };
}

/** Premises ("Shell Centre", "10") belongs on the first line with the street. */
function lineOne(a: ChAddress): string | null {
  const parts = [a.premises, a.address_line_1].filter((p): p is string => !!p && p.trim() !== '');
  return parts.length ? parts.join(', ') : null;
}

function parsedAddress(a: ChAddress): CompanyAddress {
  return {
    line_1: lineOne(a),
    line_2: a.address_line_2 ?? null,
    city: a.locality ?? null,
    region: a.region ?? null,
    postal_code: a.postal_code ?? null,
    country: a.country ?? null,
  };
}

function toOfficer(o: ChOfficer): CompanyOfficer {
  return {
    name: o.name,
    role: o.officer_role ?? null,
    appointed_on: o.appointed_on ?? null,
    resigned_on: o.resigned_on ?? null,
    nationality: o.nationality ?? null,
    occupation: o.occupation ?? null,
    country_of_residence: o.country_of_residence ?? null,
  };
}

/** Company numbers are 8 characters; users often drop the leading zeros (3323845 is 03323845). */
export function normalizeCompanyNumber(raw: string): string {
  const n = raw.replace(/\s+/g, '').toUpperCase();
  if (!/^[A-Z0-9]{1,8}$/.test(n)) throw new InvalidInputError(REGISTRY, raw, `"${raw}" is not a company number`);
  return /^\d+$/.test(n) ? n.padStart(8, '0') : n;
}

function parseJson<T>(res: OutboundResponse): T {
  try {
    return res.json<T>();
  } catch (err) {
    throw new RegistryUnavailableError(REGISTRY, `unreadable answer (HTTP ${res.status})`, { cause: err });
  }
}

/** Milliseconds until the limit window resets: X-Ratelimit-Reset (epoch seconds), else Retry-After. */
export function retryAfterMs(headers: Record<string, string>, now = Date.now()): number {
  const reset = Number(headers['x-ratelimit-reset']);
  if (headers['x-ratelimit-reset'] && Number.isFinite(reset)) return Math.max(1000, reset * 1000 - now);
  const retryAfter = headers['retry-after'];
  if (retryAfter) {
    const seconds = Number(retryAfter);
    if (Number.isFinite(seconds)) return Math.max(1000, seconds * 1000);
    const date = Date.parse(retryAfter);
    if (!Number.isNaN(date)) return Math.max(1000, date - now);
  }
  return DEFAULT_RETRY_AFTER_MS;
}

const LEGAL_SUFFIX = /\b(limited|ltd|plc|llp|public limited company|company|co|the)\b/g;

function normalizeName(name: string): string {
  return name
    .toLowerCase()
    .replace(/&/g, ' and ')
    .replace(/[^a-z0-9 ]+/g, ' ')
    .replace(LEGAL_SUFFIX, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * How closely a registry name matches the name searched for, 0..1 (two decimals): names are compared
 * without case, punctuation and legal suffixes ("Shell Group" and "SHELL GROUP LIMITED" score 1),
 * by edit distance, with a floor for names that contain the query as a whole word run.
 */
export function nameSimilarity(query: string, candidate: string): number {
  const a = normalizeName(query);
  const b = normalizeName(candidate);
  if (!a || !b) return 0;
  if (a === b) return 1;
  const ratio = 1 - levenshtein(a, b) / Math.max(a.length, b.length);
  const contains = ` ${b} `.includes(` ${a} `) ? 0.5 + 0.4 * (a.length / b.length) : 0;
  return Math.round(Math.max(ratio, contains) * 100) / 100;
}

function levenshtein(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length] ?? 0;
}
