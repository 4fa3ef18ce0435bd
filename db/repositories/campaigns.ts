import type { Knex } from 'knex';
import type { JobStatus } from '../../jobs';
import {
  CAMPAIGN_DAYS,
  LOCATION_STATUSES,
  type CampaignStatus,
  type LocationStatus,
  type WorkflowOptions,
  type WorkflowStatus,
} from '../../jobs/workflow';
import { CampaignModel } from '../models/campaign';
import { JobModel } from '../models/job';
import { appendEvent, transactionWithEvents } from './events';
import { JobRepository, type NewJob } from './jobs';

export interface CampaignRow {
  id: string;
  client_id: string;
  name: string;
  search_terms: string[];
  max_results_per_location: number;
  dedupe_fuzzy: boolean;
  workflow: WorkflowOptions | null;
  priority: number;
  concurrency: number;
  auto_submit: boolean;
  released_through: number;
  status: CampaignStatus;
  locations_total: number;
  workflow_id: string;
  task_queue: string;
  error_message: string | null;
  terminal_event_id: string | null;
  completed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface CampaignLocationRow {
  id: string;
  campaign_id: string;
  client_id: string;
  location_id: number;
  search_term: string;
  search_string: string;
  display_name: string;
  sequence_order: number;
  status: LocationStatus;
  job_id: string | null;
  claim_key: string | null;
  results_count: number | null;
  error_message: string | null;
  submitted_at: Date | null;
  completed_at: Date | null;
}

export interface NewCampaign {
  id: string;
  clientId: string;
  name: string;
  searchTerms: string[];
  maxResultsPerLocation: number;
  dedupeFuzzy: boolean;
  workflow: WorkflowOptions | null;
  priority: number;
  concurrency: number;
  autoSubmit: boolean;
  workflowId: string;
  taskQueue: string;
}

export interface NewCampaignLocation {
  locationId: number;
  searchTerm: string;
  searchString: string;
  displayName: string;
  sequenceOrder: number;
}

export type LocationCounts = Record<LocationStatus, number>;

/** Location counts by status plus the businesses the completed locations found. */
export interface CampaignCounts {
  summary: LocationCounts;
  businesses: number;
}

export interface CampaignTotals extends CampaignCounts {
  emailsFound: number;
  validEmails: number;
}

export type ReleaseOutcome =
  | { kind: 'released'; released: number; pendingRemaining: number }
  | { kind: 'auto_submit' }
  | { kind: 'terminal'; status: CampaignStatus };

export interface ClaimedLocation {
  location: CampaignLocationRow;
  job: JobModel;
}

export interface ClaimOutcome {
  campaign: CampaignRow;
  claimed: ClaimedLocation[];
  /** Pending locations left, released or not. */
  pendingRemaining: number;
  /** Pending locations that may be claimed now (all pending with auto_submit; those released by POST /next otherwise). */
  releasable: number;
}

export interface CampaignJobItem {
  job_id: string | null;
  location_id: number;
  search_string: string;
  display_name: string;
  status: LocationStatus;
  job_status: JobStatus | null;
  results_count: number | null;
  error_message: string | null;
  submitted_at: Date | null;
  completed_at: Date | null;
  sequence_order: number;
}

export interface WorkflowAggregate {
  businesses_total: number;
  businesses_with_domains: number;
  businesses_filtered: number;
  spidersite_completed: number;
  spidersite_failed: number;
  spiderverify_completed: number;
  spiderverify_failed: number;
  total_emails_found: number;
  total_valid_emails: number;
  spidersite_timed_out: boolean;
  spiderverify_timed_out: boolean;
  jobs: {
    job_id: string;
    location_id: number;
    display_name: string;
    status: WorkflowStatus;
    businesses_total: number;
    total_valid_emails: number;
  }[];
}

const emptyCounts = (): LocationCounts => Object.fromEntries(LOCATION_STATUSES.map((s) => [s, 0])) as LocationCounts;
// Number of e-mails in a workflow_businesses row's site result (jsonb; absent until the site stage ran).
const EMAILS_FOUND = `case when jsonb_typeof(site->'emails_found') = 'array' then jsonb_array_length(site->'emails_found') else 0 end`;
// Rows per insert statement: far below Postgres' 65,535 bind parameters (8 columns each).
const INSERT_CHUNK = 1000;

/** The advisory lock a campaign's inserting transaction holds until it ends (lockedCampaign waits on it), as a job's. */
const submissionLockKey = (campaignId: string) => `campaign-submission/${campaignId}`;

/**
 * The campaign row, locked. The API starts the workflow inside the transaction that inserts the
 * row, so its first claim can come before that commit: a row not visible yet is waited for on its
 * submission lock, then read again. Still missing then, it was never committed (the start's caller
 * rolled back or died) and never will be.
 */
async function lockedCampaign(trx: Knex.Transaction, id: string): Promise<CampaignRow | undefined> {
  const row = (await trx('campaigns').where({ id }).forUpdate().first()) as CampaignRow | undefined;
  if (row) return row;
  // A statement of its own: the read after it takes a snapshot that includes the commit waited for.
  await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [submissionLockKey(id)]);
  return (await trx('campaigns').where({ id }).forUpdate().first()) as CampaignRow | undefined;
}

