import type { Knex } from 'knex';
import { raw } from 'objection';
import { WHITESPACE_CLASS } from '../../jobs/fields';
import type { DedupeRecord, RecordType } from '../../lib/dedupe';
import { idapRef, naturalKeyOf, resourceKeyOfRecord, type Flag, type ResourceType, type Source } from '../../lib/idap';
import { domainOf } from '../../lib/normalize';
import { ResourceModel } from '../models/resource';
import { tenantSql } from '../models/tenant';
import { UUID } from '../../lib/ids';

/**
 * The IDAP resource store (spec §2.9, §4.5).
 *
 * Ordering under concurrent writes: every write takes a transaction-level advisory lock on the
 * client, then sets change_seq from a sequence and modified_at from clock_timestamp(), and holds the
 * lock until it commits. A client's writes therefore commit in change_seq order, so a reader that
 * pages on change_seq (sort=updated_at) never sees a row appear behind its cursor: a row committed
 * "late" could only have taken its number while the lock was held, before the next writer's. The
 * same holds for modified_at, which makes `since` delta sync safe too. (A bare sequence or timestamp
 * without the lock is not: a transaction that takes number 100 and commits after 101 is skipped.)
 * The price is that one client's writes are serialised, which suits short projection transactions.
 */

export interface UpsertInput {
  clientId: string;
  type: ResourceType;
  /** Resource data; keys with null/undefined values are ignored (they never erase stored values). */
  data: Record<string, unknown>;
  /** Omit to derive it from data (lib/idap.ts naturalKeyOf); when given it is used as is. */
  naturalKey?: string;
  source?: Source | null;
  campaignId?: string | null;
  /** Added to the resource's flags; a new resource without flags gets `new`. */
  flags?: Flag[];
}

export interface ResourceRef {
  clientId: string;
  type: ResourceType;
  id: string;
}

export interface UpsertedResource extends ResourceRef {
  idapRef: string;
  naturalKey: string;
  status: 'created' | 'updated' | 'unchanged';
}

export class InvalidResourceError extends Error {
  constructor(
    readonly index: number,
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** Serialises one client's IDAP writes until the transaction ends (see the module comment). */
export async function lockClient(trx: Knex.Transaction, clientId: string): Promise<void> {
  if (!trx.isTransaction)
    throw new Error('IDAP writes need a transaction (db.transaction(...)) to hold the client lock until commit');
  await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`idap/${clientId}`]);
}

const withoutNulls = (data: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(data).filter(([, v]) => v !== null && v !== undefined));

/**
 * Upserts one resource on its natural key: created once, later calls merge data (shallow; stored
 * keys not in `data` are kept), add source, campaign and flags. modified_at and change_seq move only
 * when something actually changed, so re-running a projection is a no-op. Needs a transaction.
 */
export async function upsertResource(trx: Knex.Transaction, input: UpsertInput): Promise<UpsertedResource> {
  const [one] = await upsertResources(trx, input.clientId, input.type, [input]);
  return one as UpsertedResource;
}

/**
 * Bulk form of upsertResource for one client and type, in one statement. Items with the same
 * natural key are merged in order (later data wins) and report the same resource. Throws
 * InvalidResourceError when an item's natural key cannot be derived.
 */
