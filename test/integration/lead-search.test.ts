import type { IssuedCredentials } from '../../lib/credentials';
import { LEAD_SORTS } from '../../search/leads';
import { relate, upsertResources } from '../../db/repositories/resources';
import { bearer, ownQueues, startTestApi, type TestApi } from '../support/api';
import { caller, waitForStatus, type Caller } from '../support/jobs';
import { waitFor } from '../support/processes';
import { startTestWorker, type TestWorker } from '../support/worker';
import { startLeadSites, type LeadSites } from '../stand-ins/lead-sites';

// Lead search (spec §4.7) on the real Elasticsearch: leads arrive through the worker's indexLeads
// (after a job, an import, or an ICP change that re-scores them) and are searched through the API.
// The catch-up after an Elasticsearch restart is in lead-index-restart.test.ts.
jest.setTimeout(120_000);

interface SearchBody {
  success: boolean;
  total: number;
  page: number | null;
  per_page: number;
  hits: Record<string, unknown>[];
  facets: { categories: { name: string; count: number }[] };
  next_cursor: string | null;
}

interface Issue {
  type: string;
  loc: (string | number)[];
  msg: string;
}

let api: TestApi;
let worker: TestWorker;
let alice: IssuedCredentials;
let a: Caller;
let b: Caller;
let sites: LeadSites;

/** Businesses as a maps or site crawl would leave them, written with the production repository. */
async function seed(
  clientId: string,
  items: { data: Record<string, unknown>; email?: { address: string; verified: boolean } }[],
): Promise<void> {
  await api.deps.db.transaction(async (trx) => {
    const businesses = await upsertResources(
      trx,
      clientId,
      'businesses',
      items.map((i) => ({ data: i.data, source: 'crawl_maps' })),
    );
    for (const [k, item] of items.entries()) {
      if (!item.email) continue;
      const [email] = await upsertResources(trx, clientId, 'emails', [{ data: item.email, source: 'crawl_verify' }]);
      if (email && businesses[k]) await relate(trx, businesses[k], email);
    }
  });
}

const search = async (c: Caller, qs: string): Promise<SearchBody> => {
  const res = await c.get(`/api/v1/search/leads${qs}`);
  expect(res.status).toBe(200);
  return c.json<SearchBody>(res);
};

const names = (body: SearchBody) => body.hits.map((h) => h.name);

beforeAll(async () => {
  sites = await startLeadSites();
  const overrides = { RATE_LIMIT_ENABLED: 'false', ...ownQueues('leads') };
  api = await startTestApi(overrides);
  worker = await startTestWorker({ types: ['crawlSite'], identity: 'leads-worker', overrides });
  alice = await api.newClient('alice');
  const bob = await api.newClient('bob');
  a = caller(api, bearer(alice));
  b = caller(api, bearer(bob));

  await seed(alice.client_id, [
    {
      data: {
        name: 'Acme Bakery',
        category: 'Bakery',
        country: 'GB',
        rating: 4.6,
        review_count: 120,
        website: 'https://acme-bakery.example',
        description: 'Artisan sourdough bakery in Leeds',
      },
      email: { address: 'hello@acme-bakery.example', verified: true },
    },
    {
      data: {
        name: 'Bolt Plumbing',
        category: 'Plumber',
        country: 'US',
        rating: 3.9,
        review_count: 8,
        website: 'https://bolt.example',
        email: 'info@bolt.example',
        phone: '+12125550100',
        description: 'Emergency plumbing, day and night',
      },
    },
    {
      data: {
        name: 'Crumb & Co',
        category: 'Bakery',
        country: 'GB',
        rating: 4.1,
        review_count: 30,
        website: 'https://crumb.example',
        description: 'Cakes and pastries',
      },
    },
  ]);
  await seed(bob.client_id, [
    {
      data: {
        name: 'Acme Bakery of Bob',
        category: 'Bakery',
        country: 'GB',
        website: 'https://bob-bakery.example',
        description: 'Sourdough too',
      },
    },
  ]);

  // Setting the ICP re-scores (and so indexes) every lead of the client in the background.
  for (const [c, n] of [
    [a, 3],
    [b, 1],
  ] as const) {
    const res = await fetch(`${api.url}/api/v1/search/icp`, {
      method: 'PUT',
      headers: { authorization: c.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ industries: ['bakery'], countries: ['gb'] }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ industries: ['bakery'], countries: ['GB'], requeued: n });
    await waitFor(async () => (await search(c, '')).total === n, 30_000, `${n} indexed leads`);
  }
});

