import { OutboundError, type OutboundClient, type OutboundResponse } from '../../lib/outbound';
import { nameSimilarity, retryAfterMs } from './companies-house';
import { EDGAR_LOCATIONS } from './edgar-codes';
import {
  CompanyNotFoundError,
  InvalidInputError,
  RegistryAuthError,
  RegistryRateLimitedError,
  RegistryUnavailableError,
  type CompanyAddress,
  type CompanyRecord,
  liveMetadata,
} from './types';

/**
 * US SEC EDGAR (../shared/providers.md, "US SEC EDGAR"): search by name over the published ticker
 * index and lookup by CIK in the submissions API, mapped to the spec's company record. SEC has no
 * keys; instead every request must carry a declared `User-Agent: <Company> <contact email>`, and a
 * missing or undeclared agent gets 403. Over the fair-access limit (10 requests/second in total) SEC
 * answers 403 with an HTML "Request Rate Threshold Exceeded" page, not 429. No retries here, as in
 * the other adapters: the activity turns RegistryRateLimitedError into a delayed Temporal retry.
 */

export const SEC_BASE_URL = 'https://www.sec.gov';
export const SEC_DATA_BASE_URL = 'https://data.sec.gov';
export const SEC_EFTS_BASE_URL = 'https://efts.sec.gov';
const REGISTRY = 'US SEC EDGAR';
const DEFAULT_TICKERS_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * Wait after a rate-limit 403 that names no time of its own. SEC documents a ~10 minute block for
 * clients that keep exceeding 10 requests/second, but a short overage (a burst of parallel
 * activities) clears within seconds once the rate drops; 10 s lets the throttled activity come back
 * quickly without adding to the overage, and Temporal's backoff grows it if the block persists.
 */
const RATE_LIMIT_RETRY_MS = 10_000;
const RATE_LIMIT_TEXT = 'Request Rate Threshold Exceeded';
/**
 * Lowest similarity a search candidate needs. Ranking the whole index (~10k names) by edit distance
 * gives every name some small score; 0.5 keeps names that contain the query as words (always >= 0.5)
 * and near spellings (a typo or two), and drops unrelated names that merely share letters.
 */
const MIN_SIMILARITY = 0.5;
/** The ticker index is ~1 MB and large filers' submissions documents can be several MB. */
const MAX_BYTES = 32 * 1024 * 1024;

export interface SecOptions {
  /** Default SEC_BASE_URL (www.sec.gov: the ticker files); tests point it at a stand-in. */
  baseUrl?: string;
  /** Default SEC_DATA_BASE_URL (data.sec.gov: submissions). */
  dataBaseUrl?: string;
  /** Default SEC_EFTS_BASE_URL (efts.sec.gov: full-text search and entity autocomplete); not used yet. */
  eftsBaseUrl?: string;
  /** Declared agent "<Company> <contact email>", sent on every request; SEC refuses requests without one. */
  userAgent: string;
  http: OutboundClient;
  /** How long the downloaded ticker index is reused. Default 24 h (SEC regenerates it daily). */
  tickersTtlMs?: number;
}

/** One company of the ticker index, its rows merged: a CIK may be listed once per share class. */
export interface SecIndexEntry {
  /** Without padding, as in the index. */
  cik: string;
  name: string;
  tickers: string[];
  exchanges: string[];
}

/** Wire shapes, only the fields we read. */
interface TickersExchangeFile {
  fields?: string[];
  data?: unknown[][];
}

interface SecAddress {
  street1?: string | null;
  street2?: string | null;
  city?: string | null;
  stateOrCountry?: string | null;
  zipCode?: string | null;
  stateOrCountryDescription?: string | null;
  isForeignLocation?: number | boolean | null;
  foreignStateTerritory?: string | null;
  country?: string | null;
  countryCode?: string | null;
}

interface SecSubmissions {
  cik: string;
  name: string;
  sic?: string | null;
  sicDescription?: string | null;
  ein?: string | null;
  lei?: string | null;
  addresses?: { mailing?: SecAddress | null; business?: SecAddress | null };
}

/** Legal-form suffixes recognised at the end of an EDGAR name, with the form we report. */
const LEGAL_FORMS: [RegExp, string][] = [
  [/\b(inc|incorporated)$/, 'Inc'],
  [/\b(corp|corporation)$/, 'Corp'],
  [/\bl\.?l\.?c$/, 'LLC'],
  [/\b(ltd|limited)$/, 'Ltd'],
  [/\bplc$/, 'plc'],
  [/\bn\.?\s?v$/, 'N.V.'],
  [/\bs\.?\s?a$/, 'S.A.'],
];