export async function upsertResources(
  trx: Knex.Transaction,
  clientId: string,
  type: ResourceType,
  items: Omit<UpsertInput, 'clientId' | 'type'>[],
): Promise<UpsertedResource[]> {
  const merged = new Map<
    string,
    {
      natural_key: string;
      data: Record<string, unknown>;
      insert_data: Record<string, unknown>;
      flags: string[] | null;
      sources: string[];
      campaign_ids: string[];
    }
  >();
  const keys = items.map((item, i) => {
    let key = item.naturalKey?.trim();
    if (!key) {
      const derived = naturalKeyOf(type, item.data);
      if ('error' in derived) throw new InvalidResourceError(i, derived.field, derived.error);
      key = derived.key;
    }
    const data = withoutNulls(item.data);
    // A business records its registrable domain (as its natural key derives it), by which a maps
    // listing and a crawl of its website meet (businessesByDomain).
    if (type === 'businesses') {
      const domain = domainOf(
        typeof data.website === 'string' ? data.website : typeof data.domain === 'string' ? data.domain : null,
      );
      if (domain) data.domain = domain;
    }
    const prev = merged.get(key);
    const sources = [...new Set([...(prev?.sources ?? []), ...(item.source ? [item.source] : [])])];
    const campaigns = [...new Set([...(prev?.campaign_ids ?? []), ...(item.campaignId ? [item.campaignId] : [])])];
    const flags = item.flags || prev?.flags ? [...new Set([...(prev?.flags ?? []), ...(item.flags ?? [])])] : null;
    const all = { ...prev?.data, ...data };
    merged.set(key, {
      natural_key: key,
      data: all,
      // A new resource records where it first came from, as the spec's business data shows.
      insert_data: withoutNulls({ source: sources[0], campaign_id: campaigns[0], ...all }),
      flags,
      sources,
      campaign_ids: campaigns,
    });
    return key;
  });
  if (merged.size === 0) return [];

  await lockClient(trx, clientId);
  if (type === 'businesses') {
    const remap = await businessesByDomain(trx, clientId, [...merged.values()]);
    for (const [from, to] of remap) {
      const entry = merged.get(from);
      if (!entry) continue;
      merged.delete(from);
      const prev = merged.get(to);
      merged.set(to, {
        natural_key: to,
        data: { ...prev?.data, ...entry.data },
        insert_data: { ...prev?.insert_data, ...entry.insert_data },
        flags: entry.flags || prev?.flags ? [...new Set([...(prev?.flags ?? []), ...(entry.flags ?? [])])] : null,
        sources: [...new Set([...(prev?.sources ?? []), ...entry.sources])],
        campaign_ids: [...new Set([...(prev?.campaign_ids ?? []), ...entry.campaign_ids])],
      });
    }
    keys.forEach((key, i) => {
      keys[i] = remap.get(key) ?? key;
    });
  }
  // upd changes the client's row of each key (mine) through its id.
  const { rows } = (await tenantSql(trx, clientId).raw(
    `with x as (
       select * from jsonb_to_recordset(?::jsonb)
         as x(ord int, natural_key text, data jsonb, insert_data jsonb, flags text[], sources text[], campaign_ids text[])
     ),
     ins as (
       insert into idap_resources (client_id, resource_type, natural_key, data, flags, sources, campaign_ids, change_seq, created_at, modified_at)
       select ?, ?, natural_key, insert_data, coalesce(flags, '{new}'), sources, campaign_ids, nextval('idap_change_seq'), ts, ts
       from (select x.*, clock_timestamp() as ts from x order by ord) n
       on conflict (client_id, resource_type, natural_key) do nothing
       returning id, natural_key
     ),
     -- tenancy: the rows located through the scoped {idap_resources} / {idap_relations} of this statement
     upd as (
       update idap_resources r set
         data = r.data || x.data,
         flags = array(select distinct f from unnest(r.flags || coalesce(x.flags, '{}')) f order by f),
         sources = array(select distinct s from unnest(r.sources || x.sources) s order by s),
         campaign_ids = array(select distinct c from unnest(r.campaign_ids || x.campaign_ids) c order by c),
         change_seq = nextval('idap_change_seq'),
         modified_at = clock_timestamp()
       from x join {idap_resources mine} on mine.resource_type = ? and mine.natural_key = x.natural_key
       where r.id = mine.id
         and ((r.data || x.data) is distinct from r.data
              or not r.sources @> x.sources
              or not r.campaign_ids @> x.campaign_ids
              or not r.flags @> coalesce(x.flags, '{}'))
       returning r.id, r.natural_key
     )
     select x.natural_key, coalesce(ins.id, upd.id, r.id) as id,
            case when ins.id is not null then 'created' when upd.id is not null then 'updated' else 'unchanged' end as status
     from x
     left join ins on ins.natural_key = x.natural_key
     left join upd on upd.natural_key = x.natural_key
     left join {idap_resources r} on r.resource_type = ? and r.natural_key = x.natural_key
     order by x.ord`,
    [JSON.stringify([...merged.values()].map((m, ord) => ({ ord, ...m }))), clientId, type, type, type],
  )) as { rows: { natural_key: string; id: string; status: UpsertedResource['status'] }[] };
  const byKey = new Map(rows.map((r) => [r.natural_key, r]));
  return keys.map((key) => {
    const row = byKey.get(key);
    if (!row) throw new Error(`upsert returned no row for ${type} ${key}`);
    return { clientId, type, id: row.id, idapRef: idapRef(type, row.id), naturalKey: key, status: row.status };
  });
}

