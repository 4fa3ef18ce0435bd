import type { Knex } from 'knex';
import { DedupeIdempotencyModel } from '../models/dedupe-idempotency';
import {
  MATCH_CONFIDENCE,
  MATCH_TYPES,
  matchKeys,
  type DedupeRecord,
  type MatchKeys,
  type MatchType,
  type RecordType,
} from '../../lib/dedupe';
import {
  fuzzyKeys,
  mayMatch,
  namesDiffer,
  scoreBusiness,
  scoreContact,
  type FuzzyMatchType,
  type FuzzyScore,
} from '../../lib/dedupe-fuzzy';
import { CanonicalRecordModel } from '../models/canonical-record';
import type { ResourceModel } from '../models/resource';
import { tenantSql } from '../models/tenant';
import { relate, resourceOfRecord, unrelate, type ResourceRef } from './resources';
import { conflict, DomainError, invalid } from '../../lib/errors';
import { newestFirstPage } from './paging';

export interface CheckRequest {
  clientId: string;
  recordType: RecordType;
  /** Checked in order: with addToCanonical, a later record matches the canonical record an earlier one created. */
  records: DedupeRecord[];
  addToCanonical: boolean;
  /** Set: matching (and new records) are scoped to this campaign. Null: matches across all of the client's records. */
  campaignId: string | null;
  /** Minimum confidence for a match to count (lib/dedupe.ts MATCH_CONFIDENCE). */
  threshold: number;
  /** The canonical record's source_worker: `api` for the HTTP endpoints, the job type for activities. */
  sourceWorker: string;
  /**
   * Also fuzzy match types after the exact ones (issue 41): a business by a similar name
   * corroborated by city, phone or website; a person by name variants within one company domain.
   * Off by default: without it the answers are the exact-only ones.
   */
  fuzzy?: boolean;
}

/** The fields that agreed (and disagreed) in a fuzzy match, with their scores. */
export type MatchExplanation = FuzzyScore['fields'];

export type CheckResult =
  | {
      isDuplicate: true;
      matchedId: number;
      matchType: MatchType | FuzzyMatchType;
      confidence: number;
      explanation?: MatchExplanation;
    }
  | { isDuplicate: false; canonicalId: number | null; added: boolean };

export interface CanonicalFilter {
  recordType?: RecordType;
  campaignId?: string;
  limit: number;
  offset: number;
}

const notFound = (id: number) => new DomainError('not_found', `canonical record ${id} not found`, 'not_found');

/** Idempotency cache entries live this long (spec §8). */
const IDEMPOTENCY_WINDOW = "interval '5 minutes'";
/** A fuzzy business check reads this many of each blocking key's newest records (from the index alone)... */
const KEY_READ = 50;
/** ...and fetches and scores this many of the best-ranked a record (fuzzyCandidates). */
const BUSINESS_CANDIDATES = 12;

const KEY_COLUMN: Record<MatchType, string> = {
  maps_place_id: 'maps_place_id',
  email: 'key_email',
  proflink_url: 'key_proflink',
  phone: 'key_phone',
  company_domain: 'key_domain',
  exact_hash: 'record_hash',
};
const DISPLAY_FIELDS = [
  'email',
  'full_name',
  'company_name',
  'company_domain',
  'maps_place_id',
  'proflink_url',
  'phone',
  'city',
  'country',
] as const;

type KeyRow = { id: string } & Record<string, string | null>;

/** A record a fuzzy match may find: a stored canonical record (its id) or an earlier record of the batch (its position). */
interface Candidate {
  id: number;
  data: DedupeRecord;
}

/** The fuzzy match of a record type: its match type and its scorer. */
const fuzzyMatcher = (type: FuzzyMatchType, score: (r: DedupeRecord, c: DedupeRecord) => FuzzyScore | null) => ({
  type,
  /** The candidate with the highest confidence at or above the threshold (the oldest of equals). */
  best(
    record: DedupeRecord,
    candidates: Candidate[],
    threshold: number,
  ): { id: number; score: FuzzyScore } | undefined {
    let best: { id: number; score: FuzzyScore } | undefined;
    for (const c of candidates) {
      const s = score(record, c.data);
      if (s && s.confidence > 0 && s.confidence >= threshold && (!best || s.confidence > best.score.confidence))
        best = { id: c.id, score: s };
    }
    return best;
  },
});

