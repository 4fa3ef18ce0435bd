import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  executeChild,
  isCancellation,
  log,
  proxyActivities,
  TimeoutFailure,
  workflowInfo,
} from '@temporalio/workflow';
import type { JobActivityInput, JobActivityOutput, JobLifecycleActivities, PipelineActivities } from '../activities';
import type { LeadActivities } from '../activities/store/leads';
import type { JobType } from '../jobs';
import type { RunJobInput } from '../jobs/run-input';
import { deadlineMessage, LIFECYCLE_STEP, PROJECTION_STEP } from '../jobs/limits';
import { requestLeadIndexing } from './leads';
import { PIPELINE_EXECUTION_TIMEOUT_MS, runLeadPipeline } from './lead-pipeline';
import { stepSetOf } from './steps';
import { jobActivities } from './worker-loss';

export type { RunJobInput };

export interface RunJobResult {
  jobId: string;
  status: 'completed' | 'failed' | 'cancelled' | 'skipped';
  resultsCount?: number;
}

export type { JobStepsInput } from './step-input';

// Lifecycle steps are short Postgres transactions, retried quickly through a database hiccup
// (startJob waits for the API's commit itself: activities/store/jobs.ts). It is the gate into `processing`, so
// it always goes through the task queue: eager dispatch would hand it straight back to the same
// worker and skip the queue's priority order.
const lifecycle = proxyActivities<JobLifecycleActivities>({
  startToCloseTimeout: LIFECYCLE_STEP.ms, // one small transaction; longer is a stuck connection
  retry: { initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '10s', maximumAttempts: 20 },
  allowEagerDispatch: false,
});

// The finishing steps must run even while the workflow is being cancelled.
const finishing = proxyActivities<JobLifecycleActivities>({
  startToCloseTimeout: LIFECYCLE_STEP.ms, // one small transaction; longer is a stuck connection
  retry: { initialInterval: '500ms', maximumInterval: '30s' },
});

// The fast path of a completed job's projection: about 3 minutes at the default 10 attempts. The job
// owes it in Postgres from its completing commit (the projection outbox), so a longer outage is the
// workers' sweepers' to retry (workers/projection-sweep.ts).
const projecting = (attempts: number) =>
  proxyActivities<LeadActivities>({
    startToCloseTimeout: PROJECTION_STEP.ms, // a 100-page site's resources in one transaction
    retry: { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: attempts },
  });

/** The job type's own activity (named after the type), with the limits of its catalog entry. */
function typeActivity(
  input: RunJobInput,
): (input: { jobId: string; clientId: string; payload: Record<string, unknown> }) => Promise<JobActivityOutput> {
  // A worker lost (killed, partitioned) does not count against the attempts: workflows/worker-loss.ts.
  const activities = jobActivities<Record<string, (input: JobActivityInput) => Promise<JobActivityOutput>>>(
    input.limits.activityMs, // the type's activity limit (jobs/<type>.ts says why)
    { heartbeatMs: input.limits.heartbeatMs, nonRetryable: ['InvalidInput', 'NotFound'] },
  );
  // A proxy: every name is an activity stub, so the lookup is never undefined.
  return activities[input.type] as (input: JobActivityInput) => Promise<JobActivityOutput>;
}

/**
 * One job, start to end: startJob (queued -> processing), the job type's work (it stores its
 * result), completeJob. The work has the type's overall deadline (jobs/<type>.ts, at most the
 * spec's 10 minutes), counted from the start of processing; at the deadline the work is cancelled
 * and the job fails saying it ran out of time. A failure is recorded with failJob and fails the
 * workflow (Failed in the Web UI); a cancellation records cancelJob and ends it as Cancelled.
 * Input: RunJobInput (the payload stays in Postgres). Workflow id: `job/<jobId>`.
 */
export async function runJob(input: RunJobInput): Promise<RunJobResult> {
  const { jobId } = input;
  try {
    const started = await lifecycle.startJob({ jobId });
    if (!started.run) return { jobId, status: 'skipped' };
    const output = await withDeadline(input, () => runType(input, started.payload));
    const done = await finishing.completeJob({ jobId, resultsCount: output.resultsCount });
    if (done.status === 'completed') await CancellationScope.nonCancellable(() => publishLeads(input));
    if (done.status === 'completed' && input.pipeline) await runPipeline(input);
    return {
      jobId,
      status: done.status === 'completed' ? 'completed' : 'cancelled',
      resultsCount: output.resultsCount,
    };
  } catch (err) {
    if (isCancellation(err)) {
      await CancellationScope.nonCancellable(() => finishing.cancelJob({ jobId }));
      throw err;
    }
    const message = failureMessage(err, input.type);
    log.warn('job failed', { jobId, message });
    await finishing.failJob({ jobId, errorMessage: message });
    throw ApplicationFailure.nonRetryable(message, 'JobFailed');
  }
}