/**
 * One company, one business: a maps listing (keyed by its place id) and a crawl of its website (keyed
 * by its domain) are the same business when they share a registrable domain. For each business
 * about to be written whose own row does not exist yet, this finds the row it belongs to:
 * - a place-keyed listing joins the domain-keyed business of its domain, unless that one already
 *   holds another place (a chain's second branch stays its own business);
 * - a domain-keyed business joins the one place-keyed listing of its domain; with several (a chain)
 *   it stays its own.
 * Returns natural key -> the key of the row to write into. Runs under the client's write lock.
 */
async function businessesByDomain(
  trx: Knex.Transaction,
  clientId: string,
  entries: { natural_key: string; data: Record<string, unknown> }[],
): Promise<Map<string, string>> {
  const remap = new Map<string, string>();
  const withDomain = entries.filter((e) => typeof e.data.domain === 'string');
  if (withDomain.length === 0) return remap;
  const { rows } = (await tenantSql(trx, clientId).raw(
    `select natural_key, data->>'domain' as domain, data->>'place_id' as place_id
       from {idap_resources}
      where resource_type = 'businesses' and (natural_key = any(?) or data->>'domain' = any(?))
      order by created_at`,
    [withDomain.map((e) => e.natural_key), [...new Set(withDomain.map((e) => String(e.data.domain)))]],
  )) as { rows: { natural_key: string; domain: string | null; place_id: string | null }[] };
  const existing = new Set(rows.map((r) => r.natural_key));
  // The place each domain-keyed row takes in this batch: two branches of a chain never both join it.
  const claimed = new Map<string, string>();
  for (const e of withDomain) {
    if (existing.has(e.natural_key)) continue;
    const domain = String(e.data.domain);
    const sameDomain = rows.filter((r) => r.domain === domain);
    if (e.natural_key.startsWith('place:')) {
      const placeId = e.natural_key.slice('place:'.length);
      const target = sameDomain.find(
        (r) =>
          r.natural_key === `domain:${domain}` && (r.place_id ?? claimed.get(r.natural_key) ?? placeId) === placeId,
      );
      if (target) {
        remap.set(e.natural_key, target.natural_key);
        claimed.set(target.natural_key, placeId);
      }
    } else if (e.natural_key === `domain:${domain}`) {
      const places = sameDomain.filter((r) => r.natural_key.startsWith('place:'));
      if (places.length === 1 && places[0]) remap.set(e.natural_key, places[0].natural_key);
    }
  }
  return remap;
}

/**
 * Relates two resources of the same client (stored in both directions; idempotent). A new
 * relation bumps both resources' modified_at, since their `related` view changed. Needs a transaction.
 */
export async function relate(trx: Knex.Transaction, a: ResourceRef, b: ResourceRef): Promise<boolean> {
  if (a.clientId !== b.clientId) throw new Error('relate: resources of different clients');
  if (a.id === b.id) return false;
  await lockClient(trx, a.clientId);
  const { rows } = (await tenantSql(trx, a.clientId).raw(
    `with pair as (
       select ra.id as a_id, ra.resource_type as a_type, rb.id as b_id, rb.resource_type as b_type
       from {idap_resources ra}, {idap_resources rb}
       where ra.id = ? and rb.id = ?
     ),
     ins as (
       insert into idap_relations (client_id, from_id, to_type, to_id)
       select ?, a_id, b_type, b_id from pair union all select ?, b_id, a_type, a_id from pair
       on conflict do nothing
       returning from_id
     ),
     ${bumpResources('ins')}
     select (select count(*) from pair)::int as found, (select count(*) from bump)::int as bumped`,
    [a.id, b.id, a.clientId, a.clientId],
  )) as { rows: { found: number; bumped: number }[] };
  if (rows[0]?.found !== 1)
    throw new Error(`relate: ${a.type}/${a.id} or ${b.type}/${b.id} not found for client ${a.clientId}`);
  return (rows[0]?.bumped ?? 0) > 0;
}

