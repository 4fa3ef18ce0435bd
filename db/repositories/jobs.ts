import type { Knex } from 'knex';
import type { JobStatus, JobType } from '../../jobs';
import { webhookBodySql } from '../../jobs/event-body';
import { JobModel } from '../models/job';
import { batchedTransaction, inline, prepared } from '../batched';
import { announcementStatement, appendEvent, queueEvent, transactionWithEvents, type StoredEvent } from './events';
import { newestFirstPage } from './paging';

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
  /**
   * Most queued jobs on the job's task queue across all clients, counted for this submission;
   * undefined = not checked (no capacity, or api/queue-depth.ts says it is far off).
   */
  capacity?: number;
  dedupeWindowMs: number;
}

/** `queued`: the jobs queued on the task queue before this one, when the capacity was checked (else null). */
export type SubmitOutcome =
  | { kind: 'cached'; job: JobModel }
  | { kind: 'created'; job: JobModel; queued: number | null }
  | { kind: 'queue_full'; capacity: number; queued: number };

export interface ListFilter {
  status?: JobStatus;
  type?: JobType;
  campaignId?: string;
  page: number;
  pageSize: number;
}

/** The advisory lock a job's inserting transaction holds until it ends (withLockedJob waits on it). */
const submissionLockKey = (jobId: string) => `job-submission/${jobId}`;

/**
 * The CTEs `j` (the job row from `source`: a VALUES list or a SELECT of queuedValues' ten values),
 * `e` (its `job.queued` event) and `d` (that event's webhook deliveries: the outbox of
 * db/repositories/webhook-outbox.ts, written here in SQL to stay one statement). Per-job events
 * carry no campaign id (spec §6): a campaign's job is followed by its job_id.
 */
/** A timestamptz as the API writes times (JavaScript's toISOString: UTC, milliseconds, Z). */
const ISO_UTC = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

function queuedInsert(source: string): string {
  return `j as (
         insert into jobs (id, client_id, type, status, priority, payload, payload_hash, campaign_id, workflow_id, task_queue)
         ${source} returning *
       ), e as (
         insert into events (client_id, name, job_id, data)
         select client_id, 'job.queued', id, json_build_object('job_id', id, 'type', type, 'priority', priority, 'created_at', ${ISO_UTC('created_at')}) from j
         returning id, client_id, name, job_id, campaign_id, data, created_at
       ), d as (
         insert into webhook_deliveries (id, webhook_id, client_id, event_id, event, task_queue, body)
         select gen_random_uuid(), w.id, w.client_id, e.id, e.name, w.task_queue,
                ${webhookBodySql('e', ISO_UTC)}
         -- tenancy: the webhooks of the client the job was inserted for (the hot submission statement: one round trip)
         from e join webhooks w on w.client_id = e.client_id and w.active and e.name = any(w.events)
       )`;
}

/**
 * Submission's statement, prepared once per connection: the 24-hour cache lookup, the capacity
 * check (the queued jobs on its task queue counted, when $1 is not null), and the insert with its
 * event, its webhook deliveries and the job's submission lock ($16) when both pass. The lookup is by
 * the one key `client_id/type/payload_hash`, which only jobs_dedupe_key_idx serves (its migration
 * says why), and `offset 0` keeps it one subquery run: pulled up, it ran once per reference.
 */
