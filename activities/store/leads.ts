import { JobResultStore } from '../../db/repositories/job-results';
import { IcpProfiles } from '../../db/repositories/icp-profiles';
import { SearchOutbox, type OutboxRow } from '../../db/repositories/search-outbox';
import { relate, relatedOf, upsertResources, type UpsertedResource } from '../../db/repositories/resources';
import { idapRef, type ResourceType } from '../../lib/idap';
import { buildLeadDocument, ensureLeadIndex, writeLeadDocuments, type LeadSource } from '../../search/leads';
import type { ActivityDeps } from '../deps';
import { projectResult } from './projection';

/** Outbox rows written to Elasticsearch per bulk request. */
const BATCH = 200;
/** The compendium text indexed per lead; the rest of a very long one adds little to ranking. */
const MAX_COMPENDIUM_CHARS = 200_000;

export interface ProjectJobInput {
  jobId: string;
  clientId: string;
  type: string;
}

/**
 * The leads data plane's activities: projecting a job's result into IDAP resources, and writing
 * queued businesses to the lead index.
 */
export function createLeadActivities(deps: ActivityDeps) {
  const results = new JobResultStore(deps.db, deps.storage);
  const outbox = new SearchOutbox(deps.db);
  const icp = new IcpProfiles(deps.db);
  const prefix = deps.config.ES_INDEX_PREFIX;

  async function compendiumText(location: unknown): Promise<string | null> {
    const m = typeof location === 'string' ? /^s3:\/\/([^/]+)\/(.+)$/.exec(location) : null;
    if (!m?.[1] || !m[2]) return null;
    try {
      return (await deps.storage.get(m[1], m[2])).toString('utf8').slice(0, MAX_COMPENDIUM_CHARS);
    } catch (err) {
      // A missing object leaves the lead searchable by its other fields.
      deps.logger.warn({ err, location }, 'compendium not readable for the lead index');
      return null;
    }
  }

  async function writeBatch(rows: OutboxRow[]): Promise<void> {
    const byClient = new Map<string, string[]>();
    for (const r of rows) byClient.set(r.client_id, [...(byClient.get(r.client_id) ?? []), r.resource_id]);
    const docs = [];
    const deleted: string[] = [];
    for (const [clientId, ids] of byClient) {
      const profile = await icp.get(clientId);
      const businesses = (await deps.db('idap_resources')
        .where({ client_id: clientId, resource_type: 'businesses' })
        .whereIn('id', ids)
        .select('id', 'data', 'sources', 'campaign_ids', 'flags', 'created_at')) as { id: string; data: Record<string, unknown>; sources: string[]; campaign_ids: string[]; flags: string[]; created_at: Date }[];
      const found = new Set(businesses.map((b) => b.id));
      deleted.push(...ids.filter((id) => !found.has(id)));
      const related = await relatedOf(deps.db, clientId, [...found], ['emails', 'phones']);
      for (const b of businesses) {
        const rel = related.get(b.id);
        const src: LeadSource = {
          clientId,
          resourceId: b.id,
          idapRef: idapRef('businesses', b.id),
          data: b.data,
          sources: b.sources,
          campaignIds: b.campaign_ids,
          flags: b.flags,
          createdAt: b.created_at.toISOString(),
          emails: (rel?.get('emails') ?? []).map((e) => ({ address: String(e.data.address ?? ''), verified: e.data.verified === true })).filter((e) => e.address),
          phones: (rel?.get('phones') ?? []).map((p) => ({ number: String(p.data.number ?? '') })).filter((p) => p.number),
          compendium: await compendiumText(b.data.compendium_location),
        };
        docs.push(buildLeadDocument(src, { industries: profile.industries, countries: profile.countries }));
      }
    }
    await writeLeadDocuments(deps.search, prefix, docs, deleted);
  }

  return {
    /**
     * Projects a finished job's stored result into IDAP resources: idempotent upserts on natural
     * keys, relations, and the job's businesses queued for the lead index, in one transaction.
     * Re-running it (a retry) changes nothing. Types without resources return at once.
     */
    async projectJobResult(input: ProjectJobInput): Promise<{ resources: number; businesses: number }> {
      const result = await results.load(input.jobId);
      const plan = projectResult(input.type, result, { jobId: input.jobId });
      if (plan.nodes.length === 0) return { resources: 0, businesses: 0 };
      const job = (await deps.db('jobs').where({ id: input.jobId }).first('campaign_id')) as { campaign_id: string | null } | undefined;
      return deps.db.transaction(async (trx) => {
        const written = new Map<number, UpsertedResource>();
        const byType = new Map<ResourceType, number[]>();
        plan.nodes.forEach((n, i) => byType.set(n.type, [...(byType.get(n.type) ?? []), i]));
        for (const [type, indexes] of byType) {
          const out = await upsertResources(trx, input.clientId, type, indexes.map((i) => ({ data: plan.nodes[i]?.data ?? {}, source: plan.source, campaignId: job?.campaign_id ?? null })));
          indexes.forEach((nodeIndex, k) => written.set(nodeIndex, out[k] as UpsertedResource));
        }
        for (const [a, b] of plan.edges) {
          const ra = written.get(a);
          const rb = written.get(b);
          if (ra && rb) await relate(trx, ra, rb);
        }
        const businessIds = plan.businesses.map((i) => written.get(i)?.id).filter((id): id is string => !!id);
        await outbox.enqueue(trx, input.clientId, businessIds, input.jobId);
        return { resources: written.size, businesses: businessIds.length };
      });
    },

    /**
     * Writes queued businesses (of one client, or all) to the lead index until the outbox is empty.
     * Throws while Elasticsearch is unavailable; Temporal retries it, and nothing queued is lost.
     */
    async indexLeads(input: { clientId?: string }): Promise<{ indexed: number }> {
      await ensureLeadIndex(deps.search, prefix);
      let indexed = 0;
      for (;;) {
        const n = await outbox.drain(BATCH, input.clientId, (rows) => writeBatch(rows));
        indexed += n;
        if (n < BATCH) return { indexed };
      }
    },
  };
}

export type LeadActivities = ReturnType<typeof createLeadActivities>;
