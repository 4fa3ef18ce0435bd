import { Context } from '@temporalio/activity';
import type { Knex } from 'knex';
import { JobResultStore } from '../../db/repositories/job-results';
import { IcpProfiles } from '../../db/repositories/icp-profiles';
import { LeadSources, type BusinessRow } from '../../db/repositories/lead-sources';
import { SearchOutbox, type OutboxRow } from '../../db/repositories/search-outbox';
import { ProjectionOutbox } from '../../db/repositories/projection-outbox';
import {
  businessesOfEmails,
  findBusinessByKey,
  lockClient,
  relate,
  relatedOf,
  relateNamedEmails,
  upsertResources,
  type UpsertedResource,
} from '../../db/repositories/resources';
import { idapRef, type ResourceType } from '../../lib/idap';
import { buildLeadDocument, ensureLeadIndex, writeLeadDocuments, type LeadSource } from '../../search/leads';
import type { ActivityDeps } from '../deps';
import type { Storage } from '../../lib/storage';
import { ALL_JOB_SPECS, CATALOG, projectResult, type JobType } from '../../jobs';
import { isObj, type Projection, type ProjectionNode } from '../../jobs/projection';

/** Outbox rows written to Elasticsearch per bulk request. */
const BATCH = 200;
/**
 * Bulk requests per activity call: 5,000 leads, well inside its 5-minute timeout even when a
 * client's every lead is queued at once (an ICP change); the workflow calls again while more remain.
 */
const BATCHES_PER_CALL = 25;
/** The compendium text indexed per lead; the rest of a very long one adds little to ranking. */
const MAX_COMPENDIUM_CHARS = 200_000;

const text = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);

export interface ProjectJobInput {
  jobId: string;
  clientId: string;
  type: JobType;
}

/**
 * The leads data plane's activities: projecting a job's result into IDAP resources, and writing
 * queued businesses to the lead index.
 */
/** Job types whose results carry a Markdown compendium that the lead index makes searchable. */
const COMPENDIUM_TYPES: readonly JobType[] = ALL_JOB_SPECS.filter((s) => s.compendiumLocation).map((s) => s.type);

/**
 * Writes one projection plan in the caller's transaction: idempotent upserts on natural keys and the
 * relations. Returns how many resources it wrote and the businesses whose leads changed (its own,
 * and those of the e-mails it wrote: a verification verdict changes their leads), for the outbox.
 */
export async function writeProjection(
  trx: Knex.Transaction,
  clientId: string,
  plan: Projection,
  campaignId: string | null,
): Promise<{ resources: number; businessIds: string[] }> {
  const written = new Map<number, UpsertedResource>();
  const byType = new Map<ResourceType, number[]>();
  const targets = await existingOnlyTargets(trx, clientId, plan);
  plan.nodes.forEach((n, i) => {
    if (targets.get(i) !== null) byType.set(n.type, [...(byType.get(n.type) ?? []), i]);
  });
  for (const [type, indexes] of byType) {
    const out = await upsertResources(
      trx,
      clientId,
      type,
      indexes.map((i) => ({
        data: plan.nodes[i]?.data ?? {},
        naturalKey: targets.get(i) ?? undefined,
        source: plan.source,
        campaignId,
      })),
    );
    indexes.forEach((nodeIndex, k) => written.set(nodeIndex, out[k] as UpsertedResource));
  }
  for (const [a, b] of plan.edges) {
    const ra = written.get(a);
    const rb = written.get(b);
    if (ra && rb) await relate(trx, ra, rb);
  }
  const ownBusinesses = plan.businesses.map((i) => written.get(i)?.id).filter((id): id is string => !!id);
  const emails = plan.nodes.flatMap((n, i) =>
    n.type === 'emails' && written.get(i) ? [written.get(i) as UpsertedResource] : [],
  );
  // A business naming an address verified earlier is related to it here, so its lead shows the verdict.
  await relateNamedEmails(trx, clientId, ownBusinesses);
  const businessIds = [...new Set([...ownBusinesses, ...(await businessesOfEmails(trx, clientId, emails))])];
  return { resources: written.size, businessIds };
}

