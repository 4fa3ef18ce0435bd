import { relate, upsertResource } from '../../db/repositories/resources';
import { writeProjection } from '../../activities/store/leads';
import { projectResult } from '../../jobs';
import { bearer, startTestApi, type TestApi } from '../support/api';
import { caller, type Caller } from '../support/jobs';

// The IDAP resource API (spec §2.9, §4.5) over HTTP on the real Postgres; resources come from the
// import endpoint and from the repository functions the job-result projection uses.
let api: TestApi;
let c: Caller;
let clientId: string;
beforeAll(async () => {
  api = await startTestApi({ RATE_LIMIT_ENABLED: 'false' });
  const creds = await api.newClient();
  clientId = creds.client_id;
  c = caller(api, bearer(creds));
});
afterAll(async () => {
  await api.close();
});

type Resource = {
  idap_ref: string;
  resource_type: string;
  resource_id: string;
  tenant_id?: string;
  created_at?: string;
  modified_at?: string;
  flags?: string[];
  data?: Record<string, unknown>;
  related?: Record<string, Record<string, unknown>[]>;
};
type Page = { resource_type: string; count: number; has_more: boolean; next_cursor: string | null; items: Resource[] };
type Imported = {
  success: boolean;
  received: number;
  created: number;
  updated: number;
  unchanged: number;
  duplicates: number;
  items: { index: number; idap_ref: string; resource_id: string; status: string }[];
};

let n = 0;
const uniq = (p: string) => `${p}${Date.now().toString(36)}${(n++).toString(36)}`;

const patch = (who: Caller, path: string, body: unknown) =>
  fetch(`${api.url}${path}`, {
    method: 'PATCH',
    headers: { authorization: who.auth, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

async function importAs(
  who: Caller,
  type: string,
  records: unknown[],
  extra: Record<string, unknown> = {},
): Promise<Imported> {
  const res = await who.post(`/api/v1/idap/${type}/import`, { records, ...extra });
  expect(res.status).toBe(200);
  return who.json<Imported>(res);
}
async function page(who: Caller, path: string): Promise<Page> {
  const res = await who.get(path);
  expect(res.status).toBe(200);
  return who.json<Page>(res);
}
async function one(who: Caller, path: string): Promise<Resource> {
  const res = await who.get(path);
  expect(res.status).toBe(200);
  return who.json<Resource>(res);
}
/** Every item of a listing, following next_cursor. */
async function all(who: Caller, path: string): Promise<Resource[]> {
  const out: Resource[] = [];
  let cursor: string | null = null;
  do {
    const p: Page = await page(
      who,
      `${path}${path.includes('?') ? '&' : '?'}limit=500${cursor ? `&cursor=${cursor}` : ''}`,
    );
    out.push(...p.items);
    cursor = p.next_cursor;
  } while (cursor);
  return out;
}

describe('fetch one', () => {
  test("returns the resource; fields projects; unknown, malformed and other clients' ids are 404 resource_not_found", async () => {
    const place = uniq('ChIJ');
    const imp = await importAs(
      c,
      'businesses',
      [
        {
          data: {
            place_id: place,
            name: 'Acme Bakery',
            address: '1 High St',
            category: 'bakery',
            maps_rating: 4.5,
            review_count: 12,
            website: 'https://acme.test',
          },
          campaign_id: 'camp-1',
        },
      ],
      { source: 'crawl_maps' },
    );
    expect(imp).toMatchObject({ success: true, received: 1, created: 1, updated: 0, unchanged: 0, duplicates: 0 });
    const id = imp.items[0]?.resource_id as string;

    const r = await one(c, `/api/v1/idap/businesses/${id}`);
    expect(r).toEqual({
      idap_ref: `idap://businesses/${id}`,
      resource_type: 'businesses',
      resource_id: id,
      tenant_id: clientId,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
      modified_at: r.created_at,
      flags: ['new'],
      // domain: a business records its registrable domain (where a maps listing and a site crawl meet).
      data: {
        place_id: place,
        name: 'Acme Bakery',
        address: '1 High St',
        category: 'bakery',
        maps_rating: 4.5,
        review_count: 12,
        website: 'https://acme.test',
        domain: 'acme.test',
        source: 'crawl_maps',
        campaign_id: 'camp-1',
      },
    });

    expect(await one(c, `/api/v1/idap/businesses/${id}?fields=name,website,modified_at`)).toEqual({
      idap_ref: `idap://businesses/${id}`,
      resource_type: 'businesses',
      resource_id: id,
      modified_at: r.modified_at,
      data: { name: 'Acme Bakery', website: 'https://acme.test' },
    });

    for (const path of [
      `/api/v1/idap/businesses/00000000-0000-4000-8000-000000000000`,
      '/api/v1/idap/businesses/not-a-uuid',
      `/api/v1/idap/domains/${id}`,
    ]) {
      const res = await c.get(path);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ detail: 'resource_not_found' });
    }
    const other = caller(api, bearer(await api.newClient('other')));
    const res = await other.get(`/api/v1/idap/businesses/${id}`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ detail: 'resource_not_found' });
  });

  test('media types: fetch is 501 pointing to the media proxy; list and stats are 400; unknown types 422', async () => {
    const res = await c.get('/api/v1/idap/images/00000000-0000-4000-8000-000000000000');
    expect(res.status).toBe(501);
    expect(((await res.json()) as { detail: string }).detail).toContain('/api/v1/idap/media/{media_id}');
    expect((await c.get('/api/v1/idap/images')).status).toBe(400);
    expect((await c.get('/api/v1/idap/screenshots/stats')).status).toBe(400);
    const bad = await c.get('/api/v1/idap/planets');
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { detail: { loc: unknown[] }[] }).detail[0]?.loc).toEqual(['path', 'resource_type']);
  });
});

