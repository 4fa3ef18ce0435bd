import type { estypes } from '@elastic/elasticsearch';
import { indexName, type SearchClient } from './client';

/**
 * The lead index (spec §2.10, §4.7): one document per business resource of a client, written by the
 * worker's indexLeads activity from Postgres (the outbox), read by the API's lead search. One index
 * for all clients; every query filters on client_id.
 */

export interface LeadDocument {
  client_id: string;
  /** The business resource id; also the document id (`doc_id` of a hit). */
  resource_id: string;
  idap_ref: string;
  name: string | null;
  description: string | null;
  category: string | null;
  website: string | null;
  domain: string | null;
  email: string | null;
  emails: string[];
  phone: string | null;
  country: string | null;
  rating: number | null;
  reviews: number | null;
  email_verified: boolean;
  icp_score: number;
  job_id: string | null;
  job_type: string | null;
  source: string | null;
  campaign_ids: string[];
  /** The business's IDAP flags; `rejected` leads are left out of search and aggregations. */
  flags: string[];
  created_at: string;
  indexed_at: string;
  /** The site's Markdown compendium, searchable but not returned (excluded from _source). */
  compendium: string | null;
}

/** A client's ideal-customer profile; empty lists mean "no preference". */
export interface IcpProfile {
  industries: string[];
  countries: string[];
}

export const LEAD_INDEX = 'leads';
export const leadIndex = (prefix: string) => indexName(prefix, LEAD_INDEX);

const MAPPINGS: estypes.MappingTypeMapping = {
  dynamic: 'strict',
  _source: { excludes: ['compendium'] },
  properties: {
    client_id: { type: 'keyword' },
    resource_id: { type: 'keyword' },
    idap_ref: { type: 'keyword' },
    name: { type: 'text', fields: { raw: { type: 'keyword', ignore_above: 512 } } },
    description: { type: 'text' },
    // Facets show the category as written; the industry filter compares lower-cased.
    category: {
      type: 'keyword',
      ignore_above: 256,
      fields: { lc: { type: 'keyword', normalizer: 'lowercase', ignore_above: 256 } },
    },
    website: { type: 'keyword', ignore_above: 2048 },
    domain: { type: 'keyword' },
    email: { type: 'keyword' },
    emails: { type: 'keyword' },
    phone: { type: 'keyword' },
    country: { type: 'keyword' },
    rating: { type: 'float' },
    reviews: { type: 'integer' },
    email_verified: { type: 'boolean' },
    icp_score: { type: 'integer' },
    job_id: { type: 'keyword' },
    job_type: { type: 'keyword' },
    source: { type: 'keyword' },
    campaign_ids: { type: 'keyword' },
    flags: { type: 'keyword' },
    created_at: { type: 'date' },
    indexed_at: { type: 'date' },
    compendium: { type: 'text' },
  },
};

const SETTINGS: estypes.IndicesIndexSettings = {
  number_of_replicas: 0,
  analysis: { normalizer: { lowercase: { type: 'custom', filter: ['lowercase'] } } },
};

/** Creates the lead index with its mapping if it does not exist (safe to call concurrently). */
export async function ensureLeadIndex(es: SearchClient, prefix: string): Promise<void> {
  const index = leadIndex(prefix);
  if (await es.indices.exists({ index })) {
    // An index made by an older release lacks fields added since (adding fields is allowed).
    await es.indices.putMapping({ index, properties: MAPPINGS.properties });
    return;
  }
  try {
    await es.indices.create({ index, mappings: MAPPINGS, settings: SETTINGS });
  } catch (err) {
    if ((err as { body?: { error?: { type?: string } } }).body?.error?.type !== 'resource_already_exists_exception')
      throw err;
  }
}

/**
 * Writes documents and removes deleted businesses in one bulk request; resolves when they are
 * searchable (refresh wait_for), so a job's leads can be found once its indexing step returns.
 * Throws if any item failed, so the caller keeps those outbox rows for the retry.
 */