/**
 * For each of the plan's `existingOnly` nodes (by index): the natural key of the business it is
 * written into, or null when it is skipped: the client has no business of its domain, or (newerOnly)
 * that business holds a newer one. Read under the client's write lock, which the upserts take too, so
 * two projections of the same domain cannot both read the older value and write in turn.
 */
async function existingOnlyTargets(
  trx: Knex.Transaction,
  clientId: string,
  plan: Projection,
): Promise<Map<number, string | null>> {
  const targets = new Map<number, string | null>();
  for (const [i, node] of plan.nodes.entries()) {
    if (!node.existingOnly) continue;
    if (targets.size === 0) await lockClient(trx, clientId);
    const domain = node.type === 'businesses' && typeof node.data.domain === 'string' ? node.data.domain : null;
    const found = domain ? await findBusinessByKey(trx, clientId, `domain:${domain}`) : undefined;
    targets.set(i, found && !storedIsNewer(found.data, node) ? found.natural_key : null);
  }
  return targets;
}

function storedIsNewer(stored: Record<string, unknown>, node: ProjectionNode): boolean {
  if (!node.newerOnly) return false;
  const { field, at } = node.newerOnly;
  const time = (v: unknown) => {
    const t = isObj(v) && typeof v[at] === 'string' ? Date.parse(v[at] as string) : NaN;
    return Number.isNaN(t) ? null : t;
  };
  const storedAt = time(stored[field]);
  const incomingAt = time(node.data[field]);
  return storedAt !== null && incomingAt !== null && storedAt > incomingAt;
}

/**
 * Projects a completed job's stored result into IDAP resources: idempotent upserts on natural keys,
 * relations, the job's businesses queued for the lead index, and the end of the job's projection
 * debt (its projection outbox row), in one transaction: `trx` when the caller holds one (a sweep,
 * which claimed the row in it), else one of its own. Re-running it changes nothing.
 */
export function jobProjector(db: Knex, storage: Storage) {
  const results = new JobResultStore(db, storage);
  const outbox = new SearchOutbox(db);
  const projections = new ProjectionOutbox(db);
  const sources = new LeadSources(db);
  return async (input: ProjectJobInput, trx?: Knex.Transaction): Promise<{ resources: number; businesses: number }> => {
    const result = await results.load(input.jobId);
    const plan = projectResult(input.type, result, { jobId: input.jobId });
    if (plan.nodes.length === 0) {
      await projections.settle(trx ?? db, input.jobId);
      return { resources: 0, businesses: 0 };
    }
    const campaignId = await sources.campaignOfJob(input.jobId);
    const write = async (t: Knex.Transaction) => {
      const written = await writeProjection(t, input.clientId, plan, campaignId);
      await outbox.enqueue(t, input.clientId, written.businessIds, input.jobId);
      await projections.settle(t, input.jobId);
      return { resources: written.resources, businesses: written.businessIds.length };
    };
    return trx ? write(trx) : db.transaction(write);
  };
}