export class SecClient {
  private readonly baseUrl: string;
  private readonly dataBaseUrl: string;
  /** Kept for the entity autocomplete (efts.sec.gov); search uses the ticker index instead. */
  readonly eftsBaseUrl: string;
  private readonly userAgent: string;
  private readonly http: OutboundClient;
  private readonly tickersTtlMs: number;
  /** The merged index and when it was fetched; a promise so that concurrent searches share one download. */
  private index?: { at: number; entries: Promise<SecIndexEntry[]> };

  constructor(opts: SecOptions) {
    if (!opts.userAgent.trim()) throw new Error('SecClient needs a declared User-Agent "<Company> <contact email>"');
    this.baseUrl = (opts.baseUrl ?? SEC_BASE_URL).replace(/\/+$/, '');
    this.dataBaseUrl = (opts.dataBaseUrl ?? SEC_DATA_BASE_URL).replace(/\/+$/, '');
    this.eftsBaseUrl = (opts.eftsBaseUrl ?? SEC_EFTS_BASE_URL).replace(/\/+$/, '');
    this.userAgent = opts.userAgent;
    this.http = opts.http;
    this.tickersTtlMs = opts.tickersTtlMs ?? DEFAULT_TICKERS_TTL_MS;
  }

  /**
   * Listed companies whose name matches `name` (similarity at least MIN_SIMILARITY), best first by
   * nameSimilarity; ties keep the index's order, which SEC sorts roughly by size. Only companies with
   * a ticker are in the index. It carries no address or legal form, so those stay unknown; lookup has them.
   */
  async search(name: string, limit: number, signal?: AbortSignal): Promise<CompanyRecord[]> {
    const retrievedAt = new Date().toISOString();
    return (await this.searchIndex(name, limit, signal)).map(({ entry, score }) => ({
      ...baseRecord(entry.cik, entry.name, retrievedAt, score),
      legal_form: null,
      address: { line_1: null, country: 'US' },
      industry: null,
      tax_id: null,
      lei: null,
    }));
  }

  /** The index entries behind `search`, with their tickers and exchanges, and the similarity score. */
  async searchIndex(
    name: string,
    limit: number,
    signal?: AbortSignal,
  ): Promise<{ entry: SecIndexEntry; score: number }[]> {
    const entries = await this.tickerIndex(signal);
    return entries
      .map((entry) => ({ entry, score: nameSimilarity(name, entry.name) }))
      .filter((c) => c.score >= MIN_SIMILARITY)
      .sort((a, b) => b.score - a.score)
      .slice(0, Math.max(0, limit));
  }

  /** The full record of one registrant from its submissions document. */
  async lookup(cik: string, signal?: AbortSignal): Promise<CompanyRecord> {
    const id = normalizeCik(cik);
    const res = await this.get(`${this.dataBaseUrl}/submissions/CIK${id.padStart(10, '0')}.json`, signal);
    // Unknown CIKs are missing S3 objects: 404 with an XML <Error><Code>NoSuchKey</Code> body.
    if (res.status === 404) throw new CompanyNotFoundError(REGISTRY, id);
    const s = parseJson<SecSubmissions>(res);
    const business = s.addresses?.business;
    const a = business?.street1 ? business : (s.addresses?.mailing ?? business ?? {});
    const ein = s.ein && !/^0+$/.test(s.ein) ? s.ein : null;
    return {
      ...baseRecord(id, s.name, new Date().toISOString(), 1.0),
      country_code: countryCode(business) ?? countryCode(s.addresses?.mailing) ?? 'US',
      legal_form: legalForm(s.name),
      address: toAddress(a),
      industry: s.sic ? { sic_codes: [s.sic], nace_codes: [], description: s.sicDescription ?? null } : null,
      tax_id: ein,
      lei: s.lei ?? null,
    };
  }

  private tickerIndex(signal?: AbortSignal): Promise<SecIndexEntry[]> {
    if (this.index && Date.now() - this.index.at < this.tickersTtlMs) return this.index.entries;
    const entries = this.fetchTickerIndex(signal);
    const cached = { at: Date.now(), entries };
    this.index = cached;
    // A failed download is not cached: the next search tries again.
    entries.catch(() => {
      if (this.index === cached) this.index = undefined;
    });
    return entries;
  }

