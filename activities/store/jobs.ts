import { ApplicationFailure, Context } from '@temporalio/activity';
import { JobResultStore } from '../../db/repositories/job-results';
import { JobRepository } from '../../db/repositories/jobs';
import { ProjectionOutbox } from '../../db/repositories/projection-outbox';
import { CATALOG, type JobStatus, type JobType } from '../../jobs';
import type { ActivityDeps } from '../deps';

export interface StartJobResult {
  /** false when the job was cancelled (or otherwise ended) before a worker picked it up. */
  run: boolean;
  status: JobStatus;
  type: JobType;
  clientId: string;
  payload: Record<string, unknown>;
}

/** Job lifecycle activities: the only writers of a job's status after submission (besides cancel). */
export function createJobLifecycleActivities(deps: ActivityDeps) {
  const jobs = new JobRepository(deps.db, deps.config.DATABASE_SCHEMA);
  const results = new JobResultStore(deps.db, deps.storage);
  const projections = new ProjectionOutbox(deps.db);
  /**
   * A job that ended without completing keeps no result: its row went in the transaction, its
   * storage object (a result over 256 KB) goes after the commit. A retry removes it again, harmlessly.
   */
  const discardObject = async (jobId: string, status: JobStatus | undefined): Promise<void> => {
    if (status !== 'completed') await results.removeObject(jobId);
  };

  return {
    /**
     * queued -> processing, records worker_id and emits `job.started`. Idempotent: a retry (or a
     * new worker after a crash) keeps started_at. A row not visible yet is waited for (the API
     * commits it right after the workflow start, holding the job's submission lock until then);
     * a row still missing once that lock is free was never committed (the API died between the
     * workflow start and its commit) and never will be: the workflow ends at once, not after
     * 20 retries.
     */
    async startJob(input: { jobId: string }): Promise<StartJobResult> {
      const result = await jobs.withLockedJob(input.jobId, async (trx, job) => {
        const run = job.status === 'queued' || job.status === 'processing';
        const current = run ? await jobs.markStarted(trx, job, deps.workerId) : job;
        return {
          run,
          status: current.status,
          type: current.type,
          clientId: current.client_id,
          payload: current.payload,
        };
      });
      if (!result)
        throw ApplicationFailure.nonRetryable(
          `job ${input.jobId} not found: its submission was never committed`,
          'JobNotFound',
        );
      return result;
    },

    /**
     * processing -> completed with results_count and `job.completed`. Idempotent: a retry after the
     * commit (the worker died before reporting it) finds the job completed and keeps its result. A job
     * that was cancelled or failed meanwhile (the client's cancel, the deadline) gets its partial
     * result discarded. A type whose results project into IDAP owes its projection from the same
     * commit (the projection outbox): runJob projects next, and the sweepers retry past its attempts.
     */
    async completeJob(input: { jobId: string; resultsCount: number }): Promise<{ status: JobStatus }> {
      let changed: JobType | undefined;
      const status = await jobs.withLockedJob(input.jobId, async (trx, job) => {
        if (job.status === 'completed') return job.status;
        if (job.status !== 'processing') {
          await jobs.discardResult(trx, job.id);
          return job.status;
        }
        changed = job.type;
        const finished = await jobs.finish(trx, job, 'completed', {
          resultsCount: input.resultsCount,
          workerId: deps.workerId,
        });
        if (CATALOG[job.type].project) await projections.enqueue(trx, job, deps.config.PROJECTION_SWEEP_AFTER_SECONDS);
        return finished.status;
      });
      await discardObject(input.jobId, status);
      if (changed && status) countFinished(changed, status);
      return { status: status ?? 'cancelled' };
    },

    /** -> failed with error_message and `job.failed` (unless it already ended). */
    async failJob(input: { jobId: string; errorMessage: string }): Promise<{ status: JobStatus }> {
      let changed: JobType | undefined;
      const status = await jobs.withLockedJob(input.jobId, async (trx, job) => {
        if (job.status !== 'queued' && job.status !== 'processing') return job.status;
        changed = job.type;
        return (await jobs.finish(trx, job, 'failed', { errorMessage: input.errorMessage, workerId: deps.workerId }))
          .status;
      });
      await discardObject(input.jobId, status);
      if (changed && status) countFinished(changed, status);
      return { status: status ?? 'failed' };
    },

    /** After a workflow cancellation: -> cancelled (if the API has not done it) and partial results dropped. */
    async cancelJob(input: { jobId: string }): Promise<{ status: JobStatus }> {
      let changed: JobType | undefined;
      const status = await jobs.withLockedJob(input.jobId, async (trx, job) => {
        if (job.status !== 'queued' && job.status !== 'processing') {
          if (job.status === 'cancelled') await jobs.discardResult(trx, job.id);
          return job.status;
        }
        changed = job.type;
        return (await jobs.finish(trx, job, 'cancelled', {})).status;
      });
      await discardObject(input.jobId, status);
      if (changed && status) countFinished(changed, status);
      return { status: status ?? 'cancelled' };
    },
  };
}

export type JobLifecycleActivities = ReturnType<typeof createJobLifecycleActivities>;

/**
 * Jobs ended by a worker, by type and status (`leadjobs_jobs_finished_total` on the worker's metrics
 * endpoint). Counted after the commit of the change this call made, so a retry after its commit counts nothing; a
 * queued job cancelled by the API never reaches a worker and is not counted here.
 */
function countFinished(type: string, status: string): void {
  Context.current()
    .metricMeter.createCounter('leadjobs_jobs_finished', 'jobs', 'Jobs ended by workers, by type and status')
    .withTags({ job_type: type, status })
    .add(1);
}
