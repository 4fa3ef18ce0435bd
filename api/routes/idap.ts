import type { Knex } from 'knex';
import type { z } from 'zod';
import type { ResourceModel } from '../../db/models/resource';
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
  type Cursor,
  type UpsertedResource,
} from '../../db/repositories/resources';
import { SearchOutbox } from '../../db/repositories/search-outbox';
import { AppError, badRequest, notFound, ValidationError, type ValidationIssue } from '../../lib/errors';
import { FLAGS, idapRef, MEDIA_PROXY_PATH, MEDIA_TYPES, naturalKeyOf, type Flag, type ResourceType } from '../../lib/idap';
import { clientIdOf, type AppContext } from '../context';
import type { LeadIndexTrigger } from '../lead-index';
import type { ApiRouter } from '../routing';
import {
  getQuery,
  importBody,
  importResponse,
  idapResource,
  listQuery,
  listResponse,
  patchBody,
  PIN_KEYS,
  resolveQuery,
  resolveResponse,
  resourceParams,
  statsResponse,
  typeParams,
} from '../schemas/idap';
import { UUID } from '../../lib/ids';

const TOP_LEVEL = new Set(['tenant_id', 'created_at', 'modified_at', 'flags', 'data']);
const RESOURCE_NOT_FOUND = 'resource_not_found';
// Resolve found the pin, but it has no parent business: told apart from no such pin.
const PARENT_NOT_FOUND = 'parent_not_found';

const isMedia = (type: string) => (MEDIA_TYPES as readonly string[]).includes(type);

/** Media resources are served by the media proxy (spec §4.5): fetch -> 501, list/stats/other -> 400. */
function servedType(type: string, status: 400 | 501): ResourceType {
  if (!isMedia(type)) return type as ResourceType;
  const detail = `${type} are media resources: fetch each one through the media proxy GET ${MEDIA_PROXY_PATH}`;
  throw new AppError(status, detail, status === 501 ? 'not_implemented' : 'bad_request');
}

function relatedItem(r: ResourceModel): Record<string, unknown> {
  return { idap_ref: idapRef(r.resource_type, r.id), resource_id: r.id, ...r.data };
}

/** The resource as spec §2.9 shows it, with the `fields` projection and `include`d relations. */
function view(r: ResourceModel, fields: string[] | undefined, include: ResourceType[] | undefined, related?: Map<string, ResourceModel[]>) {
  const full: Record<string, unknown> = {
    idap_ref: idapRef(r.resource_type, r.id),
    resource_type: r.resource_type,
    resource_id: r.id,
    tenant_id: r.client_id,
    created_at: r.created_iso,
    modified_at: r.modified_iso,
    flags: r.flags,
    data: r.data,
  };
  let out = full;
  if (fields && fields.length > 0) {
    out = { idap_ref: full.idap_ref, resource_type: full.resource_type, resource_id: full.resource_id };
    for (const f of fields) if (TOP_LEVEL.has(f)) out[f] = full[f];
    const dataKeys = fields.filter((f) => !TOP_LEVEL.has(f) && !(f in out));
    if (dataKeys.length > 0 && !fields.includes('data')) out.data = Object.fromEntries(dataKeys.filter((k) => k in r.data).map((k) => [k, r.data[k]]));
  }
  if (include && include.length > 0) out.related = Object.fromEntries(include.map((t) => [t, (related?.get(t) ?? []).map(relatedItem)]));
  return out;
}

/**
 * The parent business of each import record that names one (pins only), or issues for the records
 * whose parent is not one of this client's businesses (another client's is answered as unknown).
 */
async function importParents(db: Knex, clientId: string, type: ResourceType, records: z.output<typeof importBody>['records']) {
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
      const business = await lookUp(ref, () => getResource(db, clientId, 'businesses', ref.slice('idap://businesses/'.length)));
      if (business) parents.set(i, business);
      else issues.push({ type: 'not_found', loc, msg: `no business ${ref} for this client` });
    } else {
      const key = naturalKeyOf('businesses', r.parent);
      if ('error' in key) {
        issues.push({ type: 'missing', loc: [...loc, key.field], msg: key.error });
        continue;
      }
      const business = await lookUp(key.key, () => findBusinessByKey(db, clientId, key.key));
      if (business) parents.set(i, business);
      else issues.push({ type: 'not_found', loc, msg: 'no business of this client matches these keys' });
    }
  }
  return { parents, issues };
}

async function views(db: Knex, clientId: string, rows: ResourceModel[], fields?: string[], include?: ResourceType[]) {
  const related = include?.length ? await relatedOf(db, clientId, rows.map((r) => r.id), include) : undefined;
  return rows.map((r) => view(r, fields, include, related?.get(r.id)));
}