/** Which record types match fuzzily, and how: businesses by name, people by name within a company domain. */
const FUZZY_BY_TYPE: Partial<Record<RecordType, ReturnType<typeof fuzzyMatcher>>> = {
  business: fuzzyMatcher('fuzzy_business', scoreBusiness),
  contact: fuzzyMatcher('fuzzy_contact', scoreContact),
};

/** Match keys -> the canonical id (or pending batch position) holding them; first match wins. */
class KeyIndex<T> {
  private readonly maps = new Map<MatchType, Map<string, T>>(MATCH_TYPES.map((t) => [t, new Map()]));

  add(value: T, keys: MatchKeys): void {
    for (const t of MATCH_TYPES) {
      const k = keys[t];
      const map = this.maps.get(t);
      // The oldest record wins when several hold the key (rows arrive ordered by id).
      if (k !== null && map && !map.has(k)) map.set(k, value);
    }
  }

  /** The first match type (in MATCH_TYPES order) whose key is held, and that `accept` (when given) lets count. */
  find(
    keys: MatchKeys,
    threshold: number,
    accept?: (value: T, type: MatchType) => boolean,
  ): { value: T; matchType: MatchType } | undefined {
    for (const t of MATCH_TYPES) {
      const k = keys[t];
      if (k === null || MATCH_CONFIDENCE[t] < threshold) continue;
      const hit = this.maps.get(t)?.get(k);
      if (hit !== undefined && (!accept || accept(hit, t))) return { value: hit, matchType: t };
    }
    return undefined;
  }
}

const rowKeys = (row: KeyRow): MatchKeys =>
  Object.fromEntries(MATCH_TYPES.map((t) => [t, row[KEY_COLUMN[t]] ?? null])) as MatchKeys;

/**
 * The de-duplication store (spec §4.6). A batch costs one lookup and one multi-row insert; the
 * unique indexes of the migration make concurrent checks of the same new record insert it once:
 * the loser's INSERT ... ON CONFLICT DO NOTHING skips it and a fresh lookup reports the winner's
 * record as the match.
 */
export class DedupeRepository {
  constructor(private readonly db: Knex) {}