export async function writeLeadDocuments(
  es: SearchClient,
  prefix: string,
  docs: LeadDocument[],
  deletedIds: string[],
): Promise<void> {
  if (docs.length === 0 && deletedIds.length === 0) return;
  const index = leadIndex(prefix);
  const operations: estypes.BulkRequest['operations'] = [];
  for (const doc of docs) operations.push({ index: { _index: index, _id: doc.resource_id } }, doc);
  for (const id of deletedIds) operations.push({ delete: { _index: index, _id: id } });
  const res = await es.bulk({ operations, refresh: 'wait_for' });
  if (!res.errors) return;
  const failed = res.items
    .map((item) => Object.values(item)[0])
    .filter((r): r is estypes.BulkResponseItem => !!r && !!r.error && !(r.status === 404 && r.result === 'not_found'));
  if (failed.length)
    throw new Error(
      `elasticsearch refused ${failed.length} lead documents: ${failed[0]?.error?.reason ?? 'unknown reason'}`,
    );
}

// ---- icp_score ------------------------------------------------------------------------------

/**
 * icp_score, 0-100, from the lead's own data and the client's ICP (docs/api.md "Lead search" explains it):
 * completeness 40 (name 5, website 5, e-mail 10, phone 10, country 5, description 5), a verified
 * e-mail 20, reputation 20 (rating/5 x 12, plus up to 8 for the review count on a log scale) and
 * ICP fit 20 (industry 15: the category or description names one of the ICP industries; country 5).
 * Without an ICP the fit part is 0, so scores stay comparable when a profile is added later.
 */
export function icpScore(
  lead: Pick<
    LeadDocument,
    | 'name'
    | 'website'
    | 'email'
    | 'phone'
    | 'country'
    | 'description'
    | 'email_verified'
    | 'rating'
    | 'reviews'
    | 'category'
  >,
  icp: IcpProfile,
): number {
  let score = 0;
  if (lead.name) score += 5;
  if (lead.website) score += 5;
  if (lead.email) score += 10;
  if (lead.phone) score += 10;
  if (lead.country) score += 5;
  if (lead.description) score += 5;
  if (lead.email_verified) score += 20;
  if (lead.rating !== null && lead.rating > 0) score += Math.round((Math.min(5, lead.rating) / 5) * 12);
  if (lead.reviews !== null && lead.reviews > 0) score += Math.min(8, Math.round(Math.log10(lead.reviews + 1) * 4));
  const text = `${lead.category ?? ''} ${lead.description ?? ''}`.toLowerCase();
  if (icp.industries.some((i) => i.trim() && text.includes(i.trim().toLowerCase()))) score += 15;
  if (lead.country && icp.countries.some((c) => c.toUpperCase() === lead.country?.toUpperCase())) score += 5;
  return Math.max(0, Math.min(100, score));
}

// ---- queries --------------------------------------------------------------------------------

export const LEAD_SORTS = ['_score', 'icp_score', 'indexed_at', 'rating', 'reviews', 'name'] as const;
export type LeadSort = (typeof LEAD_SORTS)[number];

/**
 * Elasticsearch's index.max_result_window: it refuses a search whose from + size is beyond it, so
 * page numbers reach this deep and a cursor (search_after) goes further.
 */
export const MAX_RESULT_WINDOW = 10_000;

/** A sort value of a hit, as Elasticsearch returns it and takes it back in search_after. */
export type LeadSortValue = number | string | null;

/** Where a cursor continues: the sort it was made for and the sort values of the last hit served. */
export interface LeadCursor {
  sortBy: LeadSort;
  after: LeadSortValue[];
}

export interface LeadSearchParams {
  clientId: string;
  query?: string;
  emailVerified?: boolean;
  minIcpScore?: number;
  industry?: string;
  /** Ignored when `after` is given (a cursor continues after a hit, not at a page). */
  page: number;
  perPage: number;
  sortBy: LeadSort;
  /** The sort values of the last hit already served (search_after). */
  after?: LeadSortValue[];
}

const HIT_FIELDS = [
  'idap_ref',
  'name',
  'description',
  'category',
  'website',
  'email',
  'phone',
  'country',
  'rating',
  'reviews',
  'email_verified',
  'icp_score',
  'job_id',
  'job_type',
  'indexed_at',
] as const;

/** A search hit (spec §2.10): the document's shown fields, its id and its relevance. */
export type LeadHit = Pick<LeadDocument, (typeof HIT_FIELDS)[number]> & { doc_id: string; score: number };

