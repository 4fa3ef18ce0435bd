import { randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import type { Db } from '../db';
import type { JobModel } from '../db/models/job';
import { JobResultStore } from '../db/repositories/job-results';
import { JobRepository, type ListFilter, type SubmitOutcome } from '../db/repositories/jobs';
import type { Config } from '../lib/config';
import { CATALOG, priorityKeyFor, type JobType } from '../jobs';
import { jobTaskQueue } from '../jobs/queues';
import { runJobInput } from '../jobs/run-input';
import { AppError, badRequest, notFound } from '../lib/errors';
import type { Logger } from '../lib/logger';
import type { Storage } from '../lib/storage';
import { payloadHash } from '../lib/payload-hash';
import type { Temporal } from '../lib/temporal';
import { runJob } from '../workflows';
import { CampaignIdKey, ClientIdKey, JobIdKey, JobTypeKey } from '../workflows/search-attributes';
import { QueueDepthEstimate } from './queue-depth';
import { TemporalCalls } from './temporal-calls';
import { UUID } from '../lib/ids';

const DEDUPE_WINDOW_MS = 24 * 60 * 60 * 1000;

export const QUEUE_UNAVAILABLE = 'queue service unavailable';

export interface SubmitRequest {
  clientId: string;
  type: JobType;
  payload: Record<string, unknown>;
  priority: number;
  campaignId?: string | null;
}

export interface SubmitResult {
  job: JobModel;
  fromCache: boolean;
}

/** Job submission, lookup and cancellation: Postgres is the source of truth, Temporal runs the work. */
export class JobService {
  readonly jobs: JobRepository;
  readonly results: JobResultStore;
  private readonly calls: TemporalCalls;
  private readonly queueDepth = new QueueDepthEstimate();

  constructor(
    db: Db,
    storage: Storage,
    private readonly temporal: Temporal,
    private readonly config: Config,
    private readonly log: Logger,
  ) {
    this.jobs = new JobRepository(db, config.DATABASE_SCHEMA);
    this.calls = new TemporalCalls(temporal);
    this.results = new JobResultStore(db, storage);
  }

  /**
   * A job id at once: returns the cached job when the same client submitted the same type and
   * payload within 24 hours (and it did not fail or get cancelled); otherwise queues a new one
   * and starts its workflow. Temporal unreachable -> 503 and nothing is stored.
   */
  async submit(req: SubmitRequest): Promise<SubmitResult> {
    const id = randomUUID();
    const spec = CATALOG[req.type];
    const test = spec.testQueue?.(req.payload) ?? false;
    const taskQueue = jobTaskQueue(this.config.TASK_QUEUE_PREFIX, spec, { test });
    const capacity = spec.capacity?.(this.config);
    const counting = capacity !== undefined && this.queueDepth.mustCount(taskQueue, capacity);
    let outcome: SubmitOutcome;
    try {
      outcome = await this.jobs.submit(
        {
          id,
          clientId: req.clientId,
          type: req.type,
          priority: req.priority,
          payload: req.payload,
          payloadHash: payloadHash(req.payload),
          campaignId: req.campaignId ?? null,
          workflowId: `job/${id}`,
          taskQueue,
        },
        { capacity: counting ? capacity : undefined, dedupeWindowMs: DEDUPE_WINDOW_MS },
        (job) => this.startWorkflow(job),
      );
    } finally {
      if (counting) this.queueDepth.countSettled(taskQueue);
    }
    if (outcome.kind !== 'cached') this.queueDepth.record(taskQueue, outcome.queued, outcome.kind === 'created');
    if (outcome.kind === 'queue_full') {
      throw new AppError(
        503,
        `queue is full: ${outcome.capacity} ${req.type} jobs are already queued; try again later`,
        'queue_full',
        { 'Retry-After': '60' },
      );
    }
    return { job: outcome.job, fromCache: outcome.kind === 'cached' };
  }

  private async startWorkflow(job: JobModel): Promise<void> {
    const attributes = [
      { key: ClientIdKey, value: job.client_id },
      { key: JobTypeKey, value: job.type },
      { key: JobIdKey, value: job.id },
      ...(job.campaign_id ? [{ key: CampaignIdKey, value: job.campaign_id }] : []),
    ];
    try {
      await this.calls.run(() =>
        this.temporal.client.workflow.start(runJob, {
          taskQueue: job.task_queue,
          workflowId: job.workflow_id,
          args: [runJobInput(job, this.config)],
          typedSearchAttributes: attributes,
          staticSummary: `${job.type} for ${job.client_id} (priority ${job.priority})`,
          memo: {
            clientId: job.client_id,
            type: job.type,
            priority: job.priority,
            createdAt: new Date(job.created_at).toISOString(),
          },
          priority: { priorityKey: priorityKeyFor(job.priority) },
        }),
      );
    } catch (err) {
      // A retried start of the same job id already started it: that is success.
      if (err instanceof WorkflowExecutionAlreadyStartedError) return;
      this.log.warn({ err: String(err), job_id: job.id }, 'workflow start failed');
      throw new AppError(503, QUEUE_UNAVAILABLE, 'unavailable');
    }
  }

  /** The client's job, or 400 for a malformed id and 404 for another client's or an unknown one. */
  async get(clientId: string, jobId: string): Promise<JobModel> {
    if (!UUID.test(jobId)) throw badRequest('invalid job id format, expected UUID');
    const job = await this.jobs.findForClient(clientId, jobId);
    if (!job) throw notFound('job not found');
    return job;
  }

  /**
   * The result of a completed job. A completed job always has one (completeJob keeps it): a missing
   * row is a fault of ours, never an empty 200.
   */
  async resultOf(job: JobModel): Promise<unknown> {
    const data = await this.results.load(job.id);
    if (data === undefined) throw new Error(`the result of completed job ${job.id} is missing`);
    return data;
  }

  list(clientId: string, filter: ListFilter) {
    return this.jobs.list(clientId, filter);
  }

  /**
   * queued/processing -> cancelled at once (spec §3), then Temporal cancellation stops the running
   * activity. completed, failed and cancelled jobs are terminal: 400.
   */
  async cancel(clientId: string, jobId: string): Promise<JobModel> {
    await this.get(clientId, jobId);
    const outcome = await this.jobs.cancel(clientId, jobId);
    if (!outcome) throw notFound('job not found');
    if (!outcome.changed) {
      const status = outcome.job.status;
      throw badRequest(
        status === 'completed'
          ? 'cannot cancel a completed job'
          : `cannot cancel a ${status} job: it is already terminal`,
      );
    }
    try {
      await this.calls.run(() => this.temporal.client.workflow.getHandle(outcome.job.workflow_id).cancel());
    } catch (err) {
      // The job row already says cancelled; a workflow that runs on discards its result (completeJob).
      if (!(err instanceof WorkflowNotFoundError))
        this.log.warn({ err: String(err), job_id: jobId }, 'workflow cancel failed');
    }
    return outcome.job;
  }

  /** Waits for Temporal calls still in flight; call before closing the Temporal connection. */
  drain(): Promise<void> {
    return this.calls.drain();
  }
}