  private async fetchTickerIndex(signal?: AbortSignal): Promise<SecIndexEntry[]> {
    const res = await this.get(`${this.baseUrl}/files/company_tickers_exchange.json`, signal);
    if (res.status === 404) throw new RegistryUnavailableError(REGISTRY, 'the ticker index is missing (HTTP 404)');
    const file = parseJson<TickersExchangeFile>(res);
    const fields = file.fields ?? ['cik', 'name', 'ticker', 'exchange'];
    const at = (name: string) => fields.indexOf(name);
    const [iCik, iName, iTicker, iExchange] = [at('cik'), at('name'), at('ticker'), at('exchange')];
    if (iCik < 0 || iName < 0 || !Array.isArray(file.data))
      throw new RegistryUnavailableError(REGISTRY, 'unreadable ticker index');
    const byCik = new Map<string, SecIndexEntry>();
    for (const row of file.data) {
      const rawCik = row[iCik];
      const name = row[iName];
      if ((typeof rawCik !== 'number' && typeof rawCik !== 'string') || typeof name !== 'string') continue;
      const cik = String(rawCik).replace(/^0+(?=\d)/, '');
      let entry = byCik.get(cik);
      if (!entry) {
        entry = { cik, name, tickers: [], exchanges: [] };
        byCik.set(cik, entry);
      }
      const ticker = row[iTicker];
      const exchange = row[iExchange];
      if (typeof ticker === 'string' && ticker && !entry.tickers.includes(ticker)) entry.tickers.push(ticker);
      if (typeof exchange === 'string' && exchange && !entry.exchanges.includes(exchange))
        entry.exchanges.push(exchange);
    }
    return [...byCik.values()];
  }

  /** GET with the declared agent; returns 2xx and 404 answers, throws the typed error for everything else. */
  private async get(url: string, signal?: AbortSignal): Promise<OutboundResponse> {
    let res: OutboundResponse;
    try {
      res = await this.http.fetch(url, {
        headers: { 'user-agent': this.userAgent, accept: 'application/json' },
        signal,
        maxBytes: MAX_BYTES,
        provider: 'sec',
      });
    } catch (err) {
      // The caller's abort (Temporal cancellation) and the SSRF guard's refusal are not outages.
      if (signal?.aborted || !(err instanceof OutboundError) || err.kind === 'blocked') throw err;
      throw new RegistryUnavailableError(REGISTRY, err.message, { cause: err });
    }
    if ((res.status >= 200 && res.status < 300) || res.status === 404) return res;
    if (res.status === 429 || (res.status === 403 && res.text().includes(RATE_LIMIT_TEXT))) {
      const named = res.headers['retry-after'] || res.headers['x-ratelimit-reset'];
      throw new RegistryRateLimitedError(REGISTRY, named ? retryAfterMs(res.headers) : RATE_LIMIT_RETRY_MS);
    }
    if (res.status === 401 || res.status === 403) throw refused(res.status);
    throw new RegistryUnavailableError(REGISTRY, `HTTP ${res.status}`);
  }
}

/**
 * SEC has no credentials; its 403 for an undeclared agent is the same configuration problem as a
 * rejected key, so it is RegistryAuthError (type RegistryAuth, not retryable) with SEC's reason.
 */
function refused(status: number): RegistryAuthError {
  const err = new RegistryAuthError(REGISTRY);
  err.message = `${REGISTRY} refused the request (HTTP ${status}): the User-Agent must be declared as "<Company> <contact email>"`;
  return err;
}

function baseRecord(
  cik: string,
  name: string,
  retrievedAt: string,
  confidence: number,
): Omit<CompanyRecord, 'legal_form' | 'address' | 'industry' | 'tax_id' | 'lei'> {
  return {
    name,
    source: 'us_registry',
    source_id: cik,
    country_code: 'US',
    // EDGAR has no dissolution status: a registrant that stopped filing keeps its CIK and documents.
    status: 'active',
    registration_number: cik,
    incorporation_date: null,
    officers: [],
    financials: null,
    vat_number: null,
    dissolution_date: null,
    metadata: liveMetadata(retrievedAt, confidence),
    source_url: `https://www.sec.gov/cgi-bin/browse-edgar?action=getcompany&CIK=${cik.padStart(10, '0')}`,
  };
}

function isForeign(a: SecAddress): boolean {
  return a.isForeignLocation === 1 || a.isForeignLocation === true;
}

