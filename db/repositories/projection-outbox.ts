import type { Knex } from 'knex';
import { raw } from 'objection';
import type { JobType } from '../../jobs';
import { JobModel } from '../models/job';

export interface ProjectionRow {
  job_id: string;
  client_id: string;
  type: JobType;
  attempts: number;
}

export interface ProjectionBacklog {
  /** Completed jobs whose leads have not reached IDAP yet and are still retried. */
  pending: number;
  /** Seconds since the oldest of those completed (0 when none). */
  oldestSeconds: number;
  /** Completed jobs whose projection was given up after the retry window (PROJECTION_RETRY_HOURS). */
  givenUp: number;
}

export interface SweepRetry {
  /** The first retry's delay after a failed sweep; it doubles with each failure. */
  initialMs: number;
  /** The longest delay between two retries. */
  maxMs: number;
  /** How long after the job completed its projection is retried before it is given up. */
  retryHours: number;
}

/** What one sweep did: nothing was due, or a job's projection was tried (`error` when it failed). */
export type SweepOutcome =
  | { kind: 'none' }
  | { kind: 'projected'; row: ProjectionRow }
  | { kind: 'failed'; row: ProjectionRow; error: string; givenUp: boolean };

/**
 * The projection outbox (migration 20261202000100): completed jobs whose results still have to
 * reach IDAP and the lead index. A row is written in the transaction that completes its job and
 * deleted in the transaction that projects it (the workflow's own attempt, or a sweep), so a
 * projection that failed for longer than the workflow tries stays owed, and is retried by the
 * workers' sweepers. Claims use SKIP LOCKED: several workers sweep in parallel without overlap.
 */
export class ProjectionOutbox {
  constructor(private readonly db: Knex) {}

  /**
   * Owes the job's projection, in the transaction that completes it; the first sweep may take it
   * `sweepAfterSeconds` later (after the workflow's own attempts). Idempotent.
   */
  async enqueue(
    trx: Knex.Transaction,
    job: { id: string; client_id: string; type: JobType },
    sweepAfterSeconds: number,
  ): Promise<void> {
    await trx('projection_outbox')
      .insert({
        job_id: job.id,
        client_id: job.client_id,
        type: job.type,
        next_attempt_at: trx.raw("now() + ? * interval '1 second'", [sweepAfterSeconds]),
      })
      .onConflict('job_id')
      .ignore();
  }

  /** The job's projection is done (in its projecting transaction, or on its own when it projects nothing). */
  async settle(q: Knex | Knex.Transaction, jobId: string): Promise<void> {
    await q('projection_outbox').where({ job_id: jobId }).delete();
  }

  /**
   * Claims one due row (not given up) and runs `work` in its transaction, which the row's deletion
   * joins: the projection and the end of its debt commit together. On a failure the row is released
   * with the error, its next attempt backed off, and given up once the job completed more than
   * `retry.retryHours` ago. Throws only when Postgres cannot be reached at all.
   */
  async sweepOne(
    retry: SweepRetry,
    work: (row: ProjectionRow, trx: Knex.Transaction) => Promise<void>,
  ): Promise<SweepOutcome> {
    let claimed: ProjectionRow | undefined;
    try {
      return await this.db.transaction(async (trx) => {
        claimed = (await trx('projection_outbox')
          .select('job_id', 'client_id', 'type', 'attempts')
          .whereNull('given_up_at')
          .where('next_attempt_at', '<=', trx.fn.now())
          .orderBy('next_attempt_at')
          .limit(1)
          .forUpdate()
          .skipLocked()
          .first()) as ProjectionRow | undefined;
        if (!claimed) return { kind: 'none' } as const;
        await work(claimed, trx);
        await this.settle(trx, claimed.job_id);
        return { kind: 'projected', row: claimed } as const;
      });
    } catch (err) {
      if (!claimed) throw err;
      const error = String((err as Error).message).slice(0, 500);
      // Released (the transaction rolled back): note why and when to try again, for operators.
      const updated = (await this.db('projection_outbox')
        .where({ job_id: claimed.job_id })
        .update({
          attempts: this.db.raw('attempts + 1'),
          last_error: error,
          next_attempt_at: this.db.raw(
            "now() + least(? * power(2, least(attempts, 30)), ?) * interval '1 millisecond'",
            [retry.initialMs, retry.maxMs],
          ),
          given_up_at: this.db.raw("case when enqueued_at < now() - ? * interval '1 hour' then now() end", [
            retry.retryHours,
          ]),
        })
        .returning('given_up_at')
        .catch(() => [])) as { given_up_at: Date | null }[];
      return { kind: 'failed', row: claimed, error, givenUp: !!updated[0]?.given_up_at };
    }
  }

  /** The deployment's backlog (the metrics endpoint): every client's, no client named. */
  async backlog(): Promise<ProjectionBacklog> {
    const row = (await this.db('projection_outbox')
      .select(backlogColumns('projection_outbox').map((c) => this.db.raw(c)))
      .first()) as BacklogRow | undefined;
    return fromRow(row);
  }

  /** One client's backlog (its queue statistics), through the jobs' tenancy modifier. */
  async backlogOf(clientId: string): Promise<ProjectionBacklog> {
    const row = (await JobModel.query(this.db)
      .modify('forClient', clientId)
      .join('projection_outbox as p', 'p.job_id', 'jobs.id')
      .select(...backlogColumns('p').map((c) => raw(c)))
      .first()) as unknown as BacklogRow | undefined;
    return fromRow(row);
  }
}

interface BacklogRow {
  pending: number | string;
  oldest: number | string;
  given_up: number | string;
}

const backlogColumns = (t: string): string[] => [
  `count(*) filter (where ${t}.given_up_at is null)::int as pending`,
  `coalesce(extract(epoch from now() - min(${t}.enqueued_at) filter (where ${t}.given_up_at is null)), 0)::float as oldest`,
  `count(*) filter (where ${t}.given_up_at is not null)::int as given_up`,
];

const fromRow = (row: BacklogRow | undefined): ProjectionBacklog => ({
  pending: Number(row?.pending ?? 0),
  oldestSeconds: Number(row?.oldest ?? 0),
  givenUp: Number(row?.given_up ?? 0),
});
