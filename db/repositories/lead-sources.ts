import type { Knex } from 'knex';
import { JobModel } from '../models/job';
import { ResourceModel } from '../models/resource';
import type { JobType } from '../../jobs';
import { UUID } from '../../lib/ids';

/** A business as the lead indexer reads it. */
export interface BusinessRow {
  id: string;
  data: Record<string, unknown>;
  sources: string[];
  campaign_ids: string[];
  flags: string[];
  created_at: Date;
}

/**
 * What the leads data plane reads besides the outbox: the job a projection comes from, the
 * businesses to index, and the crawl jobs whose stored compendium a lead may show. Every read is
 * scoped to the client, as the data is.
 */
export class LeadSources {
  constructor(private readonly db: Knex) {}

  /** The campaign of a job (its resources join it); null when it has none. */
  async campaignOfJob(jobId: string): Promise<string | null> {
    const job = (await this.db('jobs').where({ id: jobId }).first('campaign_id')) as
      { campaign_id: string | null } | undefined;
    return job?.campaign_id ?? null;
  }

  /** The client's businesses among `ids`; ids not returned are deleted (or not the client's). */
  async businesses(clientId: string, ids: string[]): Promise<BusinessRow[]> {
    if (ids.length === 0) return [];
    return (await ResourceModel.forClient(this.db, clientId)
      .where({ resource_type: 'businesses' })
      .whereIn('id', ids)
      .select('id', 'data', 'sources', 'campaign_ids', 'flags', 'created_at')) as unknown as BusinessRow[];
  }

  /**
   * Of `jobIds`, the client's own completed jobs of `types` (those whose results carry a
   * compendium), with their type: the only jobs whose stored result (and the compendium it names)
   * the indexer may read for this client. Ids that are not uuids (business data is client-writable)
   * are left out before they reach Postgres.
   */
  async completedJobsOfTypes(
    clientId: string,
    jobIds: string[],
    types: readonly JobType[],
  ): Promise<Map<string, JobType>> {
    const ids = [...new Set(jobIds)].filter((id) => UUID.test(id));
    if (ids.length === 0 || types.length === 0) return new Map();
    const rows = (await JobModel.forClient(this.db, clientId)
      .where({ status: 'completed' })
      .whereIn('type', types)
      .whereIn('id', ids)
      .select('id', 'type')) as unknown as { id: string; type: JobType }[];
    return new Map(rows.map((r) => [r.id, r.type]));
  }
}
