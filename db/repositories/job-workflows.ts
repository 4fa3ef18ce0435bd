import type { Knex } from 'knex';
import type { StageStatus, VerifiedEmail, WorkflowStatus } from '../../jobs/workflow';

/** A job_workflows row (db/migrations/20261122001100_campaigns.ts). */
export interface JobWorkflowRow {
  job_id: string;
  client_id: string;
  campaign_id: string | null;
  status: Exclude<WorkflowStatus, 'queued'>;
  options: Record<string, unknown>;
  limits: { siteMs: number; verifyMs: number; overallMs: number };
  site_timed_out: boolean;
  verify_timed_out: boolean;
  error_message: string | null;
  started_at: Date;
  deadline_at: Date;
  completed_at: Date | null;
}

/** The `business` column: what the maps listing says (spec §2.8 business_* fields). */
export interface ListingFields {
  business_name: string | null;
  business_place_id: string;
  business_address: string | null;
  business_phone: string | null;
  business_rating: number | null;
  business_website: string | null;
}

/** The `site` column: the site stage's findings (spec §2.8). */
export interface SiteFields {
  pages_crawled: number;
  emails_found: string[];
  phones_found: string[];
  social_media: Record<string, string | null>;
  company_info: Record<string, unknown> | null;
  team_members: Record<string, unknown>[];
  compendium: Record<string, unknown> | null;
}

export interface WorkflowBusinessRow {
  job_id: string;
  place_id: string;
  client_id: string;
  campaign_id: string | null;
  position: number;
  business: ListingFields;
  site_origin: string | null;
  domain_filtered: boolean;
  filter_reason: string | null;
  site_status: StageStatus;
  site: SiteFields | null;
  site_error: string | null;
  verify_status: StageStatus;
  emails_verified: VerifiedEmail[] | null;
  valid_emails_count: number;
  verify_error: string | null;
}

export type NewWorkflowBusiness = Pick<
  WorkflowBusinessRow,
  | 'place_id'
  | 'position'
  | 'business'
  | 'site_origin'
  | 'domain_filtered'
  | 'filter_reason'
  | 'site_status'
  | 'verify_status'
>;

/** Stages not yet at an end: what a deadline or a cancel leaves behind. */
const OPEN: StageStatus[] = ['pending', 'processing'];

/**
 * The maps -> site -> verify pipeline's rows: one job_workflows row per job, one workflow_businesses
 * row per place. Every write is idempotent (inserts do nothing on conflict, stage writes set final
 * values), so a retried activity changes nothing.
 */
export class JobWorkflowRepository {
  constructor(private readonly db: Knex) {}

  /** The row of a job's pipeline, written by the first call; later calls (retries) return it unchanged. */
  /** `overallFrom`: when the workflow's overall time began (the maps job's start); now when unknown. */
  async start(
    row: Pick<JobWorkflowRow, 'job_id' | 'client_id' | 'campaign_id' | 'options' | 'limits'>,
    businesses: NewWorkflowBusiness[],
    overallFrom: Date | null = null,
  ): Promise<JobWorkflowRow> {
    return this.db.transaction(async (trx) => {
      await trx.raw(
        `insert into job_workflows (job_id, client_id, campaign_id, status, options, limits, started_at, deadline_at)
         values (?, ?, ?, 'processing', ?::jsonb, ?::jsonb, now(), coalesce(?::timestamptz, now()) + (? * interval '1 millisecond'))
         on conflict (job_id) do nothing`,
        [
          row.job_id,
          row.client_id,
          row.campaign_id,
          JSON.stringify(row.options),
          JSON.stringify(row.limits),
          overallFrom,
          row.limits.overallMs,
        ],
      );
      if (businesses.length > 0) {
        await trx('workflow_businesses')
          .insert(
            businesses.map((b) => ({
              ...b,
              business: JSON.stringify(b.business),
              job_id: row.job_id,
              client_id: row.client_id,
              campaign_id: row.campaign_id,
            })),
          )
          .onConflict(['job_id', 'place_id'])
          .ignore();
      }
      return (await trx('job_workflows').where({ job_id: row.job_id }).first()) as JobWorkflowRow;
    });
  }

  async get(jobId: string): Promise<JobWorkflowRow | undefined> {
    return (await this.db('job_workflows').where({ job_id: jobId }).first()) as JobWorkflowRow | undefined;
  }

  /** The job's businesses in maps order. */
  async businesses(jobId: string, origin?: string): Promise<WorkflowBusinessRow[]> {
    const q = this.db('workflow_businesses').where({ job_id: jobId }).orderBy('position');
    return (await (origin === undefined ? q : q.where({ site_origin: origin }))) as WorkflowBusinessRow[];
  }

  /** Sets stage fields of every (non-filtered) business on one site. */
  async updateSite(
    jobId: string,
    origin: string,
    patch: Partial<
      Pick<
        WorkflowBusinessRow,
        | 'site_status'
        | 'site'
        | 'site_error'
        | 'verify_status'
        | 'emails_verified'
        | 'valid_emails_count'
        | 'verify_error'
      >
    >,
  ): Promise<void> {
    const values: Record<string, unknown> = { ...patch, updated_at: this.db.fn.now() };
    if (patch.site !== undefined) values.site = JSON.stringify(patch.site);
    if (patch.emails_verified !== undefined) values.emails_verified = JSON.stringify(patch.emails_verified);
    await this.db('workflow_businesses')
      .where({ job_id: jobId, site_origin: origin, domain_filtered: false })
      .update(values);
  }