/**
 * Undoes `relate`: the relation of two resources of the same client, both directions, goes; each
 * resource whose relations changed moves modified_at. Returns whether there was one. Needs a transaction.
 */
export async function unrelate(trx: Knex.Transaction, a: ResourceRef, b: ResourceRef): Promise<boolean> {
  if (a.clientId !== b.clientId) throw new Error('unrelate: resources of different clients');
  await lockClient(trx, a.clientId);
  return dropRelations(
    trx,
    a.clientId,
    '(mine.from_id = ? and mine.to_id = ?) or (mine.from_id = ? and mine.to_id = ?)',
    [a.id, b.id, b.id, a.id],
  );
}

/** A CTE `bump` moving modified_at of the resources whose ids `cte` returns as from_id (their relations changed). */
const bumpResources = (
  cte: string,
) => `-- tenancy: the rows located through the scoped {idap_resources} / {idap_relations} of this statement
     bump as (
       update idap_resources set change_seq = nextval('idap_change_seq'), modified_at = clock_timestamp()
       where id in (select from_id from ${cte}) returning id
     )`;

/**
 * Deletes the client's relations (`mine`, through their primary key) that `condition` picks, and
 * bumps the resources whose relations they were; whether any was. Under the client's lock.
 */
async function dropRelations(
  trx: Knex.Transaction,
  clientId: string,
  condition: string,
  bindings: Knex.RawBinding[],
): Promise<boolean> {
  const { rows } = (await tenantSql(trx, clientId).raw(
    `with gone as (
       delete from idap_relations d using {idap_relations mine}
       where (d.from_id, d.to_type, d.to_id) = (mine.from_id, mine.to_type, mine.to_id) and (${condition})
       returning d.from_id
     ),
     ${bumpResources('gone')}
     select count(*)::int as bumped from bump`,
    bindings,
  )) as { rows: { bumped: number }[] };
  return (rows[0]?.bumped ?? 0) > 0;
}

/**
 * The IDAP resource a canonical record of de-duplication stands for (lib/idap.ts
 * resourceKeyOfRecord): the resource its fields key, a business also by a key its data holds
 * (findBusinessByKey); undefined when the client has none.
 */
export async function resourceOfRecord(
  db: Knex,
  clientId: string,
  recordType: RecordType,
  record: DedupeRecord,
): Promise<ResourceModel | undefined> {
  const found = resourceKeyOfRecord(recordType, record);
  if (!found) return undefined;
  return found.type === 'businesses'
    ? findBusinessByKey(db, clientId, found.key)
    : findByNaturalKey(db, clientId, found.type, found.key);
}

/**
 * Makes `business` the pin's parent (spec §4.5: resolve a pin to its parent business): relates the
 * two (both ways, as relate does) and drops the pin's relations to other businesses, since a pin has
 * one parent. The resources whose relations changed move modified_at. Returns whether anything
 * changed. Needs a transaction.
 */
export async function setPinParent(trx: Knex.Transaction, pin: ResourceRef, business: ResourceRef): Promise<boolean> {
  if (pin.type !== 'pins' || business.type !== 'businesses')
    throw new Error(`setPinParent: ${pin.type} -> ${business.type}, expected pins -> businesses`);
  if (pin.clientId !== business.clientId) throw new Error('setPinParent: resources of different clients');
  await lockClient(trx, pin.clientId);
  const dropped = await dropRelations(
    trx,
    pin.clientId,
    `(mine.from_id = ? and mine.to_type = 'businesses' and mine.to_id <> ?)
     or (mine.to_id = ? and mine.to_type = 'pins' and mine.from_id <> ?
         and mine.from_id in (select id from {idap_resources} where resource_type = 'businesses'))`,
    [pin.id, business.id, pin.id, business.id],
  );
  const linked = await relate(trx, pin, business);
  return linked || dropped;
}