const encodeCursor = (c: Cursor) => Buffer.from(JSON.stringify([c.sort, c.order, c.key, c.id])).toString('base64url');

/** A change_seq (a bigint) as the cursor writes it. */
const isChangeSeq = (key: string) => /^\d{1,19}$/.test(key) && BigInt(key) <= 9223372036854775807n;

/** A created_at as the cursor writes it (UTC, microseconds), and a real date (not 2024-02-30). */
function isCursorTime(key: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.\d{6}Z$/.exec(key);
  if (!m) return false;
  const [y, mo, d, h, mi, sec] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const t = new Date(Date.UTC(y, mo - 1, d, h, mi, sec));
  return y >= 1 && t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d && t.getUTCHours() === h && t.getUTCMinutes() === mi && t.getUTCSeconds() === sec;
}

function decodeCursor(raw: string, sort: Cursor['sort'], order: Cursor['order']): Cursor {
  let parts: unknown;
  try {
    parts = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw badRequest('invalid cursor: pass next_cursor from the previous page as it is');
  }
  const ok = Array.isArray(parts) && parts.length === 4 && parts.every((p) => typeof p === 'string');
  const [s, o, key, id] = (ok ? parts : []) as string[];
  // Each part as the page wrote it, so that the query's casts cannot fail on a cursor that was altered.
  if (!ok || !UUID.test(id as string) || (s === 'updated_at' && !isChangeSeq(key as string)) || (s === 'created_at' && !isCursorTime(key as string))) {
    throw badRequest('invalid cursor: pass next_cursor from the previous page as it is');
  }
  if (s !== sort || o !== order) throw badRequest(`the cursor belongs to sort=${s}&order=${o}; pass the same sort and order as the page it came from`);
  return { sort, order, key: key as string, id: id as string };
}