describe("import and the projection's upserts", () => {
  test('records are de-duplicated on natural keys, in the request and against the store; modified_at moves only on change', async () => {
    const user = uniq('ann');
    const first = await importAs(c, 'emails', [
      { data: { address: `${user}@Example.test`, verified: false } },
      { data: { address: `${user}@example.TEST`, verification_status: 'risky' } },
      { data: { address: `other-${user}@example.test` } },
    ]);
    expect(first).toMatchObject({ received: 3, created: 2, duplicates: 1 });
    expect(first.items.map((i) => i.status)).toEqual(['created', 'duplicate', 'created']);
    expect(first.items[1]?.resource_id).toBe(first.items[0]?.resource_id);
    const id = first.items[0]?.resource_id as string;
    const before = await one(c, `/api/v1/idap/emails/${id}`);
    // Merged in order: the later record's values win.
    expect(before.data).toMatchObject({
      address: `${user}@example.TEST`,
      verified: false,
      verification_status: 'risky',
      source: 'import',
    });

    const same = await importAs(c, 'emails', [{ data: { address: `${user}@example.TEST`, verified: false } }]);
    expect(same).toMatchObject({ unchanged: 1, created: 0, updated: 0 });
    expect((await one(c, `/api/v1/idap/emails/${id}`)).modified_at).toBe(before.modified_at);

    const changed = await importAs(c, 'emails', [
      { data: { address: `${user}@example.TEST`, verified: true, verification_status: null } },
    ]);
    expect(changed).toMatchObject({ updated: 1 });
    const after = await one(c, `/api/v1/idap/emails/${id}`);
    expect(after.modified_at! > before.modified_at!).toBe(true);
    expect(after.created_at).toBe(before.created_at);
    // Stored keys not given (or given as null) are kept.
    expect(after.data).toMatchObject({ verified: true, verification_status: 'risky' });
  });

  test('a company is its registrable domain: www. and shop. of one .co.uk domain import as one business and one domain; other sites stay apart', async () => {
    const company = uniq('acme');
    const imp = await importAs(c, 'businesses', [
      { data: { name: 'Acme', website: `https://www.${company}.co.uk/` } },
      { data: { name: 'Acme Shop', website: `https://shop.${company}.co.uk/`, category: 'retail' } },
      { data: { name: 'Other', website: `https://${company}-other.co.uk/` } },
      { data: { name: 'Alice', website: `https://${company}-alice.github.io/` } },
      { data: { name: 'Bob', website: `https://${company}-bob.github.io/` } },
    ]);
    expect(imp).toMatchObject({ received: 5, created: 4, duplicates: 1 });
    expect(imp.items[1]?.resource_id).toBe(imp.items[0]?.resource_id);
    expect(new Set(imp.items.map((i) => i.resource_id)).size).toBe(4);
    expect((await one(c, `/api/v1/idap/businesses/${imp.items[0]?.resource_id}`)).data).toMatchObject({
      website: `https://shop.${company}.co.uk/`,
      category: 'retail',
    });

    const again = await importAs(c, 'businesses', [
      { data: { name: 'Acme Shop', website: `https://shop.${company}.co.uk/`, category: 'retail' } },
    ]);
    expect(again).toMatchObject({ unchanged: 1, created: 0 });
    const domains = await importAs(c, 'domains', [
      { data: { domain: `${company}.co.uk` } },
      { data: { domain: `https://mail.${company}.co.uk` } },
    ]);
    expect(domains).toMatchObject({ created: 1, duplicates: 1 });
  });

  test("a maps listing and a crawl of its website are one business (one registrable domain); a chain's branches stay apart", async () => {
    const d = uniq('bakery');
    // The listing first (keyed by its place id), then what a crawl of its site finds (keyed by domain).
    const listing = await importAs(c, 'businesses', [
      { data: { place_id: `ChIJ${d}`, name: 'Acme Bakery', website: `https://www.${d}.example/`, rating: 4.6 } },
    ]);
    const site = await importAs(c, 'businesses', [
      { data: { website: `https://${d}.example/`, description: 'Sourdough since 1901', email: `hello@${d}.example` } },
    ]);
    expect(site).toMatchObject({ created: 0, updated: 1 });
    expect(site.items[0]?.resource_id).toBe(listing.items[0]?.resource_id);
    expect((await one(c, `/api/v1/idap/businesses/${listing.items[0]?.resource_id}`)).data).toMatchObject({
      place_id: `ChIJ${d}`,
      name: 'Acme Bakery',
      rating: 4.6,
      description: 'Sourdough since 1901',
      email: `hello@${d}.example`,
      domain: `${d}.example`,
    });

    // The site first, then its listing; both again later still land on the one business.
    const f = uniq('florist');
    const siteFirst = await importAs(c, 'businesses', [
      { data: { name: 'Florist', website: `https://${f}.example/` } },
    ]);
    const listingLater = await importAs(c, 'businesses', [
      { data: { place_id: `ChIJ${f}`, name: 'Florist on Main St', website: `https://www.${f}.example/` } },
    ]);
    expect(listingLater.items[0]?.resource_id).toBe(siteFirst.items[0]?.resource_id);
    const again = await importAs(c, 'businesses', [
      { data: { place_id: `ChIJ${f}`, name: 'Florist on Main St', website: `https://www.${f}.example/` } },
      { data: { website: `https://${f}.example/` } },
    ]);
    expect(again.items.map((i) => i.resource_id)).toEqual([
      siteFirst.items[0]?.resource_id,
      siteFirst.items[0]?.resource_id,
    ]);

    // A chain: two branches (places) share one website. They stay two businesses, and a crawl of the
    // shared site joins neither; two branches arriving together at a crawled site: only one joins it.
    const ch = uniq('chain');
    const branches = await importAs(c, 'businesses', [
      { data: { place_id: `ChIJa${ch}`, website: `https://${ch}.example/` } },
      { data: { place_id: `ChIJb${ch}`, website: `https://${ch}.example/` } },
    ]);
    expect(new Set(branches.items.map((i) => i.resource_id)).size).toBe(2);
    const chainSite = await importAs(c, 'businesses', [{ data: { website: `https://${ch}.example/` } }]);
    expect(branches.items.map((i) => i.resource_id)).not.toContain(chainSite.items[0]?.resource_id);
    const k = uniq('kiosk');
    const kioskSite = await importAs(c, 'businesses', [{ data: { website: `https://${k}.example/` } }]);
    const kiosks = await importAs(c, 'businesses', [
      { data: { place_id: `ChIJa${k}`, website: `https://${k}.example/` } },
      { data: { place_id: `ChIJb${k}`, website: `https://${k}.example/` } },
    ]);
    expect(kiosks.items[0]?.resource_id).toBe(kioskSite.items[0]?.resource_id);
    expect(kiosks.items[1]?.resource_id).not.toBe(kioskSite.items[0]?.resource_id);
  });

  test('validation: a record without its natural key, more than 1,000 records, unknown flags are 422', async () => {
    const res = await c.post('/api/v1/idap/emails/import', {
      records: [{ data: { address: 'ok@x.test' } }, { data: { verified: true } }],
    });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({
      detail: [
        {
          type: 'missing',
          loc: ['body', 'records', 1, 'data', 'address'],
          msg: 'an email needs address (an e-mail address)',
        },
      ],
    });
    expect(
      (
        await c.post('/api/v1/idap/emails/import', {
          records: Array.from({ length: 1001 }, (_, i) => ({ data: { address: `${i}@x.test` } })),
        })
      ).status,
    ).toBe(422);
    expect(
      (await c.post('/api/v1/idap/emails/import', { records: [{ data: { address: 'a@x.test' }, flags: ['hot'] }] }))
        .status,
    ).toBe(422);
    expect((await c.post('/api/v1/idap/images/import', { records: [{ data: {} }] })).status).toBe(400);
    const ok = await importAs(
      c,
      'domains',
      Array.from({ length: 1000 }, (_, i) => ({ data: { domain: `bulk-${i}.${uniq('d')}.test` } })),
    );
    expect(ok.created).toBe(1000);
  });

  test('upsertResource is idempotent on natural keys; relate links business, domain, emails and phones both ways', async () => {
    const place = uniq('ChIJ');
    const domain = `${uniq('shop')}.test`;
    const run = () =>
      api.deps.db.transaction(async (trx) => {
        const business = await upsertResource(trx, {
          clientId,
          type: 'businesses',
          data: { place_id: place, name: 'Shop', website: `https://www.${domain}/` },
          source: 'crawl_maps',
          campaignId: 'c-1',
        });
        const dom = await upsertResource(trx, {
          clientId,
          type: 'domains',
          data: { domain: `https://${domain}` },
          source: 'crawl_site',
        });
        const email = await upsertResource(trx, {
          clientId,
          type: 'emails',
          data: { address: `info@${domain}`, verified: true, verification_status: 'valid' },
          source: 'crawl_site',
        });
        const phone = await upsertResource(trx, {
          clientId,
          type: 'phones',
          data: { number: '020 7946 0958', country: 'GB', type: 'FIXED_LINE' },
          source: 'crawl_site',
        });
        const links = [
          await relate(trx, business, dom),
          await relate(trx, dom, email),
          await relate(trx, business, email),
          await relate(trx, business, phone),
        ];
        return { business, dom, email, phone, links };
      });
    const first = await run();
    expect([first.business, first.dom, first.email, first.phone].map((r) => r.status)).toEqual([
      'created',
      'created',
      'created',
      'created',
    ]);
    expect(first.phone.naturalKey).toBe('+442079460958');
    expect(first.dom.naturalKey).toBe(domain);
    expect(first.links).toEqual([true, true, true, true]);
    const seen = await one(c, `/api/v1/idap/businesses/${first.business.id}`);

    const second = await run();
    expect([second.business, second.dom, second.email, second.phone].map((r) => r.status)).toEqual([
      'unchanged',
      'unchanged',
      'unchanged',
      'unchanged',
    ]);
    expect(second.business.id).toBe(first.business.id);
    expect(second.links).toEqual([false, false, false, false]);
    expect((await one(c, `/api/v1/idap/businesses/${first.business.id}`)).modified_at).toBe(seen.modified_at);

    const withRelated = await one(
      c,
      `/api/v1/idap/businesses/${first.business.id}?include=domains,emails,phones,contacts`,
    );
    expect(withRelated.related).toEqual({
      domains: [
        { idap_ref: first.dom.idapRef, resource_id: first.dom.id, domain: `https://${domain}`, source: 'crawl_site' },
      ],
      emails: [
        {
          idap_ref: first.email.idapRef,
          resource_id: first.email.id,
          address: `info@${domain}`,
          verified: true,
          verification_status: 'valid',
          source: 'crawl_site',
        },
      ],
      phones: [
        {
          idap_ref: first.phone.idapRef,
          resource_id: first.phone.id,
          number: '020 7946 0958',
          country: 'GB',
          type: 'FIXED_LINE',
          source: 'crawl_site',
        },
      ],
      contacts: [],
    });
    const fromEmail = await one(c, `/api/v1/idap/emails/${first.email.id}?include=businesses,domains&fields=address`);
    expect(fromEmail).toEqual({
      idap_ref: first.email.idapRef,
      resource_type: 'emails',
      resource_id: first.email.id,
      data: { address: `info@${domain}` },
      related: {
        businesses: [expect.objectContaining({ resource_id: first.business.id, name: 'Shop' })],
        domains: [expect.objectContaining({ resource_id: first.dom.id })],
      },
    });
    // Another source and campaign for the same business is a change.
    const third = await api.deps.db.transaction((trx) =>
      upsertResource(trx, {
        clientId,
        type: 'businesses',
        data: { place_id: place },
        source: 'crawl_site',
        campaignId: 'c-2',
      }),
    );
    expect(third).toMatchObject({ id: first.business.id, status: 'updated' });
    expect(
      (await page(c, `/api/v1/idap/businesses?source=crawl_site&campaign_id=c-2`)).items.map((i) => i.resource_id),
    ).toEqual([first.business.id]);
    // The projection must write inside a transaction (the client lock lives until commit).
    await expect(
      upsertResource(api.deps.db as never, { clientId, type: 'domains', data: { domain: 'x.test' } }),
    ).rejects.toThrow('transaction');
  });

  test("a landing note goes to the business of its domain (a chain's first listing, no new business) and an older capture never replaces a newer one", async () => {
    const creds = await api.newClient('landing projection');
    const who = caller(api, bearer(creds));
    const domain = `${uniq('chain')}.test`;
    // Two branches of a chain: two place listings sharing one website, no business keyed by the domain.
    await importAs(who, 'businesses', [
      { data: { place_id: uniq('ChIJa'), name: 'Chain North', website: `https://${domain}/north` } },
      { data: { place_id: uniq('ChIJb'), name: 'Chain South', website: `https://${domain}/south` } },
    ]);
    const project = (jobId: string, capturedAt: string) => {
      const plan = projectResult(
        'crawlLanding',
        {
          ad_id: jobId,
          capture: {
            initial_url: `https://ads.example/${jobId}`,
            final_url: `https://${domain}/offer`,
            captured_at: capturedAt,
          },
        },
        { jobId },
      );
      return api.deps.db.transaction((trx) => writeProjection(trx, creds.client_id, plan, null));
    };
    const landingOf = async () =>
      Object.fromEntries(
        (await all(who, '/api/v1/idap/businesses')).map((b) => [
          b.data?.name ?? '(no name)',
          (b.data?.landing as { job_id?: string } | undefined)?.job_id ?? null,
        ]),
      );

    expect((await project('newer', '2026-11-27T10:00:05.000Z')).resources).toBe(1);
    expect(await landingOf()).toEqual({ 'Chain North': 'newer', 'Chain South': null });
    // A capture taken earlier whose job finished later (a retry, a slow upload) leaves the note alone.
    expect((await project('older', '2026-11-27T10:00:00.000Z')).resources).toBe(0);
    expect(await landingOf()).toEqual({ 'Chain North': 'newer', 'Chain South': null });
    expect((await project('newest', '2026-11-27T10:01:00.000Z')).resources).toBe(1);
    expect(await landingOf()).toEqual({ 'Chain North': 'newest', 'Chain South': null });
  });
});

