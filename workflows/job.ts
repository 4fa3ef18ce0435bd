import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  log,
  proxyActivities,
  TimeoutFailure,
  type ActivityOptions,
} from '@temporalio/workflow';
import type { JobLifecycleActivities, JobTypeActivities } from '../activities';
import type { JobType } from '../lib/job-types';
import type { LeadActivities } from '../activities/store/leads';
import { companyData, type RegistryQueues } from './company-data';
import { requestLeadIndexing } from './leads';

export interface RunJobInput {
  jobId: string;
  clientId: string;
  type: JobType;
  /** crawlCompanyData: the registries' rate-limited task queues. */
  registryQueues?: RegistryQueues;
}

export interface RunJobResult {
  jobId: string;
  status: 'completed' | 'failed' | 'cancelled' | 'skipped';
  resultsCount?: number;
}

// Lifecycle steps are short Postgres transactions. startJob is retried quickly because the API
// commits the job row a moment after starting this workflow. It is the gate into `processing`, so
// it always goes through the task queue: eager dispatch would hand it straight back to the same
// worker and skip the queue's priority order.
const lifecycle = proxyActivities<JobLifecycleActivities>({
  startToCloseTimeout: '30s', // one small transaction; anything longer is a stuck connection
  retry: { initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '10s', maximumAttempts: 20 },
  allowEagerDispatch: false,
});

// The finishing steps must run even while the workflow is being cancelled.
const finishing = proxyActivities<JobLifecycleActivities>({
  startToCloseTimeout: '30s', // as above
  retry: { initialInterval: '500ms', maximumInterval: '30s' },
});

// Projection into IDAP resources: one Postgres transaction of idempotent upserts.
const projecting = proxyActivities<LeadActivities>({
  startToCloseTimeout: '2m', // a 100-page site's e-mails, phones and team in one transaction
  retry: { initialInterval: '1s', maximumInterval: '30s', maximumAttempts: 10 },
});

const work = (startToCloseTimeout: ActivityOptions['startToCloseTimeout']): ActivityOptions => ({
  startToCloseTimeout,
  // Long crawls heartbeat per page or request; a silent worker (killed, partitioned) is replaced within this.
  heartbeatTimeout: '20s',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 3, nonRetryableErrorTypes: ['InvalidInput', 'NotFound'] },
});

/**
 * Per job type: the spec's limits where it gives them (§8), otherwise what the work needs.
 * crawlCompanyData is not one activity but a few steps (company-data.ts).
 */
const typeActivities: Record<Exclude<JobType, 'crawlCompanyData'>, JobTypeActivities[JobType]> = {
  crawlSite: proxyActivities<JobTypeActivities>(work('5m')).crawlSite, // spec: site stage 5 min per business
  crawlVerify: proxyActivities<JobTypeActivities>(work('2m')).crawlVerify, // spec: verify stage 2 min per business
  crawlMaps: proxyActivities<JobTypeActivities>(work('10m')).crawlMaps, // 20 results take 30-90 s; 10 min bounds large searches
  crawlPeople: proxyActivities<JobTypeActivities>(work('5m')).crawlPeople, // a site-like crawl of team pages
  crawlLanding: proxyActivities<JobTypeActivities>(work('3m')).crawlLanding, // spec: capture takes 3-90 s
  crawlPublicSocial: proxyActivities<JobTypeActivities>(work('2m')).crawlPublicSocial, // one profile, 3-10 s politeness delay
};

/**
 * One job, start to end: startJob (queued -> processing), the job type's activity (stores its
 * result), completeJob. A failure is recorded with failJob and fails the workflow (visible as
 * Failed in the Web UI); a cancellation records cancelJob and ends the workflow as Cancelled.
 * Input: {jobId, clientId, type}; the payload stays in Postgres. Workflow id: `job/<jobId>`.
 */
export async function runJob(input: RunJobInput): Promise<RunJobResult> {
  const { jobId } = input;
  try {
    const started = await lifecycle.startJob({ jobId });
    if (!started.run) return { jobId, status: 'skipped' };
    const output = await runType(input, started.payload);
    const done = await finishing.completeJob({ jobId, resultsCount: output.resultsCount });
    if (done.status === 'completed') await CancellationScope.nonCancellable(() => publishLeads(input));
    return { jobId, status: done.status === 'completed' ? 'completed' : 'cancelled', resultsCount: output.resultsCount };
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
 * After a job completed: its result as IDAP resources, then its businesses in the lead index (by the
 * client's indexLeads workflow, which retries through an Elasticsearch outage; nothing queued is lost
 * meanwhile). The job is already complete, so a failure here is logged, never a failed job.
 */
async function publishLeads(input: RunJobInput): Promise<void> {
  try {
    const projected = await projecting.projectJobResult({ jobId: input.jobId, clientId: input.clientId, type: input.type });
    if (projected.businesses > 0) await requestLeadIndexing(input.clientId);
  } catch (err) {
    log.error('publishing the job\'s leads failed', { jobId: input.jobId, error: err instanceof Error ? err.message : String(err) });
  }
}

function runType(input: RunJobInput, payload: Record<string, unknown>): Promise<{ resultsCount: number }> {
  if (input.type !== 'crawlCompanyData') return typeActivities[input.type]({ jobId: input.jobId, clientId: input.clientId, payload });
  if (!input.registryQueues) throw ApplicationFailure.nonRetryable('crawlCompanyData started without registry queues', 'InvalidInput');
  return companyData({ jobId: input.jobId, payload, queues: input.registryQueues });
}

/** The message a user reads in error_message: the root cause, without Temporal's wrapping. */
export function failureMessage(err: unknown, type: JobType): string {
  if (err instanceof ActivityFailure) {
    const cause = err.cause;
    if (cause instanceof TimeoutFailure) return `${type} timed out (${cause.timeoutType === 'HEARTBEAT' ? 'no heartbeat from the worker' : 'time limit reached'})`;
    if (cause instanceof ApplicationFailure || cause instanceof Error) return cause.message;
  }
  return err instanceof Error ? err.message : String(err);
}
