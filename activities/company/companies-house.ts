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
  company_number?: string;
  title?: string;
  company_status?: string;
  company_type?: string;
  date_of_creation?: string;
  date_of_cessation?: string;
  address_snippet?: string;
  address?: ChAddress;
}

interface ChProfile {
  company_name?: string;
  company_number?: string;
  company_status?: string;
  type?: string;
  date_of_creation?: string;
  date_of_cessation?: string;
  sic_codes?: string[];
  registered_office_address?: ChAddress;
}

interface ChOfficer {
  name?: string;
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
    return (await this.searchItems(name, limit, signal)).records;
  }

  /**
   * `search` with the number of answered items left out: an item without a company number or a
   * title cannot be a record, and one such item must not cost the caller the rest of the page.
   */
  async searchItems(
    name: string,
    limit: number,
    signal?: AbortSignal,
  ): Promise<{ records: CompanyRecord[]; skipped: number }> {
    const query = new URLSearchParams({ q: name, items_per_page: String(limit), start_index: '0' });
    const res = await this.get(`/search/companies?${query.toString()}`, signal);
    if (res.status === 404) return { records: [], skipped: 0 };
    const body = parseJson<{ items?: unknown }>(res);
    const retrievedAt = new Date().toISOString();
    const records: CompanyRecord[] = [];
    let skipped = 0;
    for (const raw of (Array.isArray(body.items) ? body.items : []).slice(0, limit)) {
      const item = (raw ?? {}) as ChSearchItem;
      const number = text(item.company_number);
      const title = text(item.title);
      if (!number || !title) {
        skipped++;
        continue;
      }
      const address = item.address && typeof item.address === 'object' ? item.address : undefined;
      records.push({
        ...baseRecord(number, title, item.company_status, item.company_type, retrievedAt, nameSimilarity(name, title)),
        incorporation_date: text(item.date_of_creation),
        dissolution_date: text(item.date_of_cessation),
        address: {
          line_1: address ? lineOne(address) : joinParts(text(item.address_snippet)?.split(',')),
          country: text(address?.country),
        },
      });
    }
    return { records, skipped };
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
      ...baseRecord(
        text(profile.company_number) ?? number,
        text(profile.company_name) ?? number,
        profile.company_status,
        profile.type,
        new Date().toISOString(),
        1.0,
      ),
      incorporation_date: profile.date_of_creation ?? null,
      dissolution_date: profile.date_of_cessation ?? null,
      address: parsedAddress(profile.registered_office_address ?? {}),
      industry: {
        sic_codes: Array.isArray(profile.sic_codes) ? profile.sic_codes.filter((c) => typeof c === 'string') : [],
        nace_codes: [],
        description: null,
      },
    };
  }

  /** One request: the company's officers (the API's largest page). */
  async officers(companyNumber: string, signal?: AbortSignal): Promise<CompanyOfficer[]> {
    const number = normalizeCompanyNumber(companyNumber);
    const res = await this.get(`/company/${number}/officers?items_per_page=${OFFICERS_PAGE_SIZE}`, signal);
    // A company that never filed officers has no officers resource: that is an empty list, not an error.
    if (res.status === 404) return [];
    const items = parseJson<{ items?: unknown }>(res).items;
    // An officer without a name is no officer to report; the others still are.
    return (Array.isArray(items) ? (items as ChOfficer[]) : []).filter((o) => text(o?.name) !== null).map(toOfficer);
  }

  /** GET with auth; returns 2xx and 404 answers, throws the typed error for everything else. */
  private async get(path: string, signal?: AbortSignal): Promise<OutboundResponse> {
    let res: OutboundResponse;
    try {
      res = await this.http.fetch(`${this.baseUrl}${path}`, {
        headers: { authorization: this.authorization, accept: 'application/json' },
        signal,
        provider: 'companies_house',
      });
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

/**
 * A registry string trimmed, its runs of whitespace made one space; null when empty or not a
 * string. Real answers carry doubled spaces ("YOU  LIMITED", "Unit-2,  Ground Floor").
 */
export function text(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const t = value.replace(/\s+/g, ' ').trim();
  return t === '' ? null : t;
}

/**
 * Address parts joined with ", ", each part cleaned and split on its own commas so that empty
 * parts go: real values read "74 , Lairgate" and "Flat 5, , Treloar House".
 */
function joinParts(parts: (string | null | undefined)[] | undefined): string | null {
  const kept = (parts ?? [])
    .flatMap((p) => (typeof p === 'string' ? p.split(',') : []))
    .map(text)
    .filter((p): p is string => p !== null);
  return kept.length ? kept.join(', ') : null;
}

/** Premises ("Shell Centre", "10") belongs on the first line with the street. */
function lineOne(a: ChAddress): string | null {
  return joinParts([a.premises, a.address_line_1]);
}

function parsedAddress(a: ChAddress): CompanyAddress {
  return {
    line_1: lineOne(a),
    line_2: joinParts([a.address_line_2]),
    city: text(a.locality),
    region: text(a.region),
    postal_code: text(a.postal_code),
    country: text(a.country),
  };
}

function toOfficer(o: ChOfficer): CompanyOfficer {
  return {
    name: text(o.name) ?? '',
    role: text(o.officer_role),
    appointed_on: text(o.appointed_on),
    resigned_on: text(o.resigned_on),
    nationality: text(o.nationality),
    occupation: text(o.occupation),
    country_of_residence: text(o.country_of_residence),
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
      cur[j] = Math.min(
        (prev[j] ?? 0) + 1,
        (cur[j - 1] ?? 0) + 1,
        (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    prev = cur;
  }
  return prev[b.length] ?? 0;
}
