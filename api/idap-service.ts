import type { Knex } from 'knex';
import type { z } from 'zod';
import type { Db } from '../db';
import type { ResourceModel } from '../db/models/resource';
import {
  businessesOfEmails,
  businessesOfPhones,
  findBusinessByKey,
  findByNaturalKey,
  findPins,
  getResource,
  listResources,
  relatedOf,
  relateNamedEmails,
  resourceStats,
  setPinParent,
  updateFlags,
  upsertResources,
  type ListOptions,
  type ResourceStats,
  type UpsertedResource,
} from '../db/repositories/resources';
import { SearchOutbox } from '../db/repositories/search-outbox';
import { badRequest, notFound, ValidationError, type ValidationIssue } from '../lib/errors';
import { naturalKeyOf, type Flag, type ResourceType } from '../lib/idap';
import type { LeadIndexTrigger } from './lead-index';
import { PIN_KEYS, type importBody } from './schemas/idap';

export const RESOURCE_NOT_FOUND = 'resource_not_found';
// Resolve found the pin, but it has no parent business: told apart from no such pin.
export const PARENT_NOT_FOUND = 'parent_not_found';

export type ImportBody = z.output<typeof importBody>;

/** Related resources by resource id, then by type. */
export type RelatedResources = Map<string, Map<string, ResourceModel[]>>;

/**
 * The client's IDAP resources (spec §2.9, §4.5): reads, imports and flag changes. A write that
 * changes leads queues them for the lead index in its own transaction, then asks the indexer to drain.
 */
export class IdapService {
  private readonly outbox: SearchOutbox;

  constructor(
    private readonly db: Db,
    private readonly leadIndex?: LeadIndexTrigger,
  ) {
    this.outbox = new SearchOutbox(db);
  }

  stats(clientId: string, type: ResourceType): Promise<ResourceStats> {
    return resourceStats(this.db, clientId, type);
  }

  /** The `include`d relations of each row; undefined when none are asked for. */
  async related(
    clientId: string,
    rows: ResourceModel[],
    include?: ResourceType[],
  ): Promise<RelatedResources | undefined> {
    return include?.length
      ? relatedOf(
          this.db,
          clientId,
          rows.map((r) => r.id),
          include,
        )
      : undefined;
  }

  /**
   * The resource the keys given name (a pin: its parent business) and the one they matched. 422 for
   * missing keys, 400 for several pins, 404 for no match (or a pin without a parent).
   */
  async resolve(
    clientId: string,
    type: ResourceType,
    given: Record<string, string>,
  ): Promise<{ match: ResourceModel; from: ResourceModel }> {
    let match: ResourceModel | undefined;
    let from: ResourceModel | undefined;
    if (type === 'pins') {
      const pinKeys = Object.fromEntries(
        PIN_KEYS.filter((k) => given[k] !== undefined).map((k) => [k, given[k] as string]),
      );
      if (Object.keys(pinKeys).length === 0)
        throw new ValidationError([
          { type: 'missing', loc: ['query'], msg: `give at least one of ${PIN_KEYS.join(', ')}` },
        ]);
      const pins = await findPins(this.db, clientId, pinKeys);
      if (pins.length > 1) throw badRequest(`several pins match; add more of ${PIN_KEYS.join(', ')}`);
      from = pins[0];
      const parent = from
        ? (await relatedOf(this.db, clientId, [from.id], ['businesses'], 1)).get(from.id)?.get('businesses')?.[0]
        : undefined;
      match = parent ? await getResource(this.db, clientId, 'businesses', parent.id) : undefined;
      if (from && !match) throw notFound(PARENT_NOT_FOUND);
    } else {
      const key = naturalKeyOf(type, given);
      if ('error' in key) throw new ValidationError([{ type: 'missing', loc: ['query', key.field], msg: key.error }]);
      match =
        type === 'businesses'
          ? await findBusinessByKey(this.db, clientId, key.key)
          : await findByNaturalKey(this.db, clientId, type, key.key);
      from = match;
    }
    if (!match || !from) throw notFound(RESOURCE_NOT_FOUND);
    return { match, from };
  }

