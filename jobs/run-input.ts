/**
 * The workflow input of a job (runJob's RunJobInput), built from the catalog. Here rather than in
 * api/ so that an activity can build it too (a campaign's claim creates its jobs' workflow inputs);
 * workflows import only the type.
 */
import type { Config } from '../lib/config';
import { CATALOG, type JobType } from './index';
import { activityTaskQueues } from './queues';

export interface RunJobInput {
  jobId: string;
  clientId: string;
  type: JobType;
  /**
   * From the type's catalog entry (jobs/<type>.ts): its activity's startToClose and the job's overall
   * deadline. `heartbeatMs`, the heartbeat timeout of the type's own activities, is
   * JOB_HEARTBEAT_TIMEOUT (jobs/limits.ts) when absent.
   */
  limits: { activityMs: number; deadlineMs: number; heartbeatMs?: number };
  /** The type's activity-only queues by key (e.g. rate-limited provider queues; jobs/<type>.ts activityQueues). */
  queues?: Record<string, string>;
  /**
   * The type's step set (workflows/steps.ts) when it runs as several steps (jobs/<type>.ts `steps`).
   * A string, not StepSetName: histories started before the rename of crawlCompanyData's set carry 'companyData'.
   */
  steps?: string;
  /**
   * The job's payload asks for the maps -> site -> verify pipeline (jobs/<type>.ts `pipeline`; crawlMaps
   * with `workflow`): after the job completed, runLeadPipeline runs as a child and runJob ends after it.
   */
  pipeline?: boolean;
  /**
   * Attempts of the workflow's own projection of the completed job into IDAP (PROJECTION_ATTEMPTS;
   * 10 when absent, as before the setting). Past them the workers' sweepers retry it.
   */
  projectionAttempts?: number;
}

/**
 * The workflow input of a job: its identity plus what its catalog entry says about limits and queues,
 * and whether its payload asks for the maps -> site -> verify pipeline after it.
 */
export function runJobInput(
  job: { id: string; client_id: string; type: JobType; payload: Record<string, unknown> },
  config: Config,
): RunJobInput {
  const spec = CATALOG[job.type];
  const pipeline = spec.pipeline?.(job.payload) ?? false;
  return {
    jobId: job.id,
    clientId: job.client_id,
    type: job.type,
    limits: { activityMs: spec.limits.activity.ms, deadlineMs: spec.limits.deadline.ms },
    queues: activityTaskQueues(config.TASK_QUEUE_PREFIX, spec.activityQueues?.(config) ?? []),
    ...(spec.steps ? { steps: spec.steps } : {}),
    ...(pipeline ? { pipeline } : {}),
    projectionAttempts: config.PROJECTION_ATTEMPTS,
  };
}
