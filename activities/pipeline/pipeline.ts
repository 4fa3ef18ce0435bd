import { ApplicationFailure, Context } from '@temporalio/activity';
import { JobResultStore } from '../../db/repositories/job-results';
import {
  JobWorkflowRepository,
  type ListingFields,
  type NewWorkflowBusiness,
  type SiteFields,
  type WorkflowBusinessRow,
} from '../../db/repositories/job-workflows';
import { SearchOutbox } from '../../db/repositories/search-outbox';
import { CATALOG } from '../../jobs';
import { crawlSitePayload } from '../../jobs/crawl-site';
import type { Projection } from '../../jobs/projection';
import { jobTaskQueue } from '../../jobs/queues';
import { workflowOptions, type StageStatus, type VerifiedEmail, type WorkflowOptions } from '../../jobs/workflow';
import { HEARTBEAT_INTERVAL } from '../../jobs/limits';
import { filterReason } from '../../lib/directory-domains';
import type { ActivityDeps } from '../deps';
import { crawlAndStoreCompendium, crawlRequest } from '../site/crawl';
import { CrawlFailedError } from '../site/crawler';
import { writeProjection } from '../store/leads';
import { distinctAddresses, verifyAddresses } from '../verify/crawl-verify';

/** Time per address in the verify stage (crawlVerify's default timeout_seconds). */
const ADDRESS_SECONDS = 30;

export interface PipelineInput {
  jobId: string;
  clientId: string;
}

export interface PipelineLimits {
  siteMs: number;
  verifyMs: number;
  overallMs: number;
}

/** What the workflow needs to run the stages: small (no page data), within Temporal's payload limit. */
export interface PipelinePlan {
  limits: PipelineLimits;
  /** Sites (site + verify lanes) in flight at once. */
  concurrency: number;
  /** Epoch ms of the job_workflows row's started_at (the pipeline's, after the maps job). */
  startedAt: number;
  /**
   * Epoch ms of the overall deadline: the maps job's start + overallMs, written by the first start,
   * so a retry or replay does not extend it. Absent in plans of workflows started before it existed
   * (their deadline was startedAt + overallMs).
   */
  deadlineAt?: number;
  verifyEnabled: boolean;
  /** The crawl-site and crawl-verify task queues of this deployment. */
  queues: { site: string; verify: string };
  businesses: { placeId: string; origin: string | null; filtered: boolean }[];
}

export interface SiteStageInput extends PipelineInput {
  /** The site (scheme, host and port) every business of which shares this crawl. */
  origin: string;
}

export interface SiteStageOutput {
  status: StageStatus;
  emailsFound: number;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);

/** The site of a website URL: its origin, or null when it is not an http(s) URL. */
export function siteOrigin(website: string | null): string | null {
  if (!website) return null;
  try {
    const u = new URL(website);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : null;
  } catch {
    return null;
  }
}

/** The pipeline's rows of a maps result: one per place (first occurrence), in maps order, with the domain filter applied. */
export function plannedBusinesses(result: unknown, options: WorkflowOptions): NewWorkflowBusiness[] {
  const seen = new Set<string>();
  const out: NewWorkflowBusiness[] = [];
  const businesses = isObj(result) && Array.isArray(result.businesses) ? result.businesses.filter(isObj) : [];
  for (const b of businesses) {
    const placeId = text(b.place_id);
    if (!placeId || seen.has(placeId)) continue;
    seen.add(placeId);
    const website = text(b.website);
    const reason = filterReason(website);
    const origin = reason ? null : siteOrigin(website);
    const business: ListingFields = {
      business_name: text(b.business_name) ?? text(b.name),
      business_place_id: placeId,
      business_address: text(b.address),
      business_phone: text(b.phone),
      business_rating: typeof b.rating === 'number' ? b.rating : null,
      business_website: website,
    };
    // Filtered, or without a (crawlable) website: neither stage runs.
    const skipped = reason !== null || origin === null;
    out.push({
      place_id: placeId,
      position: out.length,
      business,
      site_origin: origin,
      domain_filtered: reason !== null,
      filter_reason: reason,
      site_status: skipped ? 'skipped' : 'pending',
      verify_status: skipped || !options.verify.enabled ? 'skipped' : 'pending',
    });
  }
  return out;
}

/**
 * IDAP resources of the stage results: each crawled site as crawlSite's catalog projection makes it
 * (a business keyed by domain, which joins the place's listing written by the maps job: one business
 * per place, merged with its site data), and each verified address as crawlVerify's projection.
 */
