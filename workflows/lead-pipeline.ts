import {
  ActivityCancellationType,
  ActivityFailure,
  CancellationScope,
  isCancellation,
  log,
  proxyActivities,
  TimeoutFailure,
} from '@temporalio/workflow';
import type { PipelineActivities, PipelineInput, PipelinePlan } from '../activities/pipeline/pipeline';
import { JOB_HEARTBEAT_TIMEOUT, LIFECYCLE_STEP, MAX_JOB_DEADLINE, PROJECTION_STEP } from '../jobs/limits';
import { requestLeadIndexing } from './leads';

/**
 * How long the pipeline workflow may exist: the longest overall limit WORKFLOW_OVERALL_TIMEOUT_SECONDS
 * allows (the spec's 10 minutes) plus room for its start, a stage's cancellation and the finishing
 * projection, so that even a pipeline whose worker vanished has a deadline.
 */
export const PIPELINE_EXECUTION_TIMEOUT_MS = MAX_JOB_DEADLINE.ms + 5 * 60_000;

export interface PipelineResult {
  jobId: string;
  status: string;
}

// startPipeline and recordStageEnd are one small transaction each.
const steps = proxyActivities<PipelineActivities>({
  startToCloseTimeout: LIFECYCLE_STEP.ms, // one small transaction; longer is a stuck connection
  retry: {
    initialInterval: '500ms',
    backoffCoefficient: 2,
    maximumInterval: '10s',
    maximumAttempts: 20,
    nonRetryableErrorTypes: ['NotFound', 'InvalidInput'],
  },
});

// finishPipeline runs even while the workflow is cancelled (in a non-cancellable scope) and must end it.
const finishing = proxyActivities<PipelineActivities>({
  startToCloseTimeout: PROJECTION_STEP.ms, // every business's site resources in one transaction
  retry: { initialInterval: '1s', maximumInterval: '30s' },
});

/** A stage activity on its capability's queue, with the stage's limit per site. */
function stageActivities(taskQueue: string, stageMs: number): PipelineActivities {
  return proxyActivities<PipelineActivities>({
    taskQueue,
    // The spec's per-business stage limit (WORKFLOW_SITE/VERIFY_TIMEOUT_SECONDS) for all attempts together:
    // a retry after a lost worker never gives a site more than its stage's time.
    scheduleToCloseTimeout: stageMs,
    startToCloseTimeout: stageMs,
    // Stage activities heartbeat every half second; a silent worker (killed, partitioned) is replaced within this.
    heartbeatTimeout: JOB_HEARTBEAT_TIMEOUT.ms,
    // At the overall deadline or a cancel, wait until the stage has stopped, so nothing is written after the pipeline ended.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { initialInterval: '2s', backoffCoefficient: 2, maximumAttempts: 3 },
  });
}

function stageError(
  stage: 'site' | 'verify',
  err: unknown,
  stageMs: number,
): { status: 'failed' | 'timed_out'; error: string } {
  if (err instanceof ActivityFailure && err.cause instanceof TimeoutFailure) {
    const what =
      err.cause.timeoutType === 'HEARTBEAT'
        ? 'no heartbeat from the worker'
        : `the ${Math.round(stageMs / 1000)} s limit per business was reached`;
    return { status: 'timed_out', error: `${stage} stage timed out: ${what}` };
  }
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return { status: 'failed', error: cause instanceof Error ? cause.message : String(cause) };
}

/**
 * The maps -> site -> verify pipeline of one completed crawlMaps job (workflow id
 * `job/<jobId>/pipeline`, a child of its runJob). startPipeline writes its rows (domain filter
 * applied) and returns the plan; then each distinct site (origin) is crawled once on the crawl-site
 * queue and its e-mails verified right after on the crawl-verify queue, `concurrency` sites at a
 * time; finishPipeline sets the status, projects the stage results into IDAP and the leads are indexed.
 *
 * The overall limit counts from the pipeline row's started_at: at it, stages in flight are cancelled
 * (they stop within seconds) and every stage not finished is `timed_out` (status `partial`). A stage
 * that fails or times out on its own ends only that site's businesses. A cancel of the workflow (its
 * runJob cancelled, e.g. a campaign cancel) stops the stages the same way, keeps what they stored,
 * ends the pipeline `failed` with error_message "cancelled" and the workflow as Cancelled.
 * Input: {jobId, clientId}.
 */
export async function runLeadPipeline(input: PipelineInput): Promise<PipelineResult> {
  let plan: PipelinePlan;
  try {
    plan = await steps.startPipeline(input);
  } catch (err) {
    // No stage ran: a cancel before the start ends the pipeline row (if it was written) as cancelled.
    if (isCancellation(err))
      await CancellationScope.nonCancellable(() => finishing.finishPipeline({ ...input, outcome: 'cancelled' })).catch(
        () => undefined,
      );
    throw err;
  }
  const site = stageActivities(plan.queues.site, plan.limits.siteMs);
  const verify = stageActivities(plan.queues.verify, plan.limits.verifyMs);
  const origins = [...new Set(plan.businesses.flatMap((b) => (!b.filtered && b.origin ? [b.origin] : [])))];

  async function runSite(origin: string): Promise<void> {
    const stage = { ...input, origin };
    let found: Awaited<ReturnType<PipelineActivities['crawlBusinessSite']>>;
    try {
      found = await site.crawlBusinessSite(stage);
    } catch (err) {
      if (isCancellation(err)) throw err;
      await steps.recordStageEnd({ ...stage, stage: 'site', ...stageError('site', err, plan.limits.siteMs) });
      return;
    }
    if (found.status !== 'completed' || found.emailsFound === 0 || !plan.verifyEnabled) return;
    try {
      await verify.verifyBusinessEmails(stage);
    } catch (err) {
      if (isCancellation(err)) throw err;
      await steps.recordStageEnd({ ...stage, stage: 'verify', ...stageError('verify', err, plan.limits.verifyMs) });
    }
  }

  let outcome: 'done' | 'deadline' | 'cancelled' = 'done';
  let cancelled: unknown;
  const remainingMs = (plan.deadlineAt ?? plan.startedAt + plan.limits.overallMs) - Date.now();
  try {
    if (origins.length > 0) {
      if (remainingMs <= 0) {
        outcome = 'deadline';
      } else {
        await CancellationScope.withTimeout(remainingMs, async () => {
          let next = 0;
          // Each lane takes the next site when its previous site's verify stage is done.
          const lane = async () => {
            while (next < origins.length) await runSite(origins[next++] as string);
          };
          await Promise.all(Array.from({ length: Math.min(plan.concurrency, origins.length) }, lane));
        });
      }
    }
  } catch (err) {
    if (!isCancellation(err)) throw err;
    // A cancellation that did not come from outside (the workflow is not being cancelled) is the deadline.
    outcome = CancellationScope.current().consideredCancelled ? 'cancelled' : 'deadline';
    if (outcome === 'cancelled') cancelled = err;
  }
  if (cancelled !== undefined) {
    await CancellationScope.nonCancellable(() => finishing.finishPipeline({ ...input, outcome: 'cancelled' }));
    throw cancelled;
  }
  const done = await finishing.finishPipeline({ ...input, outcome });
  if (done.businesses > 0) {
    try {
      await requestLeadIndexing(input.clientId);
    } catch (err) {
      log.error('requesting lead indexing after the pipeline failed', {
        jobId: input.jobId,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }
  return { jobId: input.jobId, status: done.status };
}
