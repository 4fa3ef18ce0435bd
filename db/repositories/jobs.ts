import type { Knex } from 'knex';
import type { JobStatus, JobType } from '../../lib/job-types';
import { JobModel } from '../models/job';
import { appendEvent } from './events';

export interface NewJob {
  id: string;
  clientId: string;
  type: JobType;
  priority: number;
  payload: Record<string, unknown>;
  payloadHash: string;
  campaignId: string | null;
  workflowId: string;
  taskQueue: string;
}

export interface SubmitOptions {
  /** Most queued jobs of this type across all clients; undefined = unlimited. */
  capacity?: number;
  dedupeWindowMs: number;
}

export type SubmitOutcome = { kind: 'cached'; job: JobModel } | { kind: 'created'; job: JobModel } | { kind: 'queue_full'; capacity: number };

export interface ListFilter {
  status?: JobStatus;
  type?: JobType;
  campaignId?: string;
  page: number;
  pageSize: number;
}

/** Jobs as the API and the lifecycle activities see them; tenant scoping via JobModel.forClient. */
export class JobRepository {
  constructor(
    private readonly db: Knex,
    private readonly schema: string,
  ) {}

  /**
   * Submits a job in one transaction: de-duplication lookup, capacity check, insert, the
   * `job.queued` event, then `start` (the Temporal workflow start). If `start` throws, nothing is
   * committed: no job row claims to be queued without a workflow behind it. An advisory lock on
   * (client, type, payload) makes concurrent identical submissions return one job.
   */
  async submit(job: NewJob, options: SubmitOptions, start: (job: JobModel) => Promise<void>): Promise<SubmitOutcome> {
    return this.db.transaction(async (trx) => {
      await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`${job.clientId}/${job.type}/${job.payloadHash}`]);
      const cached = await JobModel.query(trx)
        .modify('forClient', job.clientId)
        .where({ type: job.type, payload_hash: job.payloadHash })
        .whereIn('status', ['queued', 'processing', 'completed'])
        .where('created_at', '>', new Date(Date.now() - options.dedupeWindowMs))
        .orderBy('created_at', 'desc')
        .first();
      if (cached) return { kind: 'cached', job: cached } as const;

      if (options.capacity !== undefined) {
        const row = (await trx('jobs').where({ type: job.type, status: 'queued' }).count<{ count: string }[]>('* as count').first()) ?? { count: '0' };
        if (Number(row.count) >= options.capacity) return { kind: 'queue_full', capacity: options.capacity } as const;
      }

      const created = await JobModel.query(trx).insertAndFetch({
        id: job.id,
        client_id: job.clientId,
        type: job.type,
        status: 'queued',
        priority: job.priority,
        payload: job.payload,
        payload_hash: job.payloadHash,
        campaign_id: job.campaignId,
        workflow_id: job.workflowId,
        task_queue: job.taskQueue,
      });
      await appendEvent(trx, this.schema, {
        clientId: job.clientId,
        name: 'job.queued',
        jobId: job.id,
        data: { job_id: job.id, type: job.type, priority: job.priority, created_at: created.created_at },
      });
      await start(created);
      return { kind: 'created', job: created } as const;
    });
  }

  async findForClient(clientId: string, id: string): Promise<JobModel | undefined> {
    return JobModel.query(this.db).modify('forClient', clientId).findById(id);
  }

  async findById(id: string): Promise<JobModel | undefined> {
    return JobModel.query(this.db).findById(id);
  }

  async list(clientId: string, filter: ListFilter): Promise<{ total: number; jobs: JobModel[] }> {
    const base = JobModel.query(this.db).modify('forClient', clientId);
    if (filter.status) base.where('status', filter.status);
    if (filter.type) base.where('type', filter.type);
    if (filter.campaignId) base.where('campaign_id', filter.campaignId);
    const [total, jobs] = await Promise.all([
      base.clone().resultSize(),
      base.clone().orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])
        .limit(filter.pageSize)
        .offset((filter.page - 1) * filter.pageSize),
    ]);
    return { total, jobs };
  }

  /**
   * Cancels a queued or processing job (spec §3) and records `job.cancelled`. Returns the job as
   * it is afterwards; `changed` is false when it was already terminal.
   */
  async cancel(clientId: string, id: string): Promise<{ job: JobModel; changed: boolean } | undefined> {
    return this.db.transaction(async (trx) => {
      const job = await JobModel.query(trx).modify('forClient', clientId).findById(id).forUpdate();
      if (!job) return undefined;
      if (job.status !== 'queued' && job.status !== 'processing') return { job, changed: false };
      const updated = await this.finish(trx, job, 'cancelled', {});
      return { job: updated, changed: true };
    });
  }

  /**
   * Moves a job to a terminal status with its timings and event. Partial results of a job that
   * did not complete are discarded.
   */
  async finish(
    trx: Knex.Transaction,
    job: JobModel,
    status: 'completed' | 'failed' | 'cancelled',
    fields: { errorMessage?: string; resultsCount?: number; workerId?: string },
  ): Promise<JobModel> {
    const completedAt = new Date();
    const processing = job.started_at ? (completedAt.getTime() - new Date(job.started_at).getTime()) / 1000 : null;
    const updated = await JobModel.query(trx).patchAndFetchById(job.id, {
      status,
      completed_at: completedAt,
      processing_time_seconds: processing,
      error_message: fields.errorMessage ?? null,
      results_count: fields.resultsCount ?? null,
      // The worker that finished the job (after a crash, not the one that started it).
      ...(fields.workerId ? { worker_id: fields.workerId } : {}),
    });
    if (status !== 'completed') await trx('job_results').where({ job_id: job.id }).delete();
    const data: Record<string, unknown> = { job_id: job.id, type: job.type, status };
    if (status === 'completed') Object.assign(data, { processing_time: processing, results_count: fields.resultsCount ?? 0 });
    if (status === 'failed') Object.assign(data, { error_message: fields.errorMessage ?? null, processing_time: processing });
    await appendEvent(trx, this.schema, { clientId: job.client_id, name: `job.${status}`, jobId: job.id, data });
    return updated;
  }

  /** Runs `fn` with the job row locked; undefined when it does not exist (yet). */
  async withLockedJob<T>(id: string, fn: (trx: Knex.Transaction, job: JobModel) => Promise<T>): Promise<T | undefined> {
    return this.db.transaction(async (trx) => {
      const job = await JobModel.query(trx).findById(id).forUpdate();
      return job ? fn(trx, job) : undefined;
    });
  }

  /** queued -> processing, recording the worker; `job.started` only on the first start, not on a retry. */
  async markStarted(trx: Knex.Transaction, job: JobModel, workerId: string): Promise<JobModel> {
    const firstStart = job.status === 'queued';
    const updated = await JobModel.query(trx).patchAndFetchById(job.id, { status: 'processing', started_at: job.started_at ?? new Date(), worker_id: workerId });
    if (firstStart) {
      await appendEvent(trx, this.schema, {
        clientId: job.client_id,
        name: 'job.started',
        jobId: job.id,
        data: { job_id: job.id, type: job.type, worker_id: workerId, started_at: updated.started_at },
      });
    }
    return updated;
  }
}