export interface LeadSearchResult {
  total: number;
  hits: LeadHit[];
  facets: { categories: { name: string; count: number }[] };
  /** The cursor after the last hit, when more hits follow; null at the end. */
  nextCursor: string | null;
}

const isIndexMissing = (err: unknown) =>
  (err as { body?: { error?: { type?: string } } }).body?.error?.type === 'index_not_found_exception';

function clientFilter(
  clientId: string,
  extra: estypes.QueryDslQueryContainer[] = [],
): estypes.QueryDslQueryContainer[] {
  return [{ term: { client_id: clientId } }, ...extra];
}

// A lead the client rejected (IDAP flag, §2.9) is not a lead any more, as IDAP lists hide it too.
const NOT_REJECTED: estypes.QueryDslQueryContainer[] = [{ term: { flags: 'rejected' } }];

const HIT_SOURCE = ['resource_id', ...HIT_FIELDS];

/** The lead search request body; exported so the benchmark can send the same query straight to Elasticsearch. */
export function leadSearchRequest(prefix: string, p: LeadSearchParams): estypes.SearchRequest {
  const filters: estypes.QueryDslQueryContainer[] = [];
  if (p.emailVerified !== undefined) filters.push({ term: { email_verified: p.emailVerified } });
  if (p.minIcpScore !== undefined) filters.push({ range: { icp_score: { gte: p.minIcpScore } } });
  if (p.industry) filters.push({ term: { 'category.lc': p.industry.toLowerCase() } });
  const must: estypes.QueryDslQueryContainer[] = p.query
    ? // Every word must appear, in any of the fields ("artisan bakery" finds artisan bakeries, not
      // every bakery and every artisan): what people expect of a lead search, and far fewer matches to score and facet.
      [
        {
          multi_match: {
            query: p.query,
            type: 'cross_fields',
            operator: 'and',
            fields: ['name^3', 'description^1.5', 'compendium'],
          },
        },
      ]
    : [{ match_all: {} }];
  const after = p.after !== undefined;
  return {
    index: leadIndex(prefix),
    query: { bool: { filter: clientFilter(p.clientId, filters), must, must_not: NOT_REJECTED } },
    sort: leadSort(p.sortBy),
    // Only what a hit shows: a lead's e-mail list and campaign ids stay in the index.
    _source: { includes: HIT_SOURCE },
    track_scores: true,
    track_total_hits: true,
    // A cursor page asks for one hit more than it serves: that one says whether a next page exists.
    ...(after ? { search_after: p.after, size: p.perPage + 1 } : { from: (p.page - 1) * p.perPage, size: p.perPage }),
    aggs: { categories: { terms: { field: 'category', size: 20 } } },
  };
}

/**
 * The sort of each sort_by, ending in the document id so that the order is total: search_after
 * then continues exactly after the last hit served, ties included.
 */
function leadSort(sortBy: LeadSort): estypes.SortCombinations[] {
  const tie: estypes.SortCombinations = { resource_id: { order: 'asc' } };
  if (sortBy === '_score') return [{ _score: { order: 'desc' } }, { indexed_at: { order: 'desc' } }, tie];
  if (sortBy === 'name') return [{ 'name.raw': { order: 'asc', missing: '_last' } }, tie];
  return [{ [sortBy]: { order: 'desc', missing: '_last' } }, tie];
}

/**
 * What each sort_by's search_after values are: their count and kinds, checked when a cursor is
 * read. A lead without a name sorts with null; without a rating with "-Infinity" (Elasticsearch
 * writes a float's infinity as a string, and takes it back as one).
 */
const SORT_VALUE_KINDS: Record<LeadSort, ('number' | 'string' | 'string?')[]> = {
  _score: ['number', 'number', 'string'],
  name: ['string?', 'string'],
  icp_score: ['number', 'string'],
  indexed_at: ['number', 'string'],
  rating: ['number', 'string'],
  reviews: ['number', 'string'],
};

/** The opaque cursor of a page: base64url of the sort and the last hit's sort values. */
export function encodeLeadCursor(cursor: LeadCursor): string {
  return Buffer.from(JSON.stringify({ s: cursor.sortBy, a: cursor.after }), 'utf8').toString('base64url');
}

