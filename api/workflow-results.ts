import type { Db } from '../db';
import type { CampaignService } from './campaign-service';
import type { JobModel } from '../db/models/job';
import { JobWorkflowRepository, type JobWorkflowRow, type WorkflowBusinessRow } from '../db/repositories/job-workflows';
import { JobRepository } from '../db/repositories/jobs';
import { MAX_JOB_DEADLINE } from '../jobs/limits';
import {
  pipelineEnabled,
  type StageStatus,
  type WorkflowBusinessEntry,
  type WorkflowResults,
  type WorkflowStatus,
} from '../jobs/workflow';
import type { Config } from '../lib/config';
import { badRequest, notFound } from '../lib/errors';
import { sleep } from '../lib/sleep';
import { UUID } from '../lib/ids';

/** How often a waiting request looks at Postgres again (no connection is held in between). */
const POLL_MS = 500;
/** Past the pipeline's deadline: its in-flight stages stop and finishPipeline writes the end. */
const FINISH_GRACE_MS = 15_000;

export const NOT_A_WORKFLOW_JOB =
  'this job was not submitted with a workflow: workflow results exist only for crawlMaps jobs submitted with workflow (enabled)';

const OPEN: readonly StageStatus[] = ['pending', 'processing'];
const isTerminal = (s: WorkflowStatus) => s !== 'queued' && s !== 'processing';

/** The §2.8 entry of one business row. */
export function businessEntry(row: WorkflowBusinessRow): WorkflowBusinessEntry {
  const site = row.site;
  return {
    ...row.business,
    domain_filtered: row.domain_filtered,
    filter_reason: row.filter_reason,
    spidersite_status: row.site_status,
    pages_crawled: site?.pages_crawled ?? 0,
    emails_found: site?.emails_found ?? [],
    phones_found: site?.phones_found ?? [],
    social_media: site?.social_media ?? {},
    company_info: site?.company_info ?? null,
    team_members: site?.team_members ?? [],
    compendium: site?.compendium ?? null,
    spidersite_error: row.site_error,
    spiderverify_status: row.verify_status,
    emails_verified: row.emails_verified ?? [],
    valid_emails_count: row.valid_emails_count,
    spiderverify_error: row.verify_error,
  };
}

/**
 * Spec §4.3 from the job row, its pipeline row (absent until the pipeline started) and its business
 * rows. Before the pipeline row exists the status follows the job: queued -> queued, processing or
 * completed -> processing (stage maps), failed or cancelled -> failed. Response logic: completed,
 * completed_with_errors and partial succeed (has_results when there are businesses); failed,
 * queued and processing do not.
 */
export function buildWorkflowResults(
  job: Pick<JobModel, 'id' | 'status' | 'campaign_id' | 'started_at' | 'completed_at' | 'error_message'>,
  wf: JobWorkflowRow | undefined,
  rows: WorkflowBusinessRow[],
  now: Date,
): WorkflowResults {
  let status: WorkflowStatus;
  if (wf) status = wf.status;
  else if (job.status === 'queued') status = 'queued';
  else if (job.status === 'failed' || job.status === 'cancelled') status = 'failed';
  else status = 'processing';
  const total = rows.length;
  const count = (f: (r: WorkflowBusinessRow) => boolean) => rows.filter(f).length;
  const siteDone = count((r) => !OPEN.includes(r.site_status));
  const verifyDone = count((r) => !OPEN.includes(r.verify_status));
  const succeeded = status === 'completed' || status === 'completed_with_errors' || status === 'partial';
  // The pipeline's end; without a pipeline, a maps job that failed or was cancelled ended with the job.
  const ended = wf ? wf.completed_at : status === 'failed' ? job.completed_at : null;
  const end = ended ? new Date(ended) : now;
  const progress: WorkflowResults['progress'] =
    status === 'processing'
      ? {
          stage: !wf ? 'maps' : count((r) => OPEN.includes(r.site_status)) > 0 ? 'site' : 'verify',
          businesses_total: total,
          spidersite_done: siteDone,
          spiderverify_done: verifyDone,
          percent: total === 0 ? 0 : Math.round(((siteDone + verifyDone) / (2 * total)) * 1000) / 10,
        }
      : null;
  return {
    success: succeeded,
    has_results: succeeded && total > 0,
    job_id: job.id,
    campaign_id: wf?.campaign_id ?? job.campaign_id,
    status,
    progress,
    businesses_total: total,
    // A website, filtered or not (the campaign aggregate, db/repositories/campaigns.ts, counts the same).
    businesses_with_domains: count((r) => r.business.business_website !== null),
    businesses_filtered: count((r) => r.domain_filtered),
    spidersite_completed: count((r) => r.site_status === 'completed'),
    spidersite_failed: count((r) => r.site_status === 'failed' || r.site_status === 'timed_out'),
    spiderverify_completed: count((r) => r.verify_status === 'completed'),
    spiderverify_failed: count((r) => r.verify_status === 'failed' || r.verify_status === 'timed_out'),
    total_emails_found: rows.reduce((n, r) => n + (r.site?.emails_found.length ?? 0), 0),
    total_valid_emails: rows.reduce((n, r) => n + r.valid_emails_count, 0),
    businesses: rows.map(businessEntry),
    processing_time_seconds: job.started_at
      ? Math.max(0, Math.round((end.getTime() - new Date(job.started_at).getTime()) / 100) / 10)
      : null,
    spidersite_timed_out: wf?.site_timed_out ?? false,
    spiderverify_timed_out: wf?.verify_timed_out ?? false,
    error_message:
      wf?.error_message ??
      (status === 'failed'
        ? (job.error_message ?? (job.status === 'cancelled' ? 'the maps job was cancelled' : null))
        : null),
  };
}

