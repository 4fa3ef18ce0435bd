import {
  ActivityCancellationType,
  ApplicationFailure,
  patched,
  type ActivityOptions,
  type LocalActivityOptions,
  proxyActivities,
  proxyLocalActivities,
} from '@temporalio/workflow';
import type { CompanyDataActivities, CompanyQuery, RegistryAnswer } from '../activities/company/crawl-company-data';
import type { JobActivityOutput } from '../activities/deps';
import type { JobStepsInput } from './step-input';

// Cache reads and the result write are short Postgres work, run as local activities: in the
// worker that runs the workflow, without a trip through the task queue each (about 25 ms a step on
// the dev server; a cached answer is then one workflow task from startJob to completeJob).
const STORE_OPTIONS: LocalActivityOptions & ActivityOptions = {
  startToCloseTimeout: '30s', // one query or upsert; anything longer is a stuck connection
  retry: {
    initialInterval: '500ms',
    maximumInterval: '10s',
    maximumAttempts: 10,
    nonRetryableErrorTypes: ['InvalidInput'],
  },
};
const localStore = proxyLocalActivities<CompanyDataActivities>(STORE_OPTIONS);
// Jobs started before the change ran these steps as ordinary activities; their histories replay so.
const queuedStore = proxyActivities<CompanyDataActivities>(STORE_OPTIONS);
const LOCAL_STORE_PATCH = 'company-data-local-store';
// Companies House searches count the items they leave out; earlier histories called searchCompaniesHouse.
const CH_SKIPPED_PATCH = 'company-data-ch-skipped-items';

/**
 * One registry request per activity, on the registry's queue, whose worker-side rate limit
 * (maxTaskQueueActivitiesPerSecond) is the registry's limit across all workers.
 */
const onRegistryQueue = (taskQueue: string, requestMs: number) =>
  proxyActivities<CompanyDataActivities>({
    taskQueue,
    startToCloseTimeout: requestMs, // one HTTP request (jobs/crawl-company-data.ts limits.activity)
    // The activity heartbeats every half second while its request runs: a cancel reaches it within about half a second.
    heartbeatTimeout: '10s',
    // A cancelled job waits until the request has really stopped (as runJob does for job activities).
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
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
export async function crawlCompanyDataSteps(input: JobStepsInput): Promise<JobActivityOutput> {
  const store = patched(LOCAL_STORE_PATCH) ? localStore : queuedStore;
  const startedAt = Date.now();
  const { query, cached } = await store.readRegistryCache({ payload: input.payload });
  const answer = cached ? cached.answer : await askRegistry(query, input);
  return store.saveCompanyData({
    jobId: input.jobId,
    query,
    answer,
    cached: cached ? { retrievedAt: cached.retrievedAt, expiresAt: cached.expiresAt } : null,
    queryTimeMs: Date.now() - startedAt,
  });
}

async function askRegistry(query: CompanyQuery, input: JobStepsInput): Promise<RegistryAnswer> {
  const queue = (key: 'sec' | 'companiesHouse' | 'vies') => {
    const name = input.queues[key];
    if (!name)
      throw ApplicationFailure.nonRetryable(
        `crawlCompanyData started without the ${key} registry queue`,
        'InvalidInput',
      );
    return onRegistryQueue(name, input.limits.activityMs);
  };
  if (query.mode === 'vat')
    return { mode: 'vat', vat: await queue('vies').checkVatNumber({ vatNumber: query.vatNumber }) };
  if (query.country === 'US') {
    const sec = queue('sec');
    if (query.mode === 'search')
      return { mode: 'search', records: await sec.searchSec({ name: query.name, limit: query.limit }) };
    return { mode: 'lookup', record: await sec.lookupSec({ cik: query.identifier }) };
  }
  const ch = queue('companiesHouse');
  if (query.mode === 'search') {
    if (!patched(CH_SKIPPED_PATCH))
      return { mode: 'search', records: await ch.searchCompaniesHouse({ name: query.name, limit: query.limit }) };
    return { mode: 'search', ...(await ch.searchCompaniesHouseItems({ name: query.name, limit: query.limit })) };
  }
  const profile = await ch.fetchCompaniesHouseProfile({ companyNumber: query.identifier });
  const officers = await ch.fetchCompaniesHouseOfficers({ companyNumber: profile.source_id });
  return { mode: 'lookup', record: { ...profile, officers } };
}