/** EDGAR's descriptions by lower-case name ("germany" -> DE), for addresses that carry only the description. */
const EDGAR_BY_DESCRIPTION = new Map(
  Object.values(EDGAR_LOCATIONS).flatMap(([iso, , description]) =>
    iso ? [[description.trim().toLowerCase(), iso] as const] : [],
  ),
);

/** The ISO 3166-1 alpha-2 country and region of an EDGAR state or country code ("2M" -> DE, "A6" -> CA/ON, "TX" -> US/TX). */
export function edgarLocation(code: string | null | undefined): { country: string; region: string | null } | undefined {
  const entry = code ? EDGAR_LOCATIONS[code.trim().toUpperCase()] : undefined;
  return entry?.[0] ? { country: entry[0], region: entry[1] } : undefined;
}

/**
 * ISO alpha-2 of an address; undefined when unknown. EDGAR writes its own location codes, not ISO:
 * countryCode "2M" (SIEMENS AG), or countryCode null and only stateOrCountry "2M"/"M0" with a
 * description "Germany"/"Japan" (Siemens Energy, Cool Japan Fund). A letters-only countryCode is
 * already ISO; one with a digit, stateOrCountry and the description are read through EDGAR's table.
 */
function countryCode(a: SecAddress | null | undefined): string | undefined {
  if (!a) return undefined;
  const cc = a.countryCode?.trim().toUpperCase();
  if (cc && /^[A-Z]{2}$/.test(cc)) return cc;
  return (
    edgarLocation(cc)?.country ??
    edgarLocation(a.stateOrCountry)?.country ??
    EDGAR_BY_DESCRIPTION.get(a.stateOrCountryDescription?.trim().toLowerCase() ?? '') ??
    EDGAR_BY_DESCRIPTION.get(a.country?.trim().toLowerCase() ?? '')
  );
}

function toAddress(a: SecAddress): CompanyAddress {
  const foreign = isForeign(a);
  const location = edgarLocation(a.stateOrCountry);
  const iso = countryCode(a);
  return {
    line_1: a.street1 ?? null,
    line_2: a.street2 ?? null,
    city: a.city ?? null,
    // stateOrCountry is a region only for a US state or a Canadian province ("TX", "A6" -> "ON");
    // for any other country it is the country's EDGAR code ("2M"), not a region.
    region: (foreign ? a.foreignStateTerritory : null) ?? location?.region ?? null,
    postal_code: a.zipCode ?? null,
    // Free text as EDGAR gives it ("Netherlands", "Germany"), as for the other registries; ISO in country_code.
    country:
      a.country ?? (foreign || (iso && iso !== 'US') ? (a.stateOrCountryDescription ?? iso ?? null) : (iso ?? 'US')),
  };
}

/**
 * The legal form from the name's suffix ("Apple Inc.", "MICROSOFT CORP", "TESLA, INC. /DE/",
 * "TOYOTA MOTOR CORP/", "Ares Acquisition Corp II"), else null.
 */
export function legalForm(name: string): string | null {
  const tail = name
    .toLowerCase()
    .replace(/\s*\/[a-z]{2,3}\/?\s*$/, '') // EDGAR's state-of-incorporation marker: "/DE/"
    .replace(/[\s.,/]+$/, '') // also the bare "/" EDGAR leaves after some names: "AMETEK INC/"
    .trim();
  // A series numeral after the form ("Corp. II"), tried only when the whole tail has no form:
  // the "V" of "ICTS INTERNATIONAL N V" is part of the form.
  const unnumbered = tail.replace(/\s+[ivx]+$/, '').replace(/[\s.,]+$/, '');
  for (const candidate of [tail, unnumbered])
    for (const [pattern, form] of LEGAL_FORMS) if (pattern.test(candidate)) return form;
  return null;
}

/** A CIK is up to 10 digits; leading zeros are dropped (0000320193 is 320193). */
export function normalizeCik(raw: string): string {
  const cik = raw.trim();
  if (!/^\d{1,10}$/.test(cik)) throw new InvalidInputError(REGISTRY, raw, `"${raw}" is not a CIK (up to 10 digits)`);
  return cik.replace(/^0+(?=\d)/, '');
}

function parseJson<T>(res: OutboundResponse): T {
  try {
    return res.json<T>();
  } catch (err) {
    throw new RegistryUnavailableError(REGISTRY, `unreadable answer (HTTP ${res.status})`, { cause: err });
  }
}
