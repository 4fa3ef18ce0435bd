import type { Knex } from 'knex';
import { CampaignLocationModel } from '../models/campaign-location';
import { WorkflowBusinessModel } from '../models/workflow-business';

/** A workflow_businesses row with its campaign location's display name (null outside a campaign). */
export interface WorkflowBusinessRow {
  job_id: string;
  place_id: string;
  campaign_id: string | null;
  position: number;
  business: unknown;
  domain_filtered: boolean;
  filter_reason: string | null;
  site_status: string;
  site: unknown;
  verify_status: string;
  emails_verified: unknown;
  valid_emails_count: number;
  location: string | null;
}

/** A campaign location that has a job, in the campaign's order. */
export interface CampaignJob {
  job_id: string;
  display_name: string;
  sequence_order: number;
  job_status: string | null;
}

// Rows per query: big enough that a 100k-row export is 200 short queries, small enough that a page
// of businesses with their site data stays a few megabytes at most.
const PAGE = 500;

/**
 * The reads behind the campaign and job exports: keyset pages, never a whole campaign at once, so
 * the caller can stop between pages (a client that went away) and memory stays flat.
 */
export class ExportRepository {
  constructor(private readonly db: Knex) {}

  /** The client's campaign; another client's is simply not there. */
  /** The display name of the campaign location a job was submitted for; null for a standalone job. */
  async locationOfJob(jobId: string): Promise<string | null> {
    const row = (await this.db('campaign_locations').select('display_name').where({ job_id: jobId }).first()) as
      { display_name: string } | undefined;
    return row?.display_name ?? null;
  }

  /** The campaign's locations that have a job, in sequence order, with the job's status. */
  async *campaignJobs(clientId: string, campaignId: string): AsyncGenerator<CampaignJob> {
    let after = -1;
    for (;;) {
      const page = (await CampaignLocationModel.query(this.db)
        .alias('cl')
        .modify('forClient', clientId)
        .leftJoin('jobs as j', 'j.id', 'cl.job_id')
        .select('cl.job_id', 'cl.display_name', 'cl.sequence_order', 'j.status as job_status')
        .where({ 'cl.campaign_id': campaignId })
        .whereNotNull('cl.job_id')
        .where('cl.sequence_order', '>', after)
        .orderBy('cl.sequence_order')
        .limit(PAGE)) as unknown as CampaignJob[];
      yield* page;
      const last = page.at(-1);
      if (page.length < PAGE || !last) return;
      after = last.sequence_order;
    }
  }

  /** One job's businesses in maps order (position, then place id), `PAGE` rows a query. */
  async *workflowBusinesses(
    clientId: string,
    jobId: string,
    location: string | null,
  ): AsyncGenerator<WorkflowBusinessRow> {
    let after: [number, string] | null = null;
    for (;;) {
      const q = WorkflowBusinessModel.forClient(this.db, clientId)
        .select(
          'job_id',
          'place_id',
          'campaign_id',
          'position',
          'business',
          'domain_filtered',
          'filter_reason',
          'site_status',
          'site',
          'verify_status',
          'emails_verified',
          'valid_emails_count',
        )
        .where({ job_id: jobId })
        .orderBy([{ column: 'position' }, { column: 'place_id' }])
        .limit(PAGE);
      if (after) void q.whereRaw('(position, place_id) > (?, ?)', after);
      const page = (await q) as unknown as Omit<WorkflowBusinessRow, 'location'>[];
      for (const row of page) yield { ...row, location };
      const last = page.at(-1);
      if (page.length < PAGE || !last) return;
      after = [last.position, last.place_id];
    }
  }
}
