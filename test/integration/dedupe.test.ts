import { bearer, startTestApi, type TestApi } from '../support/api';
import { caller, type Caller } from '../support/jobs';

// The de-duplication API (spec §4.6) over HTTP on the real Postgres.
let api: TestApi;
let c: Caller;
beforeAll(async () => {
  api = await startTestApi({ RATE_LIMIT_ENABLED: 'false' });
  c = caller(api, bearer(await api.newClient()));
});
afterAll(async () => {
  await api.close();
});

let n = 0;
/** Values of this test's own, so tests do not match each other's records. */
const uniq = (prefix: string) =>
  `${prefix}${Date.now().toString(36)}${(n++).toString(36)}${Math.random().toString(36).slice(2, 6)}`;

type Check = {
  success: boolean;
  is_duplicate: boolean;
  confidence: number;
  matched_record_id: number | null;
  match_type: string | null;
  canonical_id: number | null;
  added_to_canonical: boolean;
  skipped: boolean;
  reason: string | null;
};
type Batch = {
  success: boolean;
  unique: Record<string, unknown>[];
  duplicates: {
    record: Record<string, unknown>;
    matched_canonical_id: number;
    confidence: number;
    match_type: string;
  }[];
  stats: {
    total_checked: number;
    unique_count: number;
    duplicate_count: number;
    added_to_canonical: number;
    skipped: boolean;
    reason: string | null;
  };
};
type Canonical = { success: boolean; total: number; limit: number; offset: number; records: Record<string, unknown>[] };

async function check(who: Caller, body: Record<string, unknown>): Promise<Check> {
  const res = await who.post('/api/v1/dedupe/check', { record_type: 'business', ...body });
  expect(res.status).toBe(200);
  return who.json<Check>(res);
}
async function batch(who: Caller, body: Record<string, unknown>): Promise<Batch> {
  const res = await who.post('/api/v1/dedupe/check-batch', { record_type: 'business', ...body });
  expect(res.status).toBe(200);
  return who.json<Batch>(res);
}
async function canonical(who: Caller, query = ''): Promise<Canonical> {
  const res = await who.get(`/api/v1/dedupe/canonical${query}`);
  expect(res.status).toBe(200);
  return who.json<Canonical>(res);
}