/** GET .../workflow-results: the §4.3 body of one crawlMaps job's pipeline, optionally waiting for its end. */
export class WorkflowResultsService {
  private readonly jobs: JobRepository;
  private readonly pipelines: JobWorkflowRepository;

  constructor(
    private readonly db: Db,
    private readonly config: Pick<Config, 'DATABASE_SCHEMA' | 'WORKFLOW_OVERALL_TIMEOUT_SECONDS'>,
    /** The campaign lookup of the campaign endpoints (same 400/404 details). */
    private readonly campaigns: Pick<CampaignService, 'get'>,
  ) {
    this.jobs = new JobRepository(db, config.DATABASE_SCHEMA);
    this.pipelines = new JobWorkflowRepository(db);
  }

  /** A crawlMaps job of this client submitted with workflow; otherwise 400 / 404. */
  async jobOf(clientId: string, jobId: string): Promise<JobModel> {
    if (!UUID.test(jobId)) throw badRequest('invalid job id format, expected UUID');
    const job = await this.jobs.findForClient(clientId, jobId);
    if (!job) throw notFound('job not found');
    if (job.type !== 'crawlMaps' || !pipelineEnabled(job.payload)) throw badRequest(NOT_A_WORKFLOW_JOB);
    return job;
  }

  /** A job of one of this client's campaigns (spec §4.3 errors). */
  async campaignJobOf(clientId: string, campaignId: string, jobId: string): Promise<JobModel> {
    if (!UUID.test(jobId)) throw badRequest('invalid job id format, expected UUID');
    const campaign = await this.campaigns.get(clientId, campaignId);
    const job = await this.jobs.findForClient(clientId, jobId);
    // The campaign's own id: the path's may be in upper case.
    if (!job || job.campaign_id !== campaign.id) throw notFound('job not found');
    if (!pipelineEnabled({ workflow: campaign.workflow })) throw badRequest('campaign without workflow configuration');
    return job;
  }

  /**
   * The current results; with `wait`, polled until the status is terminal, bounded by the pipeline's
   * deadline (+ the time its stages take to stop) or, before the pipeline started, the maps job's
   * 10-minute deadline plus the overall limit; a client that hangs up (`signal`) ends the wait.
   */
  async results(job: JobModel, options: { wait: boolean; signal: AbortSignal }): Promise<WorkflowResults> {
    const requestedAt = Date.now();
    let current = job;
    for (;;) {
      const wf = await this.pipelines.get(current.id);
      const rows = wf ? await this.pipelines.businesses(current.id) : [];
      const body = buildWorkflowResults(current, wf, rows, new Date());
      if (!options.wait || isTerminal(body.status) || options.signal.aborted) return body;
      const bound = wf
        ? new Date(wf.deadline_at).getTime() + FINISH_GRACE_MS
        : (current.started_at ? new Date(current.started_at).getTime() : requestedAt) +
          MAX_JOB_DEADLINE.ms +
          this.config.WORKFLOW_OVERALL_TIMEOUT_SECONDS * 1000 +
          FINISH_GRACE_MS;
      if (Date.now() + POLL_MS > bound) return body;
      // A hang-up ends the sleep; the check above then answers with what is there.
      await sleep(POLL_MS, options.signal).catch(() => undefined);
      current = (await this.jobs.findForClient(job.client_id, job.id)) ?? current;
    }
  }
}
