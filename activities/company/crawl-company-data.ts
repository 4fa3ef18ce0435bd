import { ApplicationFailure, Context } from '@temporalio/activity';
import { JobResultStore } from '../../db/repositories/job-results';
import { RegistryCache } from '../../db/repositories/registry-cache';
import { crawlCompanyDataPayload, type CrawlCompanyDataPayload } from '../../jobs/crawl-company-data';
import { HEARTBEAT_INTERVAL } from '../../jobs/limits';
import { BlockedAddressError } from '../../lib/outbound';
import { endpointHttp, parsePayload, type ActivityDeps, type JobActivityOutput } from '../deps';
import { pacedGlobally } from '../pacing';
import { CompaniesHouseClient, normalizeCompanyNumber } from './companies-house';
import { normalizeCik, SecClient } from './sec';
import {
  CompanyDataError,
  RegistryRateLimitedError,
  type CompanyOfficer,
  type CompanyRecord,
  type VatCheckResult,
} from './types';
import { ViesClient } from './vies';

/** The question of a crawlCompanyData job, from its payload. */
export type CompanyQuery =
  | { mode: 'search'; country: 'US' | 'GB'; name: string; limit: number }
  | { mode: 'lookup'; country: 'US' | 'GB'; identifier: string }
  | { mode: 'vat'; vatNumber: string };

/** What the registry said, before the job's envelope is put around it. */
export type RegistryAnswer =
  | {
      mode: 'search';
      records: CompanyRecord[];
      /** answered items that could not be a record (no number or title) */ skipped?: number;
    }
  | { mode: 'lookup'; record: CompanyRecord }
  | { mode: 'vat'; vat: VatCheckResult };

export interface CachedRegistryAnswer {
  answer: RegistryAnswer;
  retrievedAt: string;
  expiresAt: string;
}

type Source = 'us_registry' | 'uk_registry' | 'eu_vies';

/**
 * Where a question's answer is cached: the registry and the question normalised, so that
 * "Acme  Widgets" and "acme widgets", or CIK 0000320193 and 320193, share one entry.
 */
export function registryCacheKey(query: CompanyQuery): { source: Source; key: string } {
  if (query.mode === 'vat')
    return { source: 'eu_vies', key: `vat:${query.vatNumber.replace(/[\s.-]/g, '').toUpperCase()}` };
  const source: Source = query.country === 'US' ? 'us_registry' : 'uk_registry';
  if (query.mode === 'search')
    return { source, key: `search:${query.name.trim().toLowerCase().replace(/\s+/g, ' ')}:${query.limit}` };
  const id = query.country === 'US' ? normalizeCik(query.identifier) : normalizeCompanyNumber(query.identifier);
  return { source, key: `lookup:${id}` };
}

/**
 * The activities of crawlCompanyData (see workflows/company-data.ts). Each registry activity makes
 * exactly one registry request (at most: a warm SEC ticker index costs none), so that the rate
 * limit of its dedicated task queue is a limit on requests. Adapter errors become typed
 * ApplicationFailures: permanent ones non-retryable, a rate limit with the registry's own wait.
 */
