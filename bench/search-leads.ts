/**
 * The lead-search part of bench/data: indexes N lead documents for the benchmark's client (bulk,
 * straight into Elasticsearch, built with the production buildLeadDocument), then times
 * GET /api/v1/search/leads (full text + facets) against the API and, in the same run, the very same
 * request body sent straight to Elasticsearch (search/leads.ts leadSearchRequest), alternating.
 */
import { Pool } from 'undici';
import { createSearchClient } from '../search/client';
import {
  buildLeadDocument,
  ensureLeadIndex,
  leadIndex,
  leadSearchRequest,
  type LeadSearchParams,
} from '../search/leads';
import { stats, type Stats } from './support';

const CATEGORIES = ['Bakery', 'Plumber', 'Dentist', 'Florist', 'Electrician', 'Café', 'Bookshop', 'Garage'];
const WORDS = [
  'sourdough',
  'emergency',
  'orthodontics',
  'bouquets',
  'rewiring',
  'espresso',
  'secondhand',
  'servicing',
  'artisan',
  'family',
  'certified',
  'local',
];
const QUERIES = [
  'sourdough',
  'emergency repairs',
  'family dentist',
  'artisan bakery',
  'certified electrician',
  'local garage servicing',
];

export interface SearchBench {
  api: Stats;
  direct: Stats;
  /** api p95 / direct p95 */
  ratio_p95: number;
  index_seconds: number;
}

export async function searchTimings(ctx: {
  base: string;
  auth: string;
  size: number;
  clientId: string;
  esUrl: string;
  indexPrefix: string;
  queries: number;
}): Promise<SearchBench> {
  const es = createSearchClient({ ELASTICSEARCH_URL: ctx.esUrl });
  try {
    await ensureLeadIndex(es, ctx.indexPrefix);
    const index = leadIndex(ctx.indexPrefix);
    const started = performance.now();
    const now = new Date();
    const CHUNK = 5000;
    for (let from = 0; from < ctx.size; from += CHUNK) {
      const operations: unknown[] = [];
      for (let i = from; i < Math.min(ctx.size, from + CHUNK); i++) {
        const category = CATEGORIES[i % CATEGORIES.length] as string;
        const doc = buildLeadDocument(
          {
            clientId: ctx.clientId,
            resourceId: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
            idapRef: `idap://businesses/${i}`,
            data: {
              name: `${category} ${i}`,
              category,
              description: `${WORDS[i % WORDS.length]} ${WORDS[(i * 7) % WORDS.length]} ${category.toLowerCase()} number ${i}`,
              website: `https://c${i}.bench.test`,
              country: i % 3 === 0 ? 'GB' : 'US',
              rating: 3 + (i % 20) / 10,
              review_count: i % 300,
              job_type: 'crawlSite',
            },
            sources: ['crawl_site'],
            campaignIds: [],
            flags: ['new'],
            createdAt: now.toISOString(),
            emails: i % 2 ? [{ address: `lead${i}@c${i}.bench.test`, verified: i % 4 === 1 }] : [],
            phones: [],
            compendium: null,
          },
          { industries: ['bakery'], countries: ['GB'] },
          now,
        );
        operations.push({ index: { _index: index, _id: doc.resource_id } }, doc);
      }
      const res = await es.bulk({ operations: operations as never });
      if (res.errors) throw new Error('bulk indexing failed');
      process.stdout.write(`indexed ${Math.min(ctx.size, from + CHUNK)}/${ctx.size} leads\r`);
    }
    await es.indices.refresh({ index });
    await es.indices.forcemerge({ index, max_num_segments: 1 }).catch(() => undefined);
    const indexSeconds = (performance.now() - started) / 1000;
    process.stdout.write('\n');

    // The API is called through a keep-alive undici pool, as the Elasticsearch client calls
    // Elasticsearch: the comparison is between the two servers, not between two HTTP clients.
    const pool = new Pool(ctx.base, { connections: 1 });
    const apiLat: number[] = [];
    const directLat: number[] = [];
    const t0 = performance.now();
    for (let i = 0; i < ctx.queries + 20; i++) {
      const query = QUERIES[i % QUERIES.length] as string;
      const params: LeadSearchParams = {
        clientId: ctx.clientId,
        query,
        page: 1,
        perPage: 20,
        sortBy: '_score',
        ...(i % 2 ? { minIcpScore: 30 } : {}),
      };
      const qs = new URLSearchParams({ query, per_page: '20', ...(i % 2 ? { min_icp_score: '30' } : {}) });
      let t = performance.now();
      const res = await pool.request({
        method: 'GET',
        path: `/api/v1/search/leads?${qs.toString()}`,
        headers: { authorization: ctx.auth },
      });
      if (res.statusCode !== 200) throw new Error(`search answered ${res.statusCode}`);
      await res.body.json();
      if (i >= 20) apiLat.push(performance.now() - t);
      t = performance.now();
      await es.search(leadSearchRequest(ctx.indexPrefix, params));
      if (i >= 20) directLat.push(performance.now() - t);
    }
    const seconds = (performance.now() - t0) / 1000;
    await pool.close();
    const api = stats(apiLat, seconds);
    const direct = stats(directLat, seconds);
    return {
      api,
      direct,
      ratio_p95: Math.round((api.p95_ms / direct.p95_ms) * 100) / 100,
      index_seconds: Math.round(indexSeconds * 10) / 10,
    };
  } finally {
    await es.indices.delete({ index: leadIndex(ctx.indexPrefix) }).catch(() => undefined);
    await es.close();
  }
}