describe('flags', () => {
  test('PATCH adds and removes flags and moves modified_at; no change keeps it; bad flags 422; other clients 404', async () => {
    const imp = await importAs(c, 'contacts', [{ data: { email: `${uniq('p')}@x.test`, full_name: 'Pat' } }]);
    const id = imp.items[0]?.resource_id as string;
    const before = await one(c, `/api/v1/idap/contacts/${id}`);
    const res = await patch(c, `/api/v1/idap/contacts/${id}`, { add: ['qualified', 'priority'], remove: ['new'] });
    expect(res.status).toBe(200);
    const after = (await res.json()) as Resource;
    expect(after.flags).toEqual(['priority', 'qualified']);
    expect(after.modified_at! > before.modified_at!).toBe(true);
    const again = (await (await patch(c, `/api/v1/idap/contacts/${id}`, { add: ['qualified'] })).json()) as Resource;
    expect(again.modified_at).toBe(after.modified_at);

    expect((await patch(c, `/api/v1/idap/contacts/${id}`, { add: ['hot'] })).status).toBe(422);
    expect((await patch(c, `/api/v1/idap/contacts/${id}`, {})).status).toBe(422);
    expect((await patch(c, `/api/v1/idap/contacts/${id}`, { add: ['new'], remove: ['new'] })).status).toBe(422);
    const other = caller(api, bearer(await api.newClient('other')));
    const miss = await patch(other, `/api/v1/idap/contacts/${id}`, { add: ['qualified'] });
    expect(miss.status).toBe(404);
    expect(await miss.json()).toEqual({ detail: 'resource_not_found' });
  });

  test('list filters: all flags must match, !x excludes, rejected hidden unless asked for', async () => {
    const who = caller(api, bearer(await api.newClient('flags')));
    const imp = await importAs(who, 'phones', [
      { data: { number: '+44 20 7946 0001' }, flags: ['qualified', 'priority'] },
      { data: { number: '+44 20 7946 0002' }, flags: ['qualified'] },
      { data: { number: '+44 20 7946 0003' }, flags: ['qualified', 'rejected'] },
      { data: { number: '+44 20 7946 0004' }, flags: ['contacted'] },
    ]);
    const [p1, p2, p3, p4] = imp.items.map((i) => i.resource_id);
    const ids = async (q: string) =>
      (await page(who, `/api/v1/idap/phones?sort=name&order=asc${q}`)).items.map((i) => i.resource_id).sort();
    expect(await ids('')).toEqual([p1, p2, p4].sort());
    expect(await ids('&flags=qualified')).toEqual([p1, p2].sort());
    expect(await ids('&flags=qualified,priority')).toEqual([p1]);
    expect(await ids('&flags=qualified,!priority')).toEqual([p2]);
    expect(await ids('&flags=rejected')).toEqual([p3]);
    expect(await ids('&flags=qualified,rejected')).toEqual([p3]);
    expect(await ids('&flags=!contacted')).toEqual([p1, p2].sort());
    const bad = await who.get('/api/v1/idap/phones?flags=qualified,!hot');
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { detail: { loc: unknown[]; msg: string }[] }).detail[0]).toMatchObject({
      loc: ['query', 'flags', 1],
    });
  });
});