/**
 * Reads a cursor back; undefined when it is not one this API made (bad encoding, unknown sort,
 * values of the wrong count or kind), so a tampered cursor never reaches Elasticsearch.
 */
export function decodeLeadCursor(text: string): LeadCursor | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  const { s, a } = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as { s?: unknown; a?: unknown };
  if (typeof s !== 'string' || !(LEAD_SORTS as readonly string[]).includes(s) || !Array.isArray(a)) return undefined;
  const sortBy = s as LeadSort;
  const kinds = SORT_VALUE_KINDS[sortBy];
  if (a.length !== kinds.length) return undefined;
  const ok = kinds.every((kind, i) => {
    const v: unknown = a[i];
    // An integer beyond 2^53 came back from JSON rounded, and would continue at the wrong place.
    if (kind === 'number')
      return typeof v === 'number'
        ? Number.isFinite(v) && (!Number.isInteger(v) || Number.isSafeInteger(v))
        : v === '-Infinity' || v === 'Infinity';
    return typeof v === 'string' ? v.length <= 1024 : kind === 'string?' && v === null;
  });
  return ok ? { sortBy, after: a as LeadSortValue[] } : undefined;
}

export async function searchLeads(es: SearchClient, prefix: string, p: LeadSearchParams): Promise<LeadSearchResult> {
  let res: estypes.SearchResponse<LeadDocument>;
  try {
    res = await es.search<LeadDocument>(leadSearchRequest(prefix, p));
  } catch (err) {
    // No lead was ever indexed: an empty result, not an error.
    if (isIndexMissing(err)) return { total: 0, hits: [], facets: { categories: [] }, nextCursor: null };
    throw err;
  }
  const total = typeof res.hits.total === 'number' ? res.hits.total : (res.hits.total?.value ?? 0);
  const served = res.hits.hits.slice(0, p.perPage);
  const hits = served.map((h): LeadHit => {
    const d = h._source as LeadDocument;
    const shown = Object.fromEntries(HIT_FIELDS.map((f) => [f, d[f] ?? null])) as Pick<
      LeadDocument,
      (typeof HIT_FIELDS)[number]
    >;
    return { doc_id: d.resource_id, score: h._score ?? 0, ...shown };
  });
  // A page knows what follows from the total it was counted with; a cursor page from its extra hit.
  const more =
    p.after !== undefined ? res.hits.hits.length > p.perPage : (p.page - 1) * p.perPage + served.length < total;
  const last = served.at(-1)?.sort as LeadSortValue[] | undefined;
  const nextCursor = more && last ? encodeLeadCursor({ sortBy: p.sortBy, after: last }) : null;
  return { total, hits, facets: { categories: buckets(res.aggregations?.categories) }, nextCursor };
}

export interface LeadAggregations {
  total_documents: number;
  by_job_type: { name: string; count: number }[];
  by_category: { name: string; count: number }[];
  by_country: { name: string; count: number }[];
  avg_rating: number | null;
  total_reviews: number;
  verified_emails_count: number;
  indexed_over_time: { date: string; count: number }[];
}