describe('POST /api/v1/dedupe/check', () => {
  test('a new record is unique and added; the same record again is a duplicate of it', async () => {
    const record = { company_name: 'Acme Bakery', email: `${uniq('info')}@acme.test`, city: 'Leeds' };
    const first = await check(c, { record });
    expect(first).toEqual({
      success: true,
      is_duplicate: false,
      confidence: 0,
      matched_record_id: null,
      match_type: null,
      canonical_id: expect.any(Number),
      added_to_canonical: true,
      skipped: false,
      reason: null,
    });
    const again = await check(c, { record });
    expect(again).toEqual({
      success: true,
      is_duplicate: true,
      confidence: 1,
      matched_record_id: first.canonical_id,
      match_type: 'email',
      canonical_id: null,
      added_to_canonical: false,
      skipped: false,
      reason: null,
    });
  });

  test('matching order: maps_place_id, email, proflink_url, phone, company_domain, exact_hash; first match wins', async () => {
    const place = uniq('ChIJ');
    const email = `${uniq('a')}@x.test`;
    const slug = uniq('jane-');
    const phone = `+44 20 ${Math.floor(1000 + Math.random() * 8999)} ${Math.floor(1000 + Math.random() * 8999)}`;
    const domain = `${uniq('d')}.test`;
    // Five stored records, each holding one of the keys (and nothing else in common).
    const ids: Record<string, number | null> = {};
    ids.place = (await check(c, { record: { maps_place_id: place } })).canonical_id;
    ids.email = (await check(c, { record: { email } })).canonical_id;
    ids.proflink = (await check(c, { record: { proflink_url: `https://www.linkedin.com/in/${slug}` } })).canonical_id;
    ids.phone = (await check(c, { record: { phone } })).canonical_id;
    ids.domain = (await check(c, { record: { company_domain: domain } })).canonical_id;
    expect(Object.values(ids).every((id) => typeof id === 'number')).toBe(true);

    const all = {
      maps_place_id: place,
      email,
      proflink_url: `https://www.linkedin.com/in/${slug}`,
      phone,
      company_domain: domain,
    };
    const probe = async (record: Record<string, string>) =>
      check(c, { record: { ...record, full_name: uniq('someone ') }, add_to_canonical: false });
    expect(await probe(all)).toMatchObject({
      is_duplicate: true,
      match_type: 'maps_place_id',
      matched_record_id: ids.place,
      confidence: 1,
    });
    const { maps_place_id: _p, ...noPlace } = all;
    expect(await probe(noPlace)).toMatchObject({ match_type: 'email', matched_record_id: ids.email });
    const { email: _e, ...noEmail } = noPlace;
    expect(await probe(noEmail)).toMatchObject({ match_type: 'proflink_url', matched_record_id: ids.proflink });
    const { proflink_url: _l, ...noProflink } = noEmail;
    expect(await probe(noProflink)).toMatchObject({ match_type: 'phone', matched_record_id: ids.phone });
    const { phone: _ph, ...onlyDomain } = noProflink;
    expect(await probe(onlyDomain)).toMatchObject({ match_type: 'company_domain', matched_record_id: ids.domain });
    expect(await probe({ city: 'Nowhere' })).toMatchObject({
      is_duplicate: false,
      canonical_id: null,
      added_to_canonical: false,
    });
  });

  test('keys are normalised: e-mail case, profile URL form, phone digits, domain from website, exact hash of normalised fields', async () => {
    const user = uniq('Ann.');
    const e = await check(c, { record: { email: `  ${user}@Example.TEST ` } });
    expect(await check(c, { record: { email: `${user.toLowerCase()}@example.test` } })).toMatchObject({
      is_duplicate: true,
      match_type: 'email',
      matched_record_id: e.canonical_id,
    });

    const slug = uniq('Jane-Doe-');
    const p = await check(c, { record: { proflink_url: `https://uk.linkedin.com/in/${slug}/?trk=abc` } });
    expect(await check(c, { record: { proflink_url: `linkedin.com/in/${slug.toLowerCase()}` } })).toMatchObject({
      match_type: 'proflink_url',
      matched_record_id: p.canonical_id,
    });

    const digits = String(Math.floor(1e9 + Math.random() * 8e9));
    const ph = await check(c, {
      record: { phone: `+1 (${digits.slice(0, 3)}) ${digits.slice(3, 6)}-${digits.slice(6)}` },
    });
    expect(await check(c, { record: { phone: `1${digits}` } })).toMatchObject({
      match_type: 'phone',
      matched_record_id: ph.canonical_id,
    });

    const host = `${uniq('shop')}.test`;
    const d = await check(c, { record: { website: `https://www.${host}/about?x=1` } });
    expect(await check(c, { record: { company_domain: host.toUpperCase() } })).toMatchObject({
      match_type: 'company_domain',
      matched_record_id: d.canonical_id,
    });

    const name = uniq('Jane ');
    const h = await check(c, { record: { full_name: `${name}  Smith`, city: 'Leeds' }, record_type: 'contact' });
    expect(
      await check(c, { record: { full_name: ` ${name.toUpperCase()} smith`, city: 'LEEDS' }, record_type: 'contact' }),
    ).toMatchObject({ match_type: 'exact_hash', matched_record_id: h.canonical_id });
    // Another record type is another store.
    expect(
      await check(c, {
        record: { full_name: `${name} Smith`, city: 'Leeds' },
        record_type: 'profile',
        add_to_canonical: false,
      }),
    ).toMatchObject({ is_duplicate: false });
  });

  test('company_domain is the registrable domain: a shop subdomain matches the company, other.co.uk and another github.io site do not', async () => {
    const company = uniq('acme');
    const stored = await check(c, { record: { company_domain: `${company}.co.uk`, company_name: 'Acme' } });
    const probe = (record: Record<string, string>) => check(c, { record, add_to_canonical: false });
    expect(await probe({ website: `https://shop.${company}.co.uk/cart` })).toMatchObject({
      is_duplicate: true,
      match_type: 'company_domain',
      matched_record_id: stored.canonical_id,
    });
    expect(await probe({ company_domain: `WWW.${company}.CO.UK` })).toMatchObject({
      is_duplicate: true,
      matched_record_id: stored.canonical_id,
    });
    expect(await probe({ website: `https://${uniq('other')}.co.uk/` })).toMatchObject({ is_duplicate: false });

    const alice = await check(c, { record: { website: `https://${company}-alice.github.io/` } });
    expect(await probe({ website: `https://${company}-bob.github.io/` })).toMatchObject({ is_duplicate: false });
    expect(await probe({ website: `https://www.${company}-alice.github.io/about` })).toMatchObject({
      is_duplicate: true,
      matched_record_id: alice.canonical_id,
    });

    // Internationalised names match in either spelling.
    const idn = await check(c, { record: { website: `https://bücher-${company}.de/` } });
    const punycode = new URL(`http://bücher-${company}.de`).hostname;
    expect(punycode).toMatch(/^xn--bcher-/);
    expect(await probe({ company_domain: punycode })).toMatchObject({
      is_duplicate: true,
      match_type: 'company_domain',
      matched_record_id: idn.canonical_id,
    });
  });

  test('add_to_canonical false checks without storing', async () => {
    const record = { email: `${uniq('n')}@x.test` };
    expect(await check(c, { record, add_to_canonical: false })).toMatchObject({
      is_duplicate: false,
      canonical_id: null,
      added_to_canonical: false,
    });
    expect(await check(c, { record, add_to_canonical: false })).toMatchObject({ is_duplicate: false });
  });

  test('campaign_id scopes matching to that campaign; without it a record matches any campaign', async () => {
    const [x, y] = [uniq('camp-x-'), uniq('camp-y-')];
    const record = { maps_place_id: uniq('ChIJ') };
    const inX = await check(c, { record, campaign_id: x });
    expect(inX).toMatchObject({ is_duplicate: false, added_to_canonical: true });
    expect(await check(c, { record, campaign_id: x })).toMatchObject({
      is_duplicate: true,
      matched_record_id: inX.canonical_id,
    });
    const inY = await check(c, { record, campaign_id: y });
    expect(inY).toMatchObject({ is_duplicate: false, added_to_canonical: true });
    expect(inY.canonical_id).not.toBe(inX.canonical_id);
    expect(await check(c, { record, add_to_canonical: false })).toMatchObject({
      is_duplicate: true,
      matched_record_id: inX.canonical_id,
    });
  });

  test('clients are isolated: another client sees none of these records', async () => {
    const other = caller(api, bearer(await api.newClient('other')));
    const record = { email: `${uniq('iso')}@x.test` };
    const mine = await check(c, { record });
    const theirs = await check(other, { record });
    expect(theirs).toMatchObject({ is_duplicate: false, added_to_canonical: true });
    expect(theirs.canonical_id).not.toBe(mine.canonical_id);
    const listing = await canonical(other);
    expect(listing.total).toBe(1);
    expect(listing.records.map((r) => r.id)).toEqual([theirs.canonical_id]);
  });

  test('concurrent checks of the same new record create one canonical record', async () => {
    const campaign = uniq('race-');
    const record = {
      company_name: 'Race Ltd',
      maps_place_id: uniq('ChIJ'),
      email: `${uniq('r')}@race.test`,
      phone: '+44 20 7946 0000',
    };
    const all = await Promise.all(Array.from({ length: 20 }, () => check(c, { record, campaign_id: campaign })));
    const added = all.filter((r) => r.added_to_canonical);
    expect(added).toHaveLength(1);
    const id = added[0]?.canonical_id;
    expect(
      all.filter((r) => r.is_duplicate).every((r) => r.matched_record_id === id && r.match_type === 'maps_place_id'),
    ).toBe(true);
    expect((await canonical(c, `?campaign_id=${campaign}`)).total).toBe(1);
  });

  test('validation: unknown record fields, empty records, bad record_type and threshold are 422', async () => {
    const bad = async (body: Record<string, unknown>) => {
      const res = await c.post('/api/v1/dedupe/check', body);
      expect(res.status).toBe(422);
      return (await c.json<{ detail: { type: string; loc: unknown[]; msg: string }[] }>(res)).detail;
    };
    expect(await bad({ record_type: 'business', record: { email: 'a@b.test', rating: 5 } })).toEqual([
      { type: 'extra_forbidden', loc: ['body', 'record'], msg: 'Unknown field(s): rating' },
    ]);
    expect((await bad({ record_type: 'business', record: { email: '  ' } }))[0]).toMatchObject({
      loc: ['body', 'record'],
      msg: 'record must carry at least one non-empty field',
    });
    expect((await bad({ record_type: 'company', record: { email: 'a@b.test' } }))[0]).toMatchObject({
      loc: ['body', 'record_type'],
    });
    expect((await bad({ record_type: 'business', record: { email: 'a@b.test' }, threshold: 1.5 }))[0]).toMatchObject({
      type: 'too_big',
      loc: ['body', 'threshold'],
    });
    expect((await bad({ record: { email: 'a@b.test' } }))[0]).toMatchObject({ loc: ['body', 'record_type'] });
    expect((await bad({ record_type: 'email' }))[0]).toMatchObject({ type: 'missing', loc: ['body', 'record'] });
  });
});