export function createCompanyDataActivities(deps: ActivityDeps) {
  const { config } = deps;
  const cache = new RegistryCache(deps.db);
  const results = new JobResultStore(deps.db, deps.storage);
  let sec: SecClient | undefined;
  let ch: CompaniesHouseClient | undefined;
  let vies: ViesClient | undefined;

  const secClient = (): SecClient => {
    if (!config.SEC_USER_AGENT) {
      throw ApplicationFailure.nonRetryable(
        'the US registry (SEC EDGAR) is not configured: set SEC_USER_AGENT to "<Company> <contact email>"',
        'RegistryNotConfigured',
      );
    }
    return (sec ??= new SecClient({
      baseUrl: config.SEC_BASE_URL,
      dataBaseUrl: config.SEC_DATA_BASE_URL,
      eftsBaseUrl: config.SEC_EFTS_BASE_URL,
      userAgent: config.SEC_USER_AGENT,
      http: endpointHttp(deps),
    }));
  };
  const chClient = (): CompaniesHouseClient => {
    if (!config.COMPANIES_HOUSE_API_KEY) {
      throw ApplicationFailure.nonRetryable(
        'the UK registry (Companies House) is not configured: set COMPANIES_HOUSE_API_KEY',
        'RegistryNotConfigured',
      );
    }
    return (ch ??= new CompaniesHouseClient({
      baseUrl: config.COMPANIES_HOUSE_BASE_URL,
      apiKey: config.COMPANIES_HOUSE_API_KEY,
      http: endpointHttp(deps),
    }));
  };
  /**
   * SEC counts any one-second window. The registry queue's dispatch rate (jobs/crawl-company-data.ts)
   * is not enough on its own: activities dispatched on time but started late by a busy worker start
   * together (two of 30 lookups refused in CI, 2026-11-27). So the requests also take turns across
   * every worker (activities/pacing.ts), each starting 1 / (80% of SEC_REQUESTS_PER_SECOND) after the
   * previous one started and after its answer.
   */
  const secPaced = <T>(signal: AbortSignal, request: () => Promise<T>): Promise<T> =>
    pacedGlobally(deps.db, 'registry-sec', { gapMs: 1000 / (config.SEC_REQUESTS_PER_SECOND * 0.8) }, signal, request);
  // Temporal retries transient VIES failures with backoff (the workflow's retry policy): no inner retries.
  const viesClient = (): ViesClient =>
    (vies ??= new ViesClient({ baseUrl: config.VIES_BASE_URL, http: endpointHttp(deps), retries: 0 }));

  return {
    /**
     * The job's question (its payload, parsed with the catalog's schema) and the cached answer to it,
     * or null. Reads Postgres only; no registry request. An invalid payload fails for good.
     */
    async readRegistryCache(input: {
      payload: Record<string, unknown>;
    }): Promise<{ query: CompanyQuery; cached: CachedRegistryAnswer | null }> {
      const query = companyQuery(parsePayload(crawlCompanyDataPayload, input.payload));
      const { source, key } = typed(() => registryCacheKey(query));
      return { query, cached: (await cache.get<RegistryAnswer>(source, key)) ?? null };
    },

    /** US search by name over SEC's ticker index. */
    searchSec: (input: { name: string; limit: number }): Promise<CompanyRecord[]> =>
      registryCall((signal) => secPaced(signal, () => secClient().search(input.name, input.limit, signal))),

    /** US lookup by CIK in SEC's submissions API. */
    lookupSec: (input: { cik: string }): Promise<CompanyRecord> =>
      registryCall((signal) => secPaced(signal, () => secClient().lookup(input.cik, signal))),

    /** GB search by name at Companies House. Kept for jobs started before searchCompaniesHouseItems: their histories replay with it. */
    searchCompaniesHouse: (input: { name: string; limit: number }): Promise<CompanyRecord[]> =>
      registryCall((signal) => chClient().search(input.name, input.limit, signal)),

    /** GB search by name at Companies House, with the number of answered items that could not be a record. */
    searchCompaniesHouseItems: (input: {
      name: string;
      limit: number;
    }): Promise<{ records: CompanyRecord[]; skipped: number }> =>
      registryCall((signal) => chClient().searchItems(input.name, input.limit, signal)),

    /** GB company profile (the record without officers). */
    fetchCompaniesHouseProfile: (input: { companyNumber: string }): Promise<CompanyRecord> =>
      registryCall((signal) => chClient().profile(input.companyNumber, signal)),

    /** GB company officers. */
    fetchCompaniesHouseOfficers: (input: { companyNumber: string }): Promise<CompanyOfficer[]> =>
      registryCall((signal) => chClient().officers(input.companyNumber, signal)),

    /** EU VAT number check at VIES. */
    checkVatNumber: (input: { vatNumber: string }): Promise<VatCheckResult> =>
      registryCall((signal) => viesClient().check(input.vatNumber, signal)),

    /**
     * Caches a fresh answer (24 h by default) and stores the job's result in the spec's §2.4 shape,
     * every record's metadata saying whether it came from the cache and until when it is cached.
     * Idempotent: a retry writes the same cache row and the same result row.
     */
    async saveCompanyData(input: {
      jobId: string;
      query: CompanyQuery;
      answer: RegistryAnswer;
      cached: { retrievedAt: string; expiresAt: string } | null;
      queryTimeMs: number;
    }): Promise<JobActivityOutput> {
      const { source, key } = typed(() => registryCacheKey(input.query));
      let stamp: { cached: boolean; retrievedAt: string; expiresAt: string };
      if (input.cached) {
        stamp = { cached: true, ...input.cached };
      } else {
        const retrievedAt = retrievedAtOf(input.answer) ?? new Date().toISOString();
        stamp = {
          cached: false,
          retrievedAt,
          expiresAt: await cache.put(source, key, input.answer, retrievedAt, config.REGISTRY_CACHE_TTL_SECONDS),
        };
      }
      const result = companyDataResult(input.query, stampAnswer(input.answer, stamp), source, stamp, input.queryTimeMs);
      await results.save(input.jobId, result);
      return { resultsCount: input.answer.mode === 'search' ? input.answer.records.length : 1 };
    },
  };
}