  /**
   * Upserts the records on their natural keys, in record order, with the pins' parents; the leads
   * the import changes are queued in its transaction. 422 (nothing written) for a record without
   * its natural key or with a parent that is not one of this client's businesses.
   */
  async importRecords(clientId: string, type: ResourceType, body: ImportBody): Promise<UpsertedResource[]> {
    const issues: ValidationIssue[] = [];
    const keys = body.records.map((r, i) => {
      const key = naturalKeyOf(type, r.data);
      if ('error' in key)
        issues.push({ type: 'missing', loc: ['body', 'records', i, 'data', key.field], msg: key.error });
      return 'key' in key ? key.key : '';
    });
    const { parents, issues: parentIssues } = await this.importParents(clientId, type, body.records);
    issues.push(...parentIssues);
    if (issues.length > 0) throw new ValidationError(issues);
    let queued = 0;
    const results = await this.db.transaction(async (trx) => {
      const upserted = await upsertResources(
        trx,
        clientId,
        type,
        body.records.map((r, i) => ({
          naturalKey: keys[i],
          data: r.data,
          flags: r.flags,
          campaignId: r.campaign_id,
          source: body.source,
        })),
      );
      // In record order, so that of one pin's records in a request the last parent wins.
      const reparented = new Set<string>();
      for (const [i, businessId] of parents) {
        const pin = upserted[i];
        if (pin && (await setPinParent(trx, pin, { clientId, type: 'businesses', id: businessId })))
          reparented.add(pin.id);
      }
      // A new parent moved the pin's modified_at: that is an update.
      const written = upserted.map((w) =>
        w.status === 'unchanged' && reparented.has(w.id) ? { ...w, status: 'updated' as const } : w,
      );
      if (this.leadIndex) queued = await this.leadsOfImport(trx, clientId, type, written);
      return written;
    });
    if (queued > 0) await this.leadIndex?.kick(clientId);
    return results;
  }

  /**
   * The parent business of each import record that names one (pins only), or issues for the records
   * whose parent is not one of this client's businesses (another client's is answered as unknown).
   */
  private async importParents(clientId: string, type: ResourceType, records: ImportBody['records']) {
    const parents = new Map<number, string>();
    const issues: ValidationIssue[] = [];
    // Many pins of an import often share one parent: each ref or key is looked up once.
    const seen = new Map<string, string | undefined>();
    const lookUp = async (id: string, find: () => Promise<ResourceModel | undefined>) => {
      if (!seen.has(id)) seen.set(id, (await find())?.id);
      return seen.get(id);
    };
    for (const [i, r] of records.entries()) {
      const loc = ['body', 'records', i, 'parent'];
      if (r.parent === undefined) continue;
      if (type !== 'pins') {
        issues.push({ type: 'extra_forbidden', loc, msg: 'only pins have a parent (their business)' });
      } else if (typeof r.parent === 'string') {
        // The schema let only idap://businesses/{uuid} through.
        const ref = r.parent;
        const business = await lookUp(ref, () =>
          getResource(this.db, clientId, 'businesses', ref.slice('idap://businesses/'.length)),
        );
        if (business) parents.set(i, business);
        else issues.push({ type: 'not_found', loc, msg: `no business ${ref} for this client` });
      } else {
        const key = naturalKeyOf('businesses', r.parent);
        if ('error' in key) {
          issues.push({ type: 'missing', loc: [...loc, key.field], msg: key.error });
          continue;
        }
        const business = await lookUp(key.key, () => findBusinessByKey(this.db, clientId, key.key));
        if (business) parents.set(i, business);
        else issues.push({ type: 'not_found', loc, msg: 'no business of this client matches these keys' });
      }
    }
    return { parents, issues };
  }

  /**
   * Queues, in the import's transaction, the leads an import changes: imported businesses are leads
   * (and are related to e-mails verified before them); an imported e-mail (a verdict) or phone
   * changes the leads of its businesses. Returns how many were queued.
   */
  private async leadsOfImport(
    trx: Knex.Transaction,
    clientId: string,
    type: ResourceType,
    written: UpsertedResource[],
  ): Promise<number> {
    const changed = written.filter((w) => w.status !== 'unchanged');
    let ids: string[] = [];
    if (type === 'businesses')
      ids = [
        ...changed.map((w) => w.id),
        ...(await relateNamedEmails(
          trx,
          clientId,
          written.map((w) => w.id),
        )),
      ];
    else if (type === 'emails') ids = await businessesOfEmails(trx, clientId, changed);
    else if (type === 'phones') ids = await businessesOfPhones(trx, clientId, changed);
    const unique = [...new Set(ids)];
    await this.outbox.enqueue(trx, clientId, unique);
    return unique.length;
  }

  list(clientId: string, type: ResourceType, options: ListOptions) {
    return listResources(this.db, clientId, type, options);
  }

  /** The client's resource, or 404. */
  async get(clientId: string, type: ResourceType, id: string): Promise<ResourceModel> {
    const row = await getResource(this.db, clientId, type, id);
    if (!row) throw notFound(RESOURCE_NOT_FOUND);
    return row;
  }

  /** Adds and removes flags; the resource after the change, or 404. */
  async changeFlags(
    clientId: string,
    type: ResourceType,
    id: string,
    add: Flag[],
    remove: Flag[],
  ): Promise<ResourceModel> {
    let requeued = false;
    // A business's flags are part of its lead (a rejected one leaves the search): re-index it.
    const row = await updateFlags(this.db, clientId, type, id, add, remove, async (trx, changed) => {
      if (type !== 'businesses' || !this.leadIndex) return;
      await this.outbox.enqueue(trx, clientId, [changed.id]);
      requeued = true;
    });
    if (!row) throw notFound(RESOURCE_NOT_FOUND);
    if (requeued) await this.leadIndex?.kick(clientId);
    return row;
  }
}