describe('POST /api/v1/dedupe/check-batch', () => {
  test('checks records in order: store matches, matches within the batch, unique ones added; stats', async () => {
    const stored = await check(c, { record: { email: `${uniq('old')}@b.test` } });
    const storedEmail = `${uniq('old')}@b.test`;
    await check(c, { record: { email: storedEmail } });
    const place = uniq('ChIJ');
    const records = [
      { company_name: 'New One', maps_place_id: place },
      { email: storedEmail.toUpperCase() },
      { company_name: 'Same place', maps_place_id: place },
      { company_name: 'New Two', website: `https://${uniq('two')}.test` },
    ];
    const res = await batch(c, { records });
    expect(res.success).toBe(true);
    expect(res.unique).toEqual([records[0], records[3]]);
    expect(res.duplicates).toEqual([
      { record: records[1], matched_canonical_id: expect.any(Number), confidence: 1, match_type: 'email' },
      { record: records[2], matched_canonical_id: expect.any(Number), confidence: 1, match_type: 'maps_place_id' },
    ]);
    expect(res.duplicates[1]?.matched_canonical_id).not.toBe(stored.canonical_id);
    expect(res.stats).toEqual({
      total_checked: 4,
      unique_count: 2,
      duplicate_count: 2,
      added_to_canonical: 2,
      skipped: false,
      reason: null,
    });
    // The record the batch added is what the third one matched.
    expect(await check(c, { record: { maps_place_id: place }, add_to_canonical: false })).toMatchObject({
      matched_record_id: res.duplicates[1]?.matched_canonical_id,
    });
  });

  test('the same idempotency key returns the same response for 5 minutes, per client', async () => {
    const key = uniq('key-');
    const records = [{ email: `${uniq('i')}@x.test` }, { email: `${uniq('i')}@x.test` }];
    const first = await batch(c, { records, idempotency_key: key });
    expect(first.stats).toMatchObject({ unique_count: 2, added_to_canonical: 2 });
    // Without the cache these would now be duplicates of the records the first call added.
    expect(await batch(c, { records, idempotency_key: key })).toEqual(first);
    expect((await batch(c, { records, idempotency_key: uniq('key-') })).stats).toMatchObject({
      duplicate_count: 2,
      added_to_canonical: 0,
    });
    // Another client with the same key gets its own result.
    const other = caller(api, bearer(await api.newClient('other')));
    expect(
      (await batch(other, { records: [{ email: `${uniq('o')}@x.test` }], idempotency_key: key })).stats.total_checked,
    ).toBe(1);
    // After 5 minutes the key is computed afresh.
    await api.deps
      .db('dedupe_idempotency')
      .where({ idempotency_key: key })
      .update({ created_at: api.deps.db.raw(`now() - interval '301 seconds'`) });
    expect((await batch(c, { records, idempotency_key: key })).stats).toMatchObject({
      duplicate_count: 2,
      unique_count: 0,
    });
  });

  test('a replay is the original response byte for byte, keys in their original order', async () => {
    const key = uniq('bytes-');
    const body = JSON.stringify({
      record_type: 'contact',
      records: [
        { full_name: 'Ann Lee', email: `${uniq('b')}@x.test`, company_name: 'Acme' },
        { email: `${uniq('b')}@x.test` },
      ],
      idempotency_key: key,
    });
    const send = async () => {
      const res = await c.post('/api/v1/dedupe/check-batch', body);
      expect(res.status).toBe(200);
      return res.text();
    };
    const original = await send();
    expect(Object.keys(JSON.parse(original) as object)).toEqual(['success', 'unique', 'duplicates', 'stats']);
    expect(await send()).toBe(original);
  });

  test('concurrent batches with the same key answer the same; concurrent overlapping batches store each record once', async () => {
    const key = uniq('ck-');
    const records = Array.from({ length: 10 }, () => ({ email: `${uniq('cb')}@x.test` }));
    const same = await Promise.all(Array.from({ length: 5 }, () => batch(c, { records, idempotency_key: key })));
    for (const r of same) expect(r).toEqual(same[0]);
    expect(same[0]?.stats.added_to_canonical).toBe(10);

    const campaign = uniq('cc-');
    const shared = Array.from({ length: 30 }, (_, i) => ({ phone: `+44 7700 9${String(i).padStart(5, '0')}` }));
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        batch(c, { records: [...shared].sort(() => Math.random() - 0.5), campaign_id: campaign }),
      ),
    );
    expect(results.reduce((sum, r) => sum + r.stats.added_to_canonical, 0)).toBe(30);
    expect((await canonical(c, `?campaign_id=${campaign}&limit=1000`)).total).toBe(30);
  });

  test('1-100 records; idempotency_key at most 100 characters', async () => {
    const status = async (body: Record<string, unknown>) =>
      (await c.post('/api/v1/dedupe/check-batch', { record_type: 'email', ...body })).status;
    expect(await status({ records: [] })).toBe(422);
    expect(await status({ records: Array.from({ length: 101 }, (_, i) => ({ email: `${i}@x.test` })) })).toBe(422);
    expect(await status({ records: [{ email: 'a@x.test' }], idempotency_key: 'k'.repeat(101) })).toBe(422);
    expect(
      await status({
        records: Array.from({ length: 100 }, () => ({ email: `${uniq('h')}@x.test` })),
        idempotency_key: 'k'.repeat(100),
      }),
    ).toBe(200);
  });
});