export type CompanyDataActivities = ReturnType<typeof createCompanyDataActivities>;

/** The job result of spec §2.4 for each mode. */
export function companyDataResult(
  query: CompanyQuery,
  answer: RegistryAnswer,
  source: Source,
  stamp: { cached: boolean; retrievedAt: string; expiresAt: string },
  queryTimeMs: number,
): Record<string, unknown> {
  const metadata = { source, cached: stamp.cached, retrieved_at: stamp.retrievedAt, cache_expires_at: stamp.expiresAt };
  const query_time_ms = Math.max(0, Math.round(queryTimeMs));
  if (answer.mode === 'search' && query.mode === 'search') {
    return {
      success: true,
      query: query.name,
      country: query.country,
      total_results: answer.records.length,
      sources_queried: [source],
      query_time_ms,
      results: answer.records,
      // Registry results are not matched against the client's canonical records.
      metadata: { ...metadata, skipped_items: answer.skipped ?? 0, dedupe_stats: { processed: false } },
    };
  }
  if (answer.mode === 'lookup' && query.mode === 'lookup')
    return { success: true, country: query.country, query_time_ms, data: answer.record, metadata };
  if (answer.mode === 'vat') return { success: true, query_time_ms, data: answer.vat, metadata };
  throw ApplicationFailure.nonRetryable(
    `answer mode ${answer.mode} does not fit query mode ${query.mode}`,
    'InvalidInput',
  );
}

function stampAnswer(
  answer: RegistryAnswer,
  stamp: { cached: boolean; retrievedAt: string; expiresAt: string },
): RegistryAnswer {
  const mark = (r: CompanyRecord): CompanyRecord => ({
    ...r,
    metadata: {
      ...r.metadata,
      cached: stamp.cached,
      retrieved_at: r.metadata.retrieved_at,
      data_freshness: stamp.cached ? 'cached' : 'live',
      cache_expires_at: stamp.expiresAt,
    },
  });
  if (answer.mode === 'search') return { ...answer, records: answer.records.map(mark) };
  if (answer.mode === 'lookup') return { mode: 'lookup', record: mark(answer.record) };
  return answer;
}

function retrievedAtOf(answer: RegistryAnswer): string | undefined {
  if (answer.mode === 'search') return answer.records[0]?.metadata.retrieved_at;
  if (answer.mode === 'lookup') return answer.record.metadata.retrieved_at;
  return undefined;
}

/** The payload (validated by the API with the same schema) as the question the registries answer. */
export function companyQuery(p: CrawlCompanyDataPayload): CompanyQuery {
  const missing = (field: string) =>
    ApplicationFailure.nonRetryable(`${field} is required for mode ${p.mode}`, 'InvalidInput');
  if (p.mode === 'vat') {
    if (!p.vat_number) throw missing('vat_number');
    return { mode: 'vat', vatNumber: p.vat_number };
  }
  if (!p.country) throw missing('country');
  if (p.mode === 'lookup') {
    if (!p.identifier) throw missing('identifier');
    return { mode: 'lookup', country: p.country, identifier: p.identifier };
  }
  if (!p.name) throw missing('name');
  return { mode: 'search', country: p.country, name: p.name, limit: p.limit };
}

/** Runs one registry request with the activity's cancellation signal, heartbeating, and types its failure. */
async function registryCall<T>(call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ctx = Context.current();
  ctx.heartbeat();
  const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_INTERVAL.ms);
  try {
    return await call(ctx.cancellationSignal);
  } catch (err) {
    throw toFailure(err);
  } finally {
    clearInterval(beat);
  }
}

function typed<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw toFailure(err);
  }
}

function toFailure(err: unknown): unknown {
  if (err instanceof CompanyDataError) {
    return ApplicationFailure.create({
      message: err.message,
      type: err.type,
      nonRetryable: !err.retryable,
      nextRetryDelay: err instanceof RegistryRateLimitedError ? err.retryAfterMs : undefined,
    });
  }
  // A registry base URL that resolves to a private address is configuration, not an outage.
  if (err instanceof BlockedAddressError) return ApplicationFailure.nonRetryable(err.message, 'OutboundBlocked');
  return err;
}
