import { createCampaignActivities, type CampaignActivities } from './campaign/campaign';
import { createCompanyDataActivities, type CompanyDataActivities } from './company/crawl-company-data';
import type { ActivityDeps, JobActivityInput, JobActivityOutput } from './deps';
import { createLandingActivities } from './landing/crawl-landing';
import { createMailActivities, type MailActivities } from './mail';
import { createMapsActivities } from './maps/crawl-maps';
import { createPipelineActivities, type PipelineActivities } from './pipeline/pipeline';
import { createPeopleActivities } from './people/crawl-people';
import { createSiteActivities } from './site/crawl';
import { createSocialActivities } from './social/crawl-public-social';
import { createVerifyActivities } from './verify/crawl-verify';
import { createJobLifecycleActivities, type JobLifecycleActivities } from './store/jobs';
import { createLeadActivities, type LeadActivities } from './store/leads';
import { createWebhookActivities, type WebhookActivities } from './webhooks/deliver';

/**
 * The activities of each capability folder: a type that runs as one activity has one named after
 * it; a type that runs as steps (its catalog entry's `steps`) has the activities of its steps. A new
 * capability folder is one line here; what each type needs stays in its catalog file. A unit test
 * checks that every type the catalog calls available has its activity or its step set.
 */
export function createJobTypeActivities(deps: ActivityDeps) {
  return {
    ...createSiteActivities(deps),
    ...createCompanyDataActivities(deps),
    ...createVerifyActivities(deps),
    ...createMapsActivities(deps),
    ...createLandingActivities(deps),
    ...createSocialActivities(deps),
    ...createPeopleActivities(deps),
  };
}

export function createActivities(
  deps: ActivityDeps,
): JobLifecycleActivities &
  ReturnType<typeof createJobTypeActivities> &
  LeadActivities &
  WebhookActivities &
  PipelineActivities &
  CampaignActivities &
  MailActivities {
  return {
    ...createJobLifecycleActivities(deps),
    ...createJobTypeActivities(deps),
    ...createLeadActivities(deps),
    ...createWebhookActivities(deps),
    ...createPipelineActivities(deps),
    ...createCampaignActivities(deps),
    ...createMailActivities(deps),
  };
}

export type {
  ActivityDeps,
  CampaignActivities,
  MailActivities,
  CompanyDataActivities,
  JobActivityInput,
  JobActivityOutput,
  JobLifecycleActivities,
  LeadActivities,
  PipelineActivities,
  WebhookActivities,
};