const SUBMIT_STATEMENT = prepared(
  'leadjobs_submit_job',
  `with gate as (
     select g.cached, g.queued, coalesce(g.queued >= $1::bigint, false) as full
     from (select c.cached,
                  case when c.cached is null and $1::bigint is not null
                       -- tenancy: the capacity count is of every client's queued jobs on the task queue (a shared queue)
                       then (select count(*) from jobs where task_queue = $2 and status = 'queued') end as queued
           -- tenancy: the cache lookup is by the client's own key, client_id/type/payload_hash ($3/$4/$5)
           from (select (select row_to_json(x.*) from jobs x
                         where (x.client_id || '/' || x.type || '/' || x.payload_hash) = ($3::text || '/' || $4::text || '/' || $5::text)
                           and x.campaign_id is null
                           and x.status in ('queued', 'processing', 'completed') and x.created_at > $6::timestamptz
                         order by x.created_at desc limit 1) as cached
                 offset 0) c) g
   ), ${queuedInsert(`select $7::uuid, $8, $9, 'queued', $10::smallint, $11::jsonb, $12, $13, $14, $15 from gate where gate.cached is null and not gate.full`)}
   select gate.cached, gate.queued, gate.full, row_to_json(j.*) as job, row_to_json(e.*) as event,
          case when j.id is not null then pg_advisory_xact_lock(hashtextextended($16, 0)) end as locked
   from gate left join j on true left join e on true`,
);

