import type { ResourceModel } from '../../db/models/resource';
import type { Cursor } from '../../db/repositories/resources';
import { AppError, badRequest } from '../../lib/errors';
import { FLAGS, idapRef, MEDIA_PROXY_PATH, MEDIA_TYPES, type Flag, type ResourceType } from '../../lib/idap';
import { clientIdOf, type AppContext } from '../context';
import { PARENT_NOT_FOUND, RESOURCE_NOT_FOUND, type IdapService } from '../idap-service';
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
function view(
  r: ResourceModel,
  fields: string[] | undefined,
  include: ResourceType[] | undefined,
  related?: Map<string, ResourceModel[]>,
) {
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
    if (dataKeys.length > 0 && !fields.includes('data'))
      out.data = Object.fromEntries(dataKeys.filter((k) => k in r.data).map((k) => [k, r.data[k]]));
  }
  if (include && include.length > 0)
    out.related = Object.fromEntries(include.map((t) => [t, (related?.get(t) ?? []).map(relatedItem)]));
  return out;
}

async function views(
  service: IdapService,
  clientId: string,
  rows: ResourceModel[],
  fields?: string[],
  include?: ResourceType[],
) {
  const related = await service.related(clientId, rows, include);
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
  return (
    y >= 1 &&
    t.getUTCFullYear() === y &&
    t.getUTCMonth() === mo - 1 &&
    t.getUTCDate() === d &&
    t.getUTCHours() === h &&
    t.getUTCMinutes() === mi &&
    t.getUTCSeconds() === sec
  );
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
  if (
    !ok ||
    !UUID.test(id as string) ||
    (s === 'updated_at' && !isChangeSeq(key as string)) ||
    (s === 'created_at' && !isCursorTime(key as string))
  ) {
    throw badRequest('invalid cursor: pass next_cursor from the previous page as it is');
  }
  if (s !== sort || o !== order)
    throw badRequest(
      `the cursor belongs to sort=${s}&order=${o}; pass the same sort and order as the page it came from`,
    );
  return { sort, order, key: key as string, id: id as string };
}

export function idapRoutes(api: ApiRouter, service: IdapService): void {
  const notFoundResponse = { 404: { description: `detail ${RESOURCE_NOT_FOUND}: no such resource for this client` } };

  api.add({
    method: 'get',
    path: '/api/v1/idap/{resource_type}/stats',
    operationId: 'idapStats',
    summary: 'Counts of a resource type',
    tags: ['idap'],
    security: 'client',
    params: typeParams,
    responses: {
      200: { description: 'Counts', schema: statsResponse },
      400: { description: 'Media types have no stats' },
    },
    handler: async (ctx, { params }) => {
      const type = servedType(params.resource_type, 400);
      const s = await service.stats(clientIdOf(ctx), type);
      ctx.body = {
        resource_type: type,
        total: s.total,
        by_flag: s.byFlag,
        by_source: s.bySource,
        last_24h: { created: s.created24h, updated: s.updated24h },
      };
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
      "(e.g. the maps listing of that website; of a chain's listings sharing a site, the first imported), or the name and address. " +
      'Other types: by the keys their natural key is made of, e.g. emails?address=..., domains?domain=..., phones?number=...&country=GB.',
    tags: ['idap'],
    security: 'client',
    params: typeParams,
    query: resolveQuery,
    responses: {
      200: { description: 'The resolved resource', schema: resolveResponse },
      400: { description: 'Media type, or several pins match the keys' },
      404: {
        description: `detail ${RESOURCE_NOT_FOUND}: no resource (no pin) of this client matches the keys; detail ${PARENT_NOT_FOUND}: the pin exists but has no parent business`,
      },
    },
    handler: async (ctx, { params, query }) => {
      const type = servedType(params.resource_type, 400);
      const clientId = clientIdOf(ctx);
      const { include, ...keys } = query as Record<string, string | undefined> & { include?: ResourceType[] };
      const given = Object.fromEntries(Object.entries(keys).filter((e): e is [string, string] => e[1] !== undefined));
      const { match, from } = await service.resolve(clientId, type, given);
      const [resource] = await views(service, clientId, [match], undefined, include);
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
      422: {
        description:
          'A record without its natural key, or with a parent that is not a business of this client (or on a type other than pins)',
      },
    },
    handler: async (ctx, { params, body }) => {
      const type = servedType(params.resource_type, 400);
      const results = await service.importRecords(clientIdOf(ctx), type, body);
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
    responses: {
      200: { description: 'A page', schema: listResponse },
      400: { description: 'Media type, or an invalid cursor' },
    },
    handler: async (ctx, { params, query }) => {
      const type = servedType(params.resource_type, 400);
      const clientId = clientIdOf(ctx);
      const sort = query.sort === 'modified_at' ? 'updated_at' : query.sort;
      const filters = query.flags ?? [];
      const page = await service.list(clientId, type, {
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
      const items = await views(service, clientId, page.items, query.fields, query.include);
      ctx.body = {
        resource_type: type,
        count: items.length,
        has_more: page.next !== undefined,
        next_cursor: page.next ? encodeCursor(page.next) : null,
        items,
      };
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
      const row = await service.get(clientId, type, params.resource_id);
      [ctx.body] = await views(service, clientId, [row], query.fields, query.include);
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
    responses: {
      200: { description: 'The resource after the change', schema: idapResource },
      400: { description: 'Media type' },
      ...notFoundResponse,
    },
    handler: async (ctx: AppContext, { params, body }) => {
      const type = servedType(params.resource_type, 400);
      const row = await service.changeFlags(clientIdOf(ctx), type, params.resource_id, body.add, body.remove);
      ctx.body = view(row, undefined, undefined);
    },
  });
}