export function stageProjections(rows: WorkflowBusinessRow[], jobId: string): Projection[] {
  const plans: Projection[] = [];
  const siteSpec = CATALOG.crawlSite;
  const verifySpec = CATALOG.crawlVerify;
  for (const row of rows) {
    const site = row.site;
    const website = row.business.business_website;
    if (row.site_status === 'completed' && site && website && siteSpec.project) {
      const plan = siteSpec.project(
        {
          url: website,
          final_url: website,
          emails: site.emails_found,
          phones: site.phones_found.filter((p) => p.startsWith('+')).map((e164) => ({ e164, valid: true })),
          social_media: site.social_media,
          company_info: site.company_info ?? {},
          team_members: site.team_members,
          compendium: site.compendium,
          proflink: site.social_media.proflink ?? null,
        },
        { jobId },
      );
      for (const i of plan.businesses) {
        const node = plan.nodes[i];
        // The listing keeps its own name; the record is the maps job's, whose result holds no compendium (nulls are not written).
        if (node) node.data = { ...node.data, name: null, job_type: null, compendium_job_id: null };
      }
      plans.push(plan);
    }
    if (row.emails_verified && row.emails_verified.length > 0 && verifySpec.project) {
      plans.push(verifySpec.project({ results: row.emails_verified }, { jobId }));
    }
  }
  return plans;
}