/** Adds and removes flags; bumps modified_at only when the flags changed. Undefined: no such resource. */
export async function updateFlags(
  db: Knex,
  clientId: string,
  type: ResourceType,
  id: string,
  add: Flag[],
  remove: Flag[],
  /** Runs in the same transaction when the flags changed (e.g. to queue the lead for re-indexing). */
  onChange?: (trx: Knex.Transaction, row: ResourceModel) => Promise<void>,
): Promise<ResourceModel | undefined> {
  // Not a UUID: no such resource (the uuid column would refuse the comparison).
  if (!UUID.test(id)) return undefined;
  return db.transaction(async (trx) => {
    await lockClient(trx, clientId);
    const { rowCount } = (await tenantSql(trx, clientId).raw(
      // tenancy: the rows located through the scoped {idap_resources} / {idap_relations} of this statement
      `update idap_resources set flags = nf.flags, change_seq = nextval('idap_change_seq'), modified_at = clock_timestamp()
       from (select id, array(select distinct f from unnest(flags || ?::text[]) f where f <> all(?::text[]) order by f) as flags
             from {idap_resources} where resource_type = ? and id = ?) nf
       where idap_resources.id = nf.id and idap_resources.flags is distinct from nf.flags`,
      [add, remove, type, id],
    )) as { rowCount: number };
    const row = await getResource(trx, clientId, type, id);
    if (row && rowCount > 0 && onChange) await onChange(trx, row);
    return row;
  });
}

// ---- reads ---------------------------------------------------------------------------------

const ISO_US = `'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'`;
const COLUMNS = [
  'idap_resources.*',
  raw(`to_char(idap_resources.created_at at time zone 'UTC', ${ISO_US}) as created_iso`),
  raw(`to_char(idap_resources.modified_at at time zone 'UTC', ${ISO_US}) as modified_iso`),
];

export async function getResource(
  db: Knex,
  clientId: string,
  type: ResourceType,
  id: string,
): Promise<ResourceModel | undefined> {
  if (!UUID.test(id)) return undefined;
  return ResourceModel.query(db)
    .modify('forClient', clientId)
    .where('resource_type', type)
    .findById(id)
    .select(COLUMNS);
}

/** A resource by its natural key as written or as derived from `data`-like keys. */
export async function findByNaturalKey(
  db: Knex,
  clientId: string,
  type: ResourceType,
  key: string,
): Promise<ResourceModel | undefined> {
  return ResourceModel.query(db)
    .modify('forClient', clientId)
    .where({ resource_type: type, natural_key: key })
    .first()
    .select(COLUMNS);
}

// JavaScript's \s (what lib/normalize.ts normalizeText trims and collapses); Postgres's \s is its
// locale's [[:space:]], which leaves out the no-break spaces (U+00A0, U+202F) among others.
const JS_SPACE = `[${WHITESPACE_CLASS}]`;
/**
 * JavaScript's toLowerCase in SQL: Unicode's full case mapping, as ICU's root locale applies it. The
 * database's own lower() follows its libc locale, which maps some letters otherwise (Turkish İ to a
 * plain i, not i with a combining dot; a word-final Σ to σ, not ς). Needs a Postgres built with ICU.
 */
const jsLower = (e: string) => `lower((${e}) COLLATE "und-x-icu")`;
/** lib/normalize.ts normalizeText in SQL: trimmed, inner whitespace as one space, lower case; blank is null. */
const normText = (e: string) =>
  `nullif(${jsLower(`regexp_replace(regexp_replace(${e}, '^${JS_SPACE}+|${JS_SPACE}+$', '', 'g'), '${JS_SPACE}+', ' ', 'g')`)}, '')`;
/** A business's `name:` key value (lib/idap.ts naturalKeyOf) from its data: normalized name, `|`, normalized address. */
export const BUSINESS_NAME_KEY_SQL = `(${normText(`idap_resources.data->>'name'`)} || '|' || coalesce(${normText(`idap_resources.data->>'address'`)}, ''))`;

/**
 * Per kind of business key (lib/idap.ts naturalKeyOf: `place:`, `domain:`, `name:`), the expressions
 * of a business's data that hold the key's value besides the key it is stored under: a crawled site
 * that a listing joined keeps the listing's place id, and a listing records its site's registrable
 * domain (upsertResources, businessesByDomain). Each is indexed as written here, for the businesses
 * (migrations 20261122000800_business_domain_index, 20261127000200_business_key_indexes,
 * 20261127000300_business_name_key_icu): change one and its index with it. The name key's is
 * lib/normalize.ts normalizeText in SQL (BUSINESS_NAME_KEY_SQL).
 */
