import type { JobType } from '../lib/job-types';
import type { ActivityDeps, JobActivityInput, JobActivityOutput } from './deps';
import { createJobLifecycleActivities, type JobLifecycleActivities } from './store/jobs';

export type JobTypeActivity = (input: JobActivityInput) => Promise<JobActivityOutput>;
/** One activity per job type, named after it (crawlSite, crawlCompanyData, ...). */
export type JobTypeActivities = Record<JobType, JobTypeActivity>;

/**
 * The job types whose activity exists. The API refuses the others with 501; the list lives in
 * lib/job-types.ts (AVAILABLE_JOB_TYPES) because api/ may not import activities/, and a unit test
 * keeps the two in step.
 */
export function createJobTypeActivities(_deps: ActivityDeps): Partial<JobTypeActivities> {
  return {};
}

export function createActivities(deps: ActivityDeps): JobLifecycleActivities & Partial<JobTypeActivities> {
  return { ...createJobLifecycleActivities(deps), ...createJobTypeActivities(deps) };
}

export type { ActivityDeps, JobActivityInput, JobActivityOutput, JobLifecycleActivities };
