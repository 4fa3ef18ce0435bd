import type { JobActivityOutput } from '../activities';
import type { RunJobInput } from '../jobs/run-input';

/** What a job type that runs as several workflow steps gets (workflows/steps.ts). */
export interface JobStepsInput {
  jobId: string;
  payload: Record<string, unknown>;
  limits: RunJobInput['limits'];
  queues: Record<string, string>;
}

/** A job type's steps: runJob calls it instead of the one activity named after the type. */
export type StepSet = (input: JobStepsInput) => Promise<JobActivityOutput>;
