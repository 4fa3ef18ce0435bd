import { randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import type { Db } from '../db';
import {
  CampaignLimitError,
  CampaignRepository,
  type CampaignRow,
  type CampaignTotals,
  type NewCampaignLocation,
} from '../db/repositories/campaigns';
import { searchKey, type LocationRow } from '../db/repositories/locations';
import type { JobStatus } from '../jobs';
import { campaignsTaskQueue } from '../jobs/queues';
import { CAMPAIGN_DAYS, type LocationStatus } from '../jobs/workflow';
import type { Config } from '../lib/config';
import { AppError, badRequest, notFound, ValidationError, type ValidationIssue } from '../lib/errors';
import type { Logger } from '../lib/logger';
import type { Temporal } from '../lib/temporal';
import { releaseSignal, runCampaign } from '../workflows';
import { CampaignIdKey, ClientIdKey } from '../workflows/search-attributes';
import { QUEUE_UNAVAILABLE } from './job-service';
import type { CampaignCreateBody } from './schemas/campaigns';
import { TemporalCalls } from './temporal-calls';
import { UUID } from '../lib/ids';
import { iso } from '../lib/dates';

/**
 * Every workflow has a deadline: a campaign of 20,000 locations at concurrency 1 and a few minutes
 * per location would take weeks, but a campaign still running after 30 days is stuck, not busy.
 * The campaign ends itself then (runCampaign's `endBy`: its jobs in flight cancelled, its pending
 * locations skipped, `campaign.terminal` sent); Temporal's execution timeout, a day later, is only
 * the backstop for a workflow that could not (it skips all of that).
 */
const CAMPAIGN_EXECUTION_TIMEOUT = `${CAMPAIGN_DAYS + 1} days`;

type City = Pick<LocationRow, 'id' | 'name' | 'country_code' | 'country'>;

/** Campaigns: Postgres holds their state, the `campaign/<id>` workflow drives them. */
export class CampaignService {
  readonly repo: CampaignRepository;
  private readonly calls: TemporalCalls;

  constructor(
    private readonly db: Db,
    private readonly temporal: Temporal,
    private readonly config: Config,
    private readonly log: Logger,
  ) {
    this.repo = new CampaignRepository(db, config.DATABASE_SCHEMA);
    this.calls = new TemporalCalls(temporal);
  }

  /**
   * The campaign, one location per (city, term) pair (cities in the order given, terms within),
   * and its workflow start, in one transaction: Temporal unreachable -> 503 and nothing is stored.
   */
  async create(clientId: string, body: CampaignCreateBody): Promise<CampaignRow> {
    const cities = await this.resolveCities(body.locations);
    const terms = [...new Set(body.search_terms)];
    const locations: NewCampaignLocation[] = [];
    for (const city of cities) {
      for (const term of terms) {
        locations.push({
          locationId: city.id,
          searchTerm: term,
          searchString: `${term} in ${city.name}, ${city.country_code}`,
          displayName: `${term} — ${city.name}, ${city.country}`,
          sequenceOrder: locations.length + 1,
        });
      }
    }
    const id = randomUUID();
    return this.repo
      .create(
        {
          id,
          clientId,
          name: body.name,
          searchTerms: terms,
          maxResultsPerLocation: body.max_results_per_location,
          dedupeFuzzy: body.dedupe_fuzzy,
          // workflow {enabled: false} is the same as no workflow (maps only).
          workflow: body.workflow && body.workflow.enabled ? body.workflow : null,
          priority: body.priority,
          concurrency: body.concurrency,
          autoSubmit: body.auto_submit,
          workflowId: `campaign/${id}`,
          taskQueue: campaignsTaskQueue(this.config.TASK_QUEUE_PREFIX),
        },
        locations,
        (row) => this.startWorkflow(row),
        this.config.CAMPAIGN_MAX_RUNNING_PER_CLIENT,
      )
      .catch((err: unknown) => {
        if (err instanceof CampaignLimitError) {
          throw new AppError(
            429,
            `too many running campaigns: at most ${err.limit} at once per client; wait for one to end, or cancel one`,
            'too_many_campaigns',
          );
        }
        throw err;
      });
  }

  /**
   * Ids and {city, country} entries to cities, in the order given, each city once. Every entry that
   * names no city is reported (422, its index in loc).
   */
  private async resolveCities(refs: CampaignCreateBody['locations']): Promise<City[]> {
    const ids = refs.filter((r): r is number => typeof r === 'number');
    const named = refs.flatMap((r, i) =>
      typeof r === 'number' ? [] : [{ i, key: searchKey(r.city), country: r.country }],
    );
    const [byIdRows, byNameRows] = await Promise.all([
      ids.length
        ? (this.db('locations').select('id', 'name', 'country_code', 'country').whereIn('id', ids) as Promise<City[]>)
        : Promise.resolve([]),
      named.length
        ? this.db
            .raw(
              // The biggest city of that name in that country, for every entry in one statement.
              `select distinct on (k.i) k.i, l.id, l.name, l.country_code, l.country
               from unnest(?::text[], ?::text[], ?::int[]) as k(key, country, i)
               join locations l on l.search_key = k.key
                 and (l.country_code = upper(k.country) or lower(l.country) = lower(k.country))
               order by k.i, l.population desc, l.id`,
              [named.map((n) => n.key), named.map((n) => n.country), named.map((n) => n.i)],
            )
            .then((r: { rows: (City & { i: number })[] }) => r.rows)
        : Promise.resolve([] as (City & { i: number })[]),
    ]);
    const byId = new Map(byIdRows.map((c) => [c.id, c]));
    const byIndex = new Map(byNameRows.map((c) => [c.i, c]));
    const issues: ValidationIssue[] = [];
    const cities: City[] = [];
    const seen = new Set<number>();
    refs.forEach((ref, i) => {
      const city = typeof ref === 'number' ? byId.get(ref) : byIndex.get(i);
      if (!city) {
        const what =
          typeof ref === 'number' ? `unknown location id ${ref}` : `no city named "${ref.city}" in ${ref.country}`;
        issues.push({ type: 'value_error', loc: ['body', 'locations', i], msg: `${what} (see GET /api/v1/locations)` });
        return;
      }
      if (seen.has(city.id)) return;
      seen.add(city.id);
      cities.push({ id: city.id, name: city.name, country_code: city.country_code.trim(), country: city.country });
    });
    if (issues.length > 0) throw new ValidationError(issues);
    return cities;
  }

  private async startWorkflow(row: CampaignRow): Promise<void> {
    try {
      await this.calls.run(() =>
        this.temporal.client.workflow.start(runCampaign, {
          taskQueue: row.task_queue,
          workflowId: row.workflow_id,
          args: [
            {
              campaignId: row.id,
              clientId: row.client_id,
              autoSubmit: row.auto_submit,
              concurrency: row.concurrency,
              // From the row, so that a retried start gives the same deadline.
              endBy: new Date(new Date(row.created_at).getTime() + CAMPAIGN_DAYS * 86_400_000).toISOString(),
            },
          ],
          workflowExecutionTimeout: CAMPAIGN_EXECUTION_TIMEOUT,
          typedSearchAttributes: [
            { key: ClientIdKey, value: row.client_id },
            { key: CampaignIdKey, value: row.id },
          ],
          staticSummary: `campaign "${row.name}" for ${row.client_id}: ${row.locations_total} locations, ${row.concurrency} at once`,
          memo: {
            clientId: row.client_id,
            name: row.name,
            locations: row.locations_total,
            autoSubmit: row.auto_submit,
          },
        }),
      );
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) return;
      this.log.warn({ err: String(err), campaign_id: row.id }, 'campaign workflow start failed');
      throw new AppError(503, QUEUE_UNAVAILABLE, 'unavailable');
    }
  }

  /** The client's campaign; 400 for a malformed id, 404 for an unknown one or another client's. */
  async get(clientId: string, id: string): Promise<CampaignRow> {
    if (!UUID.test(id)) throw badRequest('invalid campaign id format, expected UUID');
    const row = await this.repo.find(clientId, id);
    if (!row) throw notFound('campaign not found');
    return row;
  }

  async record(row: CampaignRow) {
    const totals = (await this.repo.totals([row.id])).get(row.id) as CampaignTotals;
    return campaignView(row, totals);
  }

  async list(clientId: string, page: number, pageSize: number) {
    const { total, campaigns } = await this.repo.list(clientId, page, pageSize);
    const totals = await this.repo.totals(campaigns.map((c) => c.id));
    return { total, campaigns: campaigns.map((c) => campaignView(c, totals.get(c.id) as CampaignTotals)) };
  }

  /**
   * Releases the next `count` pending locations of a campaign created with auto_submit false and
   * signals its workflow to claim them (Temporal unreachable -> 503, nothing released).
   */
  async next(clientId: string, id: string, count: number): Promise<{ released: number; pendingRemaining: number }> {
    await this.get(clientId, id);
    const outcome = await this.repo.release(clientId, id, count, async (row) => {
      try {
        await this.calls.run(() => this.temporal.client.workflow.getHandle(row.workflow_id).signal(releaseSignal));
      } catch (err) {
        this.log.warn({ err: String(err), campaign_id: id }, 'campaign release signal failed');
        throw new AppError(503, QUEUE_UNAVAILABLE, 'unavailable');
      }
    });
    if (!outcome) throw notFound('campaign not found');
    if (outcome.kind === 'auto_submit')
      throw badRequest(
        'this campaign submits its locations itself (auto_submit is true); /next is for campaigns created with auto_submit false',
      );
    if (outcome.kind === 'terminal') throw badRequest(`campaign is ${outcome.status}: no more locations are submitted`);
    return { released: outcome.released, pendingRemaining: outcome.pendingRemaining };
  }

  /**
   * A running campaign -> cancelled at once (pending locations skipped, its queued and processing jobs
   * cancelled), then the workflow is cancelled: its children stop their activities. Terminal: 400.
   */
  async cancel(clientId: string, id: string): Promise<CampaignRow> {
    await this.get(clientId, id);
    const outcome = await this.repo.cancel(clientId, id);
    if (!outcome) throw notFound('campaign not found');
    if (!outcome.changed)
      throw badRequest(`cannot cancel a ${outcome.campaign.status} campaign: it is already terminal`);
    try {
      await this.calls.run(() => this.temporal.client.workflow.getHandle(outcome.campaign.workflow_id).cancel());
    } catch (err) {
      // The rows already say cancelled: the workflow claims nothing more and its jobs' completeJob discards their results.
      if (!(err instanceof WorkflowNotFoundError))
        this.log.warn({ err: String(err), campaign_id: id }, 'campaign workflow cancel failed');
    }
    return outcome.campaign;
  }

  async jobs(
    clientId: string,
    campaignId: string,
    q: { status?: LocationStatus; job_status?: JobStatus; page: number; page_size: number; include_summary: boolean },
  ) {
    const row = await this.get(clientId, campaignId);
    const [page, counts] = await Promise.all([
      this.repo.jobsPage(row.id, { status: q.status, jobStatus: q.job_status, page: q.page, pageSize: q.page_size }),
      q.include_summary ? this.repo.counts(this.db, [row.id]) : Promise.resolve(undefined),
    ]);
    return {
      campaign_id: row.id,
      total: page.total,
      page: q.page,
      page_size: q.page_size,
      jobs: page.jobs.map((j) => ({ ...j, submitted_at: iso(j.submitted_at), completed_at: iso(j.completed_at) })),
      ...(counts ? { summary: counts.get(row.id)?.summary } : {}),
    };
  }

  async workflowResults(clientId: string, id: string) {
    const row = await this.get(clientId, id);
    if (!row.workflow) throw badRequest('campaign without workflow configuration');
    const [aggregate, counts] = await Promise.all([
      this.repo.workflowAggregate(row.id),
      this.repo.counts(this.db, [row.id]),
    ]);
    return {
      success: row.status === 'completed',
      campaign_id: row.id,
      status: row.status,
      locations: { summary: counts.get(row.id)?.summary },
      ...aggregate,
    };
  }

  /** Waits for Temporal calls still in flight; call before closing the Temporal connection. */
  drain(): Promise<void> {
    return this.calls.drain();
  }
}

function campaignView(c: CampaignRow, t: CampaignTotals) {
  const done = t.summary.completed + t.summary.failed + t.summary.skipped;
  return {
    campaign_id: c.id,
    name: c.name,
    status: c.status,
    search_terms: c.search_terms,
    locations_total: c.locations_total,
    max_results_per_location: c.max_results_per_location,
    dedupe_fuzzy: c.dedupe_fuzzy,
    workflow: c.workflow,
    priority: c.priority,
    concurrency: c.concurrency,
    auto_submit: c.auto_submit,
    created_at: iso(c.created_at) as string,
    completed_at: iso(c.completed_at),
    summary: t.summary,
    progress: {
      done,
      total: c.locations_total,
      percent: c.locations_total > 0 ? Math.round((done / c.locations_total) * 1000) / 10 : 0,
    },
    totals: { businesses: t.businesses, emails_found: t.emailsFound, valid_emails: t.validEmails },
    error_message: c.error_message,
  };
}
