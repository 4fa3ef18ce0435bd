import type { JobType } from '../lib/job-types';
import { createCompanyDataActivities, type CompanyDataActivities } from './company/crawl-company-data';
import type { ActivityDeps, JobActivityInput, JobActivityOutput } from './deps';
import { createSiteActivities } from './site/crawl';
import { createJobLifecycleActivities, type JobLifecycleActivities } from './store/jobs';
import { createLeadActivities, type LeadActivities } from './store/leads';

export type JobTypeActivity = (input: JobActivityInput) => Promise<JobActivityOutput>;
/** One activity per job type, named after it (crawlSite, crawlCompanyData, ...). */
export type JobTypeActivities = Record<JobType, JobTypeActivity>;

/**
 * The job types whose activity exists. The API refuses the others with 501; the list lives in
 * lib/job-types.ts (AVAILABLE_JOB_TYPES) because api/ may not import activities/, and a unit test
 * keeps the two in step.
 */
export function createJobTypeActivities(deps: ActivityDeps): Partial<JobTypeActivities> {
  return { ...createSiteActivities(deps) };
}

/** Job types run by several workflow steps rather than one activity (workflows/job.ts runType). */
export const STEPPED_JOB_TYPES = ['crawlCompanyData'] as const satisfies readonly JobType[];

export function createActivities(deps: ActivityDeps): JobLifecycleActivities & Partial<JobTypeActivities> & CompanyDataActivities & LeadActivities {
  return { ...createJobLifecycleActivities(deps), ...createJobTypeActivities(deps), ...createCompanyDataActivities(deps), ...createLeadActivities(deps) };
}

export type { ActivityDeps, CompanyDataActivities, JobActivityInput, JobActivityOutput, JobLifecycleActivities, LeadActivities };
