import type { z } from 'zod';
import type { Config } from '../lib/config';
import type { Source } from '../lib/idap';
import type { Projection } from './projection';

/**
 * The step sets of workflows/steps.ts, each named after its job type (`<type>Steps`): a job type that
 * runs as several workflow steps names one in its catalog entry (JobSpec.steps).
 */
export type StepSetName = 'crawlCompanyDataSteps' | 'crawlMapsSteps' | 'crawlPeopleSteps' | 'crawlPublicSocialSteps';

/** The seven job types of spec §1.1. Each is also the name of the activity (or workflow step set) that does its work. */
export const JOB_TYPES = [
  'crawlMaps',
  'crawlSite',
  'crawlVerify',
  'crawlPeople',
  'crawlCompanyData',
  'crawlLanding',
  'crawlPublicSocial',
] as const;
export type JobType = (typeof JOB_TYPES)[number];

export const JOB_STATUSES = ['queued', 'processing', 'completed', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export const TERMINAL_STATUSES: readonly JobStatus[] = ['completed', 'failed', 'cancelled'];

export const EVENT_NAMES = [
  'job.queued',
  'job.started',
  'job.completed',
  'job.failed',
  'job.cancelled',
  'campaign.terminal',
  'webhook.disabled',
  'integration.spend_limit_exceeded',
] as const;
export type EventName = (typeof EVENT_NAMES)[number];

/**
 * Spec priority 0-10 (higher first) onto Temporal's priorityKey (lower first). The dev server
 * runs with matching.priorityLevels=11, so every spec level keeps its own key: 10 -> 1 ... 0 -> 11.
 */
export const PRIORITY_LEVELS = 11;
export function priorityKeyFor(priority: number): number {
  return PRIORITY_LEVELS - Math.max(0, Math.min(10, Math.round(priority)));
}

/** A duration with the reason it is what it is (shown next to each other so the next reader can judge both). */
export interface Limit {
  ms: number;
  why: string;
}

/** How long a job type may take. Plain data: the API passes it to the workflow in its input. */
export interface JobLimits {
  /** startToClose of the type's activity (or of each of its steps' main activity). */
  activity: Limit;
  /** The job's overall deadline, counted from when a worker starts it: at the deadline it fails with a time-out message. */
  deadline: Limit;
}

/** A task queue that only runs activities of this type, at a rate shared by all workers (e.g. a registry's limit). */
export interface ActivityQueue {
  /** Key the workflow uses to find it (RunJobInput.queues). */
  key: string;
  /** Queue name without the deployment prefix. */
  queue: string;
  /** Dispatch limit for the whole queue, enforced by Temporal across workers; none when the provider publishes none. */
  perSecond?: number;
}

/**
 * Everything the service knows about one job type: one file per type in jobs/, collected in
 * jobs/index.ts. The API validates with `payload`, documents `result`, picks the queue and the
 * default priority; the worker polls the queues; the activity parses its payload with `payload`;
 * the lead pipeline projects results with `project`.
 */
export interface JobSpec<P extends z.ZodType = z.ZodType> {
  type: JobType;
  /** One line for the OpenAPI document and README. */
  summary: string;
  /** The payload: the one source of validation, TypeScript types (z.infer) and the OpenAPI schema. */
  payload: P;
  /** The result `data` of a completed job, for the OpenAPI document and the tests. */
  result: z.ZodType;
  /** Spec §4.1 default priority (0-10). */
  defaultPriority: number;
  /** The type's task queue without the deployment prefix. */
  queue: string;
  /** Jobs whose payload says so run on `<queue>-test` (spec: `test: true` "routes the job to a test queue"). */
  testQueue?(payload: z.infer<P>): boolean;
  /**
   * The name of its step set in workflows/steps.ts when the type runs as several workflow steps
   * (e.g. one activity per provider request on a rate-limited queue); otherwise it runs as one
   * activity named after the type.
   */
  steps?: StepSetName;
  /**
   * True when a completed job of this payload runs the maps -> site -> verify pipeline after it
   * (crawlMaps with `workflow`): runJob gets it as RunJobInput.pipeline.
   */
  pipeline?(payload: Record<string, unknown>): boolean;
  /** Queues that run only some activities of the type, each with its shared rate limit. */
  activityQueues?(config: Config): ActivityQueue[];
  limits: JobLimits;
  /** Most queued jobs on the type's task queue across all clients (spec §8); more -> 503. */
  capacity?(config: Config): number;
  /**
   * Its own submit endpoint: `typed` takes {payload, priority}; `top-level` takes the payload keys at
   * the top level of the body beside priority (crawlMaps, as the spec's examples do). Every type also
   * has the generic POST /api/v1/jobs/submit.
   */
  submitRoute?: 'typed' | 'top-level';
  /** Spec §2.1: the submit response carries `success` (crawlMaps). */
  submitResponseSuccess?: boolean;
  /** false while its worker side does not exist: submissions get 501. */
  available: boolean;
  /** The IDAP `source` of the resources its results become (spec §4.5). */
  idapSource: Source;
  /** How a completed result becomes IDAP resources (and leads); none: the result projects nothing. */
  project?(result: Record<string, unknown>, job: { jobId: string }): Projection;
  /**
   * Where a completed result's Markdown compendium lies (`s3://<bucket>/<key>`), if it has one: the
   * lead index makes its text searchable (only for the client's own completed jobs of this type).
   */
  compendiumLocation?(result: Record<string, unknown>): string | null;
}