const HELD_BUSINESS_KEYS: Record<string, string[]> = {
  place: [`btrim(idap_resources.data->>'place_id')`, `btrim(idap_resources.data->>'maps_place_id')`],
  domain: [`(idap_resources.data->>'domain')`],
  name: [BUSINESS_NAME_KEY_SQL],
};

/**
 * The business a natural key (`place:`, `domain:`, `name:`) resolves to, matched as an import of the
 * same key merges: the business stored under that key, which an import writes into; else the oldest
 * business whose data holds the key (e.g. the one maps listing of a website's domain). Among a chain's
 * listings sharing one domain that is the first listed, until a crawl or import of the site itself
 * makes it a business of its own under the domain key. Both lookups are index scans.
 */
export async function findBusinessByKey(db: Knex, clientId: string, key: string): Promise<ResourceModel | undefined> {
  const stored = await findByNaturalKey(db, clientId, 'businesses', key);
  const colon = key.indexOf(':');
  const held = HELD_BUSINESS_KEYS[key.slice(0, colon)];
  if (stored || !held) return stored;
  const value = key.slice(colon + 1);
  // The businesses holding the key first (one equality per expression, each served by its index),
  // then the oldest of them. Materialized, so that the planner cannot walk the client's businesses in
  // created_at order instead, expecting an early match for LIMIT 1 (a chain's domain, a missing key).
  const oldestHolding = tenantSql(db, clientId).raw(
    `(WITH holding AS MATERIALIZED (
       SELECT id, created_at FROM {idap_resources}
       WHERE resource_type = 'businesses' AND (${held.map((e) => `${e} = ?`).join(' OR ')}))
     SELECT id FROM holding ORDER BY created_at, id LIMIT 1)`,
    held.map(() => value),
  );
  return ResourceModel.query(db)
    .modify('forClient', clientId)
    .where('resource_type', 'businesses')
    .where('idap_resources.id', oldestHolding)
    .first()
    .select(COLUMNS);
}

/**
 * The client's resources whose `data.name` contains any of the name's words of three or more
 * letters (case-insensitive), newest first, at most `limit`: candidates for the caller to rank.
 */
export async function findByNameWords(
  db: Knex,
  clientId: string,
  type: ResourceType,
  name: string,
  limit = 100,
): Promise<ResourceModel[]> {
  const words = [
    ...new Set(
      name
        .toLowerCase()
        .split(/[^\p{L}\p{N}]+/u)
        .filter((w) => w.length >= 3),
    ),
  ].slice(0, 8);
  if (words.length === 0) return [];
  return ResourceModel.query(db)
    .modify('forClient', clientId)
    .where('resource_type', type)
    .where((q) => {
      for (const w of words)
        q.orWhereRaw(`${jsLower(`idap_resources.data->>'name'`)} like ?`, [`%${w.replace(/[\\%_]/g, '\\$&')}%`]);
    })
    .orderBy('modified_at', 'desc')
    .limit(limit)
    .select(COLUMNS);
}

export type SortKey = 'created_at' | 'updated_at' | 'name';
export type Order = 'asc' | 'desc';

/** Position after the last item of a page; opaque to clients (base64url JSON). */
export interface Cursor {
  sort: SortKey;
  order: Order;
  /** change_seq (updated_at), created_at with microseconds (created_at), or the name (name). */
  key: string;
  id: string;
}

export interface ListOptions {
  since?: string;
  until?: string;
  campaignId?: string;
  source?: string;
  /** All must be present. */
  flags: Flag[];
  /** None may be present (`!x`). `rejected` is excluded unless `flags` asks for it. */
  notFlags: Flag[];
  sort: SortKey;
  order: Order;
  limit: number;
  after?: Cursor;
}

const NAME = `coalesce(idap_resources.data->>'name', '')`;

/**
 * One page in keyset order. sort=updated_at pages on change_seq: with order=asc that is the sync
 * order, which loses and repeats nothing while writes happen (a resource changed after it was
 * read comes again, later, in its new version). created_at and name page on (key, id).
 */