describe('list and sync', () => {
  test('pages with an opaque cursor in each sort; since/until; sort=name; bad cursors 400, limit 1-500', async () => {
    const who = caller(api, bearer(await api.newClient('pager')));
    const names = ['delta', 'alpha', 'echo', 'charlie', 'bravo', 'foxtrot', 'golf'];
    await importAs(
      who,
      'businesses',
      names.map((name) => ({ data: { name, website: `https://${name}.${uniq('w')}.test` } })),
    );
    const walk = async (q: string, limit: number) => {
      const seen: string[] = [];
      let cursor: string | null = null;
      for (;;) {
        const p: Page = await page(
          who,
          `/api/v1/idap/businesses?limit=${limit}${q}${cursor ? `&cursor=${cursor}` : ''}`,
        );
        expect(p.count).toBe(p.items.length);
        seen.push(...p.items.map((i) => String(i.data?.name)));
        if (!p.has_more) {
          expect(p.next_cursor).toBeNull();
          return seen;
        }
        cursor = p.next_cursor;
      }
    };
    expect(await walk('&sort=name&order=asc', 3)).toEqual([...names].sort());
    expect(await walk('&sort=name&order=desc', 2)).toEqual([...names].sort().reverse());
    expect(await walk('', 2)).toEqual([...names].reverse()); // created_at desc by default
    expect(await walk('&sort=updated_at&order=asc', 4)).toEqual(names);

    const items = await all(who, '/api/v1/idap/businesses?sort=updated_at&order=asc');
    const third = items[2]?.modified_at as string;
    expect(
      (await page(who, `/api/v1/idap/businesses?sort=updated_at&order=asc&since=${third}`)).items.map(
        (i) => i.data?.name,
      ),
    ).toEqual(names.slice(3));
    expect(
      (await page(who, `/api/v1/idap/businesses?sort=updated_at&order=asc&until=${third}`)).items.map(
        (i) => i.data?.name,
      ),
    ).toEqual(names.slice(0, 2));

    const first = await page(who, '/api/v1/idap/businesses?limit=2&sort=name');
    expect((await who.get(`/api/v1/idap/businesses?limit=2&sort=created_at&cursor=${first.next_cursor}`)).status).toBe(
      400,
    );
    expect((await who.get('/api/v1/idap/businesses?cursor=garbage')).status).toBe(400);
    // Cursors altered by hand: each is a 400 before it reaches the query (whose casts would fail: a 500).
    const cursor = (parts: string[]) => Buffer.from(JSON.stringify(parts)).toString('base64url');
    const id = items[0]?.resource_id as string;
    for (const [query, parts] of [
      ['', ['created_at', 'desc', '2026-11-27T08:00:00.000000Z', '-'.repeat(36)]],
      ['', ['created_at', 'desc', '2024-02-30T00:00:00.000000Z', id]],
      ['', ['created_at', 'desc', '1', id]],
      ['&sort=updated_at', ['updated_at', 'desc', '9'.repeat(20), id]],
    ] as const) {
      const res = await who.get(`/api/v1/idap/businesses?limit=2${query}&cursor=${cursor([...parts])}`);
      expect([parts, res.status, await res.json()]).toEqual([
        parts,
        400,
        { detail: 'invalid cursor: pass next_cursor from the previous page as it is' },
      ]);
    }
    expect((await who.get('/api/v1/idap/businesses?limit=501')).status).toBe(422);
    expect((await who.get('/api/v1/idap/businesses?limit=0')).status).toBe(422);
    expect((await who.get('/api/v1/idap/businesses?since=yesterday')).status).toBe(422);
    expect((await who.get('/api/v1/idap/businesses?sort=rating')).status).toBe(422);
  });

  test('a cursor sync loses and repeats nothing while writes happen', async () => {
    const who = caller(api, bearer(await api.newClient('sync')));
    // Distinct registrable domains (s1.sync.test and s2.sync.test would both be sync.test).
    const initial = await importAs(
      who,
      'domains',
      Array.from({ length: 60 }, (_, i) => ({ data: { domain: `sync-s${i}.test`, v: 0 } })),
    );
    const ids = initial.items.map((i) => i.resource_id);

    // Writers: new domains, data changes and flag changes, concurrently with the reader.
    let writing = true;
    let version = 0;
    const writer = (async () => {
      for (let round = 0; writing && round < 200; round++) {
        version++;
        await new Promise((r) => setImmediate(r));
        await importAs(who, 'domains', [
          { data: { domain: `sync-new${round}.test` } },
          { data: { domain: `sync-s${round % 60}.test`, v: version } },
        ]);
        await patch(who, `/api/v1/idap/domains/${ids[(round * 7) % 60]}`, {
          add: round % 2 ? ['qualified'] : ['priority'],
        });
      }
    })();

    // The reader pages through in sync order; every version it sees must be new to it.
    const latestSeen = new Map<string, string>();
    let redelivered = 0;
    let cursor: string | null = null;
    let pages = 0;
    let lastModified = '';
    const delivered = (p: Page) => {
      for (const item of p.items) {
        const prev = latestSeen.get(item.resource_id);
        expect(prev === undefined || (item.modified_at as string) > prev).toBe(true);
        if (prev !== undefined) redelivered++;
        latestSeen.set(item.resource_id, item.modified_at as string);
        if ((item.modified_at as string) > lastModified) lastModified = item.modified_at as string;
      }
    };
    do {
      const p: Page = await page(
        who,
        `/api/v1/idap/domains?sort=updated_at&order=asc&limit=5${cursor ? `&cursor=${cursor}` : ''}`,
      );
      delivered(p);
      cursor = p.next_cursor;
      pages++;
      // A slow reader: writes land between its pages.
      await new Promise((r) => setTimeout(r, 20));
    } while (cursor && pages < 60);
    writing = false;
    const writesDuringSync = version;
    await writer;
    expect(writesDuringSync).toBeGreaterThan(5);
    // Then delta sync from the latest modified_at, as the spec describes.
    for (let more = true; more;) {
      const p = await page(who, `/api/v1/idap/domains?sort=updated_at&order=asc&limit=500&since=${lastModified}`);
      delivered(p);
      more = p.has_more;
    }

    // Every resource, in its final version, was delivered.
    const final = await all(who, '/api/v1/idap/domains?sort=updated_at&order=asc');
    expect(final.length).toBeGreaterThan(60);
    expect(latestSeen.size).toBe(final.length);
    for (const r of final) expect(latestSeen.get(r.resource_id)).toBe(r.modified_at);
    // Resources changed after they were read came again, in their new version.
    expect(redelivered).toBeGreaterThan(0);
  });

  test('a write committed late is not skipped: writes of a client are ordered by commit', async () => {
    const creds = await api.newClient('late');
    const who = caller(api, bearer(creds));
    await importAs(who, 'emails', [{ data: { address: 'base@late.test' } }]);
    const start = await page(who, '/api/v1/idap/emails?sort=updated_at&order=asc');
    const last = start.items.at(-1) as Resource;

    // A projection transaction writes and stays open while the API imports another record.
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    let written!: () => void;
    const wrote = new Promise<void>((r) => {
      written = r;
    });
    const slow = api.deps.db.transaction(async (trx) => {
      await upsertResource(trx, { clientId: creds.client_id, type: 'emails', data: { address: 'slow@late.test' } });
      written();
      await held;
    });
    await wrote;
    const fast = importAs(who, 'emails', [{ data: { address: 'fast@late.test' } }]);
    await new Promise((r) => setTimeout(r, 200));
    // Neither is visible yet: the reader's position cannot move past the open write.
    expect((await page(who, `/api/v1/idap/emails?sort=updated_at&order=asc&since=${last.modified_at}`)).items).toEqual(
      [],
    );
    release();
    await slow;
    await fast;
    const after = await page(who, `/api/v1/idap/emails?sort=updated_at&order=asc&since=${last.modified_at}`);
    expect(after.items.map((i) => i.data?.address)).toEqual(['slow@late.test', 'fast@late.test']);
  });
});