export function createLeadActivities(deps: ActivityDeps) {
  const results = new JobResultStore(deps.db, deps.storage);
  const outbox = new SearchOutbox(deps.db);
  const project = jobProjector(deps.db, deps.storage);
  const icp = new IcpProfiles(deps.db);
  const sources = new LeadSources(deps.db);
  const prefix = deps.config.ES_INDEX_PREFIX;

  /**
   * The compendium text of each business that has one, by business id. It comes from the stored
   * result of a job whose type has a compendium (its catalog entry's `compendiumLocation`), found
   * by the job id the projection wrote, and only when that job is the client's own and completed:
   * the business data is client-writable (IDAP import), so a storage location or job id written
   * there is never trusted as it stands. The object must also sit in the client's own bucket, where
   * the crawl stored it.
   */
  async function compendiumTexts(clientId: string, businesses: BusinessRow[]): Promise<Map<string, string>> {
    const jobOf = new Map<string, string>();
    for (const b of businesses) {
      const jobId = text(b.data.compendium_job_id) ?? text(b.data.job_id);
      if (jobId) jobOf.set(b.id, jobId);
    }
    const own = await sources.completedJobsOfTypes(clientId, [...jobOf.values()], COMPENDIUM_TYPES);
    const byJob = new Map<string, Promise<string | null>>();
    const out = new Map<string, string>();
    for (const [businessId, jobId] of jobOf) {
      const type = own.get(jobId);
      if (!type) continue;
      if (!byJob.has(jobId)) byJob.set(jobId, jobCompendium(clientId, jobId, type));
      const compendium = await byJob.get(jobId);
      if (compendium) out.set(businessId, compendium);
    }
    return out;
  }

  async function jobCompendium(clientId: string, jobId: string, type: JobType): Promise<string | null> {
    const result = await results.load(jobId);
    const location = isObj(result) ? (CATALOG[type].compendiumLocation?.(result) ?? null) : null;
    const m = location ? /^s3:\/\/([^/]+)\/(.+)$/.exec(location) : null;
    if (!m?.[1] || !m[2] || m[1] !== deps.storage.bucketFor(clientId)) return null;
    try {
      return (await deps.storage.get(m[1], m[2])).toString('utf8').slice(0, MAX_COMPENDIUM_CHARS);
    } catch (err) {
      // A missing object leaves the lead searchable by its other fields.
      deps.logger.warn({ err, jobId, location }, 'compendium not readable for the lead index');
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
      const businesses = await sources.businesses(clientId, ids);
      const found = new Set(businesses.map((b) => b.id));
      deleted.push(...ids.filter((id) => !found.has(id)));
      const related = await relatedOf(deps.db, clientId, [...found], ['emails', 'phones']);
      const compendiums = await compendiumTexts(clientId, businesses);
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
          emails: (rel?.get('emails') ?? [])
            .map((e) => ({ address: String(e.data.address ?? ''), verified: e.data.verified === true }))
            .filter((e) => e.address),
          phones: (rel?.get('phones') ?? [])
            .map((p) => ({ number: String(p.data.number ?? '') }))
            .filter((p) => p.number),
          compendium: compendiums.get(b.id) ?? null,
        };
        docs.push(buildLeadDocument(src, { industries: profile.industries, countries: profile.countries }));
      }
    }
    await writeLeadDocuments(deps.search, prefix, docs, deleted);
  }

  return {
    /**
     * Projects a finished job's stored result into IDAP resources (jobProjector): idempotent upserts
     * on natural keys, relations, the job's businesses queued for the lead index and its projection
     * outbox row settled, in one transaction. Re-running it (a retry, a sweep) changes nothing.
     * runJob's attempts are the fast path; past them the workers' sweepers retry
     * (workers/projection-sweep.ts).
     */
    async projectJobResult(input: ProjectJobInput): Promise<{ resources: number; businesses: number }> {
      return project(input);
    },

    /**
     * Writes queued businesses (of one client, or all) to the lead index until the outbox is empty,
     * in at most BATCHES_PER_CALL bulk requests; `more` says that rows remain for another call.
     * Throws while Elasticsearch is unavailable; Temporal retries it, and nothing queued is lost
     * (a batch leaves the outbox only once Elasticsearch has taken it).
     */
    async indexLeads(input: { clientId?: string }): Promise<{ indexed: number; more: boolean }> {
      const ctx = Context.current();
      await ensureLeadIndex(deps.search, prefix);
      let indexed = 0;
      for (let batches = 0; batches < BATCHES_PER_CALL; batches++) {
        // A heartbeat per bulk request: a lost worker is noticed in seconds, not at the 5-minute limit.
        ctx.heartbeat({ indexed });
        const n = await outbox.drain(BATCH, input.clientId, (rows) => writeBatch(rows));
        indexed += n;
        if (n < BATCH) return { indexed, more: false };
      }
      return { indexed, more: true };
    },
  };
}

export type LeadActivities = ReturnType<typeof createLeadActivities>;