describe('GET /api/v1/dedupe/canonical', () => {
  test('newest first, filtered by record_type and campaign_id, paged; soft-deleted records omitted', async () => {
    const who = caller(api, bearer(await api.newClient('lister')));
    const campaign = uniq('list-');
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push(
        (
          await check(who, {
            record: { email: `p${i}@list.test`, full_name: `Person ${i}` },
            record_type: 'contact',
            campaign_id: campaign,
          })
        ).canonical_id as number,
      );
    }
    await check(who, { record: { company_name: 'Biz', maps_place_id: uniq('ChIJ') } });

    const all = await canonical(who);
    expect(all).toMatchObject({ success: true, total: 6, limit: 100, offset: 0 });
    const contacts = await canonical(who, `?record_type=contact&campaign_id=${campaign}&limit=2&offset=1`);
    expect(contacts).toMatchObject({ total: 5, limit: 2, offset: 1 });
    expect(contacts.records.map((r) => r.id)).toEqual([ids[3], ids[2]]);
    expect(contacts.records[0]).toEqual({
      id: ids[3],
      record_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      record_type: 'contact',
      email: 'p3@list.test',
      full_name: 'Person 3',
      company_name: null,
      company_domain: null,
      maps_place_id: null,
      proflink_url: null,
      phone: null,
      city: null,
      country: null,
      source_worker: 'api',
      campaign_id: campaign,
      created_at: expect.any(String),
    });

    await api.deps.db('canonical_records').where({ id: ids[4] }).update({ deleted_at: new Date() });
    const after = await canonical(who, '?record_type=contact');
    expect(after.total).toBe(4);
    expect(after.records.map((r) => r.id)).toEqual([ids[3], ids[2], ids[1], ids[0]]);
    // A soft-deleted record no longer matches: the same record is unique again.
    expect(
      await check(who, {
        record: { email: 'p4@list.test', full_name: 'Person 4' },
        record_type: 'contact',
        campaign_id: campaign,
      }),
    ).toMatchObject({ is_duplicate: false, added_to_canonical: true });

    expect((await who.get('/api/v1/dedupe/canonical?limit=1001')).status).toBe(422);
    expect((await who.get('/api/v1/dedupe/canonical?limit=0')).status).toBe(422);
    // An unknown filter is refused, as on the IDAP and search lists, not ignored.
    const unknown = await who.get('/api/v1/dedupe/canonical?email=p4@list.test');
    expect([unknown.status, await unknown.json()]).toEqual([
      422,
      { detail: [{ type: 'extra_forbidden', loc: ['query'], msg: 'Unknown field(s): email' }] },
    ]);
  });
});

