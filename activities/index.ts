import type { JobType } from '../jobs';
import { createCompanyDataActivities, type CompanyDataActivities } from './company/crawl-company-data';
import type { ActivityDeps, JobActivityInput, JobActivityOutput } from './deps';
import { createMapsActivities } from './maps/crawl-maps';
import { createSiteActivities } from './site/crawl';
import { createVerifyActivities } from './verify/crawl-verify';
import { createJobLifecycleActivities, type JobLifecycleActivities } from './store/jobs';
import { createLeadActivities, type LeadActivities } from './store/leads';
import { createWebhookActivities, type WebhookActivities } from './webhooks/deliver';

export type JobTypeActivity = (input: JobActivityInput) => Promise<JobActivityOutput>;
/** One activity per job type, named after the type; types that run as workflow steps have none. */
export type JobTypeActivities = Record<JobType, JobTypeActivity>;

/**
 * The activities of each job type's capability folder. Registering a new type = one line here
 * (plus its catalog file in jobs/). A unit test checks that every type the catalog calls available
 * has its activity or its workflow steps.
 */
export function createJobTypeActivities(deps: ActivityDeps) {
  return {
    ...createSiteActivities(deps),
    ...createCompanyDataActivities(deps),
    ...createVerifyActivities(deps),
    ...createMapsActivities(deps),
  };
}

export function createActivities(deps: ActivityDeps): JobLifecycleActivities & ReturnType<typeof createJobTypeActivities> & LeadActivities & WebhookActivities {
  return { ...createJobLifecycleActivities(deps), ...createJobTypeActivities(deps), ...createLeadActivities(deps), ...createWebhookActivities(deps) };
}

export type { ActivityDeps, CompanyDataActivities, JobActivityInput, JobActivityOutput, JobLifecycleActivities, LeadActivities, WebhookActivities };