export function idapRoutes(api: ApiRouter, db: Knex, leadIndex?: LeadIndexTrigger): void {
  const outbox = new SearchOutbox(db);

  /**
   * Queues, in the import's transaction, the leads an import changes: imported businesses are leads
   * (and are related to e-mails verified before them); an imported e-mail (a verdict) or phone
   * changes the leads of its businesses. Returns how many were queued.
   */
  async function leadsOfImport(trx: Knex.Transaction, clientId: string, type: ResourceType, written: UpsertedResource[]): Promise<number> {
    const changed = written.filter((w) => w.status !== 'unchanged');
    let ids: string[] = [];
    if (type === 'businesses') ids = [...changed.map((w) => w.id), ...(await relateNamedEmails(trx, clientId, written.map((w) => w.id)))];
    else if (type === 'emails') ids = await businessesOfEmails(trx, clientId, changed);
    else if (type === 'phones') ids = await businessesOfPhones(trx, clientId, changed);
    const unique = [...new Set(ids)];
    await outbox.enqueue(trx, clientId, unique);
    return unique.length;
  }
  const notFoundResponse = { 404: { description: `detail ${RESOURCE_NOT_FOUND}: no such resource for this client` } };

  api.add({
    method: 'get',
    path: '/api/v1/idap/{resource_type}/stats',
    operationId: 'idapStats',
    summary: 'Counts of a resource type',
    tags: ['idap'],
    security: 'client',
    params: typeParams,
    responses: { 200: { description: 'Counts', schema: statsResponse }, 400: { description: 'Media types have no stats' } },
    handler: async (ctx, { params }) => {
      const type = servedType(params.resource_type, 400);
      const s = await resourceStats(db, clientIdOf(ctx), type);
      ctx.body = { resource_type: type, total: s.total, by_flag: s.byFlag, by_source: s.bySource, last_24h: { created: s.created24h, updated: s.updated24h } };
    },
  });

  api.add({
    method: 'get',
    path: '/api/v1/idap/{resource_type}/resolve',
    operationId: 'idapResolve',
    summary: 'Resolve a resource by its keys (a pin to its parent business)',
    description:
      `pins: by ${PIN_KEYS.join(', ')} (all given must match; exactly one pin) -> the pin's parent business (set by the import's parent). ` +
      'businesses: by place_id, website or domain, or name (+ address), matched as an import of the same keys merges: the business stored ' +
      'under that key (where the import writes), else the oldest business whose data holds it: the place id, the registrable domain ' +
      '(e.g. the maps listing of that website; of a chain\'s listings sharing a site, the first imported), or the name and address. ' +
      'Other types: by the keys their natural key is made of, e.g. emails?address=..., domains?domain=..., phones?number=...&country=GB.',
    tags: ['idap'],
    security: 'client',
    params: typeParams,
    query: resolveQuery,
    responses: {
      200: { description: 'The resolved resource', schema: resolveResponse },
      400: { description: 'Media type, or several pins match the keys' },
      404: { description: `detail ${RESOURCE_NOT_FOUND}: no resource (no pin) of this client matches the keys; detail ${PARENT_NOT_FOUND}: the pin exists but has no parent business` },
    },
    handler: async (ctx, { params, query }) => {
      const type = servedType(params.resource_type, 400);
      const clientId = clientIdOf(ctx);
      const { include, ...keys } = query as Record<string, string | undefined> & { include?: ResourceType[] };
      const given = Object.fromEntries(Object.entries(keys).filter((e): e is [string, string] => e[1] !== undefined));
      let match: ResourceModel | undefined;
      let from: ResourceModel | undefined;
      if (type === 'pins') {
        const pinKeys = Object.fromEntries(PIN_KEYS.filter((k) => given[k] !== undefined).map((k) => [k, given[k] as string]));
        if (Object.keys(pinKeys).length === 0) throw new ValidationError([{ type: 'missing', loc: ['query'], msg: `give at least one of ${PIN_KEYS.join(', ')}` }]);
        const pins = await findPins(db, clientId, pinKeys);
        if (pins.length > 1) throw badRequest(`several pins match; add more of ${PIN_KEYS.join(', ')}`);
        from = pins[0];
        const parent = from ? (await relatedOf(db, clientId, [from.id], ['businesses'], 1)).get(from.id)?.get('businesses')?.[0] : undefined;
        match = parent ? await getResource(db, clientId, 'businesses', parent.id) : undefined;
        if (from && !match) throw notFound(PARENT_NOT_FOUND);
      } else {
        const key = naturalKeyOf(type, given);
        if ('error' in key) throw new ValidationError([{ type: 'missing', loc: ['query', key.field], msg: key.error }]);
        match = type === 'businesses' ? await findBusinessByKey(db, clientId, key.key) : await findByNaturalKey(db, clientId, type, key.key);
        from = match;
      }
      if (!match || !from) throw notFound(RESOURCE_NOT_FOUND);
      const [resource] = await views(db, clientId, [match], undefined, include);
      ctx.body = { ...resource, resolved_from: idapRef(from.resource_type, from.id) };
    },
  });

  api.add({
    method: 'post',
    path: '/api/v1/idap/{resource_type}/import',
    operationId: 'idapImport',
    summary: 'Bulk-import up to 1,000 resources (de-duplicated on their natural keys)',
    description:
      'Each record is upserted on the natural key derived from its data: an existing resource gets the new data merged in (stored keys not given are kept) and modified_at moves only if something changed. ' +
      'A pin record may name its parent business (parent: its idap_ref or its keys), which pins/resolve answers; a new parent replaces the old one, an unknown one refuses the import (422).',
    tags: ['idap'],
    security: 'client',
    params: typeParams,
    body: importBody,
    responses: {
      200: { description: 'What happened to each record', schema: importResponse },
      400: { description: 'Media types cannot be imported' },
      422: { description: 'A record without its natural key, or with a parent that is not a business of this client (or on a type other than pins)' },
    },
    handler: async (ctx, { params, body }) => {
      const type = servedType(params.resource_type, 400);
      const clientId = clientIdOf(ctx);
      const issues: ValidationIssue[] = [];
      const keys = body.records.map((r, i) => {
        const key = naturalKeyOf(type, r.data);
        if ('error' in key) issues.push({ type: 'missing', loc: ['body', 'records', i, 'data', key.field], msg: key.error });
        return 'key' in key ? key.key : '';
      });
      const { parents, issues: parentIssues } = await importParents(db, clientId, type, body.records);
      issues.push(...parentIssues);
      if (issues.length > 0) throw new ValidationError(issues);
      let queued = 0;
      const results = await db.transaction(async (trx) => {
        const upserted = await upsertResources(trx, clientId, type, body.records.map((r, i) => ({ naturalKey: keys[i], data: r.data, flags: r.flags, campaignId: r.campaign_id, source: body.source })));
        // In record order, so that of one pin's records in a request the last parent wins.
        const reparented = new Set<string>();
        for (const [i, businessId] of parents) {
          const pin = upserted[i];
          if (pin && (await setPinParent(trx, pin, { clientId, type: 'businesses', id: businessId }))) reparented.add(pin.id);
        }
        // A new parent moved the pin's modified_at: that is an update.
        const written = upserted.map((w) => (w.status === 'unchanged' && reparented.has(w.id) ? { ...w, status: 'updated' as const } : w));
        if (leadIndex) queued = await leadsOfImport(trx, clientId, type, written);
        return written;
      });
      if (queued > 0) await leadIndex?.kick(clientId);
      const seen = new Set<string>();
      const items = results.map((r, index) => {
        const duplicate = seen.has(r.naturalKey);
        seen.add(r.naturalKey);
        return { index, idap_ref: r.idapRef, resource_id: r.id, status: duplicate ? ('duplicate' as const) : r.status };
      });
      const count = (s: string) => items.filter((i) => i.status === s).length;
      ctx.body = {
        success: true,
        resource_type: type,
        received: body.records.length,
        created: count('created'),
        updated: count('updated'),
        unchanged: count('unchanged'),
        duplicates: count('duplicate'),
        items,
      };
    },
  });

  api.add({
    method: 'get',
    path: '/api/v1/idap/{resource_type}',
    operationId: 'idapList',
    summary: 'List / sync resources of a type (cursor pagination)',
    description:
      'Keyset pagination: follow next_cursor with the same sort and order. For a sync, use sort=updated_at&order=asc: a pass ' +
      'loses and repeats nothing while writes happen (a resource changed after it was read comes again later in its new version); ' +
      'then store the latest modified_at and pass it as since. Rejected resources are hidden unless flags includes rejected.',
    tags: ['idap'],
    security: 'client',
    params: typeParams,
    query: listQuery,
    responses: { 200: { description: 'A page', schema: listResponse }, 400: { description: 'Media type, or an invalid cursor' } },
    handler: async (ctx, { params, query }) => {
      const type = servedType(params.resource_type, 400);
      const clientId = clientIdOf(ctx);
      const sort = query.sort === 'modified_at' ? 'updated_at' : query.sort;
      const filters = query.flags ?? [];
      const page = await listResources(db, clientId, type, {
        since: query.since,
        until: query.until,
        campaignId: query.campaign_id,
        source: query.source,
        flags: filters.filter((f) => !f.startsWith('!')) as Flag[],
        notFlags: filters.filter((f) => f.startsWith('!')).map((f) => f.slice(1)) as Flag[],
        sort,
        order: query.order,
        limit: query.limit,
        after: query.cursor === undefined ? undefined : decodeCursor(query.cursor, sort, query.order),
      });
      const items = await views(db, clientId, page.items, query.fields, query.include);
      ctx.body = { resource_type: type, count: items.length, has_more: page.next !== undefined, next_cursor: page.next ? encodeCursor(page.next) : null, items };
    },
  });

  api.add({
    method: 'get',
    path: '/api/v1/idap/{resource_type}/{resource_id}',
    operationId: 'idapGet',
    summary: 'Fetch one resource',
    tags: ['idap'],
    security: 'client',
    params: resourceParams,
    query: getQuery,
    responses: {
      200: { description: 'The resource (spec §2.9)', schema: idapResource },
      ...notFoundResponse,
      501: { description: 'Media resource: served by the media proxy' },
    },
    handler: async (ctx, { params, query }) => {
      const type = servedType(params.resource_type, 501);
      const clientId = clientIdOf(ctx);
      const row = await getResource(db, clientId, type, params.resource_id);
      if (!row) throw notFound(RESOURCE_NOT_FOUND);
      [ctx.body] = await views(db, clientId, [row], query.fields, query.include);
    },
  });

  api.add({
    method: 'patch',
    path: '/api/v1/idap/{resource_type}/{resource_id}',
    operationId: 'idapUpdateFlags',
    summary: 'Add or remove flags',
    description: `Flags: ${FLAGS.join(', ')}. modified_at moves when the flags change, so a sync sees the change.`,
    tags: ['idap'],
    security: 'client',
    params: resourceParams,
    body: patchBody,
    responses: { 200: { description: 'The resource after the change', schema: idapResource }, 400: { description: 'Media type' }, ...notFoundResponse },
    handler: async (ctx: AppContext, { params, body }) => {
      const type = servedType(params.resource_type, 400);
      const clientId = clientIdOf(ctx);
      let requeued = false;
      // A business's flags are part of its lead (a rejected one leaves the search): re-index it.
      const row = await updateFlags(db, clientId, type, params.resource_id, body.add, body.remove, async (trx, changed) => {
        if (type !== 'businesses' || !leadIndex) return;
        await outbox.enqueue(trx, clientId, [changed.id]);
        requeued = true;
      });
      if (!row) throw notFound(RESOURCE_NOT_FOUND);
      if (requeued) await leadIndex?.kick(clientId);
      ctx.body = view(row, undefined, undefined);
    },
  });
}