/**
 * Runs the work in a scope that is cancelled at the deadline. A cancellation that did not come from
 * the client (the workflow itself is not being cancelled) is the deadline: a typed failure.
 */
async function withDeadline<T>(input: RunJobInput, work: () => Promise<T>): Promise<T> {
  try {
    return await CancellationScope.withTimeout(input.limits.deadlineMs, work);
  } catch (err) {
    if (isCancellation(err) && !CancellationScope.current().consideredCancelled) {
      throw ApplicationFailure.nonRetryable(
        deadlineMessage(input.type, input.limits.deadlineMs),
        'JobDeadlineExceeded',
      );
    }
    throw err;
  }
}

/**
 * After a job completed: its result as IDAP resources, then its businesses in the lead index (by the
 * client's indexLeads workflow, which retries through an Elasticsearch outage; nothing queued is lost
 * meanwhile). The job is already complete, so a failure here is logged, never a failed job: the
 * projection stays owed in the projection outbox, and the workers' sweepers retry it.
 */
async function publishLeads(input: RunJobInput): Promise<void> {
  try {
    const projected = await projecting(input.projectionAttempts ?? 10).projectJobResult({
      jobId: input.jobId,
      clientId: input.clientId,
      type: input.type,
    });
    if (projected.businesses > 0) await requestLeadIndexing(input.clientId);
  } catch (err) {
    log.error("publishing the job's leads failed; the projection sweepers retry it", {
      jobId: input.jobId,
      error: err instanceof Error ? err.message : String(err),
    });
  }
}

/**
 * The pipeline of a completed job, as child `job/<jobId>/pipeline` on this queue (its stage activities
 * go to the crawl-site and crawl-verify queues). A cancel of this workflow (a campaign cancel) is passed
 * on to it and waited for. A pipeline that fails otherwise is recorded as failed (its results say why):
 * the maps job stays completed.
 */
// Marks a pipeline that failed for good; one small transaction.
const pipelineSteps = proxyActivities<PipelineActivities>({
  startToCloseTimeout: LIFECYCLE_STEP.ms, // one small transaction; longer is a stuck connection
  retry: { initialInterval: '500ms', maximumInterval: '30s' },
});

async function runPipeline(input: RunJobInput): Promise<void> {
  try {
    await executeChild(runLeadPipeline, {
      workflowId: `job/${input.jobId}/pipeline`,
      args: [{ jobId: input.jobId, clientId: input.clientId }],
      workflowExecutionTimeout: PIPELINE_EXECUTION_TIMEOUT_MS,
      typedSearchAttributes: workflowInfo().typedSearchAttributes,
      staticSummary: `maps -> site -> verify pipeline of job ${input.jobId}`,
    });
  } catch (err) {
    if (isCancellation(err)) throw err;
    // The root cause (child -> activity -> application failure) is what says why.
    let cause: unknown = err;
    while (cause instanceof Error && cause.cause instanceof Error) cause = cause.cause;
    const message = `the pipeline failed: ${cause instanceof Error ? cause.message : String(cause)}`;
    log.error("the job's pipeline failed", { jobId: input.jobId, error: message });
    await pipelineSteps.failPipeline({ jobId: input.jobId, clientId: input.clientId, errorMessage: message });
  }
}

function runType(input: RunJobInput, payload: Record<string, unknown>): Promise<JobActivityOutput> {
  if (input.steps) {
    const steps = stepSetOf(input.steps);
    if (!steps)
      throw ApplicationFailure.nonRetryable(`${input.type} names the unknown step set ${input.steps}`, 'InvalidInput');
    return steps({ jobId: input.jobId, payload, limits: input.limits, queues: input.queues ?? {} });
  }
  return typeActivity(input)({ jobId: input.jobId, clientId: input.clientId, payload });
}

/** The message a user reads in error_message: the root cause, without Temporal's wrapping. */
export function failureMessage(err: unknown, type: JobType): string {
  if (err instanceof ActivityFailure) {
    const cause = err.cause;
    if (cause instanceof TimeoutFailure)
      return `${type} timed out (${cause.timeoutType === 'HEARTBEAT' ? 'no heartbeat from the worker' : 'time limit reached'})`;
    if (cause instanceof ApplicationFailure || cause instanceof Error) return cause.message;
  }
  return err instanceof Error ? err.message : String(err);
}
