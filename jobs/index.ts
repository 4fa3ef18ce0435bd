/**
 * The job catalog: every job type's spec (payload and result schemas, default priority, queue,
 * limits), one file per type. Adding a job type = its file here + its activities/<capability>/
 * folder + registering both (this list; activities/index.ts; workflows/job.ts if it runs as steps).
 */
import { crawlCompanyData } from './crawl-company-data';
import { crawlLanding } from './crawl-landing';
import { crawlMaps } from './crawl-maps';
import { crawlPeople } from './crawl-people';
import { crawlPublicSocial } from './crawl-public-social';
import { crawlSite } from './crawl-site';
import { crawlVerify } from './crawl-verify';
import { isObj, ProjectionBuilder, type Projection } from './projection';
import type { JobSpec, JobType } from './types';

export * from './types';

/** Every type's spec under its name (a unit test checks that each spec's `type` is its key). */
export const CATALOG: Readonly<Record<JobType, JobSpec>> = {
  crawlMaps,
  crawlSite,
  crawlVerify,
  crawlPeople,
  crawlCompanyData,
  crawlLanding,
  crawlPublicSocial,
} as const;

export const jobSpec = (type: JobType): JobSpec => CATALOG[type];

export const ALL_JOB_SPECS: readonly JobSpec[] = Object.values(CATALOG);

/** Job types whose worker side exists; submitting another is 501. */
export const AVAILABLE_JOB_TYPES: readonly JobType[] = ALL_JOB_SPECS.filter((s) => s.available).map((s) => s.type);

/** The IDAP projection of a job's result (its catalog entry's `project`); empty when it holds no resources. */
export function projectResult(type: JobType, result: unknown, job: { jobId: string }): Projection {
  const spec = CATALOG[type];
  if (!spec.project || !isObj(result)) return new ProjectionBuilder().build(spec.idapSource);
  return spec.project(result, job);
}

export type { Projection, ProjectionNode } from './projection';