  /** A stage of one site that ended without its activity's own word (a time-out, retries used up): only stages still open change. */
  async endOpenStage(
    jobId: string,
    origin: string,
    stage: 'site' | 'verify',
    status: 'failed' | 'timed_out',
    error: string,
  ): Promise<void> {
    await this.db.transaction(async (trx) => {
      const rows = trx('workflow_businesses').where({ job_id: jobId, site_origin: origin, domain_filtered: false });
      if (stage === 'site') {
        // A site that never finished has no e-mails to verify.
        await rows
          .clone()
          .whereIn('site_status', OPEN)
          .update({ site_status: status, site_error: error, verify_status: 'skipped', updated_at: trx.fn.now() });
        if (status === 'timed_out')
          await trx('job_workflows').where({ job_id: jobId }).update({ site_timed_out: true });
      } else {
        await rows
          .clone()
          .whereIn('verify_status', OPEN)
          .update({ verify_status: status, verify_error: error, updated_at: trx.fn.now() });
        if (status === 'timed_out')
          await trx('job_workflows').where({ job_id: jobId }).update({ verify_timed_out: true });
      }
    });
  }

  /**
   * A pipeline that failed for good (its start could not read the maps result, a step used up its
   * retries, its workflow timed out): its results say `failed` with the reason instead of
   * `processing` forever. Writes the row if the pipeline never got to; a row already final is kept.
   */
  async fail(jobId: string, errorMessage: string): Promise<void> {
    // tenancy: the pipeline's own job by its id (from its workflow); the row takes the job's client.
    await this.db.raw(
      `insert into job_workflows (job_id, client_id, campaign_id, status, options, limits, error_message, started_at, deadline_at, completed_at)
       select id, client_id, campaign_id, 'failed', '{}'::jsonb, '{}'::jsonb, ?, now(), now(), now() from jobs where id = ?
       on conflict (job_id) do update set status = 'failed', error_message = excluded.error_message, completed_at = now()
         where job_workflows.status = 'processing'`,
      [errorMessage, jobId],
    );
  }

  /**
   * The pipeline's end: open stages become `timed_out` (the overall deadline) or `skipped` (a
   * cancel), then the status follows spec §4.3 (pipelineStatus). Idempotent: a finished row is
   * returned as it is.
   */
  async finish(jobId: string, outcome: 'done' | 'deadline' | 'cancelled'): Promise<JobWorkflowRow | undefined> {
    return this.db.transaction(async (trx) => {
      const row = (await trx('job_workflows').where({ job_id: jobId }).forUpdate().first()) as
        JobWorkflowRow | undefined;
      if (!row || row.status !== 'processing') return row;
      const open = () => trx('workflow_businesses').where({ job_id: jobId });
      if (outcome === 'deadline' || outcome === 'cancelled') {
        const [status, error] =
          outcome === 'deadline'
            ? (['timed_out', "the pipeline's overall time limit was reached"] as const)
            : (['skipped', 'cancelled'] as const);
        // A site that did not finish leaves nothing to verify: its verify stage is skipped, not timed out.
        const site = await open()
          .whereIn('site_status', OPEN)
          .update({ site_status: status, site_error: error, verify_status: 'skipped', updated_at: trx.fn.now() });
        const verify = await open()
          .whereIn('verify_status', OPEN)
          .update({ verify_status: status, verify_error: error, updated_at: trx.fn.now() });
        if (outcome === 'deadline') {
          await trx('job_workflows')
            .where({ job_id: jobId })
            .update({
              ...(site > 0 ? { site_timed_out: true } : {}),
              ...(verify > 0 ? { verify_timed_out: true } : {}),
            });
        }
      }
      const stages = (await open().select('site_status', 'verify_status')) as Pick<
        WorkflowBusinessRow,
        'site_status' | 'verify_status'
      >[];
      const status =
        outcome === 'cancelled' ? 'failed' : pipelineStatus(stages.flatMap((s) => [s.site_status, s.verify_status]));
      const [updated] = (await trx('job_workflows')
        .where({ job_id: jobId })
        .update({ status, completed_at: trx.fn.now(), error_message: outcome === 'cancelled' ? 'cancelled' : null })
        .returning('*')) as JobWorkflowRow[];
      return updated as JobWorkflowRow;
    });
  }
}

/**
 * Spec §4.3 response logic for a pipeline that ran to its end (or its deadline): any stage timed
 * out -> `partial`; else any stage failed -> `completed_with_errors`; else `completed` (also with
 * zero businesses).
 */
export function pipelineStatus(stages: StageStatus[]): 'completed' | 'completed_with_errors' | 'partial' {
  if (stages.includes('timed_out')) return 'partial';
  if (stages.includes('failed')) return 'completed_with_errors';
  return 'completed';
}