  async check(req: CheckRequest, db: Knex = this.db): Promise<CheckResult[]> {
    const keys = req.records.map(matchKeys);
    const stored = new KeyIndex<number>();
    const storedNames = new Map<number, string | null>();
    for (const row of await this.lookup(db, req, keys)) {
      stored.add(Number(row.id), rowKeys(row));
      if (!storedNames.has(Number(row.id))) storedNames.set(Number(row.id), row.company_name ?? null);
    }

    const fuzzy = req.fuzzy === true ? FUZZY_BY_TYPE[req.recordType] : undefined;
    // With fuzzy matching, a shared phone or domain is a match of businesses only when their names
    // do not clearly differ: a hotel's restaurants share its switchboard, a group's brands its site.
    // Such a record, when new, is stored without that key (it does not identify it), so the key's
    // unique index does not refuse it and a later record is not matched to it by that key alone.
    const refused = new Map<number, Set<MatchType>>();
    const sharedKeyOk = (i: number) => (type: MatchType, otherName: string | null | undefined) => {
      const ok = !(
        fuzzy?.type === 'fuzzy_business' &&
        (type === 'phone' || type === 'company_domain') &&
        namesDiffer(req.records[i]?.company_name, otherName)
      );
      if (!ok) refused.set(i, (refused.get(i) ?? new Set<MatchType>()).add(type));
      return ok;
    };
    const storedHit = (i: number) => {
      const ok = sharedKeyOk(i);
      return stored.find(keys[i] as MatchKeys, req.threshold, (id, type) => ok(type, storedNames.get(id)));
    };
    const candidates = fuzzy
      ? await this.fuzzyCandidates(
          db,
          req,
          keys.map((_, i) => (storedHit(i) ? null : i)).filter((i): i is number => i !== null),
        )
      : new Map<number, Candidate[]>();

    type Slot =
      | CheckResult
      | {
          dupOfPending: number;
          matchType: MatchType | FuzzyMatchType;
          confidence: number;
          explanation?: MatchExplanation;
        }
      | undefined;
    const results: Slot[] = [];
    const pendingIndex = new KeyIndex<number>();
    let pending: number[] = [];
    keys.forEach((k, i) => {
      const record = req.records[i] ?? {};
      const ok = sharedKeyOk(i);
      const hit = storedHit(i);
      const earlier =
        hit || !req.addToCanonical
          ? undefined
          : pendingIndex.find(k, req.threshold, (j, type) => ok(type, req.records[j]?.company_name));
      // Fuzzy after every exact type: the stored candidates, then the batch's earlier new records.
      const similar = hit || earlier || !fuzzy ? undefined : fuzzy.best(record, candidates.get(i) ?? [], req.threshold);
      const similarPending =
        hit || earlier || similar || !fuzzy || !req.addToCanonical
          ? undefined
          : fuzzy.best(
              record,
              pending.flatMap((j) =>
                mayMatch(record, req.records[j] ?? {}) ? [{ id: j, data: req.records[j] ?? {} }] : [],
              ),
              req.threshold,
            );
      if (hit) {
        results[i] = {
          isDuplicate: true,
          matchedId: hit.value,
          matchType: hit.matchType,
          confidence: MATCH_CONFIDENCE[hit.matchType],
        };
      } else if (similar) {
        results[i] = {
          isDuplicate: true,
          matchedId: similar.id,
          matchType: fuzzy?.type as FuzzyMatchType,
          confidence: similar.score.confidence,
          explanation: similar.score.fields,
        };
      } else if (!req.addToCanonical) {
        results[i] = { isDuplicate: false, canonicalId: null, added: false };
      } else if (earlier) {
        results[i] = {
          dupOfPending: earlier.value,
          matchType: earlier.matchType,
          confidence: MATCH_CONFIDENCE[earlier.matchType],
        };
      } else if (similarPending) {
        results[i] = {
          dupOfPending: similarPending.id,
          matchType: fuzzy?.type as FuzzyMatchType,
          confidence: similarPending.score.confidence,
          explanation: similarPending.score.fields,
        };
      } else {
        const own = { ...k };
        for (const t of refused.get(i) ?? []) own[t] = null;
        keys[i] = own;
        pending.push(i);
        pendingIndex.add(i, own);
      }
    });

    // A pending record that another transaction inserted first (its insert skipped on a unique
    // index) is looked up again and reported as a duplicate of that record. A conflicting row that
    // disappears again (rolled back, deleted) leaves the record to insert on the next attempt.
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt === 3) throw new Error('canonical record insert kept conflicting');
      const inserted = await this.insert(db, req, pending, keys);
      const lost = pending.filter((i) => !inserted.has(keys[i]?.exact_hash as string));
      for (const i of pending) {
        const id = inserted.get(keys[i]?.exact_hash as string);
        if (id !== undefined) results[i] = { isDuplicate: false, canonicalId: id, added: true };
      }
      if (lost.length === 0) break;
      const fresh = new KeyIndex<number>();
      const freshNames = new Map<number, string | null>();
      for (const row of await this.lookup(
        db,
        req,
        lost.map((i) => keys[i] as MatchKeys),
      )) {
        fresh.add(Number(row.id), rowKeys(row));
        if (!freshNames.has(Number(row.id))) freshNames.set(Number(row.id), row.company_name ?? null);
      }
      pending = [];
      for (const i of lost) {
        const hit = fresh.find(keys[i] as MatchKeys, req.threshold, (id, type) =>
          sharedKeyOk(i)(type, freshNames.get(id)),
        );
        if (hit)
          results[i] = {
            isDuplicate: true,
            matchedId: hit.value,
            matchType: hit.matchType,
            confidence: MATCH_CONFIDENCE[hit.matchType],
          };
        else pending.push(i);
      }
    }

    return results.map((r) => {
      if (r && 'dupOfPending' in r) {
        const target = results[r.dupOfPending] as CheckResult;
        const matchedId = target.isDuplicate ? target.matchedId : (target.canonicalId as number);
        const { dupOfPending: _, ...match } = r;
        return { isDuplicate: true, matchedId, ...match };
      }
      return r as CheckResult;
    });
  }

  /**
   * Runs `compute` once per (client, idempotency key) within 5 minutes: a repeat within the window
   * gets the stored response. An advisory lock on the key makes a concurrent repeat wait for the
   * first and then read its response. Without a key, `compute` simply runs.
   *
   * The response is stored as its JSON text and parsed back, so a replay keeps the original key
   * order and serialises to the same bytes (jsonb would reorder keys). Keys of `T` must not be
   * integer-like: JavaScript objects put those first.
   */
  async idempotent<T>(clientId: string, key: string | undefined, compute: (db: Knex) => Promise<T>): Promise<T> {
    if (key === undefined) return compute(this.db);
    return this.db.transaction(async (trx) => {
      await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`dedupe/${clientId}/${key}`]);
      const cached = await DedupeIdempotencyModel.forClient<DedupeIdempotencyModel>(trx, clientId)
        .where({ idempotency_key: key })
        .where('created_at', '>', trx.raw(`now() - ${IDEMPOTENCY_WINDOW}`))
        .select('response')
        .first();
      if (cached) return JSON.parse(cached.response) as T;
      const response = await compute(trx);
      await trx.raw(
        `insert into dedupe_idempotency (client_id, idempotency_key, response, created_at) values (?, ?, ?, now())
         on conflict (client_id, idempotency_key) do update set response = excluded.response, created_at = excluded.created_at`,
        [clientId, key, JSON.stringify(response)],
      );
      await DedupeIdempotencyModel.forClient(trx, clientId)
        .where('created_at', '<', trx.raw(`now() - ${IDEMPOTENCY_WINDOW}`))
        .delete();
      return response;
    });
  }

  /** Live canonical records of the client, newest first (spec §4.6); merged ones are represented by their canonical record. */
  async listCanonical(
    clientId: string,
    filter: CanonicalFilter,
  ): Promise<{ total: number; records: CanonicalRecordModel[] }> {
    const base = CanonicalRecordModel.query(this.db).modify('forClient', clientId).whereNull('merged_into');
    if (filter.recordType) base.where('record_type', filter.recordType);
    if (filter.campaignId) base.where('campaign_id', filter.campaignId);
    const { total, rows } = await newestFirstPage(base, filter.limit, filter.offset);
    return { total, records: rows };
  }

  /**
   * Merges records into the canonical record `targetId` (issue 41): each then points to it, is
   * left out of the listing, and a match on any of its keys answers the target. Idempotent (a
   * record already merged into the target stays so). Refused: an unknown id (404), the target
   * itself or a record of another type (400), a target that is merged itself, a record merged into
   * another, or one that others are merged into (409: undo those first). One transaction, rows locked.
   */
  async merge(clientId: string, targetId: number, ids: number[]): Promise<{ merged: number[]; mergedAt: Date }> {
    return this.db.transaction(async (trx) => {
      const rows = await CanonicalRecordModel.forClient<CanonicalRecordModel>(trx, clientId)
        .whereIn('id', [targetId, ...ids])
        .forUpdate();
      const byId = new Map(rows.map((r) => [Number(r.id), r]));
      const target = byId.get(targetId);
      if (!target) throw notFound(targetId);
      const missing = ids.filter((id) => !byId.has(id));
      if (missing.length > 0) throw notFound(missing[0] as number);
      if (ids.includes(targetId)) throw invalid('a record cannot be merged into itself', 'bad_request');
      if (target.merged_into !== null)
        throw conflict(`canonical record ${targetId} is merged into ${target.merged_into}: merge into that record`);
      for (const id of ids) {
        const r = byId.get(id) as CanonicalRecordModel;
        if (r.record_type !== target.record_type)
          throw invalid(
            `canonical record ${id} is a ${r.record_type} record, ${targetId} a ${target.record_type} one`,
            'bad_request',
          );
        if (r.merged_into !== null && Number(r.merged_into) !== targetId)
          throw conflict(`canonical record ${id} is merged into ${r.merged_into}`);
      }
      const parents = await CanonicalRecordModel.forClient<CanonicalRecordModel>(trx, clientId)
        .whereIn('merged_into', ids)
        .select('merged_into')
        .first();
      if (parents)
        throw conflict(`records are merged into canonical record ${parents.merged_into}: unmerge them first`);
      const fresh = ids.filter((id) => byId.get(id)?.merged_into === null);
      const mergedAt = new Date();
      if (fresh.length > 0)
        await CanonicalRecordModel.forClient(trx, clientId)
          .whereIn('id', fresh)
          .patch({ merged_into: String(targetId), merged_at: mergedAt });
      await followInResources(
        trx,
        clientId,
        target,
        fresh.map((id) => byId.get(id) as CanonicalRecordModel),
        relate,
      );
      return { merged: [...new Set(ids)], mergedAt };
    });
  }

  /**
   * Undoes a merge into `targetId` for the given records, within `undoDays` of it: each is its own
   * canonical record again. Refused: an unknown id (404), a record not merged into the target or
   * merged longer ago than the window (409).
   */
  async unmerge(clientId: string, targetId: number, ids: number[], undoDays: number): Promise<number[]> {
    return this.db.transaction(async (trx) => {
      const rows = await CanonicalRecordModel.forClient<CanonicalRecordModel>(trx, clientId)
        .whereIn('id', [targetId, ...ids])
        .forUpdate();
      const byId = new Map(rows.map((r) => [Number(r.id), r]));
      if (!byId.has(targetId)) throw notFound(targetId);
      const windowStart = Date.now() - undoDays * 86_400_000;
      for (const id of ids) {
        const r = byId.get(id);
        if (!r) throw notFound(id);
        if (r.merged_into === null || Number(r.merged_into) !== targetId)
          throw conflict(`canonical record ${id} is not merged into ${targetId}`);
        if (r.merged_at && new Date(r.merged_at).getTime() < windowStart)
          throw conflict(
            `canonical record ${id} was merged more than ${undoDays} days ago: the merge can no longer be undone`,
          );
      }
      await CanonicalRecordModel.forClient(trx, clientId)
        .whereIn('id', ids)
        .patch({ merged_into: null, merged_at: null });
      const target = byId.get(targetId) as CanonicalRecordModel;
      await followInResources(
        trx,
        clientId,
        target,
        [...new Set(ids)].map((id) => byId.get(id) as CanonicalRecordModel),
        unrelate,
      );
      return [...new Set(ids)];
    });
  }

  /** Soft-deletes a canonical record: it no longer matches and is omitted from the listing. */
  async softDelete(clientId: string, id: number): Promise<boolean> {
    const n = await CanonicalRecordModel.query(this.db)
      .modify('forClient', clientId)
      .where('id', id)
      .patch({ deleted_at: new Date() });
    return n > 0;
  }

  /**
   * Live records of the scope holding any of the keys, oldest first; a record comes back once per
   * key it holds. One statement, one unique-index probe per (key type, key): the keys arrive as
   * (type, value) pairs and each pair runs only the arm of its type.
   *
   * Why this shape (EXPLAIN ANALYZE at 1M records): the key conditions ORed into one scan made the
   * planner weigh every index for every arm of a BitmapOr, and planning a 100-record batch took
   * ~5 ms, more than running it. A UNION ALL of one `key = any(array)` scan per type plans fast,
   * but once a batch carries several keys per record its estimated cost passes the parallel
   * threshold and a Parallel Append starts two workers, ~10 ms on its own. The unnest outer side
   * of this nested loop has no parallel path, so the plan stays serial.
   */
  private async lookup(db: Knex, req: CheckRequest, keys: MatchKeys[]): Promise<KeyRow[]> {
    const types: MatchType[] = [];
    const values: string[] = [];
    const used = new Set<MatchType>();
    for (const t of MATCH_TYPES) {
      for (const v of new Set(keys.map((k) => k[t]).filter((x): x is string => x !== null))) {
        types.push(t);
        values.push(v);
        used.add(t);
      }
    }
    if (values.length === 0) return [];
    const scope = req.campaignId !== null ? 'and campaign_id = ?' : '';
    const columns = [...MATCH_TYPES.map((t) => KEY_COLUMN[t]), 'company_name'].join(', ');
    const arms: string[] = [];
    const bindings: Knex.RawBinding[] = [types, values];
    for (const t of used) {
      // t is one of MATCH_TYPES (a constant), never request input.
      // A merged record stands for its canonical record.
      arms.push(
        `select coalesce(merged_into, id) as id, ${columns} from {canonical_records}
         where k.type = '${t}' and record_type = ? and deleted_at is null ${scope} and ${KEY_COLUMN[t]} = k.value`,
      );
      bindings.push(req.recordType, ...(req.campaignId !== null ? [req.campaignId] : []));
    }
    const { rows } = (await tenantSql(db, req.clientId).raw(
      `select c.* from unnest(?::text[], ?::text[]) as k(type, value)
       cross join lateral (${arms.join(' union all ')}) c
       order by c.id`,
      bindings,
    )) as { rows: KeyRow[] };
    return rows;
  }

  /**
   * The live records of the scope a fuzzy match may find for each record at `positions`, best first:
   * - businesses sharing its blocking keys (lib/dedupe-fuzzy.ts fuzzyKeys: a name word's start in
   *   the same town, the same house and street). Each key's newest KEY_READ entries are read from
   *   canonical_blocks' index alone; the candidates are ranked by the keys they share, a key counting
   *   the more the fewer records hold it (one shared rare key outranks several common ones, as in
   *   TF-IDF blocking), and the best BUSINESS_CANDIDATES are fetched and scored.
   * - people with the same company domain and last name (the oldest 10).
   */
  private async fuzzyCandidates(db: Knex, req: CheckRequest, positions: number[]): Promise<Map<number, Candidate[]>> {
    const people = req.recordType === 'contact';
    const wanted = positions.flatMap((i) => {
      const keys = fuzzyKeys(req.records[i] ?? {});
      if (people) return keys.person ? [{ i, key: keys.person }] : [];
      return keys.blocks.map((key) => ({ i, key }));
    });
    const out = new Map<number, Candidate[]>();
    if (wanted.length === 0) return out;
    const campaign = req.campaignId !== null ? [req.campaignId] : [];
    const scope = req.campaignId !== null ? 'and campaign_id = ?' : '';
    const keys = [wanted.map((w) => w.i), wanted.map((w) => w.key), req.recordType];
    // `offset 0` plans the key's lookup on its own: under the LIMIT the planner would walk the
    // client's records oldest first (the listing index) hoping for an early match of a rare key.
    const { rows } = (await tenantSql(db, req.clientId).raw(
      people
        ? `select k.i, c.id, c.data from unnest(?::int[], ?::text[]) as k(i, key)
           cross join lateral (
             select coalesce(merged_into, id) as id, data from (
               select id, merged_into, data from {canonical_records}
               where record_type = ? and deleted_at is null ${scope} and key_person = k.key
               offset 0
             ) m
             order by id limit 10
           ) c
           order by k.i`
        : `with hits as (
             select k.i, b.record_id, b.holders
             from unnest(?::int[], ?::text[]) as k(i, key)
             cross join lateral (
               select record_id, count(*) over () as holders from (
                 select record_id from {canonical_blocks}
                 where record_type = ? and key = k.key ${scope}
                 order by record_id desc limit ${KEY_READ}
               ) newest
             ) b
           ), ranked as (
             select i, record_id,
                    row_number() over (partition by i order by sum(1::float8 / holders) desc, record_id desc) as rank
             from hits group by i, record_id
           )
           select r.i, c.id, c.data
           from ranked r
           cross join lateral (
             select coalesce(merged_into, id) as id, data from {canonical_records}
             where id = r.record_id and deleted_at is null
           ) c
           where r.rank <= ${BUSINESS_CANDIDATES}
           order by r.i, r.rank`,
      [...keys, ...campaign],
    )) as { rows: { i: number; id: string; data: DedupeRecord }[] };
    for (const r of rows) {
      const list = out.get(r.i) ?? [];
      // A record found by several of its keys is one candidate.
      if (!list.some((c) => c.id === Number(r.id))) list.push({ id: Number(r.id), data: r.data });
      out.set(r.i, list);
    }
    return out;
  }

  /** Inserts the records at `positions`; returns record_hash -> id of those actually inserted. */
  private async insert(
    db: Knex,
    req: CheckRequest,
    positions: number[],
    keys: MatchKeys[],
  ): Promise<Map<string, number>> {
    const rows = positions.map((i) => {
      const record = req.records[i] ?? {};
      const k = keys[i] as MatchKeys;
      const fuzzyKey = fuzzyKeys(record);
      const display = Object.fromEntries(DISPLAY_FIELDS.map((f) => [f, record[f]?.trim() || null]));
      return {
        ...display,
        company_domain: display.company_domain ?? k.company_domain,
        record_hash: k.exact_hash,
        key_email: k.email,
        key_proflink: k.proflink_url,
        key_phone: k.phone,
        key_domain: k.company_domain,
        // Written whether or not this check is fuzzy, so that a later fuzzy check finds the record.
        key_blocks: fuzzyKey.blocks.length > 0 ? fuzzyKey.blocks : null,
        key_person: fuzzyKey.person,
        data: record,
      };
    });
    const cols = [
      ...DISPLAY_FIELDS,
      'record_hash',
      'key_email',
      'key_proflink',
      'key_phone',
      'key_domain',
      'key_blocks',
      'key_person',
    ];
    // Rows hold several keys, so two concurrent batches could each insert a key the other then
    // waits on (a deadlock). A transaction-level lock per (client, record type), taken in the same
    // statement before its first row is inserted, queues such inserts instead.
    const { rows: inserted } = (await db.raw(
      `with scope_lock as materialized (select pg_advisory_xact_lock(hashtextextended(?, 0)))
       insert into canonical_records (client_id, record_type, campaign_id, source_worker, ${cols.join(', ')}, data)
       select ?, ?, ?, ?, ${cols.map((c) => `x.${c}`).join(', ')}, x.data
       from scope_lock, jsonb_to_recordset(?::jsonb) as x(${cols.map((c) => `${c} ${c === 'key_blocks' ? 'text[]' : 'text'}`).join(', ')}, data jsonb)
       on conflict do nothing
       returning id, record_hash`,
      [
        `dedupe/${req.clientId}/${req.recordType}`,
        req.clientId,
        req.recordType,
        req.campaignId,
        req.sourceWorker,
        JSON.stringify(rows),
      ],
    )) as { rows: { id: string; record_hash: string }[] };
    return new Map(inserted.map((r) => [r.record_hash, Number(r.id)]));
  }
}

/**
 * IDAP follows a merge (issue 41): the resource the target record stands for is related to each
 * merged record's (lib/idap.ts resourceKeyOfRecord; both ways, so each one's `related` shows the
 * other), and an unmerge takes that relation away again. A record whose keys no crawl or import
 * wrote as a resource has none, and is left out.
 */
async function followInResources(
  trx: Knex.Transaction,
  clientId: string,
  target: CanonicalRecordModel,
  records: CanonicalRecordModel[],
  change: typeof relate,
): Promise<void> {
  const resourceOf = (r: CanonicalRecordModel) =>
    resourceOfRecord(trx, clientId, r.record_type, r.data as DedupeRecord);
  const ref = (r: ResourceModel): ResourceRef => ({ clientId, type: r.resource_type, id: r.id });
  const mine = await resourceOf(target);
  if (!mine) return;
  for (const record of records) {
    const theirs = await resourceOf(record);
    if (theirs && theirs.id !== mine.id) await change(trx, ref(mine), ref(theirs));
  }
}