export async function leadAggregations(
  es: SearchClient,
  prefix: string,
  clientId: string,
  jobType?: string,
): Promise<LeadAggregations> {
  let res: estypes.SearchResponse;
  try {
    res = await es.search({
      index: leadIndex(prefix),
      size: 0,
      track_total_hits: true,
      query: {
        bool: {
          filter: clientFilter(clientId, jobType ? [{ term: { job_type: jobType } }] : []),
          must_not: NOT_REJECTED,
        },
      },
      aggs: {
        by_job_type: { terms: { field: 'job_type', size: 20 } },
        by_category: { terms: { field: 'category', size: 50 } },
        by_country: { terms: { field: 'country', size: 50 } },
        avg_rating: { avg: { field: 'rating' } },
        total_reviews: { sum: { field: 'reviews' } },
        verified_emails: { filter: { term: { email_verified: true } } },
        indexed_over_time: {
          date_histogram: { field: 'indexed_at', calendar_interval: 'day', format: 'yyyy-MM-dd', min_doc_count: 1 },
        },
      },
    });
  } catch (err) {
    if (isIndexMissing(err))
      return {
        total_documents: 0,
        by_job_type: [],
        by_category: [],
        by_country: [],
        avg_rating: null,
        total_reviews: 0,
        verified_emails_count: 0,
        indexed_over_time: [],
      };
    throw err;
  }
  const aggs = (res.aggregations ?? {}) as Record<
    string,
    {
      value?: number | null;
      doc_count?: number;
      buckets?: { key: string | number; key_as_string?: string; doc_count: number }[];
    }
  >;
  const total = typeof res.hits.total === 'number' ? res.hits.total : (res.hits.total?.value ?? 0);
  return {
    total_documents: total,
    by_job_type: buckets(aggs.by_job_type),
    by_category: buckets(aggs.by_category),
    by_country: buckets(aggs.by_country),
    avg_rating: aggs.avg_rating?.value != null ? Math.round(aggs.avg_rating.value * 100) / 100 : null,
    total_reviews: Math.round(aggs.total_reviews?.value ?? 0),
    verified_emails_count: aggs.verified_emails?.doc_count ?? 0,
    indexed_over_time: (aggs.indexed_over_time?.buckets ?? []).map((b) => ({
      date: b.key_as_string ?? String(b.key),
      count: b.doc_count,
    })),
  };
}

function buckets(agg: unknown): { name: string; count: number }[] {
  const list = (agg as { buckets?: { key: string | number; doc_count: number }[] } | undefined)?.buckets ?? [];
  return list.map((b) => ({ name: String(b.key), count: b.doc_count }));
}

// ---- documents --------------------------------------------------------------------------------

/** What the indexer reads from Postgres for one business. */
export interface LeadSource {
  clientId: string;
  resourceId: string;
  idapRef: string;
  data: Record<string, unknown>;
  sources: string[];
  campaignIds: string[];
  flags: string[];
  createdAt: string;
  emails: { address: string; verified: boolean }[];
  phones: { number: string }[];
  compendium: string | null;
}

const text = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);
const num = (v: unknown): number | null =>
  typeof v === 'number' && Number.isFinite(v)
    ? v
    : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))
      ? Number(v)
      : null;

/** The lead document of a business: its own fields, its e-mails and phones, and its score. */
export function buildLeadDocument(src: LeadSource, icp: IcpProfile, now = new Date()): LeadDocument {
  const d = src.data;
  const emails = [
    ...new Set(
      [text(d.email), ...src.emails.map((e) => e.address)].filter((e): e is string => !!e).map((e) => e.toLowerCase()),
    ),
  ];
  const verified = src.emails.some((e) => e.verified);
  const verifiedEmail = src.emails.find((e) => e.verified)?.address ?? null;
  const categories = Array.isArray(d.categories) ? d.categories.map(text).filter((c): c is string => !!c) : [];
  const lead = {
    // A crawled site without a company name is known by its domain.
    name: text(d.name) ?? text(d.business_name) ?? text(d.domain),
    description: text(d.description),
    category: text(d.category) ?? text(d.industry) ?? categories[0] ?? null,
    website: text(d.website),
    email: verifiedEmail ?? emails[0] ?? null,
    phone: text(d.phone_e164) ?? text(d.phone) ?? src.phones[0]?.number ?? null,
    country: text(d.country)?.toUpperCase() ?? null,
    rating: num(d.rating) ?? num(d.maps_rating),
    reviews: num(d.review_count) ?? num(d.reviews_count),
    email_verified: verified,
  };
  return {
    client_id: src.clientId,
    resource_id: src.resourceId,
    idap_ref: src.idapRef,
    ...lead,
    reviews: lead.reviews === null ? null : Math.round(lead.reviews),
    domain: text(d.domain),
    emails,
    icp_score: icpScore(lead, icp),
    job_id: text(d.job_id),
    job_type: text(d.job_type),
    source: src.sources[0] ?? text(d.source),
    campaign_ids: src.campaignIds,
    flags: src.flags,
    created_at: src.createdAt,
    indexed_at: now.toISOString(),
    compendium: src.compendium,
  };
}
