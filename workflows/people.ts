import { ActivityCancellationType, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { CompanyDataActivities } from '../activities/company/crawl-company-data';
import type { CompanyRecord } from '../activities/company/types';
import type { JobActivityOutput } from '../activities/deps';
import type { PeopleActivities } from '../activities/people/crawl-people';
import type { JobStepsInput } from './step-input';
import { jobActivities } from './worker-loss';

/** Registry candidates asked for when a company name is searched. */
const REGISTRY_CANDIDATES = 5;

// Planning and resolution read Postgres only.
const planning = proxyActivities<PeopleActivities & CompanyDataActivities>({
  startToCloseTimeout: '30s', // a few queries; anything longer is a stuck connection
  retry: {
    initialInterval: '500ms',
    maximumInterval: '10s',
    maximumAttempts: 10,
    nonRetryableErrorTypes: ['InvalidInput'],
  },
});

/** The crawl and the result, with the type's limits (the site stage's 5 minutes). */
const onJobQueue = (activityMs: number, heartbeatMs?: number) =>
  // the crawl heartbeats every page and every half second
  jobActivities<PeopleActivities>(activityMs, { heartbeatMs, nonRetryable: ['InvalidInput', 'CompanyNotResolved'] });

/** One registry search on the registry's rate-limited queue (as crawlCompanyData asks it). */
const onRegistryQueue = (taskQueue: string) =>
  proxyActivities<CompanyDataActivities>({
    taskQueue,
    startToCloseTimeout: '30s', // one HTTP request; the outbound client gives up after 20 s
    heartbeatTimeout: '10s',
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    // Waiting for the registry's rate limit or a 429's reset is expected.
    scheduleToCloseTimeout: '5m',
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 4 },
  });

/**
 * crawlPeople: the plan (the website from the payload, else the client's IDAP business named like
 * company_name; a registry record with officers the client has), a registry search when the name
 * could not be resolved and the payload names a country (a cached answer first, as crawlCompanyData
 * keeps them), then the crawl of the site with the merge of people and the stored result.
 */
export async function crawlPeopleSteps(input: JobStepsInput): Promise<JobActivityOutput> {
  let plan = await planning.planPeople({ jobId: input.jobId, payload: input.payload });
  if (plan.registrySearch) {
    const { name, country } = plan.registrySearch;
    const { cached } = await planning.readRegistryCache({
      payload: { mode: 'search', name, country, limit: REGISTRY_CANDIDATES },
    });
    let records: CompanyRecord[];
    if (cached?.answer.mode === 'search') {
      records = cached.answer.records;
    } else {
      const key = country === 'US' ? 'sec' : 'companiesHouse';
      const queue = input.queues[key];
      if (!queue)
        throw ApplicationFailure.nonRetryable(`crawlPeople started without the ${key} registry queue`, 'InvalidInput');
      const registry = onRegistryQueue(queue);
      records =
        country === 'US'
          ? await registry.searchSec({ name, limit: REGISTRY_CANDIDATES })
          : await registry.searchCompaniesHouse({ name, limit: REGISTRY_CANDIDATES });
    }
    plan = await planning.resolvePeopleCompany({ jobId: input.jobId, plan, records });
  }
  return onJobQueue(input.limits.activityMs, input.limits.heartbeatMs).crawlPeople({ jobId: input.jobId, plan });
}