afterAll(async () => {
  await worker.stop();
  await api.close();
  await sites.close();
});

describe('lead search', () => {
  test('full text finds a lead by its description; a hit carries the spec fields', async () => {
    const body = await search(a, '?query=sourdough');
    expect(body).toMatchObject({ success: true, total: 1, page: 1, per_page: 20 });
    expect(body.hits[0]).toMatchObject({
      doc_id: expect.any(String),
      idap_ref: expect.stringMatching(/^idap:\/\/businesses\//),
      score: expect.any(Number),
      name: 'Acme Bakery',
      description: 'Artisan sourdough bakery in Leeds',
      category: 'Bakery',
      website: 'https://acme-bakery.example',
      email: 'hello@acme-bakery.example',
      email_verified: true,
      country: 'GB',
      indexed_at: expect.any(String),
    });
    expect(body.hits[0]?.score as number).toBeGreaterThan(0);
    // Every word must appear, in any of the fields.
    expect(names(await search(a, '?query=sourdough%20leeds'))).toEqual(['Acme Bakery']);
    expect(names(await search(a, '?query=acme%20sourdough'))).toEqual(['Acme Bakery']);
    expect(names(await search(a, '?query=sourdough%20plumbing'))).toEqual([]);
    // Another client's lead with the same words is not there.
    expect(names(await search(a, '?query=bakery'))).not.toContain('Acme Bakery of Bob');
  });

  test('icp_score follows the documented formula and the ICP', async () => {
    const body = await search(a, '?sort_by=icp_score');
    // Acme: name 5 + website 5 + e-mail 10 + country 5 + description 5 + verified 20 + rating 11 + reviews 8 + industry 15 + country 5.
    // Crumb: 5 + 5 + 5 + 5 + rating 10 + reviews 6 + industry 15 + country 5. Bolt: 5 + 5 + 10 + phone 10 + 5 + 5 + rating 9 + reviews 4.
    expect(body.hits.map((h) => [h.name, h.icp_score])).toEqual([
      ['Acme Bakery', 89],
      ['Crumb & Co', 56],
      ['Bolt Plumbing', 53],
    ]);
    expect(names(await search(a, '?min_icp_score=55&sort_by=name'))).toEqual(['Acme Bakery', 'Crumb & Co']);
  });

  test('filters, facets and pages', async () => {
    const all = await search(a, '');
    expect(all.total).toBe(3);
    expect(all.facets.categories).toEqual([
      { name: 'Bakery', count: 2 },
      { name: 'Plumber', count: 1 },
    ]);
    expect(names(await search(a, '?email_verified=true'))).toEqual(['Acme Bakery']);
    expect(names(await search(a, '?email_verified=false&sort_by=name'))).toEqual(['Bolt Plumbing', 'Crumb & Co']);
    const bakeries = await search(a, '?industry=bakery&sort_by=name');
    expect(names(bakeries)).toEqual(['Acme Bakery', 'Crumb & Co']);
    expect(bakeries.facets.categories).toEqual([{ name: 'Bakery', count: 2 }]);
    const page2 = await search(a, '?sort_by=name&per_page=2&page=2');
    expect(page2).toMatchObject({ total: 3, page: 2, per_page: 2 });
    expect(names(page2)).toEqual(['Crumb & Co']);
    expect(names(await search(a, '?sort_by=rating'))).toEqual(['Acme Bakery', 'Crumb & Co', 'Bolt Plumbing']);
  });

  test('bad parameters are 422 with the field named', async () => {
    for (const qs of [
      `?query=${'x'.repeat(501)}`,
      '?per_page=101',
      '?per_page=0',
      '?min_icp_score=101',
      '?sort_by=popularity',
      '?email_verified=maybe',
      '?page=0',
      '?colour=red',
    ]) {
      const res = await a.get(`/api/v1/search/leads${qs}`);
      expect(res.status).toBe(422);
      const body = await a.json<{ detail: { loc: string[] }[] }>(res);
      expect(body.detail[0]?.loc.length).toBeGreaterThan(0);
    }
  });

  test("aggregations summarise the client's leads only", async () => {
    const res = await a.get('/api/v1/search/aggregations');
    expect(res.status).toBe(200);
    const body = await a.json(res);
    expect(body).toMatchObject({
      success: true,
      total_documents: 3,
      by_category: [
        { name: 'Bakery', count: 2 },
        { name: 'Plumber', count: 1 },
      ],
      by_country: [
        { name: 'GB', count: 2 },
        { name: 'US', count: 1 },
      ],
      avg_rating: 4.2,
      total_reviews: 158,
      verified_emails_count: 1,
      indexed_over_time: [{ date: new Date().toISOString().slice(0, 10), count: 3 }],
      error: null,
    });
    expect(await b.json(await b.get('/api/v1/search/aggregations'))).toMatchObject({
      total_documents: 1,
      by_country: [{ name: 'GB', count: 1 }],
    });
    expect((await a.get('/api/v1/search/aggregations?job_type=crawlFoo')).status).toBe(422);
  });
});

describe('leads from jobs', () => {
  const crawledLeads = async () =>
    (await a.json<{ total_documents: number }>(await a.get('/api/v1/search/aggregations?job_type=crawlSite')))
      .total_documents;

  test("a completed job's business becomes a lead with its job id", async () => {
    // A real crawl of a stand-in site on a loopback address of its own (the business's domain).
    const url = await sites.ownHost({ leads: 2 });
    const site = new URL(url).searchParams.get('site');
    const res = await a.post('/api/v1/jobs/crawlSite/submit', { payload: { url } });
    const { job_id } = await a.json<{ job_id: string }>(res);
    await waitForStatus(a, job_id, ['completed']);
    await waitFor(async () => (await crawledLeads()) === 1, 30_000, "the job's lead");
    const hit = (await search(a, '?sort_by=indexed_at')).hits[0];
    expect(hit).toMatchObject({
      name: site,
      website: new URL(url).origin,
      job_id,
      job_type: 'crawlSite',
      email: `lead0@${site}.example`,
      email_verified: false,
    });
  });
});

describe('leads from imports', () => {
  test('businesses imported through IDAP become searchable leads', async () => {
    const carol = caller(api, bearer(await api.newClient('carol')));
    const res = await carol.post('/api/v1/idap/businesses/import', {
      source: 'import',
      records: [
        {
          data: {
            name: 'Imported Florist',
            category: 'Florist',
            website: 'https://florist.example',
            country: 'FR',
            description: 'Wedding bouquets',
          },
        },
        { data: { name: 'Imported Garage', category: 'Garage', website: 'https://garage.example', country: 'DE' } },
      ],
    });
    expect(res.status).toBe(200);
    await waitFor(async () => (await search(carol, '')).total === 2, 30_000, 'the imported leads');
    expect(names(await search(carol, '?query=bouquets'))).toEqual(['Imported Florist']);
    expect(names(await search(a, '?query=bouquets'))).toEqual([]);
  });
});

describe('rejected leads', () => {
  test('flagging a business rejected in IDAP takes it out of lead search and aggregations; unflagging brings it back', async () => {
    const bolt = (await search(a, '?query=plumbing')).hits[0];
    expect(bolt?.name).toBe('Bolt Plumbing');
    const patch = (body: unknown) =>
      fetch(`${api.url}/api/v1/idap/businesses/${String(bolt?.doc_id)}`, {
        method: 'PATCH',
        headers: { authorization: a.auth, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await patch({ add: ['rejected'] })).status).toBe(200);
    await waitFor(
      async () => (await search(a, '?query=plumbing')).total === 0,
      30_000,
      'the rejected lead to leave the search',
    );
    expect(await a.json(await a.get('/api/v1/search/aggregations'))).toMatchObject({
      by_category: expect.not.arrayContaining([{ name: 'Plumber', count: 1 }]),
    });
    expect((await patch({ remove: ['rejected'] })).status).toBe(200);
    await waitFor(async () => (await search(a, '?query=plumbing')).total === 1, 30_000, 'the lead to come back');
  });
});

describe('deep pages and the cursor', () => {
  test('a page beyond 10,000 hits is a 422 that says how deep pages go and points to the cursor', async () => {
    const res = await a.get('/api/v1/search/leads?page=600&per_page=20');
    expect(res.status).toBe(422);
    const { detail } = await a.json<{ detail: Issue[] }>(res);
    expect(detail).toEqual([
      { type: expect.any(String), loc: ['query', 'page'], msg: expect.stringContaining('10000') },
    ]);
    expect(detail[0]?.msg).toContain('cursor');
    // The deepest page that fits still answers, and hands out a cursor to go further.
    expect((await a.get('/api/v1/search/leads?page=500&per_page=20')).status).toBe(200);
    expect((await a.get('/api/v1/search/leads?page=100&per_page=100')).status).toBe(200);
    expect((await a.get('/api/v1/search/leads?page=101&per_page=100')).status).toBe(422);
  });

  test('following next_cursor visits every lead exactly once, in every sort', async () => {
    const dave = caller(api, bearer(await api.newClient('dave')));
    // Ties in every sort field, and leads without a name, a rating or a review count.
    const records = Array.from({ length: 23 }, (_, k) => ({
      data: {
        website: `https://lead-${k}.example`,
        description: 'a bakery',
        ...(k % 5 === 0 ? {} : { name: `Lead ${k % 4}` }),
        ...(k % 3 === 0 ? {} : { rating: 4 + (k % 2) / 2 }),
        ...(k % 4 === 0 ? {} : { review_count: k % 3 }),
      },
    }));
    expect((await dave.post('/api/v1/idap/businesses/import', { records })).status).toBe(200);
    await waitFor(async () => (await search(dave, '')).total === 23, 30_000, 'the imported leads');

    for (const sort of LEAD_SORTS) {
      const qs = `sort_by=${sort}${sort === '_score' ? '&query=bakery' : ''}`;
      const all = (await search(dave, `?${qs}&per_page=100`)).hits.map((h) => h.doc_id);
      expect(all).toHaveLength(23);
      let body = await search(dave, `?${qs}&per_page=5`);
      const seen = body.hits.map((h) => h.doc_id);
      let pages = 1;
      while (body.next_cursor) {
        // The cursor carries the sort: the same query and filters, and no sort_by, continue it.
        body = await search(dave, `?per_page=5&cursor=${body.next_cursor}${sort === '_score' ? '&query=bakery' : ''}`);
        expect(body).toMatchObject({ total: 23, page: null, per_page: 5 });
        seen.push(...body.hits.map((h) => h.doc_id));
        pages++;
      }
      // Exactly the order of one big page: nothing skipped, nothing twice, no empty last page.
      expect({ sort, seen }).toEqual({ sort, seen: all });
      expect(pages).toBe(5);
    }
  });

  test('a cursor that is not one this API made is a 422, never a 500 or a 503', async () => {
    const first = await search(a, '?sort_by=name&per_page=1');
    expect(first.next_cursor).toEqual(expect.any(String));
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const bad = [
      'garbage!!',
      'bm90IGpzb24',
      b64({ s: 'name' }),
      b64({ s: 'popularity', a: [1, 'x'] }),
      b64({ s: 'icp_score', a: ['x', 'y'] }),
      b64({ s: 'icp_score', a: [50] }),
      b64({ s: 'indexed_at', a: [2 ** 60, 'x'] }),
      'x'.repeat(5000),
    ];
    for (const cursor of bad) {
      const res = await a.get(`/api/v1/search/leads?cursor=${cursor}`);
      expect({ cursor, status: res.status }).toEqual({ cursor, status: 422 });
      const { detail } = await a.json<{ detail: Issue[] }>(res);
      expect(detail[0]?.loc).toEqual(['query', 'cursor']);
    }
    // A cursor with another sort, or with a page, is refused too.
    const other = await a.get(`/api/v1/search/leads?cursor=${first.next_cursor}&sort_by=rating`);
    expect(other.status).toBe(422);
    expect((await a.json<{ detail: Issue[] }>(other)).detail[0]).toMatchObject({
      loc: ['query', 'cursor'],
      msg: expect.stringContaining('sort_by=name'),
    });
    expect((await a.get(`/api/v1/search/leads?cursor=${first.next_cursor}&page=2`)).status).toBe(422);
  });

  test('a search Elasticsearch refuses is a 400 with its reason, not a 503', async () => {
    // An index whose mapping lacks the sort field: Elasticsearch answers 400, and would give the
    // same answer to a retry, so "unavailable, retry later" would be wrong.
    const prefix = `${api.deps.config.ES_INDEX_PREFIX}-refused`;
    await api.deps.search.indices.create({
      index: `${prefix}-leads`,
      mappings: { properties: { client_id: { type: 'keyword' } } },
    });
    const other = await startTestApi({ RATE_LIMIT_ENABLED: 'false', ES_INDEX_PREFIX: prefix });
    try {
      const res = await fetch(`${other.url}/api/v1/search/leads?sort_by=name`, { headers: { authorization: a.auth } });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({
        detail: expect.stringMatching(/^the search was refused: No mapping found for \[name\.raw\]/),
      });
      expect(res.headers.get('retry-after')).toBeNull();
    } finally {
      await other.close();
    }
  });
});
