import { ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { CompanyDataActivities, CompanyQuery, RegistryAnswer } from '../activities/company/crawl-company-data';
import type { JobActivityOutput } from '../activities/deps';

/** The dedicated task queues of the registries (named in workers/task-queues.ts, passed in by the API). */
export interface RegistryQueues {
  sec: string;
  companiesHouse: string;
  vies: string;
}

export interface CompanyDataInput {
  jobId: string;
  payload: Record<string, unknown>;
  queues: RegistryQueues;
}

// Cache reads and the result write are short Postgres work on the job's own queue.
const store = proxyActivities<CompanyDataActivities>({
  startToCloseTimeout: '30s', // one query or upsert; anything longer is a stuck connection
  retry: { initialInterval: '500ms', maximumInterval: '10s', maximumAttempts: 10, nonRetryableErrorTypes: ['InvalidInput'] },
});

/**
 * One registry request per activity, on the registry's queue, whose worker-side rate limit
 * (maxTaskQueueActivitiesPerSecond) is the registry's limit across all workers.
 */
const onRegistryQueue = (taskQueue: string) =>
  proxyActivities<CompanyDataActivities>({
    taskQueue,
    startToCloseTimeout: '30s', // one HTTP request; the outbound client gives up after 20 s
    // Waiting for the queue's rate limit, or a 429's Retry-After (Companies House: up to 5 minutes), is expected.
    scheduleToCloseTimeout: '10m',
    // An outage is retried three times (1 s, 2 s, 4 s), then the job fails naming the registry.
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 4 },
  });

/**
 * crawlCompanyData: a cached answer if the same question was answered within the cache time,
 * otherwise the registry's answer (SEC, Companies House or VIES), then the §2.4 result. Unknown
 * companies, rejected credentials and invalid input fail at once; outages after the retries.
 */
export async function companyData(input: CompanyDataInput): Promise<JobActivityOutput> {
  const query = companyQuery(input.payload);
  const startedAt = Date.now();
  const cached = await store.readRegistryCache({ query });
  const answer = cached ? cached.answer : await askRegistry(query, input.queues);
  return store.saveCompanyData({
    jobId: input.jobId,
    query,
    answer,
    cached: cached ? { retrievedAt: cached.retrievedAt, expiresAt: cached.expiresAt } : null,
    queryTimeMs: Date.now() - startedAt,
  });
}

async function askRegistry(query: CompanyQuery, queues: RegistryQueues): Promise<RegistryAnswer> {
  if (query.mode === 'vat') return { mode: 'vat', vat: await onRegistryQueue(queues.vies).checkVatNumber({ vatNumber: query.vatNumber }) };
  if (query.country === 'US') {
    const sec = onRegistryQueue(queues.sec);
    if (query.mode === 'search') return { mode: 'search', records: await sec.searchSec({ name: query.name, limit: query.limit }) };
    return { mode: 'lookup', record: await sec.lookupSec({ cik: query.identifier }) };
  }
  const ch = onRegistryQueue(queues.companiesHouse);
  if (query.mode === 'search') return { mode: 'search', records: await ch.searchCompaniesHouse({ name: query.name, limit: query.limit }) };
  const profile = await ch.fetchCompaniesHouseProfile({ companyNumber: query.identifier });
  const officers = await ch.fetchCompaniesHouseOfficers({ companyNumber: profile.source_id });
  return { mode: 'lookup', record: { ...profile, officers } };
}

/** The payload as the API validated it (api/schemas/jobs.ts crawlCompanyDataPayload), as a query. */
export function companyQuery(payload: Record<string, unknown>): CompanyQuery {
  const str = (key: string): string => {
    const v = payload[key];
    if (typeof v !== 'string' || v === '') throw ApplicationFailure.nonRetryable(`${key} is required for mode ${String(payload.mode ?? 'search')}`, 'InvalidInput');
    return v;
  };
  const country = (): 'US' | 'GB' => {
    const c = str('country').toUpperCase();
    if (c !== 'US' && c !== 'GB') throw ApplicationFailure.nonRetryable('country must be US or GB', 'InvalidInput');
    return c;
  };
  const mode = payload.mode ?? 'search';
  if (mode === 'vat') return { mode, vatNumber: str('vat_number') };
  if (mode === 'lookup') return { mode, country: country(), identifier: str('identifier') };
  if (mode === 'search') return { mode, country: country(), name: str('name'), limit: typeof payload.limit === 'number' ? payload.limit : 10 };
  throw ApplicationFailure.nonRetryable(`unknown mode ${String(mode)}`, 'InvalidInput');
}