describe('stats and resolve', () => {
  test('stats: total, by_flag (held flags only), by_source, last_24h; per client', async () => {
    const who = caller(api, bearer(await api.newClient('stats')));
    await importAs(
      who,
      'businesses',
      [{ data: { name: 'A', place_id: 'pa' }, flags: ['qualified'] }, { data: { name: 'B', place_id: 'pb' } }],
      { source: 'crawl_maps' },
    );
    await importAs(
      who,
      'businesses',
      [{ data: { name: 'C', place_id: 'pc' }, flags: ['rejected'] }, { data: { name: 'A2', place_id: 'pa' } }],
      { source: 'crawl_site' },
    );
    await api.deps
      .db('idap_resources')
      .where({ natural_key: 'place:pb' })
      .update({
        created_at: api.deps.db.raw(`now() - interval '2 days'`),
        modified_at: api.deps.db.raw(`now() - interval '2 days'`),
      });
    const res = await who.get('/api/v1/idap/businesses/stats');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      resource_type: 'businesses',
      total: 3,
      by_flag: { new: 1, qualified: 1, rejected: 1 }, // given flags replace the default `new`
      by_source: { crawl_maps: 2, crawl_site: 2 },
      last_24h: { created: 2, updated: 1 },
    });
    const empty = caller(api, bearer(await api.newClient('empty')));
    expect(await (await empty.get('/api/v1/idap/businesses/stats')).json()).toEqual({
      resource_type: 'businesses',
      total: 0,
      by_flag: {},
      by_source: {},
      last_24h: { created: 0, updated: 0 },
    });
  });

  test('resolve: a pin by its keys to its parent business (with include); other types by natural key', async () => {
    const creds = await api.newClient('pins');
    const who = caller(api, bearer(creds));
    const { business, pin } = await api.deps.db.transaction(async (trx) => {
      const b = await upsertResource(trx, {
        clientId: creds.client_id,
        type: 'businesses',
        data: { place_id: 'ChIJpin', name: 'Pinned Co' },
      });
      const e = await upsertResource(trx, {
        clientId: creds.client_id,
        type: 'emails',
        data: { address: 'hi@pinned.test' },
      });
      const p = await upsertResource(trx, {
        clientId: creds.client_id,
        type: 'pins',
        data: {
          pin_name: 'Pinned Co HQ',
          pin_data_set_id: 'ds-1',
          account_id: 'acc-9',
          pin_subscription_id: 'sub-3',
          status: 'active',
        },
      });
      await upsertResource(trx, {
        clientId: creds.client_id,
        type: 'pins',
        data: { pin_name: 'Other', pin_data_set_id: 'ds-1', account_id: 'acc-9' },
      });
      await relate(trx, p, b);
      await relate(trx, b, e);
      return { business: b, pin: p };
    });
    const res = await who.get('/api/v1/idap/pins/resolve?pin_name=Pinned%20Co%20HQ&account_id=acc-9&include=emails');
    expect(res.status).toBe(200);
    const body = (await res.json()) as Resource & { resolved_from: string };
    expect(body).toMatchObject({
      idap_ref: business.idapRef,
      resource_type: 'businesses',
      resolved_from: pin.idapRef,
      data: { name: 'Pinned Co' },
    });
    expect(body.related?.emails?.map((e) => e.address)).toEqual(['hi@pinned.test']);

    expect((await who.get('/api/v1/idap/pins/resolve?account_id=acc-9')).status).toBe(400);
    const none = await who.get('/api/v1/idap/pins/resolve?pin_name=Nope');
    expect(none.status).toBe(404);
    expect(await none.json()).toEqual({ detail: 'resource_not_found' });
    const orphan = await who.get('/api/v1/idap/pins/resolve?pin_name=Other');
    expect(orphan.status).toBe(404);
    expect(await orphan.json()).toEqual({ detail: 'parent_not_found' }); // the pin exists, without a parent business
    expect((await who.get('/api/v1/idap/pins/resolve')).status).toBe(422);

    expect(await (await who.get('/api/v1/idap/emails/resolve?address=HI@Pinned.test')).json()).toMatchObject({
      data: { address: 'hi@pinned.test' },
    });
    expect((await who.get('/api/v1/idap/businesses/resolve?place_id=ChIJpin')).status).toBe(200);
    // Tenant isolation.
    expect((await c.get('/api/v1/idap/pins/resolve?pin_name=Pinned%20Co%20HQ')).status).toBe(404);
    expect((await c.get('/api/v1/idap/businesses/resolve?place_id=ChIJpin')).status).toBe(404);
  });

  test('resolve: a business by its website, domain, place id or name and address, whatever key it is stored under, as the import matches it', async () => {
    const who = caller(api, bearer(await api.newClient('resolve-biz')));
    const resolve = async (q: string) => {
      const res = await who.get(`/api/v1/idap/businesses/resolve?${q}`);
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const found = (id: string | undefined) => ({
      status: 200,
      body: expect.objectContaining({
        resource_type: 'businesses',
        resource_id: id,
        resolved_from: `idap://businesses/${id}`,
      }),
    });
    // A listing (keyed by its place id); an import by its website alone merges into it.
    const d = uniq('bakery');
    const listing = await importAs(who, 'businesses', [
      { data: { name: 'Res Bakery', place_id: `ChIJ${d}`, website: `https://${d}.example`, address: '1 Main St' } },
    ]);
    const id = listing.items[0]?.resource_id;
    const site = await importAs(who, 'businesses', [
      { data: { website: `https://www.${d}.example/`, phone: '+15550100' } },
    ]);
    expect(site.items[0]).toMatchObject({ resource_id: id, status: 'updated' });
    for (const q of [
      `website=${encodeURIComponent(`https://www.${d}.example/`)}`,
      `domain=${d}.example`,
      `place_id=ChIJ${d}`,
      'name=res%20bakery&address=1%20%20main%20st',
    ]) {
      expect(await resolve(q)).toEqual(found(id));
    }

    // The site first (keyed by its domain), then its listing merges into it: the place id finds it.
    const f = uniq('florist');
    const siteFirst = await importAs(who, 'businesses', [
      { data: { name: 'Florist', website: `https://${f}.example/` } },
    ]);
    const listingLater = await importAs(who, 'businesses', [
      { data: { place_id: `ChIJ${f}`, website: `https://www.${f}.example/` } },
    ]);
    expect(listingLater.items[0]?.resource_id).toBe(siteFirst.items[0]?.resource_id);
    expect(await resolve(`place_id=ChIJ${f}`)).toEqual(found(siteFirst.items[0]?.resource_id));

    // A chain: two listings share a website. Their domain answers the oldest, until an import by the
    // website makes a business of the site itself; then it answers that one, where the import writes.
    const ch = uniq('chain');
    const first = await importAs(who, 'businesses', [
      { data: { place_id: `ChIJa${ch}`, website: `https://${ch}.example/` } },
    ]);
    await importAs(who, 'businesses', [{ data: { place_id: `ChIJb${ch}`, website: `https://${ch}.example/` } }]);
    expect(await resolve(`domain=${ch}.example`)).toEqual(found(first.items[0]?.resource_id));
    const chainSite = await importAs(who, 'businesses', [
      { data: { website: `https://${ch}.example/`, name: 'Chain HQ' } },
    ]);
    expect(chainSite.created).toBe(1);
    expect(await resolve(`website=https://${ch}.example/`)).toEqual(found(chainSite.items[0]?.resource_id));

    // No business of the key for this client; another client's business is not found either.
    expect(await resolve(`domain=none-${d}.example`)).toEqual({ status: 404, body: { detail: 'resource_not_found' } });
    const theirs = await c.get(`/api/v1/idap/businesses/resolve?domain=${d}.example`);
    expect(theirs.status).toBe(404);
    expect(await theirs.json()).toEqual({ detail: 'resource_not_found' });
  });

  test('resolve by name and address normalizes as the import does (no-break spaces, non-ASCII capitals), and every business key lookup is an index scan', async () => {
    const who = caller(api, bearer(await api.newClient('resolve-nbsp')));
    const d = uniq('roma');
    // Stored under its place id; its name and address hold the name key.
    const listing = await importAs(who, 'businesses', [
      { data: { name: `CAFÉ\u00a0Roma ${d}`, place_id: `ChIJ${d}`, address: '2\u00a0High\u202fSt' } },
    ]);
    const id = listing.items[0]?.resource_id;
    const byName = await who.get(
      `/api/v1/idap/businesses/resolve?name=${encodeURIComponent(`café roma ${d}`)}&address=${encodeURIComponent('2 high st')}`,
    );
    expect(byName.status).toBe(200);
    expect(await byName.json()).toMatchObject({ resource_id: id });
    // Letters whose lower case JavaScript and a libc locale disagree on: Turkish İ (i + combining dot
    // in Unicode's mapping, plain i in glibc's) and the Greek final sigma (ς, not σ).
    const istanbul = await importAs(who, 'businesses', [
      { data: { name: `İSTANBUL KEBAP ${d}`, place_id: `ChIJist${d}`, address: 'ΟΔΟΣ ΕΡΜΟΥ 5' } },
    ]);
    const byTurkishName = await who.get(
      `/api/v1/idap/businesses/resolve?name=${encodeURIComponent(`İstanbul Kebap ${d}`)}&address=${encodeURIComponent('Οδος Ερμου 5')}`,
    );
    expect(byTurkishName.status).toBe(200);
    expect(await byTurkishName.json()).toMatchObject({ resource_id: istanbul.items[0]?.resource_id });

    // The fallback query of each key kind, for a client with 3,000 businesses (analyzed): an index
    // on the key's expression serves it, not a walk through the client's businesses.
    const db = api.deps.db;
    const clientId = (await db('idap_resources').where({ id }).first('client_id')).client_id as string;
    await db.raw(
      `insert into idap_resources (client_id, resource_type, natural_key, data, change_seq, created_at, modified_at)
       select ?, 'businesses', 'place:bulk-' || g, jsonb_build_object('name', 'Bulk ' || g, 'address', g || ' Road', 'place_id', 'bulk-' || g, 'domain', 'bulk-' || g || '.example'),
              nextval('idap_change_seq'), now(), now()
       from generate_series(1, 3000) g`,
      [clientId],
    );
    await db.raw('analyze idap_resources');
    const explain = async (q: string): Promise<string> => {
      const seen: { sql: string; bindings: unknown[] }[] = [];
      const listen = (e: { sql: string; bindings: unknown[] }) => seen.push(e);
      db.on('query', listen);
      try {
        expect((await who.get(`/api/v1/idap/businesses/resolve?${q}`)).status).toBe(404);
      } finally {
        db.off('query', listen);
      }
      const fallback = seen.find((e) => e.sql.includes('WITH holding AS MATERIALIZED'));
      if (!fallback) throw new Error(`no fallback lookup for ${q}`);
      const { rows } = (await db.raw(
        `explain ${fallback.sql.replace(/\$\d+/g, '?')}`,
        fallback.bindings as never[],
      )) as { rows: { 'QUERY PLAN': string }[] };
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    };
    expect(await explain(`place_id=ChIJnone${d}`)).toEqual(
      expect.stringMatching(
        /idap_resources_business_place_idx[\s\S]*idap_resources_business_maps_place_idx|idap_resources_business_maps_place_idx[\s\S]*idap_resources_business_place_idx/,
      ),
    );
    expect(await explain(`domain=none-${d}.example`)).toContain('idap_resources_business_domain_idx');
    expect(await explain(`name=nobody-${d}&address=nowhere`)).toContain('idap_resources_business_name_icu_idx');
  });

  test("pins import with a parent business; pin resolve answers it, a pin without one is parent_not_found; unknown and other clients' parents are refused", async () => {
    const who = caller(api, bearer(await api.newClient('pin-parent')));
    const resolve = async (q: string) => {
      const res = await who.get(`/api/v1/idap/pins/resolve?${q}`);
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const d = uniq('pinco');
    const biz = await importAs(who, 'businesses', [
      { data: { name: 'Pin Co', place_id: `ChIJ${d}`, website: `https://${d}.example` } },
      { data: { name: 'Pin Two', website: `https://two-${d}.example` } },
    ]);
    const [b1, b2] = biz.items.map((i) => i.resource_id);
    // The parent as an idap_ref, or as a business's keys (its website finds the listing keyed by place id).
    const pins = await importAs(who, 'pins', [
      {
        data: {
          pin_name: 'HQ',
          pin_data_set_id: d,
          account_id: 'acc1',
          pin_subscription_id: `sub-${d}`,
          content: 'hello',
          status: 'active',
        },
        parent: `idap://businesses/${b1}`,
      },
      {
        data: { pin_name: 'Shop', pin_data_set_id: d, account_id: 'acc1' },
        parent: { website: `https://www.${d}.example/` },
      },
      { data: { pin_name: 'Loose', pin_data_set_id: d } },
    ]);
    expect(pins).toMatchObject({ created: 3 });
    const [hq, shop, loose] = pins.items.map((i) => i.idap_ref);
    expect(await resolve(`pin_name=HQ&pin_data_set_id=${d}&include=pins`)).toEqual({
      status: 200,
      body: expect.objectContaining({
        resource_type: 'businesses',
        resource_id: b1,
        resolved_from: hq,
        data: expect.objectContaining({ name: 'Pin Co' }),
      }),
    });
    expect((await resolve(`pin_subscription_id=sub-${d}`)).body).toMatchObject({ resource_id: b1, resolved_from: hq });
    expect((await resolve(`pin_name=Shop&pin_data_set_id=${d}`)).body).toMatchObject({
      resource_id: b1,
      resolved_from: shop,
    });
    // A pin without a parent is told apart from no pin at all.
    expect(await resolve(`pin_name=Loose&pin_data_set_id=${d}`)).toEqual({
      status: 404,
      body: { detail: 'parent_not_found' },
    });
    expect(await resolve(`pin_name=Nope&pin_data_set_id=${d}`)).toEqual({
      status: 404,
      body: { detail: 'resource_not_found' },
    });
    expect(loose).toMatch(/^idap:\/\/pins\//);

    // A pin has one parent: a new one replaces it (an update); imported without parent, it keeps it.
    const moved = await importAs(who, 'pins', [
      { data: { pin_name: 'HQ', pin_data_set_id: d }, parent: `idap://businesses/${b2}` },
    ]);
    expect(moved).toMatchObject({ updated: 1, unchanged: 0 });
    expect((await resolve(`pin_name=HQ&pin_data_set_id=${d}`)).body).toMatchObject({ resource_id: b2 });
    expect(
      (await one(who, `/api/v1/idap/businesses/${b1}?include=pins`)).related?.pins?.map((p) => p.pin_name),
    ).toEqual(['Shop']);
    const again = await importAs(who, 'pins', [
      { data: { pin_name: 'HQ', pin_data_set_id: d } },
      { data: { pin_name: 'Shop', pin_data_set_id: d }, parent: `idap://businesses/${b1}` },
    ]);
    expect(again).toMatchObject({ unchanged: 2 });
    expect((await resolve(`pin_name=HQ&pin_data_set_id=${d}`)).body).toMatchObject({ resource_id: b2 });

    // An unknown parent or another client's business is an error of that record; nothing is written.
    const other = caller(api, bearer(await api.newClient('pin-other')));
    const theirs = (await importAs(other, 'businesses', [{ data: { name: 'Theirs', place_id: `ChIJt${d}` } }])).items[0]
      ?.resource_id;
    const refused = await who.post('/api/v1/idap/pins/import', {
      records: [
        { data: { pin_name: 'New', pin_data_set_id: d }, parent: `idap://businesses/${b1}` },
        { data: { pin_name: 'New2', pin_data_set_id: d }, parent: `idap://businesses/${theirs}` },
        { data: { pin_name: 'New3', pin_data_set_id: d }, parent: { place_id: `ChIJt${d}` } },
        { data: { pin_name: 'New4', pin_data_set_id: d }, parent: { address: '1 Main St' } },
      ],
    });
    expect(refused.status).toBe(422);
    expect(await refused.json()).toEqual({
      detail: [
        {
          type: 'not_found',
          loc: ['body', 'records', 1, 'parent'],
          msg: `no business idap://businesses/${theirs} for this client`,
        },
        {
          type: 'not_found',
          loc: ['body', 'records', 2, 'parent'],
          msg: 'no business of this client matches these keys',
        },
        {
          type: 'missing',
          loc: ['body', 'records', 3, 'parent', 'place_id'],
          msg: 'a business needs place_id, website or name',
        },
      ],
    });
    expect(await resolve(`pin_name=New&pin_data_set_id=${d}`)).toEqual({
      status: 404,
      body: { detail: 'resource_not_found' },
    });
    expect((await one(other, `/api/v1/idap/businesses/${theirs}?include=pins`)).related).toEqual({ pins: [] });
    // Only pins have a parent; a parent is a business.
    const notPin = await who.post('/api/v1/idap/emails/import', {
      records: [{ data: { address: `a@${d}.example` }, parent: `idap://businesses/${b1}` }],
    });
    expect(notPin.status).toBe(422);
    expect(((await notPin.json()) as { detail: { loc: unknown[] }[] }).detail[0]?.loc).toEqual([
      'body',
      'records',
      0,
      'parent',
    ]);
    expect(
      (
        await who.post('/api/v1/idap/pins/import', {
          records: [{ data: { pin_name: 'X', pin_data_set_id: d }, parent: `idap://emails/${b1}` }],
        })
      ).status,
    ).toBe(422);
  });

  test('lists are per client', async () => {
    const a = caller(api, bearer(await api.newClient('a')));
    const b = caller(api, bearer(await api.newClient('b')));
    await importAs(a, 'company_registry', [
      { data: { registry: 'companies_house', registry_id: '01234567', name: 'A Ltd' } },
    ]);
    expect((await page(a, '/api/v1/idap/company_registry')).count).toBe(1);
    expect((await page(b, '/api/v1/idap/company_registry')).count).toBe(0);
  });
});

test('the IDAP endpoints are in the OpenAPI document', async () => {
  const doc = (await (await fetch(`${api.url}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, unknown>>;
  };
  expect(Object.keys(doc.paths)).toEqual(
    expect.arrayContaining([
      '/api/v1/idap/{resource_type}',
      '/api/v1/idap/{resource_type}/{resource_id}',
      '/api/v1/idap/{resource_type}/stats',
      '/api/v1/idap/{resource_type}/resolve',
      '/api/v1/idap/{resource_type}/import',
    ]),
  );
  expect(Object.keys(doc.paths['/api/v1/idap/{resource_type}/{resource_id}'] ?? {})).toEqual(
    expect.arrayContaining(['get', 'patch']),
  );
});