export function createPipelineActivities(deps: ActivityDeps) {
  const repo = new JobWorkflowRepository(deps.db);
  const results = new JobResultStore(deps.db, deps.storage);
  const outbox = new SearchOutbox(deps.db);

  async function optionsOf(jobId: string): Promise<{ options: WorkflowOptions; limits: PipelineLimits }> {
    const row = await repo.get(jobId);
    if (!row) throw ApplicationFailure.nonRetryable(`no pipeline row for job ${jobId}`, 'NotFound');
    return { options: workflowOptions.parse(row.options), limits: row.limits };
  }

  /**
   * The pipeline's start: loads the completed maps job's payload and stored result, writes the
   * job_workflows row and one workflow_businesses row per place (domain filter applied). Idempotent:
   * a retry finds the rows and returns the same plan (the deadline counts from the first start).
   * The limits are this worker's WORKFLOW_*_TIMEOUT_SECONDS.
   */
  async function startPipeline(input: PipelineInput): Promise<PipelinePlan> {
    const { config } = deps;
    const job = (await deps
      .db('jobs')
      .where({ id: input.jobId })
      .first('payload', 'campaign_id', 'status', 'started_at')) as
      { payload: Obj; campaign_id: string | null; status: string; started_at: Date | null } | undefined;
    if (!job) throw ApplicationFailure.nonRetryable(`job ${input.jobId} not found`, 'NotFound');
    if (job.status !== 'completed')
      throw ApplicationFailure.nonRetryable(
        `job ${input.jobId} is ${job.status}, not completed: no pipeline`,
        'InvalidInput',
      );
    const options = workflowOptions.parse(job.payload.workflow ?? {});
    const limits: PipelineLimits = {
      siteMs: config.WORKFLOW_SITE_TIMEOUT_SECONDS * 1000,
      verifyMs: config.WORKFLOW_VERIFY_TIMEOUT_SECONDS * 1000,
      overallMs: config.WORKFLOW_OVERALL_TIMEOUT_SECONDS * 1000,
    };
    const existing = await repo.get(input.jobId);
    const planned = existing ? [] : plannedBusinesses(await results.load(input.jobId), options);
    // Spec §8: the workflow (maps -> site -> verify) has 10 minutes overall, the maps job's own time included.
    const row = await repo.start(
      { job_id: input.jobId, client_id: input.clientId, campaign_id: job.campaign_id, options, limits },
      planned,
      job.started_at,
    );
    const rows = await repo.businesses(input.jobId);
    return {
      // The first start's limits: a retry on a worker configured otherwise keeps them.
      limits: row.limits,
      concurrency: config.WORKFLOW_BUSINESS_CONCURRENCY,
      startedAt: new Date(row.started_at).getTime(),
      deadlineAt: new Date(row.deadline_at).getTime(),
      verifyEnabled: workflowOptions.parse(row.options).verify.enabled,
      queues: {
        site: jobTaskQueue(config.TASK_QUEUE_PREFIX, CATALOG.crawlSite),
        verify: jobTaskQueue(config.TASK_QUEUE_PREFIX, CATALOG.crawlVerify),
      },
      businesses: rows.map((r) => ({ placeId: r.place_id, origin: r.site_origin, filtered: r.domain_filtered })),
    };
  }

  /**
   * Site stage of one site (origin): crawls it once for every business on it with the workflow's
   * site options, within a little less than the site limit, and writes their site fields. A site
   * that cannot be crawled is `failed` (spidersite_error), never a failed pipeline. Idempotent: a
   * site already crawled returns what is stored. Heartbeats every half second; a cancel stops the crawl
   * at once (the rows stay `processing` for the workflow to end).
   */
  async function crawlBusinessSite(input: SiteStageInput): Promise<SiteStageOutput> {
    const rows = (await repo.businesses(input.jobId, input.origin)).filter((r) => !r.domain_filtered);
    const first = rows[0];
    if (!first?.business.business_website) return { status: 'skipped', emailsFound: 0 };
    // Already ended (a retry after the row was written): what is stored stands.
    if (first.site_status !== 'pending' && first.site_status !== 'processing')
      return { status: first.site_status, emailsFound: first.site?.emails_found.length ?? 0 };
    const { options, limits } = await optionsOf(input.jobId);
    await repo.updateSite(input.jobId, input.origin, { site_status: 'processing' });
    const payload = crawlSitePayload.parse({
      url: first.business.business_website,
      max_pages: options.site.max_pages,
      extract_team: options.site.extract_team,
      compendium: options.site.compendium,
    });
    // The crawl stops a little before the stage limit, so the compendium upload and the row write fit.
    const timeLimitMs = Math.max(1000, limits.siteMs - Math.min(30_000, Math.round(limits.siteMs / 10)));
    const startedAt = Date.now();
    try {
      const data = await crawlAndStoreCompendium(
        deps,
        input.clientId,
        { ...crawlRequest(payload), timeLimitMs },
        { renderJs: false },
      );
      const site: SiteFields = {
        pages_crawled: data.pages_crawled,
        emails_found: data.emails,
        phones_found: data.phones.map((p) => p.e164 ?? p.raw),
        social_media: { ...data.social_media },
        company_info: { ...data.company_info },
        team_members: data.team_members.map((m) => ({ ...m })),
        compendium: data.compendium ? { ...data.compendium } : null,
      };
      const verify = data.emails.length > 0 && options.verify.enabled;
      await repo.updateSite(input.jobId, input.origin, {
        site_status: 'completed',
        site,
        site_error: null,
        ...(verify ? {} : { verify_status: 'skipped' }),
      });
      return { status: 'completed', emailsFound: data.emails.length };
    } catch (err) {
      if (!(err instanceof CrawlFailedError)) throw err;
      // The crawl's own time limit (just under the stage's) ran out before the start page answered: the stage timed out.
      if (err.type === 'Timeout' && Date.now() - startedAt >= timeLimitMs) {
        await repo.endOpenStage(input.jobId, input.origin, 'site', 'timed_out', `site stage timed out: ${err.message}`);
        return { status: 'timed_out', emailsFound: 0 };
      }
      await repo.updateSite(input.jobId, input.origin, {
        site_status: 'failed',
        site_error: err.message,
        verify_status: 'skipped',
      });
      return { status: 'failed', emailsFound: 0 };
    }
  }

  /**
   * Verify stage of one site's businesses: the e-mails its crawl found, verified once (as crawlVerify
   * does, smtp_check from the workflow options) within the verify limit; writes emails_verified and
   * valid_emails_count. Idempotent: a finished stage returns at once. Heartbeats every half second; a
   * cancel aborts DNS and SMTP at once.
   */
  async function verifyBusinessEmails(input: SiteStageInput): Promise<{ status: StageStatus; valid: number }> {
    const rows = (await repo.businesses(input.jobId, input.origin)).filter((r) => !r.domain_filtered);
    const first = rows[0];
    if (!first || (first.verify_status !== 'pending' && first.verify_status !== 'processing'))
      return { status: first?.verify_status ?? 'skipped', valid: first?.valid_emails_count ?? 0 };
    const addresses = distinctAddresses({ emails: first.site?.emails_found ?? [] });
    if (addresses.length === 0) {
      await repo.updateSite(input.jobId, input.origin, { verify_status: 'skipped' });
      return { status: 'skipped', valid: 0 };
    }
    const { options, limits } = await optionsOf(input.jobId);
    await repo.updateSite(input.jobId, input.origin, { verify_status: 'processing' });
    const ctx = Context.current();
    let done = 0;
    const beat = setInterval(() => ctx.heartbeat({ verified: done, of: addresses.length }), HEARTBEAT_INTERVAL.ms);
    try {
      ctx.heartbeat({ verified: 0, of: addresses.length });
      // Room after the last probe for the row write, as crawlVerify keeps for its result.
      const reserveMs = Math.min(10_000, Math.round(limits.verifyMs / 5));
      const stageEnd = Date.now() + limits.verifyMs - reserveMs;
      const items = await verifyAddresses(deps, addresses, {
        smtpCheck: options.verify.smtp_check,
        timeoutSeconds: Math.max(1, Math.min(ADDRESS_SECONDS, Math.floor((limits.verifyMs - reserveMs) / 1000))),
        stageEnd,
        signal: ctx.cancellationSignal,
        onProgress: (n) => {
          done = n;
        },
      });
      const verified: VerifiedEmail[] = items.map((r) => ({
        email: r.email,
        status: r.status,
        score: r.score,
        is_deliverable: r.is_deliverable,
        is_free_email: r.is_free_email,
        is_disposable: r.is_disposable,
        is_role_account: r.is_role_account,
      }));
      const valid = verified.filter((v) => v.status === 'valid').length;
      await repo.updateSite(input.jobId, input.origin, {
        verify_status: 'completed',
        emails_verified: verified,
        valid_emails_count: valid,
        verify_error: null,
      });
      return { status: 'completed', valid };
    } finally {
      clearInterval(beat);
    }
  }

  /**
   * A site's stage that ended in the workflow without its activity's own word: the activity timed
   * out (`timed_out`, and the job's spidersite/spiderverify_timed_out) or used up its retries
   * (`failed`). Only stages still open change.
   */
  async function recordStageEnd(
    input: SiteStageInput & { stage: 'site' | 'verify'; status: 'failed' | 'timed_out'; error: string },
  ): Promise<void> {
    await repo.endOpenStage(input.jobId, input.origin, input.stage, input.status, input.error);
  }

  /**
   * The pipeline's end (runs even while the workflow is cancelled): the finished stages' results
   * become IDAP resources and the changed businesses are queued for the lead index; then open
   * stages become `timed_out` (overall deadline) or `skipped` (cancel: status `failed`,
   * error_message "cancelled"), the status follows spec §4.3 and completed_at is set. Idempotent:
   * the projection upserts on natural keys, the status is set once.
   */
  async function finishPipeline(
    input: PipelineInput & { outcome: 'done' | 'deadline' | 'cancelled' },
  ): Promise<{ status: string; businesses: number }> {
    // Stage results first: once the status is final, a reader of the results finds them in IDAP too.
    // The projection reads only finished stages, which the end below does not change.
    const wf = await repo.get(input.jobId);
    // Cancelled before startPipeline wrote anything: nothing to end.
    if (!wf) return { status: 'failed', businesses: 0 };
    const plans = stageProjections(await repo.businesses(input.jobId), input.jobId);
    const businesses =
      plans.length === 0
        ? 0
        : await deps.db.transaction(async (trx) => {
            const ids = new Set<string>();
            for (const plan of plans) {
              const written = await writeProjection(trx, input.clientId, plan, wf.campaign_id);
              written.businessIds.forEach((id) => ids.add(id));
            }
            await outbox.enqueue(trx, input.clientId, [...ids], input.jobId);
            return ids.size;
          });
    const row = await repo.finish(input.jobId, input.outcome);
    return { status: row?.status ?? 'failed', businesses };
  }

  /**
   * The pipeline failed for good (runJob saw its child fail, not cancelled): its row says `failed`
   * with the reason, so GET .../workflow-results answers at once instead of waiting out the deadline.
   * Idempotent: a row already final is kept.
   */
  async function failPipeline(input: PipelineInput & { errorMessage: string }): Promise<void> {
    await repo.fail(input.jobId, input.errorMessage);
  }

  return { startPipeline, crawlBusinessSite, verifyBusinessEmails, recordStageEnd, finishPipeline, failPipeline };
}

export type PipelineActivities = ReturnType<typeof createPipelineActivities>;