describe('DEDUPE_ENABLED=false', () => {
  test('checks answer skipped with reason dedupe_not_configured; every batch record is unique', async () => {
    const off = await startTestApi({ RATE_LIMIT_ENABLED: 'false', DEDUPE_ENABLED: 'false' });
    try {
      const who = caller(off, bearer(await off.newClient()));
      const record = { email: 'same@x.test' };
      expect(await check(who, { record })).toEqual({
        success: true,
        is_duplicate: false,
        confidence: 0,
        matched_record_id: null,
        match_type: null,
        canonical_id: null,
        added_to_canonical: false,
        skipped: true,
        reason: 'dedupe_not_configured',
      });
      const b = await batch(who, { records: [record, record] });
      expect(b).toEqual({
        success: true,
        unique: [record, record],
        duplicates: [],
        stats: {
          total_checked: 2,
          unique_count: 2,
          duplicate_count: 0,
          added_to_canonical: 0,
          skipped: true,
          reason: 'dedupe_not_configured',
        },
      });
      expect((await canonical(who)).total).toBe(0);
    } finally {
      await off.close();
    }
  });
});

test('the dedupe endpoints are in the OpenAPI document', async () => {
  const doc = (await (await fetch(`${api.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
  expect(Object.keys(doc.paths)).toEqual(
    expect.arrayContaining(['/api/v1/dedupe/check', '/api/v1/dedupe/check-batch', '/api/v1/dedupe/canonical']),
  );
});

describe('fuzzy matching (issue 41): opt-in, after the exact match types', () => {
  let f: Caller;
  beforeEach(async () => {
    // A client of its own per test: the names below are ordinary, and each test starts from an empty store.
    f = caller(api, bearer(await api.newClient()));
  });

  test('the same business spelled differently in the same city is a fuzzy_business duplicate with its confidence and explanation; without fuzzy it is unique', async () => {
    const stored = await check(f, {
      record: { company_name: 'Northgate & Sons Bakers Ltd', city: 'York', country: 'GB' },
    });
    const probe = { company_name: 'Northgate and Sons Bakers', city: 'York', country: 'gb' };
    expect(await check(f, { record: probe, add_to_canonical: false })).toMatchObject({
      is_duplicate: false,
      match_type: null,
    });
    const fuzzy = await check(f, { record: probe, add_to_canonical: false, fuzzy: true });
    expect(fuzzy).toMatchObject({
      is_duplicate: true,
      match_type: 'fuzzy_business',
      matched_record_id: stored.canonical_id,
      added_to_canonical: false,
    });
    expect(fuzzy.confidence).toBeGreaterThan(0.9);
    expect(fuzzy.confidence).toBeLessThan(1);
    expect(
      (fuzzy as Check & { explanation: Record<string, { agreed: boolean; score: number }> }).explanation,
    ).toMatchObject({
      company_name: { agreed: true, score: 1 },
      city: { agreed: true, score: 1 },
      country: { agreed: true, score: 1 },
    });
  });

  test('an exact key still wins over a fuzzy match, with confidence 1.0 and no explanation', async () => {
    const email = `${uniq('info')}@northgate.test`;
    const byName = await check(f, { record: { company_name: 'Northgate Bakers', city: 'York' } });
    const byEmail = await check(f, { record: { company_name: 'Something Else', email } });
    const r = await check(f, {
      record: { company_name: 'Northgate Bakers Ltd', city: 'York', email },
      add_to_canonical: false,
      fuzzy: true,
    });
    expect(r).toEqual(
      expect.objectContaining({
        is_duplicate: true,
        match_type: 'email',
        matched_record_id: byEmail.canonical_id,
        confidence: 1,
      }),
    );
    expect(r).not.toHaveProperty('explanation');
    expect(byName.canonical_id).not.toBe(byEmail.canonical_id);
  });

  test('a threshold excludes a weak match that a lower threshold accepts; the same name in another city never matches', async () => {
    const stored = await check(f, {
      record: { company_name: 'Northgate Bakers', city: 'York', phone: '01904 111222', address: '1 Mill Lane' },
    });
    // The same name in the same city, but another phone and another address: weak evidence.
    const weak = {
      company_name: 'Northgate Bakers Ltd',
      city: 'York',
      phone: '01904 333444',
      address: '22 High Street',
    };
    expect(await check(f, { record: weak, add_to_canonical: false, fuzzy: true })).toMatchObject({
      is_duplicate: false,
    });
    const low = await check(f, { record: weak, add_to_canonical: false, fuzzy: true, threshold: 0.05 });
    expect(low).toMatchObject({
      is_duplicate: true,
      match_type: 'fuzzy_business',
      matched_record_id: stored.canonical_id,
    });
    expect(low.confidence).toBeLessThan(0.5);
    expect(
      await check(f, {
        record: { company_name: 'Northgate Bakers', city: 'Leeds' },
        add_to_canonical: false,
        fuzzy: true,
        threshold: 0,
      }),
    ).toMatchObject({ is_duplicate: false });
  });

  test('people: name variants and initials within one company domain are fuzzy_contact duplicates; another first name or domain is not', async () => {
    const john = await check(f, {
      record_type: 'contact',
      record: { first_name: 'John', last_name: 'Smith', company_domain: 'acme-widgets.test' },
    });
    const probe = (record: Record<string, string>) =>
      check(f, { record_type: 'contact', record, add_to_canonical: false, fuzzy: true });
    expect(await probe({ full_name: 'J. Smith', email: 'jsmith@acme-widgets.test' })).toMatchObject({
      is_duplicate: true,
      match_type: 'fuzzy_contact',
      matched_record_id: john.canonical_id,
    });
    expect(await probe({ full_name: 'Jon Smith', email: 'jon@acme-widgets.test' })).toMatchObject({
      is_duplicate: true,
      match_type: 'fuzzy_contact',
    });
    expect(await probe({ full_name: 'Mary Smith', email: 'mary@acme-widgets.test' })).toMatchObject({
      is_duplicate: false,
    });
    expect(await probe({ full_name: 'John Smith', email: 'john@other-widgets.test' })).toMatchObject({
      is_duplicate: false,
    });
    // company_domain (or website) is an exact key of its own (spec §4.6), which matches first.
    expect(await probe({ full_name: 'Mary Smith', company_domain: 'acme-widgets.test' })).toMatchObject({
      is_duplicate: true,
      match_type: 'company_domain',
    });
  });

  test('check-batch: a later record matches an earlier new one of the same batch fuzzily, and the duplicate carries its explanation', async () => {
    const b = await batch(f, {
      fuzzy: true,
      records: [
        { company_name: "Arnie Morton's of Chicago", city: 'Los Angeles', address: '435 S. La Cienega Blvd.' },
        { company_name: "Arnie Morton's", city: 'Los Angeles', address: '435 S. La Cienega Boulevard' },
        { company_name: 'Art’s Deli', city: 'Studio City' },
      ],
    });
    expect(b.stats).toMatchObject({ total_checked: 3, unique_count: 2, duplicate_count: 1, added_to_canonical: 2 });
    const [dup] = b.duplicates as (Batch['duplicates'][number] & {
      explanation: Record<string, { agreed: boolean }>;
    })[];
    expect(dup).toMatchObject({ match_type: 'fuzzy_business', record: { company_name: "Arnie Morton's" } });
    expect(dup?.explanation).toMatchObject({
      company_name: { agreed: true },
      city: { agreed: true },
      address: { agreed: true },
    });
    const listed = await canonical(f);
    expect(listed.records.map((r) => r.company_name).sort()).toEqual(["Arnie Morton's of Chicago", 'Art’s Deli']);
    expect(dup?.matched_canonical_id).toBe(
      listed.records.find((r) => r.company_name === "Arnie Morton's of Chicago")?.id,
    );
  });

  test("a hotel's cafe and dining room share its phone: with fuzzy they are two businesses (both stored, in one batch or two), without it the phone makes them one", async () => {
    const hotel = { phone: '+1 404 237 2700', city: 'Atlanta', address: '3434 Peachtree Rd.' };
    const cafe = { company_name: 'Cafe, Ritz-Carlton Buckhead', ...hotel };
    const dining = { company_name: 'Dining Room, Ritz-Carlton Buckhead', ...hotel };
    const b = await batch(f, { fuzzy: true, records: [cafe, dining] });
    expect(b.stats).toMatchObject({ unique_count: 2, duplicate_count: 0, added_to_canonical: 2 });
    // Checked again, each is its own record's duplicate (by exact hash), not the other's.
    const again = await batch(f, {
      fuzzy: true,
      records: [dining, { ...cafe, company_name: 'Ritz-Carlton Cafe (Buckhead)' }],
    });
    expect(again.stats).toMatchObject({ duplicate_count: 2 });
    const ids = (await canonical(f)).records;
    const idOf = (name: string) => ids.find((r) => r.company_name === name)?.id;
    expect(again.duplicates.map((d) => d.matched_canonical_id)).toEqual([
      idOf(dining.company_name),
      idOf(cafe.company_name),
    ]);
    const plain = caller(api, bearer(await api.newClient()));
    expect((await batch(plain, { records: [cafe, dining] })).duplicates).toEqual([
      expect.objectContaining({ match_type: 'phone' }),
    ]);
  });

  test('among 300 newer bakers of the same town the old one is still found by its own name; once deleted it is found no more', async () => {
    const old = await check(f, { record: { company_name: 'Northgate Bakers', city: 'York', country: 'GB' } });
    // 300 newer records hold the town's trade word ("york|bake") as well: more than a key's read.
    // Their names differ by a word of three letters (`Baker Kab Bakers`, `Baker Kac Bakers`).
    const word = (n: number) => [676, 26, 1].map((d) => String.fromCharCode(97 + (Math.floor(n / d) % 26))).join('');
    for (let from = 0; from < 300; from += 100) {
      const records = Array.from({ length: 100 }, (_, j) => ({
        company_name: `Baker ${word(from + j + 7000)} Bakers`,
        city: 'York',
      }));
      expect((await batch(f, { fuzzy: true, records })).stats).toMatchObject({ added_to_canonical: 100 });
    }
    const probe = { company_name: 'NORTHGATE BAKERS LTD', city: 'York' };
    expect(await check(f, { record: probe, add_to_canonical: false, fuzzy: true })).toMatchObject({
      is_duplicate: true,
      match_type: 'fuzzy_business',
      matched_record_id: old.canonical_id,
    });
    await api.deps.db('canonical_records').where({ id: old.canonical_id }).update({ deleted_at: new Date() });
    expect(await check(f, { record: probe, add_to_canonical: false, fuzzy: true })).toMatchObject({
      is_duplicate: false,
    });
  });

  test('fuzzy is a boolean and address a string field: anything else is a 422', async () => {
    expect(
      (await f.post('/api/v1/dedupe/check', { record_type: 'business', record: { company_name: 'A' }, fuzzy: 'yes' }))
        .status,
    ).toBe(422);
    expect(
      (await f.post('/api/v1/dedupe/check', { record_type: 'business', record: { company_name: 'A', address: 12 } }))
        .status,
    ).toBe(422);
  });
});

describe('POST /api/v1/dedupe/canonical/{id}/merge and .../unmerge (issue 41)', () => {
  test('merged records point to one canonical record: they leave the listing, their keys answer it; unmerge restores them', async () => {
    const m = caller(api, bearer(await api.newClient()));
    const a = (await check(m, { record: { company_name: 'Northgate Bakers', email: 'shop@northgate.test' } }))
      .canonical_id as number;
    const b = (await check(m, { record: { company_name: 'Northgate Bakery Cafe', email: 'cafe@northgate.test' } }))
      .canonical_id as number;
    const c2 = (await check(m, { record: { company_name: 'Northgate Sons', phone: '+44 1904 000111' } }))
      .canonical_id as number;
    const res = await m.post(`/api/v1/dedupe/canonical/${a}/merge`, { record_ids: [b, c2] });
    expect(res.status).toBe(200);
    const merged = await m.json<{
      success: boolean;
      canonical_id: number;
      merged_record_ids: number[];
      undo_until: string;
    }>(res);
    expect(merged).toMatchObject({ success: true, canonical_id: a, merged_record_ids: [b, c2] });
    expect(new Date(merged.undo_until).getTime() - Date.now()).toBeGreaterThan(29 * 86_400_000);
    expect((await canonical(m)).records.map((r) => r.id)).toEqual([a]);
    expect(await check(m, { record: { email: 'cafe@northgate.test' }, add_to_canonical: false })).toMatchObject({
      is_duplicate: true,
      match_type: 'email',
      matched_record_id: a,
    });
    expect(await check(m, { record: { phone: '+44 (1904) 000-111' }, add_to_canonical: false })).toMatchObject({
      is_duplicate: true,
      match_type: 'phone',
      matched_record_id: a,
    });
    // Again: idempotent.
    expect((await m.post(`/api/v1/dedupe/canonical/${a}/merge`, { record_ids: [b] })).status).toBe(200);

    const undo = await m.post(`/api/v1/dedupe/canonical/${a}/unmerge`, { record_ids: [b] });
    expect(await m.json(undo)).toEqual({ success: true, canonical_id: a, unmerged_record_ids: [b] });
    expect((await canonical(m)).records.map((r) => r.id).sort()).toEqual([a, b].sort());
    expect(await check(m, { record: { email: 'cafe@northgate.test' }, add_to_canonical: false })).toMatchObject({
      matched_record_id: b,
    });
    expect(await check(m, { record: { phone: '+44 (1904) 000-111' }, add_to_canonical: false })).toMatchObject({
      matched_record_id: a,
    });
  });

  test("IDAP follows: after a merge each business resource's related businesses include the other's; unmerge takes the relation away", async () => {
    const m = caller(api, bearer(await api.newClient()));
    const imported = await m.post('/api/v1/idap/businesses/import', {
      records: [
        { data: { name: 'Northgate Bakers', place_id: 'ChIJnorthgate1' } },
        { data: { name: 'Northgate and Sons Bakers', website: 'https://northgate-bakers.test' } },
      ],
    });
    expect(imported.status).toBe(200);
    const listed = await m.json<{ items: { resource_id: string; data: { name: string } }[] }>(
      await m.get('/api/v1/idap/businesses?limit=10'),
    );
    const idOf = (name: string) => listed.items.find((r) => r.data.name === name)?.resource_id as string;
    const a = (await check(m, { record: { company_name: 'Northgate Bakers', maps_place_id: 'ChIJnorthgate1' } }))
      .canonical_id as number;
    const b = (
      await check(m, { record: { company_name: 'Northgate and Sons Bakers', website: 'northgate-bakers.test' } })
    ).canonical_id as number;
    const relatedNames = async (id: string) =>
      (
        await m.json<{ related: { businesses: { resource_id: string }[] } }>(
          await m.get(`/api/v1/idap/businesses/${id}?include=businesses`),
        )
      ).related.businesses.map((r) => r.resource_id);
    expect(await relatedNames(idOf('Northgate Bakers'))).toEqual([]);
    expect((await m.post(`/api/v1/dedupe/canonical/${a}/merge`, { record_ids: [b] })).status).toBe(200);
    expect(await relatedNames(idOf('Northgate Bakers'))).toEqual([idOf('Northgate and Sons Bakers')]);
    expect(await relatedNames(idOf('Northgate and Sons Bakers'))).toEqual([idOf('Northgate Bakers')]);
    expect((await m.post(`/api/v1/dedupe/canonical/${a}/unmerge`, { record_ids: [b] })).status).toBe(200);
    expect(await relatedNames(idOf('Northgate Bakers'))).toEqual([]);
    expect(await relatedNames(idOf('Northgate and Sons Bakers'))).toEqual([]);
  });

  test("refusals: unknown ids and another client's 404, into itself or across record types 400, chains 409, a merge older than the undo window 409", async () => {
    const m = caller(api, bearer(await api.newClient()));
    const other = caller(api, bearer(await api.newClient()));
    const a = (await check(m, { record: { email: `${uniq('a')}@x.test` } })).canonical_id as number;
    const b = (await check(m, { record: { email: `${uniq('b')}@x.test` } })).canonical_id as number;
    const c3 = (await check(m, { record: { email: `${uniq('c')}@x.test` } })).canonical_id as number;
    const person = (await check(m, { record_type: 'contact', record: { email: `${uniq('p')}@x.test` } }))
      .canonical_id as number;
    const theirs = (await check(other, { record: { email: `${uniq('t')}@x.test` } })).canonical_id as number;
    const merge = (who: Caller, into: number, ids: number[]) =>
      who.post(`/api/v1/dedupe/canonical/${into}/merge`, { record_ids: ids });
    expect((await merge(m, theirs, [a])).status).toBe(404);
    expect((await merge(m, a, [theirs])).status).toBe(404);
    expect((await merge(m, a, [a])).status).toBe(400);
    expect((await merge(m, a, [person])).status).toBe(400);
    expect((await merge(m, a, [])).status).toBe(422);
    expect((await m.post(`/api/v1/dedupe/canonical/abc/merge`, { record_ids: [b] })).status).toBe(422);
    expect((await merge(m, a, [b])).status).toBe(200);
    expect((await merge(m, c3, [b])).status).toBe(409); // b is merged into a
    expect((await merge(m, b, [c3])).status).toBe(409); // b is merged itself
    expect((await merge(m, c3, [a])).status).toBe(409); // others are merged into a
    expect((await m.post(`/api/v1/dedupe/canonical/${c3}/unmerge`, { record_ids: [b] })).status).toBe(409);
    // A merge older than DEDUPE_MERGE_UNDO_DAYS (30) can no longer be undone.
    await api.deps
      .db('canonical_records')
      .where({ id: b })
      .update({ merged_at: api.deps.db.raw("now() - interval '31 days'") });
    const late = await m.post(`/api/v1/dedupe/canonical/${a}/unmerge`, { record_ids: [b] });
    expect(late.status).toBe(409);
    expect(await m.json(late)).toEqual({
      detail: `canonical record ${b} was merged more than 30 days ago: the merge can no longer be undone`,
    });
  });
});