const queuedValues = (job: NewJob) => [
  job.id,
  job.clientId,
  job.type,
  job.priority,
  JSON.stringify(job.payload),
  job.payloadHash,
  job.campaignId,
  job.workflowId,
  job.taskQueue,
];

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
    // Two round trips on the hot path (db/batched.ts): BEGIN, the lock and the statement; then the
    // workflow start; then COMMIT and the job.queued announcement.
    return batchedTransaction(this.db, async (trx) => {
      const [, rows] = await trx.run(
        // The lock is a statement of its own: a statement's snapshot is taken before it waits, so
        // a lookup in the same statement would miss the job the lock holder just committed.
        inline('select pg_advisory_xact_lock(hashtextextended($1, 0))', [
          `${job.clientId}/${job.type}/${job.payloadHash}`,
        ]),
        {
          statement: SUBMIT_STATEMENT,
          values: [
            options.capacity ?? null,
            job.taskQueue,
            job.clientId,
            job.type,
            job.payloadHash,
            new Date(Date.now() - options.dedupeWindowMs),
            ...queuedValues(job),
            submissionLockKey(job.id),
          ],
        },
      );
      const row = rows?.[0] as
        | {
            cached: Record<string, unknown> | null;
            queued: string | null;
            full: boolean;
            job: Record<string, unknown> | null;
            event: StoredEvent | null;
          }
        | undefined;
      if (row?.cached) return { kind: 'cached', job: JobModel.fromDatabaseJson(row.cached) } as const;
      const queued = row?.queued === null || row?.queued === undefined ? null : Number(row.queued);
      if (row?.full && options.capacity !== undefined)
        return { kind: 'queue_full', capacity: options.capacity, queued: queued ?? options.capacity } as const;
      if (!row?.job || !row.event) throw new Error('job insert returned nothing');
      const created = JobModel.fromDatabaseJson(row.job);
      await start(created);
      const announce = announcementStatement(this.schema, [row.event]);
      if (announce) trx.afterCommit(announce);
      return { kind: 'created', job: created, queued } as const;
    });
  }

  /**
   * Inserts a queued job with its `job.queued` event (announced after the commit) and that event's
   * webhook deliveries, in one round trip.
   */
  async insertQueued(trx: Knex.Transaction, job: NewJob): Promise<JobModel> {
    const { rows: inserted } = (await trx.raw(
      `with ${queuedInsert("values (?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?)")}
       select row_to_json(j.*) as job, row_to_json(e.*) as event from j, e`,
      queuedValues(job),
    )) as { rows: { job: Record<string, unknown>; event: StoredEvent }[] };
    const row = inserted[0];
    if (!row) throw new Error('job insert returned nothing');
    queueEvent(trx, row.event);
    return JobModel.fromDatabaseJson(row.job);
  }

  async findForClient(clientId: string, id: string): Promise<JobModel | undefined> {
    return JobModel.query(this.db).modify('forClient', clientId).findById(id);
  }

  /** The client's job counts per type and status (queue statistics). */
  async countByTypeAndStatus(clientId: string): Promise<{ type: string; status: JobStatus; count: number }[]> {
    const rows = (await JobModel.query(this.db)
      .modify('forClient', clientId)
      .select('type', 'status')
      .count('* as count')
      .groupBy('type', 'status')) as unknown as { type: string; status: JobStatus; count: string | number }[];
    return rows.map((r) => ({ type: r.type, status: r.status, count: Number(r.count) }));
  }

  async list(clientId: string, filter: ListFilter): Promise<{ total: number; jobs: JobModel[] }> {
    const base = JobModel.query(this.db).modify('forClient', clientId);
    if (filter.status) base.where('status', filter.status);
    if (filter.type) base.where('type', filter.type);
    if (filter.campaignId) base.where('campaign_id', filter.campaignId);
    const { total, rows } = await newestFirstPage(base, filter.pageSize, (filter.page - 1) * filter.pageSize);
    return { total, jobs: rows };
  }

  /**
   * Cancels a queued or processing job (spec §3) and records `job.cancelled`. Returns the job as
   * it is afterwards; `changed` is false when it was already terminal.
   */
  async cancel(clientId: string, id: string): Promise<{ job: JobModel; changed: boolean } | undefined> {
    return transactionWithEvents(this.db, this.schema, async (trx) => {
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
    if (status !== 'completed') await this.discardResult(trx, job.id);
    // A campaign's location follows its job (a cancelled job's location was skipped).
    if (job.campaign_id) {
      await trx('campaign_locations')
        .where({ job_id: job.id })
        .update({
          status: status === 'cancelled' ? 'skipped' : status,
          results_count: status === 'completed' ? (fields.resultsCount ?? 0) : null,
          error_message: status === 'failed' ? (fields.errorMessage ?? null) : null,
          completed_at: completedAt,
        });
    }
    const data: Record<string, unknown> = { job_id: job.id, type: job.type, status };
    if (status === 'completed')
      Object.assign(data, { processing_time: processing, results_count: fields.resultsCount ?? 0 });
    if (status === 'failed')
      Object.assign(data, { error_message: fields.errorMessage ?? null, processing_time: processing });
    await appendEvent(trx, this.schema, { clientId: job.client_id, name: `job.${status}`, jobId: job.id, data });
    return updated;
  }

  /** Drops a job's (partial) result: a job that did not complete has none. */
  async discardResult(trx: Knex.Transaction, jobId: string): Promise<void> {
    await trx('job_results').where({ job_id: jobId }).delete();
  }

  /**
   * Runs `fn` with the job row locked; undefined when it does not exist. The API starts a job's
   * workflow inside the transaction that inserts the row, so a worker can be asked to start the job
   * before that commit: a row not visible yet is waited for on its submission lock (held by the
   * inserting transaction until it ends), then read again, instead of failing and being retried later.
   */
  async withLockedJob<T>(id: string, fn: (trx: Knex.Transaction, job: JobModel) => Promise<T>): Promise<T | undefined> {
    return transactionWithEvents(this.db, this.schema, async (trx) => {
      let job = await JobModel.query(trx).findById(id).forUpdate();
      if (!job) {
        // A statement of its own: the read after it takes a snapshot that includes the commit waited for.
        await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [submissionLockKey(id)]);
        job = await JobModel.query(trx).findById(id).forUpdate();
      }
      return job ? fn(trx, job) : undefined;
    });
  }

  /** queued -> processing, recording the worker; `job.started` only on the first start, not on a retry. */
  async markStarted(trx: Knex.Transaction, job: JobModel, workerId: string): Promise<JobModel> {
    const firstStart = job.status === 'queued';
    const updated = await JobModel.query(trx).patchAndFetchById(job.id, {
      status: 'processing',
      started_at: job.started_at ?? new Date(),
      worker_id: workerId,
    });
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

/**
 * System read: a job's row by its id alone. A job's activity gets the job id from its workflow, not
 * the client; this read is how it learns the client, and everything after it is scoped to that client.
 */
export async function jobOfActivity(db: Knex, id: string): Promise<JobModel | undefined> {
  return JobModel.query(db).findById(id);
}
