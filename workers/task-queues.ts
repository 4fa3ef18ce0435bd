import type { Config } from '../lib/config';
import type { JobType } from '../lib/job-types';
import type { RegistryQueues } from '../workflows/company-data';

/**
 * Task-queue names: spelled here only. One queue per job type, so each type scales and is
 * rate-limited on its own; crawlCompanyData's `test: true` jobs go to a separate test queue.
 */
const QUEUE_BY_TYPE: Record<JobType, string> = {
  crawlMaps: 'crawl-maps',
  crawlSite: 'crawl-site',
  crawlVerify: 'crawl-verify',
  crawlPeople: 'crawl-people',
  crawlCompanyData: 'crawl-company-data',
  crawlLanding: 'crawl-landing',
  crawlPublicSocial: 'crawl-public-social',
};

export function jobTaskQueue(prefix: string, type: JobType, options: { test?: boolean } = {}): string {
  return `${prefix}-${QUEUE_BY_TYPE[type]}${options.test ? '-test' : ''}`;
}

/** The lead-indexing workflows (indexLeads, one per client) started by the API. */
export function leadsTaskQueue(prefix: string): string {
  return `${prefix}-leads`;
}

/** Every queue a full worker polls. */
export function allJobTaskQueues(prefix: string): string[] {
  return [...Object.keys(QUEUE_BY_TYPE).map((t) => jobTaskQueue(prefix, t as JobType)), jobTaskQueue(prefix, 'crawlCompanyData', { test: true }), leadsTaskQueue(prefix)];
}

/**
 * The company registries' queues: crawlCompanyData sends each registry request there, and their
 * workers set a task-queue rate limit, which Temporal enforces across all workers polling the queue.
 */
export function registryTaskQueues(prefix: string): RegistryQueues {
  return { sec: `${prefix}-registry-sec`, companiesHouse: `${prefix}-registry-companies-house`, vies: `${prefix}-registry-vies` };
}

/**
 * Each registry queue with its dispatch rate (none for VIES, which publishes no limit). Temporal's
 * dispatch limiter is a token bucket whose burst is about its rate, so a full bucket plus one second
 * of refill can start twice the rate within one second (measured: 10 starts in one second at rate 5).
 * SEC counts any one-second window, so its queue runs at 40% of SEC_REQUESTS_PER_SECOND: at most
 * 80% of the limit in any second, the rest a margin for the jitter between dispatch and request.
 * Companies House counts a 5-minute window, where a burst of two is lost in the noise.
 */
export function registryQueueLimits(config: Pick<Config, 'TASK_QUEUE_PREFIX' | 'SEC_REQUESTS_PER_SECOND' | 'COMPANIES_HOUSE_REQUESTS_PER_5_MIN'>): { taskQueue: string; perSecond?: number }[] {
  const queues = registryTaskQueues(config.TASK_QUEUE_PREFIX);
  return [
    { taskQueue: queues.sec, perSecond: config.SEC_REQUESTS_PER_SECOND * 0.4 },
    { taskQueue: queues.companiesHouse, perSecond: config.COMPANIES_HOUSE_REQUESTS_PER_5_MIN / 300 },
    { taskQueue: queues.vies },
  ];
}