export async function listResources(
  db: Knex,
  clientId: string,
  type: ResourceType,
  o: ListOptions,
): Promise<{ items: ResourceModel[]; next?: Cursor }> {
  const q = ResourceModel.query(db).modify('forClient', clientId).where('resource_type', type).select(COLUMNS);
  if (o.since) q.where('modified_at', '>', o.since);
  if (o.until) q.where('modified_at', '<', o.until);
  if (o.campaignId) q.whereRaw('campaign_ids @> array[?]::text[]', [o.campaignId]);
  if (o.source) q.whereRaw('sources @> array[?]::text[]', [o.source]);
  if (o.flags.length) q.whereRaw('flags @> ?::text[]', [o.flags]);
  const excluded = o.flags.includes('rejected') ? o.notFlags : [...new Set<Flag>([...o.notFlags, 'rejected'])];
  q.whereRaw('not flags && ?::text[]', [excluded]);

  const cmp = o.order === 'asc' ? '>' : '<';
  if (o.sort === 'updated_at') {
    if (o.after) q.whereRaw(`change_seq ${cmp} ?::bigint`, [o.after.key]);
    q.orderBy('change_seq', o.order);
  } else if (o.sort === 'created_at') {
    if (o.after)
      q.whereRaw(`(idap_resources.created_at, idap_resources.id) ${cmp} (?::timestamptz, ?::uuid)`, [
        o.after.key,
        o.after.id,
      ]);
    q.orderBy([
      { column: 'created_at', order: o.order },
      { column: 'id', order: o.order },
    ]);
  } else {
    if (o.after) q.whereRaw(`(${NAME}, idap_resources.id) ${cmp} (?, ?::uuid)`, [o.after.key, o.after.id]);
    q.orderByRaw(`${NAME} ${o.order}, idap_resources.id ${o.order}`);
  }
  const rows = await q.limit(o.limit + 1);
  const items = rows.slice(0, o.limit);
  const last = items.at(-1);
  if (rows.length <= o.limit || !last) return { items };
  const key =
    o.sort === 'updated_at'
      ? String(last.change_seq)
      : o.sort === 'created_at'
        ? (last.created_iso as string)
        : String(last.data.name ?? '');
  return { items, next: { sort: o.sort, order: o.order, key, id: last.id } };
}

/** Related resources of `ids`, of the given types, at most `perType` each: id -> type -> resources. */
export async function relatedOf(
  db: Knex,
  clientId: string,
  ids: string[],
  types: ResourceType[],
  perType = 100,
): Promise<Map<string, Map<string, ResourceModel[]>>> {
  const out = new Map<string, Map<string, ResourceModel[]>>();
  if (ids.length === 0 || types.length === 0) return out;
  const { rows } = (await tenantSql(db, clientId).raw(
    `select * from (
       select rel.from_id, r.*, row_number() over (partition by rel.from_id, rel.to_type order by r.created_at, r.id) as n
       from {idap_relations rel} join {idap_resources r} on r.id = rel.to_id
       where rel.from_id = any(?::uuid[]) and rel.to_type = any(?::text[])
     ) t where n <= ? order by from_id, resource_type, n`,
    [ids, types, perType],
  )) as { rows: (ResourceModel & { from_id: string })[] };
  for (const row of rows) {
    const byType = out.get(row.from_id) ?? new Map<string, ResourceModel[]>();
    out.set(row.from_id, byType);
    const list = byType.get(row.resource_type) ?? [];
    byType.set(row.resource_type, list);
    list.push(row);
  }
  return out;
}

/**
 * The businesses of e-mail resources: those related to them, and those whose own data names the
 * address (`email`, e.g. an imported business), which are related to the e-mail here so that the
 * lead index sees its verification. Returns the business ids. Needs a transaction.
 */
export async function businessesOfEmails(
  trx: Knex.Transaction,
  clientId: string,
  emails: UpsertedResource[],
): Promise<string[]> {
  if (emails.length === 0) return [];
  const { rows: naming } = (await tenantSql(trx, clientId).raw(
    `select r.id, e.id as email_id from {idap_resources r}
     join {idap_resources e} on e.resource_type = 'emails' and e.id = any(?::uuid[])
       and e.natural_key = lower(trim(r.data->>'email'))
     where r.resource_type = 'businesses' and r.data->>'email' is not null`,
    [emails.map((e) => e.id)],
  )) as { rows: { id: string; email_id: string }[] };
  for (const n of naming)
    await relate(trx, { clientId, type: 'businesses', id: n.id }, { clientId, type: 'emails', id: n.email_id });
  return businessesRelatedTo(
    trx,
    clientId,
    emails.map((e) => e.id),
  );
}