/** A client already has as many running campaigns as it may (CAMPAIGN_MAX_RUNNING_PER_CLIENT). */
export class CampaignLimitError extends Error {
  override readonly name = 'CampaignLimitError';
  constructor(readonly limit: number) {
    super(`the client has ${limit} running campaigns already`);
  }
}

/** Campaigns and their locations; every client-facing read is scoped by client_id. */
export class CampaignRepository {
  private readonly jobs: JobRepository;

  constructor(
    private readonly db: Knex,
    private readonly schema: string,
  ) {
    this.jobs = new JobRepository(db, schema);
  }

  /**
   * The campaign row and its locations in one transaction, then `start` (the `campaign/<id>` workflow
   * start). If `start` throws, nothing is committed: no campaign without a workflow behind it. The
   * campaign's submission lock is held until the commit, so that a workflow that claims sooner waits
   * for the row instead of failing (lockedCampaign), as a job's first step does.
   * With `maxRunning`, a client that has that many running campaigns gets CampaignLimitError; the
   * client's creations take turns (a transaction-scoped advisory lock), so concurrent ones cannot
   * pass the count together.
   */
  async create(
    c: NewCampaign,
    locations: NewCampaignLocation[],
    start: (row: CampaignRow) => Promise<void>,
    maxRunning = Number.POSITIVE_INFINITY,
  ): Promise<CampaignRow> {
    return this.db.transaction(async (trx) => {
      // Held until the commit: the workflow's first claim, if it comes sooner, waits for the row (lockedCampaign).
      await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [submissionLockKey(c.id)]);
      if (Number.isFinite(maxRunning)) {
        await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`campaigns/${c.clientId}`]);
        const [running] = (await CampaignModel.forClient(trx, c.clientId)
          .where({ status: 'running' })
          .count('* as count')) as unknown as { count: string }[];
        if (Number(running?.count ?? 0) >= maxRunning) throw new CampaignLimitError(maxRunning);
      }
      const [row] = (await trx('campaigns')
        .insert({
          id: c.id,
          client_id: c.clientId,
          name: c.name,
          search_terms: c.searchTerms,
          max_results_per_location: c.maxResultsPerLocation,
          dedupe_fuzzy: c.dedupeFuzzy,
          workflow: c.workflow === null ? null : JSON.stringify(c.workflow),
          priority: c.priority,
          concurrency: c.concurrency,
          auto_submit: c.autoSubmit,
          locations_total: locations.length,
          workflow_id: c.workflowId,
          task_queue: c.taskQueue,
        })
        .returning('*')) as CampaignRow[];
      if (!row) throw new Error('campaign insert returned nothing');
      for (let i = 0; i < locations.length; i += INSERT_CHUNK) {
        await trx('campaign_locations').insert(
          locations.slice(i, i + INSERT_CHUNK).map((l) => ({
            campaign_id: c.id,
            client_id: c.clientId,
            location_id: l.locationId,
            search_term: l.searchTerm,
            search_string: l.searchString,
            display_name: l.displayName,
            sequence_order: l.sequenceOrder,
          })),
        );
      }
      await start(row);
      return row;
    });
  }

  async find(clientId: string, id: string): Promise<CampaignRow | undefined> {
    return (await CampaignModel.forClient(this.db, clientId).findById(id)) as unknown as CampaignRow | undefined;
  }

  async findById(id: string): Promise<CampaignRow | undefined> {
    return (await this.db('campaigns').where({ id }).first()) as CampaignRow | undefined;
  }

  async list(clientId: string, page: number, pageSize: number): Promise<{ total: number; campaigns: CampaignRow[] }> {
    const [counted, rows] = await Promise.all([
      CampaignModel.forClient(this.db, clientId).count('* as count') as unknown as Promise<{ count: string }[]>,
      CampaignModel.forClient(this.db, clientId)
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .limit(pageSize)
        .offset((page - 1) * pageSize),
    ]);
    return { total: Number(counted[0]?.count ?? 0), campaigns: rows as unknown as CampaignRow[] };
  }

  /** Location counts and businesses found, per campaign, in one grouped query. */
  async counts(db: Knex | Knex.Transaction, ids: string[]): Promise<Map<string, CampaignCounts>> {
    const out = new Map<string, CampaignCounts>(ids.map((id) => [id, { summary: emptyCounts(), businesses: 0 }]));
    if (ids.length === 0) return out;
    const rows = (await db('campaign_locations')
      .select('campaign_id', 'status')
      .count('* as n')
      .sum('results_count as businesses')
      .whereIn('campaign_id', ids)
      .groupBy('campaign_id', 'status')) as unknown as {
      campaign_id: string;
      status: LocationStatus;
      n: string;
      businesses: string | null;
    }[];
    for (const r of rows) {
      const c = out.get(r.campaign_id);
      if (!c) continue;
      c.summary[r.status] = Number(r.n);
      c.businesses += Number(r.businesses ?? 0);
    }
    return out;
  }

  /** Counts plus the e-mails the pipeline found and verified (workflow_businesses), per campaign. */
  async totals(ids: string[]): Promise<Map<string, CampaignTotals>> {
    const [counts, emails] = await Promise.all([
      this.counts(this.db, ids),
      ids.length === 0
        ? Promise.resolve([])
        : (this.db('workflow_businesses')
            .select('campaign_id')
            .select(this.db.raw(`coalesce(sum(${EMAILS_FOUND}), 0) as emails_found`))
            .select(this.db.raw('coalesce(sum(valid_emails_count), 0) as valid_emails'))
            .whereIn('campaign_id', ids)
            .groupBy('campaign_id') as unknown as Promise<
            { campaign_id: string; emails_found: string; valid_emails: string }[]
          >),
    ]);
    const byId = new Map(emails.map((e) => [e.campaign_id, e]));
    return new Map(
      ids.map((id) => {
        const c = counts.get(id) ?? { summary: emptyCounts(), businesses: 0 };
        const e = byId.get(id);
        return [id, { ...c, emailsFound: Number(e?.emails_found ?? 0), validEmails: Number(e?.valid_emails ?? 0) }];
      }),
    );
  }

  /**
   * With auto_submit false: releases the next `count` pending locations (in sequence order) by moving
   * released_through, then `notify` (the workflow's signal) before the commit: a failed signal
   * releases nothing. The workflow's claim locks this row, so it sees the release once committed.
   */
  async release(
    clientId: string,
    id: string,
    count: number,
    notify: (c: CampaignRow) => Promise<void>,
  ): Promise<ReleaseOutcome | undefined> {
    return this.db.transaction(async (trx) => {
      const c = (await CampaignModel.forClient(trx, clientId).findById(id).forUpdate()) as unknown as
        CampaignRow | undefined;
      if (!c) return undefined;
      if (c.status !== 'running') return { kind: 'terminal', status: c.status } as const;
      if (c.auto_submit) return { kind: 'auto_submit' } as const;
      const next = (await trx('campaign_locations')
        .select('sequence_order')
        .where({ campaign_id: id, status: 'pending' })
        .andWhere('sequence_order', '>', c.released_through)
        .orderBy('sequence_order')
        .limit(count)) as { sequence_order: number }[];
      const through = next.at(-1)?.sequence_order ?? c.released_through;
      if (through !== c.released_through) {
        await trx('campaigns').where({ id }).update({ released_through: through, updated_at: trx.fn.now() });
        await notify(c);
      }
      const [left] = (await trx('campaign_locations')
        .where({ campaign_id: id, status: 'pending' })
        .andWhere('sequence_order', '>', through)
        .count<{ count: string }[]>('* as count')) as { count: string }[];
      return { kind: 'released', released: next.length, pendingRemaining: Number(left?.count ?? 0) } as const;
    });
  }

  /**
   * Cancels a running campaign in one transaction: the campaign -> cancelled, its pending locations ->
   * skipped, its queued and processing jobs -> cancelled (with their events; their locations -> skipped).
   * `changed` is false when the campaign had already ended.
   */
  async cancel(clientId: string, id: string): Promise<{ campaign: CampaignRow; changed: boolean } | undefined> {
    return transactionWithEvents(this.db, this.schema, async (trx) => {
      const c = (await CampaignModel.forClient(trx, clientId).findById(id).forUpdate()) as unknown as
        CampaignRow | undefined;
      if (!c) return undefined;
      if (c.status !== 'running') return { campaign: c, changed: false };
      const [updated] = (await trx('campaigns')
        .where({ id })
        .update({ status: 'cancelled', completed_at: trx.fn.now(), updated_at: trx.fn.now() })
        .returning('*')) as CampaignRow[];
      await trx('campaign_locations').where({ campaign_id: id, status: 'pending' }).update({ status: 'skipped' });
      const running = await JobModel.query(trx)
        .modify('forClient', clientId)
        .where('campaign_id', id)
        .whereIn('status', ['queued', 'processing'])
        .orderBy('id')
        .forUpdate();
      for (const job of running) await this.jobs.finish(trx, job, 'cancelled', {});
      return { campaign: updated ?? c, changed: true };
    });
  }

  /**
   * Cancels every running campaign of the client as `cancel` does each (a deactivated client's:
   * workers/client-watch.ts); returns those it changed, whose workflows the caller then cancels.
   */
  async cancelRunning(clientId: string): Promise<CampaignRow[]> {
    const running = await CampaignModel.query(this.db)
      .modify('forClient', clientId)
      .select('id')
      .where('status', 'running');
    const changed: CampaignRow[] = [];
    for (const { id } of running) {
      const outcome = await this.cancel(clientId, id);
      if (outcome?.changed) changed.push(outcome.campaign);
    }
    return changed;
  }

  /**
   * Claims the next pending locations of a running campaign (sequence order; only released ones
   * without auto_submit) and creates each one's queued job in the same transaction. Idempotent by
   * `claimKey`: a retried claim returns the jobs it created the first time and claims nothing new.
   */
  async claim(
    campaignId: string,
    claimKey: string,
    limit: number,
    newJob: (campaign: CampaignRow, location: CampaignLocationRow, countryCode: string | undefined) => NewJob,
  ): Promise<ClaimOutcome | undefined> {
    return transactionWithEvents(this.db, this.schema, async (trx) => {
      const c = await lockedCampaign(trx, campaignId);
      if (!c) return undefined;
      const claimed: ClaimedLocation[] = [];
      const earlier = (await trx('campaign_locations')
        .where({ campaign_id: campaignId, claim_key: claimKey })
        .orderBy('sequence_order')) as CampaignLocationRow[];
      if (earlier.length > 0) {
        const jobs = await JobModel.query(trx).whereIn(
          'id',
          earlier.map((l) => l.job_id as string),
        );
        const byId = new Map(jobs.map((j) => [j.id, j]));
        for (const location of earlier) {
          const job = byId.get(location.job_id as string);
          if (job) claimed.push({ location, job });
        }
      } else if (c.status === 'running' && limit > 0) {
        const q = trx('campaign_locations').where({ campaign_id: campaignId, status: 'pending' });
        if (!c.auto_submit) q.andWhere('sequence_order', '<=', c.released_through);
        const next = (await q.orderBy('sequence_order').limit(limit).forUpdate()) as CampaignLocationRow[];
        const cities = (await trx('locations')
          .select('id', 'country_code')
          .whereIn('id', [...new Set(next.map((l) => l.location_id))])) as { id: number; country_code: string }[];
        const countryOf = new Map(cities.map((r) => [r.id, r.country_code.trim()]));
        for (const location of next) {
          const job = await this.jobs.insertQueued(trx, newJob(c, location, countryOf.get(location.location_id)));
          const [updated] = (await trx('campaign_locations')
            .where({ id: location.id })
            .update({ status: 'submitted', job_id: job.id, claim_key: claimKey, submitted_at: trx.fn.now() })
            .returning('*')) as CampaignLocationRow[];
          claimed.push({ location: updated ?? location, job });
        }
      }
      const [left] = (await trx('campaign_locations')
        .where({ campaign_id: campaignId, status: 'pending' })
        .select(trx.raw('count(*) as pending'))
        .select(
          trx.raw('count(*) filter (where ? or sequence_order <= ?) as releasable', [
            c.auto_submit,
            c.released_through,
          ]),
        )) as { pending: string; releasable: string }[];
      const running = c.status === 'running';
      return {
        campaign: c,
        claimed,
        pendingRemaining: running ? Number(left?.pending ?? 0) : 0,
        releasable: running ? Number(left?.releasable ?? 0) : 0,
      };
    });
  }

  /**
   * The campaign's terminal status and its `campaign.terminal` event (once: terminal_event_id).
   * A running campaign becomes `cancelled` when `cancelled` (pending locations skipped, jobs still
   * queued or processing cancelled), else
   * `failed` when no location completed and one failed, else `completed`.
   */
  /**
   * Ends a running campaign: `ended` when its locations are done, `cancelled`, or `expired` when its
   * deadline passed. A cancelled or expired campaign's pending locations are skipped and the jobs
   * it claimed but never started are cancelled; an expired one then gets its status from its
   * locations as an ended one does, with an error_message that says what was left undone.
   */
  async finish(
    campaignId: string,
    outcome: 'ended' | 'cancelled' | 'expired',
  ): Promise<{ status: CampaignStatus; eventId: string } | undefined> {
    return transactionWithEvents(this.db, this.schema, async (trx) => {
      let c = await lockedCampaign(trx, campaignId);
      if (!c) return undefined;
      if (c.terminal_event_id !== null) return { status: c.status, eventId: String(c.terminal_event_id) };
      if (c.status === 'running') {
        if (outcome !== 'ended') {
          await trx('campaign_locations')
            .where({ campaign_id: campaignId, status: 'pending' })
            .update({ status: 'skipped' });
          // Jobs claimed but never started (the cancel came between the claim and the child's start).
          const left = await JobModel.query(trx)
            .where('campaign_id', campaignId)
            .whereIn('status', ['queued', 'processing'])
            .orderBy('id')
            .forUpdate();
          for (const job of left) await this.jobs.finish(trx, job, 'cancelled', {});
        }
        const { summary } = (await this.counts(trx, [campaignId])).get(campaignId) as CampaignCounts;
        const status: CampaignStatus =
          outcome === 'cancelled'
            ? 'cancelled'
            : summary.completed === 0 && summary.failed > 0
              ? 'failed'
              : 'completed';
        const errorMessage =
          outcome === 'expired'
            ? `the campaign reached its deadline (${CAMPAIGN_DAYS} days): ${summary.skipped} location(s) not run were skipped`
            : status === 'failed'
              ? `every location failed (${summary.failed})`
              : null;
        [c] = (await trx('campaigns')
          .where({ id: campaignId })
          .update({
            status,
            completed_at: trx.fn.now(),
            updated_at: trx.fn.now(),
            error_message: errorMessage,
          })
          .returning('*')) as CampaignRow[];
        if (!c) throw new Error(`campaign ${campaignId} vanished`);
      }
      const { summary, businesses } = (await this.counts(trx, [campaignId])).get(campaignId) as CampaignCounts;
      const [valid] = (await trx('workflow_businesses')
        .where({ campaign_id: campaignId })
        .sum('valid_emails_count as n')) as { n: string | null }[];
      const attempted = c.locations_total - summary.skipped;
      const event = await appendEvent(trx, this.schema, {
        clientId: c.client_id,
        name: 'campaign.terminal',
        campaignId,
        data: {
          campaign_id: campaignId,
          status: c.status,
          success_pct: attempted > 0 ? Math.round((summary.completed / attempted) * 1000) / 10 : 0,
          locations_total: c.locations_total,
          completed: summary.completed,
          failed: summary.failed,
          skipped: summary.skipped,
          businesses_total: businesses,
          total_valid_emails: Number(valid?.n ?? 0),
        },
      });
      await trx('campaigns').where({ id: campaignId }).update({ terminal_event_id: event.id });
      return { status: c.status, eventId: String(event.id) };
    });
  }

  /** Spec §4.3: a page of the campaign's locations (sequence order) with their jobs' status. */
  async jobsPage(
    campaignId: string,
    filter: { status?: LocationStatus; jobStatus?: JobStatus; page: number; pageSize: number },
  ): Promise<{ total: number; jobs: CampaignJobItem[] }> {
    const base = () => {
      const q = this.db('campaign_locations as l')
        .leftJoin('jobs as j', 'j.id', 'l.job_id')
        .where('l.campaign_id', campaignId);
      if (filter.status) q.andWhere('l.status', filter.status);
      if (filter.jobStatus) q.andWhere('j.status', filter.jobStatus);
      return q;
    };
    const [counted, rows] = await Promise.all([
      base().count<{ count: string }[]>('* as count'),
      base()
        .select(
          'l.job_id',
          'l.location_id',
          'l.search_string',
          'l.display_name',
          'l.status',
          'j.status as job_status',
          'l.results_count',
          'l.error_message',
          'l.submitted_at',
          'l.completed_at',
          'l.sequence_order',
        )
        .orderBy('l.sequence_order')
        .limit(filter.pageSize)
        .offset((filter.page - 1) * filter.pageSize),
    ]);
    return { total: Number(counted[0]?.count ?? 0), jobs: rows as CampaignJobItem[] };
  }

  /**
   * The campaign's pipeline results as SQL aggregates over workflow_businesses and job_workflows
   * (never every business loaded), plus one line per submitted location. A job without a
   * job_workflows row yet has the status its job row implies (queued, processing, failed).
   */
  async workflowAggregate(campaignId: string): Promise<WorkflowAggregate> {
    const [stats, timeouts, jobs] = await Promise.all([
      this.db('workflow_businesses')
        .where({ campaign_id: campaignId })
        .select(
          // The same counts as one job's results (api/workflow-results.ts): a business "with domain" has a
          // website (filtered ones included); a stage that timed out counts as failed.
          this.db.raw(`count(*) as businesses_total,
            count(*) filter (where business->>'business_website' is not null) as businesses_with_domains,
            count(*) filter (where domain_filtered) as businesses_filtered,
            count(*) filter (where site_status = 'completed') as spidersite_completed,
            count(*) filter (where site_status in ('failed', 'timed_out')) as spidersite_failed,
            count(*) filter (where verify_status = 'completed') as spiderverify_completed,
            count(*) filter (where verify_status in ('failed', 'timed_out')) as spiderverify_failed,
            coalesce(sum(${EMAILS_FOUND}), 0) as total_emails_found,
            coalesce(sum(valid_emails_count), 0) as total_valid_emails`),
        )
        .first() as Promise<Record<string, string> | undefined>,
      this.db('job_workflows')
        .where({ campaign_id: campaignId })
        .select(
          this.db.raw(
            'coalesce(bool_or(site_timed_out), false) as site, coalesce(bool_or(verify_timed_out), false) as verify',
          ),
        )
        .first() as Promise<{ site: boolean; verify: boolean } | undefined>,
      this.db
        .raw(
          `select l.job_id, l.location_id, l.display_name, j.status as job_status, w.status as workflow_status,
                  coalesce(b.n, 0) as businesses_total, coalesce(b.valid, 0) as total_valid_emails
           -- tenancy: one campaign's rows by its id, which the API read through CampaignModel.forClient and the pipeline holds from its workflow
           from campaign_locations l
           join jobs j on j.id = l.job_id
           left join job_workflows w on w.job_id = l.job_id
           -- tenancy: the same campaign's businesses
           left join (select job_id, count(*) as n, sum(valid_emails_count) as valid from workflow_businesses
                      where campaign_id = ? group by job_id) b on b.job_id = l.job_id
           where l.campaign_id = ?
           order by l.sequence_order`,
          [campaignId, campaignId],
        )
        .then(
          (r: {
            rows: {
              job_id: string;
              location_id: number;
              display_name: string;
              job_status: JobStatus;
              workflow_status: WorkflowStatus | null;
              businesses_total: string;
              total_valid_emails: string;
            }[];
          }) => r.rows,
        ),
    ]);
    const n = (k: string) => Number(stats?.[k] ?? 0);
    return {
      businesses_total: n('businesses_total'),
      businesses_with_domains: n('businesses_with_domains'),
      businesses_filtered: n('businesses_filtered'),
      spidersite_completed: n('spidersite_completed'),
      spidersite_failed: n('spidersite_failed'),
      spiderverify_completed: n('spiderverify_completed'),
      spiderverify_failed: n('spiderverify_failed'),
      total_emails_found: n('total_emails_found'),
      total_valid_emails: n('total_valid_emails'),
      spidersite_timed_out: timeouts?.site ?? false,
      spiderverify_timed_out: timeouts?.verify ?? false,
      jobs: jobs.map((j) => ({
        job_id: j.job_id,
        location_id: j.location_id,
        display_name: j.display_name,
        status: j.workflow_status ?? statusBeforePipeline(j.job_status),
        businesses_total: Number(j.businesses_total),
        total_valid_emails: Number(j.total_valid_emails),
      })),
    };
  }
}

/** Shared design point 3: the workflow status of a job whose pipeline has not started (no job_workflows row). */
export function statusBeforePipeline(job: JobStatus): WorkflowStatus {
  if (job === 'queued') return 'queued';
  if (job === 'failed' || job === 'cancelled') return 'failed';
  return 'processing';
}
