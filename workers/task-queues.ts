import type { JobType } from '../lib/job-types';

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

/** Every queue a full worker polls. */
export function allJobTaskQueues(prefix: string): string[] {
  return [...Object.keys(QUEUE_BY_TYPE).map((t) => jobTaskQueue(prefix, t as JobType)), jobTaskQueue(prefix, 'crawlCompanyData', { test: true })];
}