/** The businesses related to the given resources (raw SQL: one indexed read of idap_relations). */
async function businessesRelatedTo(trx: Knex.Transaction, clientId: string, ids: string[]): Promise<string[]> {
  const { rows } = (await tenantSql(trx, clientId).raw(
    `select distinct to_id as id from {idap_relations} where from_id = any(?::uuid[]) and to_type = 'businesses'`,
    [ids],
  )) as { rows: { id: string }[] };
  return rows.map((r) => r.id);
}

/**
 * Relates businesses to the e-mail resources their own data names (`email`), so that a verdict
 * given before the business was written (a crawlVerify, an import of the e-mail) reaches its lead.
 * Returns the businesses that gained a relation. Needs a transaction.
 */
export async function relateNamedEmails(
  trx: Knex.Transaction,
  clientId: string,
  businessIds: string[],
): Promise<string[]> {
  if (businessIds.length === 0) return [];
  const { rows } = (await tenantSql(trx, clientId).raw(
    `select r.id, e.id as email_id from {idap_resources r}
     join {idap_resources e} on e.resource_type = 'emails' and e.natural_key = lower(trim(r.data->>'email'))
     where r.resource_type = 'businesses' and r.id = any(?::uuid[])`,
    [businessIds],
  )) as { rows: { id: string; email_id: string }[] };
  const linked = new Set<string>();
  for (const n of rows) {
    if (await relate(trx, { clientId, type: 'businesses', id: n.id }, { clientId, type: 'emails', id: n.email_id }))
      linked.add(n.id);
  }
  return [...linked];
}

/** The businesses related to phone resources (their leads show the number). */
export async function businessesOfPhones(
  trx: Knex.Transaction,
  clientId: string,
  phones: ResourceRef[],
): Promise<string[]> {
  if (phones.length === 0) return [];
  return businessesRelatedTo(
    trx,
    clientId,
    phones.map((p) => p.id),
  );
}

/** Pins whose data holds all of `keys` (pin_name, pin_data_set_id, account_id, pin_subscription_id), oldest first. */
export async function findPins(db: Knex, clientId: string, keys: Record<string, string>): Promise<ResourceModel[]> {
  return ResourceModel.query(db)
    .modify('forClient', clientId)
    .where('resource_type', 'pins')
    .whereRaw('data @> ?::jsonb', [JSON.stringify(keys)])
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .limit(2)
    .select(COLUMNS);
}

export interface ResourceStats {
  total: number;
  byFlag: Record<string, number>;
  bySource: Record<string, number>;
  created24h: number;
  updated24h: number;
}

/** Counts for one type; updated in the last 24 hours means changed after creation. */
export async function resourceStats(db: Knex, clientId: string, type: ResourceType): Promise<ResourceStats> {
  const { rows } = (await tenantSql(db, clientId).raw(
    `select
       (select count(*) from {idap_resources} where resource_type = ?)::int as total,
       (select count(*) from {idap_resources} where resource_type = ? and created_at > now() - interval '24 hours')::int as created,
       (select count(*) from {idap_resources} where resource_type = ? and modified_at > now() - interval '24 hours' and modified_at > created_at)::int as updated,
       (select coalesce(jsonb_object_agg(f, n), '{}') from (select f, count(*)::int as n from {idap_resources}, unnest(flags) f where resource_type = ? group by f) a) as by_flag,
       (select coalesce(jsonb_object_agg(s, n), '{}') from (select s, count(*)::int as n from {idap_resources}, unnest(sources) s where resource_type = ? group by s) b) as by_source`,
    Array.from({ length: 5 }, () => type),
  )) as {
    rows: {
      total: number;
      created: number;
      updated: number;
      by_flag: Record<string, number>;
      by_source: Record<string, number>;
    }[];
  };
  const r = rows[0] ?? { total: 0, created: 0, updated: 0, by_flag: {}, by_source: {} };
  return { total: r.total, byFlag: r.by_flag, bySource: r.by_source, created24h: r.created, updated24h: r.updated };
}
