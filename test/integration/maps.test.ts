import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { createDb } from '../../db';
import { CATALOG } from '../../jobs';
import { crawlMapsResult, mapsBusiness } from '../../jobs/crawl-maps';
import { workflowTaskQueues } from '../../jobs/queues';
import { createLogger } from '../../lib/logger';
import {
  DEFAULT_USER_AGENT,
  OutboundClient,
  type OutboundRequestInit,
  type OutboundResponse,
} from '../../lib/outbound';
import { Storage } from '../../lib/storage';
import { createSearchClient } from '../../search/client';
import { activityQueueLimits } from '../../workers/main';
import { createRateLimitedWorkers, createWorkers } from '../../workers/worker';
import { bearer, ownQueues, startTestApi, testConfig, type TestApi } from '../support/api';
import { caller, waitForStatus, type Caller } from '../support/jobs';
import { waitFor } from '../support/processes';
import { imageBytes, startGooglePlacesStandIn, type GooglePlacesStandIn } from '../stand-ins/google-places';
import { startNominatimStandIn, type NominatimStandIn } from '../stand-ins/nominatim';
import { startOverpassStandIn, type OverpassStandIn } from '../stand-ins/overpass';
import { runWorkflowBundle } from '../support/workflow-bundle';

// crawlMaps over HTTP through the real API and the production worker set (the job queue, the
// Nominatim rate-limited queue; workflowTaskQueues adds the lead-indexing queue) on the stack, against stand-in Google
// Places and Nominatim servers on 127.0.0.1.
jest.setTimeout(120_000);

const KEY = 'AIzaStandInKey-0123456789';
const OSM_AGENT = 'leadjobs-test/1.0 (ops@leadjobs.example)';

try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // already installed in this process
}

let places: GooglePlacesStandIn;
let nominatim: NominatimStandIn;
let overpass: OverpassStandIn;
let api: TestApi;
let c: Caller;
let stopWorkers: () => Promise<void>;
let env: Record<string, string>;

/**
 * The worker's outbound client, with Google's share links (maps.app.goo.gl/{code}, goo.gl/maps/{code})
 * answered by the stand-in's (GET /s/{code}): a hosts-file entry, as it were, so that payloads carry
 * real share URLs.
 */
class ShareLinksAtStandIn extends OutboundClient {
  override fetch(url: string, init?: OutboundRequestInit): Promise<OutboundResponse> {
    const u = new URL(url);
    const code =
      u.hostname === 'maps.app.goo.gl'
        ? u.pathname.slice(1)
        : u.hostname === 'goo.gl' && u.pathname.startsWith('/maps/')
          ? u.pathname.slice(6)
          : null;
    return super.fetch(code === null ? url : `${places.baseUrl}/s/${code}`, init);
  }
}

async function startMapsWorkers(overrides: Record<string, string>): Promise<() => Promise<void>> {
  const config = testConfig(overrides);
  const db = createDb(config);
  const storage = Storage.fromConfig(config);
  const search = createSearchClient(config);
  const http = new ShareLinksAtStandIn({
    allowHosts: config.USER_URL_ALLOW_HOSTS,
    userAgent: DEFAULT_USER_AGENT,
    timeoutMs: 10_000,
  });
  const logger = createLogger('silent');
  const activities = createActivities({ config, db, storage, search, logger, http, workerId: 'maps-worker' });
  const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
  const common = { connection, namespace: config.TEMPORAL_NAMESPACE, activities, identity: 'maps-worker', logger };
  const workers: Worker[] = [
    ...(await createWorkers({
      ...common,
      bundle: await runWorkflowBundle(),
      taskQueues: workflowTaskQueues(config.TASK_QUEUE_PREFIX, [CATALOG.crawlMaps]),
    })),
    ...(await createRateLimitedWorkers({
      ...common,
      queues: activityQueueLimits(config).filter((q) => q.taskQueue.includes('-osm-')),
    })),
  ];
  const running = Promise.all(workers.map((w) => w.run()));
  return async () => {
    workers.forEach((w) => w.shutdown());
    await running;
    await Promise.allSettled([connection.close(), db.destroy(), search.close(), http.close()]);
  };
}

beforeAll(async () => {
  [places, nominatim, overpass] = await Promise.all([
    startGooglePlacesStandIn({ apiKey: KEY }),
    startNominatimStandIn(),
    startOverpassStandIn(),
  ]);
  env = {
    RATE_LIMIT_ENABLED: 'false',
    USER_URL_ALLOW_HOSTS: '127.0.0.1',
    ...ownQueues('maps'),
    GOOGLE_PLACES_BASE_URL: places.baseUrl,
    GOOGLE_PLACES_API_KEY: KEY,
    NOMINATIM_BASE_URL: nominatim.baseUrl,
    OVERPASS_BASE_URL: overpass.baseUrl,
    OSM_USER_AGENT: OSM_AGENT,
  };
  api = await startTestApi(env);
  stopWorkers = await startMapsWorkers(env);
  c = caller(api, bearer(await api.newClient()));
});

afterAll(async () => {
  await stopWorkers();
  await api.close();
  await Promise.all([places.close(), nominatim.close(), overpass.close()]);
});

type Business = Record<string, unknown>;
interface Finished {
  jobId: string;
  status: Record<string, unknown>;
  data: { businesses: Business[]; results_count: number; provider: string; query: string };
}

async function submit(as: Caller, body: Record<string, unknown>): Promise<string> {
  const res = await as.post('/api/v1/jobs/crawlMaps/submit', body);
  expect(res.status).toBe(201);
  const json = await as.json<{ job_id: string; success: boolean }>(res);
  expect(json.success).toBe(true);
  return json.job_id;
}

async function run(as: Caller, body: Record<string, unknown>): Promise<Finished> {
  const jobId = await submit(as, body);
  const status = await waitForStatus(as, jobId, ['completed', 'failed'], 90_000);
  if (status.status !== 'completed')
    return { jobId, status, data: { businesses: [], results_count: 0, provider: '', query: '' } };
  const envelope = await as.json<{ data: Finished['data'] }>(await as.get(`/api/v1/jobs/${jobId}/results`));
  return { jobId, status, data: envelope.data };
}

const byName = (list: Business[], name: string) => list.find((b) => b.business_name === name) as Business;

describe('crawlMaps with Google Places', () => {
  test('a search for 25 places takes two pages and gives every §2.2 field', async () => {
    const before = places.requests.length;
    const { status, data } = await run(c, {
      search_query: 'bakery in Leeds',
      max_results: 25,
      region: 'GB',
      priority: 5,
    });
    expect(status).toMatchObject({ status: 'completed', results_count: 25 });
    expect(() => crawlMapsResult.parse(data)).not.toThrow();
    expect(data).toMatchObject({ provider: 'google_places', query: 'bakery in Leeds', results_count: 25 });
    expect(new Set(data.businesses.map((b) => b.place_id)).size).toBe(25);

    const searches = places.requests.slice(before).filter((r) => r.path === '/v1/places:searchText');
    expect(searches).toHaveLength(2);
    expect(searches.map((r) => r.body?.pageSize)).toEqual([20, 20]);
    expect(searches[0]?.body).toMatchObject({ textQuery: 'bakery in Leeds', regionCode: 'GB' });
    expect(searches[0]?.body?.pageToken).toBeUndefined();
    expect(typeof searches[1]?.body?.pageToken).toBe('string');
    expect(searches[0]?.fieldMask?.split(',')).toEqual(
      expect.arrayContaining([
        'places.id',
        'places.displayName',
        'places.regularOpeningHours',
        'places.photos',
        'nextPageToken',
      ]),
    );

    const first = byName(data.businesses, 'Leeds Bakery 1');
    expect(first).toMatchObject({
      business_name: 'Leeds Bakery 1',
      name: 'Leeds Bakery 1',
      address: '1 Briggate, Leeds LS1 6HD, UK',
      phone: '+44 113 496 0001',
      phone_e164: '+441134960001',
      phone_national: '0113 496 0001',
      phone_type: 'FIXED_LINE',
      phone_valid: true,
      website: 'https://www.leedsbakery1.co.uk/',
      rating: 3.6,
      review_count: 101,
      reviews_count: 101,
      hours: {
        monday: '07:00-17:30',
        tuesday: '07:00-17:30',
        wednesday: '07:00-17:30',
        thursday: '07:00-17:30',
        friday: '07:00-17:30',
        saturday: '08:00-12:00, 13:00-16:00',
        sunday: 'Closed',
      },
      categories: ['bakery', 'cafe', 'food'],
      place_id: 'ChIJstandinLeeds0001',
      maps_place_id: 'ChIJstandinLeeds0001',
      coordinates: { lat: 53.79, lng: -1.55, latitude: 53.79, longitude: -1.55 },
      price_level: '$',
      amenities: ['takeout', 'dine_in', 'serves_coffee'],
      accessibility: 'wheelchair accessible entrance',
      business_status: 'OPERATIONAL',
      country_code: 'GB',
      dedupe_unique: true,
    });
    expect(first.photos).toEqual([
      `${places.baseUrl}/images/AZLphoto0001x1`,
      `${places.baseUrl}/images/AZLphoto0001x2`,
    ]);
    expect(first).not.toHaveProperty('popular_times');
    expect(first).not.toHaveProperty('reviews');
    expect(byName(data.businesses, 'Leeds Bakery 2')).toMatchObject({
      price_level: '$$',
      accessibility: 'wheelchair accessible entrance, wheelchair accessible parking',
    });
    expect(byName(data.businesses, 'Leeds Bakery 4')).toMatchObject({ price_level: '$$$$' });
    // FREE and no price level at all: the field is absent.
    expect(byName(data.businesses, 'Leeds Bakery 5')).not.toHaveProperty('price_level');
    expect(byName(data.businesses, 'Leeds Bakery 6')).not.toHaveProperty('price_level');
    expect(byName(data.businesses, 'Leeds Bakery 3')).toMatchObject({
      phone: '+44 7911 123456',
      phone_e164: '+447911123456',
      phone_national: '07911 123456',
      phone_type: 'MOBILE',
      phone_valid: true,
    });
    // An impossible number keeps its raw text.
    expect(byName(data.businesses, 'Leeds Bakery 4')).toMatchObject({
      phone: '0113 12',
      phone_e164: null,
      phone_national: null,
      phone_valid: false,
    });
    for (const b of data.businesses) expect(() => mapsBusiness.parse(b)).not.toThrow();

    // The first photo lies in the client's media bucket: fetched back, it is the provider's image.
    const imageUrl = String(first.image_url);
    expect(
      imageUrl.startsWith(
        `${api.deps.config.MEDIA_PUBLIC_URL}/${api.deps.storage.bucketFor(c.auth.split(' ')[1]?.split(':')[0] as string)}/maps/photos/`,
      ),
    ).toBe(true);
    const image = await fetch(imageUrl);
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/gif');
    expect(Buffer.from(await image.arrayBuffer())).toEqual(imageBytes('AZLphoto0001x1'));
    expect(new Set(data.businesses.map((b) => b.image_url)).size).toBe(25);
  });

  test('a place id gives one business with its reviews; a share link is followed to its place', async () => {
    const { status, data } = await run(c, {
      url: 'ChIJstandinLeeds0005',
      extract_reviews: true,
      dedupe_enabled: false,
    });
    expect(status).toMatchObject({ status: 'completed', results_count: 1 });
    expect(data.businesses).toHaveLength(1);
    const b = data.businesses[0] as Business;
    expect(b).toMatchObject({ place_id: 'ChIJstandinLeeds0005', business_name: 'Leeds Bakery 5', review_count: 105 });
    expect(b.reviews).toEqual([
      { author: 'Reviewer 1', rating: 5, text: 'Review 1 of bakery 5', published_at: '2026-01-15T10:00:00Z' },
      { author: 'Reviewer 2', rating: 4, text: 'Review 2 of bakery 5', published_at: '2026-02-15T10:00:00Z' },
    ]);
    expect(b).not.toHaveProperty('dedupe_unique');
    const details = places.requests.filter((r) => r.path === '/v1/places/ChIJstandinLeeds0005');
    expect(details.at(-1)?.fieldMask?.split(',')).toContain('reviews');

    const shared = await run(c, { url: 'https://maps.app.goo.gl/ChIJstandinLeeds0007', dedupe_enabled: false });
    expect(shared.status).toMatchObject({ status: 'completed', results_count: 1 });
    expect(shared.data.businesses[0]).toMatchObject({
      place_id: 'ChIJstandinLeeds0007',
      business_name: 'Leeds Bakery 7',
    });
    expect(shared.data.businesses[0]).not.toHaveProperty('reviews');
  });

  test('a url the worker could not use is refused at submission with 422 and no job; the forms it reads are accepted', async () => {
    const fresh = caller(api, bearer(await api.newClient('maps url client')));
    const refused: [string, string][] = [
      ['not a url', 'not a URL or place id'],
      ['ftp://example.com/x', 'not an http(s) URL (ftp:)'],
      ['https://www.openstreetmap.org/search?query=bakery', 'not an OpenStreetMap node, way or relation URL'],
      ['https://www.google.com/maps/search/bakery+leeds', 'not a google.com/maps/place URL'],
      // The maps_url of a Google result: the Places API looks places up by id only.
      [
        'https://maps.google.com/?cid=1001',
        'a maps.google.com/?cid= link cannot be looked up with the Places API: send the place id (maps_place_id in the results) instead',
      ],
      // Neither a maps place URL nor a share link: not fetched on the user's behalf.
      [
        'https://example.com/some/page',
        'not a Google Maps or OpenStreetMap place URL, nor a maps.app.goo.gl share link',
      ],
      [
        places.shareLink('ChIJstandinLeeds0007'),
        'not a Google Maps or OpenStreetMap place URL, nor a maps.app.goo.gl share link',
      ],
    ];
    const answers = [];
    for (const [url] of refused) {
      const res = await fresh.post('/api/v1/jobs/crawlMaps/submit', { url });
      answers.push({ url, status: res.status, body: await fresh.json<unknown>(res) });
    }
    expect(answers).toEqual(
      refused.map(([url, reason]) => ({
        url,
        status: 422,
        body: { detail: [{ type: 'custom', loc: ['body', 'url'], msg: `invalid maps URL or place id: ${reason}` }] },
      })),
    );
    // A provider that cannot read the url given.
    for (const [payload, msg] of [
      [
        { url: 'https://www.openstreetmap.org/node/9000003', provider: 'google_places' },
        'an openstreetmap.org URL needs provider osm',
      ],
      [
        { url: 'ChIJstandinLeeds0006', provider: 'osm' },
        'provider osm needs an openstreetmap.org node, way or relation URL',
      ],
    ] as const) {
      const res = await fresh.post('/api/v1/jobs/crawlMaps/submit', payload);
      expect([res.status, await fresh.json(res)]).toEqual([
        422,
        { detail: [{ type: 'custom', loc: ['body', 'url'], msg }] },
      ]);
    }
    expect(await fresh.json<{ total: number }>(await fresh.get('/api/v1/jobs/list'))).toMatchObject({ total: 0 });

    const placeUrl = await run(fresh, {
      url: 'https://www.google.com/maps/search/?api=1&query=Leeds+Bakery+6&query_place_id=ChIJstandinLeeds0006',
      dedupe_enabled: false,
    });
    expect(placeUrl.status).toMatchObject({ status: 'completed', results_count: 1 });
    expect(placeUrl.data.businesses[0]).toMatchObject({
      place_id: 'ChIJstandinLeeds0006',
      business_name: 'Leeds Bakery 6',
    });
    for (const url of [
      'ChIJstandinLeeds0006',
      'https://maps.app.goo.gl/ChIJstandinLeeds0006',
      'https://goo.gl/maps/ChIJstandinLeeds0006',
      'https://www.openstreetmap.org/node/9000003',
    ]) {
      const { status } = await run(fresh, {
        url,
        provider: url.includes('openstreetmap') ? 'osm' : 'google_places',
        dedupe_enabled: false,
      });
      expect([url, status]).toEqual([url, expect.objectContaining({ status: 'completed', results_count: 1 })]);
    }
  });

  test('dedupe_unique across two jobs; dedupe_unique_only drops the duplicates', async () => {
    const fresh = caller(api, bearer(await api.newClient('dedupe client')));
    const first = await run(fresh, { search_query: 'bakery in Leeds', max_results: 5 });
    expect(first.data.businesses.map((b) => b.dedupe_unique)).toEqual([true, true, true, true, true]);
    const second = await run(fresh, { search_query: 'bakery in Leeds', max_results: 7 });
    expect(second.data.businesses.map((b) => b.dedupe_unique)).toEqual([false, false, false, false, false, true, true]);
    const only = await run(fresh, { search_query: 'bakery in Leeds', max_results: 8, dedupe_unique_only: true });
    expect(only.status).toMatchObject({ status: 'completed', results_count: 1 });
    expect(only.data.businesses.map((b) => b.place_id)).toEqual(['ChIJstandinLeeds0008']);
    // Canonical records of another client do not count.
    const other = caller(api, bearer(await api.newClient('other client')));
    expect(
      (await run(other, { search_query: 'bakery in Leeds', max_results: 3 })).data.businesses.every(
        (b) => b.dedupe_unique === true,
      ),
    ).toBe(true);
  });

  test('dedupe_fuzzy: a listing whose name and address are a stored business written differently is a duplicate; without it the listing is first seen', async () => {
    const seeded = async () => {
      const who = caller(api, bearer(await api.newClient('fuzzy maps client')));
      const res = await who.post('/api/v1/dedupe/check', {
        record_type: 'business',
        record: { company_name: 'LEEDS BAKERY 1 LTD', address: '1 Briggate, Leeds LS1 6HD', country: 'GB' },
      });
      expect(res.status).toBe(200);
      return who;
    };
    const fuzzy = await run(await seeded(), { search_query: 'bakery in Leeds', max_results: 2, dedupe_fuzzy: true });
    // Leeds Bakery 2 (2 Briggate) is a neighbour, not the same business.
    expect(fuzzy.data.businesses.map((b) => [b.business_name, b.dedupe_unique])).toEqual([
      ['Leeds Bakery 1', false],
      ['Leeds Bakery 2', true],
    ]);
    const exact = await run(await seeded(), { search_query: 'bakery in Leeds', max_results: 2 });
    expect(exact.data.businesses.map((b) => b.dedupe_unique)).toEqual([true, true]);
  });

  test('two listings of one chain in one result: the second is the duplicate, and dedupe_unique_only keeps the first', async () => {
    // Both were "first seen": a match to a canonical record of the same job counted as the job's own
    // (meant for a retry of the activity), whichever listing had made it.
    const fresh = caller(api, bearer(await api.newClient('chain client')));
    const both = await run(fresh, { search_query: 'juice_shop in Leeds' });
    expect(both.data.businesses.map((b) => [b.place_id, b.dedupe_unique])).toEqual([
      ['ChIJstandinJuice0001', true],
      ['ChIJstandinJuice0002', false],
    ]);
    const other = caller(api, bearer(await api.newClient('chain client 2')));
    const only = await run(other, { search_query: 'juice_shop in Leeds', dedupe_unique_only: true });
    expect(only.data.businesses.map((b) => b.place_id)).toEqual(['ChIJstandinJuice0001']);
  });

  test('with de-duplication off on the service (DEDUPE_ENABLED=false) a dedupe_enabled job still says dedupe_unique: every business true', async () => {
    await stopWorkers();
    stopWorkers = await startMapsWorkers({ ...env, DEDUPE_ENABLED: 'false' });
    try {
      const fresh = caller(api, bearer(await api.newClient('dedupe off client')));
      await run(fresh, { search_query: 'bakery in Leeds', max_results: 3 });
      // The same listings again: duplicates with de-duplication on.
      const again = await run(fresh, { search_query: 'bakery in Leeds', max_results: 4 });
      expect(again.data.businesses.map((b) => b.dedupe_unique)).toEqual([true, true, true, true]);
      const only = await run(fresh, { search_query: 'bakery in Leeds', max_results: 2, dedupe_unique_only: true });
      expect(only.data.businesses).toHaveLength(2);
      const notAsked = await run(fresh, { search_query: 'bakery in Leeds', max_results: 2, dedupe_enabled: false });
      expect(notAsked.data.businesses[0]).not.toHaveProperty('dedupe_unique');
    } finally {
      await stopWorkers();
      stopWorkers = await startMapsWorkers(env);
    }
  });

  test('businesses become IDAP businesses keyed by place id, with phones and domains, and leads', async () => {
    const client = caller(api, bearer(await api.newClient('idap client')));
    await run(client, { search_query: 'bakery in Leeds', max_results: 3 });
    const list = async (type: string) =>
      (
        await client.json<{ items: { data: Record<string, unknown> }[] }>(
          await client.get(`/api/v1/idap/${type}?source=crawl_maps`),
        )
      ).items;
    await waitFor(async () => (await list('businesses')).length === 3, 15_000, 'the IDAP businesses');
    expect((await list('businesses')).find((r) => r.data.place_id === 'ChIJstandinLeeds0001')?.data).toMatchObject({
      name: 'Leeds Bakery 1',
      domain: 'leedsbakery1.co.uk',
      phone: '+441134960001',
      category: 'bakery',
      rating: 3.6,
      review_count: 101,
      country: 'GB',
    });
    expect((await list('domains')).map((r) => r.data.domain).sort()).toEqual([
      'leedsbakery1.co.uk',
      'leedsbakery2.co.uk',
      'leedsbakery3.co.uk',
    ]);
    expect((await list('phones')).map((r) => r.data.number).sort()).toEqual([
      '+441134960001',
      '+441134960002',
      '+447911123456',
    ]);
    await waitFor(
      async () =>
        (await client.json<{ total: number }>(await client.get('/api/v1/search/leads?query=bakery'))).total === 3,
      30_000,
      'the leads',
    );
  });
});

test('the OpenAPI document describes the crawlMaps payload and result', async () => {
  const doc = (await (await fetch(`${api.url}/openapi.json`)).json()) as {
    paths: Record<string, unknown>;
    components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
  };
  expect(doc.paths).toHaveProperty(['/api/v1/jobs/crawlMaps/submit']);
  expect(Object.keys(doc.components.schemas.MapsBusiness?.properties ?? {})).toEqual(
    expect.arrayContaining([
      'business_name',
      'phone_e164',
      'image_url',
      'hours',
      'price_level',
      'dedupe_unique',
      'reviews',
    ]),
  );
  expect(doc.components.schemas).toHaveProperty('CrawlMapsResult');
});

describe("crawlMaps beyond one query's 60 places", () => {
  test("the query's area is searched in locationRestriction tiles, a full tile split in four, merged by place id", async () => {
    const before = places.requests.length;
    const { status, data } = await run(c, {
      search_query: 'florist in Leeds',
      max_results: 200,
      dedupe_enabled: false,
    });
    expect(status).toMatchObject({ status: 'completed', results_count: 150 });
    expect(data).toMatchObject({ results_count: 150, tiles_searched: 5 });
    expect(new Set(data.businesses.map((b) => b.place_id)).size).toBe(150);
    const searches = places.requests.slice(before).filter((r) => r.path === '/v1/places:searchText');
    // The plain query (3 pages), the geocoding of "Leeds", the whole viewport (3 pages, full), its four quarters.
    expect(
      searches.filter((r) => !r.body?.locationRestriction && r.body?.textQuery === 'florist in Leeds'),
    ).toHaveLength(3);
    expect(searches.filter((r) => r.body?.textQuery === 'Leeds')).toHaveLength(1);
    const tiled = searches.filter((r) => r.body?.locationRestriction);
    expect(tiled[0]?.body?.locationRestriction).toEqual({
      rectangle: { low: { latitude: 53.7, longitude: -1.8 }, high: { latitude: 53.9, longitude: -1.3 } },
    });
    expect(new Set(tiled.map((r) => JSON.stringify(r.body?.locationRestriction))).size).toBe(5);

    // Wanting no more than one query answers: no tiles.
    const small = await run(c, { search_query: 'florist in Leeds', max_results: 30, dedupe_enabled: false });
    expect(small.data).not.toHaveProperty('tiles_searched');
    expect(small.data.results_count).toBe(30);
  });
});

describe('crawlMaps provider errors and cancel', () => {
  test('a quota answer is retried after its delay; still exhausted, the job fails naming the provider and the quota', async () => {
    places.exhaustQuota(1, 1);
    const recovered = await run(c, { search_query: 'bakery in Leeds', max_results: 2, dedupe_enabled: false });
    expect(recovered.status).toMatchObject({ status: 'completed', results_count: 2 });

    // Another payload: an identical one would be answered by the job above (submit de-duplication).
    places.exhaustQuota(3, 1);
    const failed = await run(c, { search_query: 'bakery in Leeds centre', max_results: 3, dedupe_enabled: false });
    expect(failed.status.status).toBe('failed');
    expect(failed.status.error_message).toBe(
      "Google Places API quota exceeded (RESOURCE_EXHAUSTED): Quota exceeded for quota metric 'SearchTextRequest' and limit 'SearchTextRequest per minute' of service 'places.googleapis.com'.",
    );
    // Three attempts, each after the RetryInfo delay.
    const quotaAnswers = places.requests.filter((r) => r.body?.textQuery === 'bakery in Leeds centre');
    expect(quotaAnswers).toHaveLength(3);
  });

  test('a rejected key fails naming GOOGLE_PLACES_API_KEY; an unknown place fails with business not found', async () => {
    places.revokeKey(true);
    try {
      const rejected = await run(c, { search_query: 'bakery in Leeds' });
      expect(rejected.status).toMatchObject({
        status: 'failed',
        error_message: 'Google Places API rejected the key (API_KEY_INVALID): check GOOGLE_PLACES_API_KEY',
      });
    } finally {
      places.revokeKey(false);
    }
    const missing = await run(c, { url: 'ChIJdoesNotExist000000' });
    expect(missing.status).toMatchObject({
      status: 'failed',
      error_message: 'business not found: ChIJdoesNotExist000000',
    });
    expect(places.requests.filter((r) => r.path === '/v1/places/ChIJdoesNotExist000000')).toHaveLength(1);
  });

  test('cancelling a running search stops its requests within 3 s', async () => {
    places.setDelay(1500);
    try {
      const jobId = await submit(c, { search_query: 'bakery in Leeds', max_results: 25, dedupe_enabled: false });
      await waitForStatus(c, jobId, ['processing']);
      await waitFor(
        async () => places.requests.some((r) => r.body?.textQuery === 'bakery in Leeds' && r.body.pageSize === 20),
        15_000,
        'the first search request',
      );
      expect((await c.del(`/api/v1/jobs/${jobId}`)).status).toBe(200);
      const cancelledAt = Date.now();
      expect((await waitForStatus(c, jobId, ['cancelled'], 3000)).status).toBe('cancelled');
      // A request may still start while the cancel travels to the activity (its next heartbeat), none after 3 s.
      await new Promise((r) => setTimeout(r, 4000));
      expect(Math.max(...places.requests.map((r) => r.at)) - cancelledAt).toBeLessThan(3000);
      expect((await c.get(`/api/v1/jobs/${jobId}/results`)).status).toBe(410);
    } finally {
      places.setDelay(0);
    }
  });
});

describe('crawlMaps with OpenStreetMap', () => {
  test('a Nominatim search pages past 40 results at most 1 request per second, with a declared agent', async () => {
    const before = nominatim.requests.length;
    const { status, data } = await run(c, {
      search_query: 'OSM Bakery',
      provider: 'osm',
      max_results: 45,
      region: 'GB',
    });
    expect(status).toMatchObject({ status: 'completed', results_count: 45 });
    expect(data).toMatchObject({ provider: 'osm', query: 'OSM Bakery' });
    const sent = nominatim.requests.slice(before);
    expect(sent.map((r) => [r.path, r.status, r.query.get('limit')])).toEqual([
      ['/search', 200, '40'],
      ['/search', 200, '5'],
    ]);
    expect(sent[1]?.query.get('exclude_place_ids')?.split(',')).toHaveLength(40);
    expect(sent.every((r) => r.userAgent === OSM_AGENT && r.query.get('countrycodes') === 'gb')).toBe(true);
    expect((sent[1]?.at ?? 0) - (sent[0]?.at ?? 0)).toBeGreaterThanOrEqual(1000);

    const first = byName(data.businesses, 'OSM Bakery 1');
    expect(first).toMatchObject({
      place_id: 'osm:node/9000001',
      maps_place_id: 'osm:node/9000001',
      address: 'OSM Bakery 1, 1 Kirkgate, City Centre, Leeds, West Yorkshire, England, LS1 6BH, United Kingdom',
      phone: '+44 113 496 0999',
      phone_e164: '+441134960999',
      phone_valid: true,
      website: 'https://osm-bakery.example.org/',
      rating: null,
      review_count: null,
      hours: {
        monday: '08:00-18:00',
        tuesday: '08:00-18:00',
        wednesday: '08:00-18:00',
        thursday: '08:00-18:00',
        friday: '08:00-18:00',
        saturday: '09:00-12:00, 13:00-17:00',
        sunday: 'Closed',
      },
      categories: ['bakery', 'shop'],
      coordinates: { lat: 53.79, lng: -1.54 },
      amenities: ['takeaway'],
      accessibility: 'wheelchair: yes',
      maps_url: 'https://www.openstreetmap.org/node/9000001',
      country_code: 'GB',
      dedupe_unique: true,
    });
    expect(first).not.toHaveProperty('price_level');
    expect(String(first.image_url)).toContain('/maps/photos/');
    expect((await fetch(String(first.image_url))).status).toBe(200);
    // A national number is read in the address's country; an unreadable opening_hours gives no hours.
    expect(byName(data.businesses, 'OSM Bakery 2')).toMatchObject({
      phone: '0113 496 0998',
      phone_e164: '+441134960998',
      hours: null,
      image_url: null,
      photos: [],
    });
    for (const b of data.businesses) expect(() => mapsBusiness.parse(b)).not.toThrow();
  });

  test('an openstreetmap.org URL is looked up; an unknown one fails with business not found', async () => {
    const found = await run(c, {
      url: 'https://www.openstreetmap.org/node/9000003',
      provider: 'osm',
      dedupe_enabled: false,
    });
    expect(found.status).toMatchObject({ status: 'completed', results_count: 1 });
    expect(found.data.businesses[0]).toMatchObject({ place_id: 'osm:node/9000003', business_name: 'OSM Bakery 3' });
    // Without a provider, the url says which: OSM, although this worker has a Google key.
    const unset = await run(c, {
      url: 'https://www.openstreetmap.org/node/9000003',
      dedupe_enabled: false,
      max_results: 1,
    });
    expect(unset.status).toMatchObject({ status: 'completed', results_count: 1 });
    expect(unset.data).toMatchObject({ provider: 'osm' });
    const missing = await run(c, { url: 'https://www.openstreetmap.org/way/1', provider: 'osm' });
    expect(missing.status).toMatchObject({ status: 'failed', error_message: 'business not found: W1' });
    expect(nominatim.requests.every((r) => r.status !== 429)).toBe(true);
  });

  test('a category in a named area is one Overpass query; its nodes and ways become businesses', async () => {
    const { status, data } = await run(c, {
      search_query: 'bakeries in Leeds',
      provider: 'osm',
      dedupe_enabled: false,
    });
    expect(status).toMatchObject({ status: 'completed', results_count: 2 });
    expect(overpass.requests).toHaveLength(1);
    expect(overpass.requests[0]).toMatchObject({
      status: 200,
      userAgent: OSM_AGENT,
      query: '[out:json][timeout:25];area["name"="Leeds"]->.a;nwr["shop"="bakery"](area.a);out center tags 20;',
    });
    expect(data.businesses).toEqual([
      expect.objectContaining({
        business_name: 'Kirkgate Loaves',
        place_id: 'osm:node/1866179709',
        address: 'Kirkgate Loaves, 12 Kirkgate, Leeds, LS1 6BH, GB',
        phone: '0113 496 0777',
        phone_e164: '+441134960777',
        website: 'https://kirkgate-loaves.example.org/',
        hours: expect.objectContaining({ monday: 'Closed', tuesday: '07:30-15:00', sunday: 'Closed' }),
        categories: ['bakery', 'shop'],
        coordinates: { lat: 53.7965, lng: -1.5416, latitude: 53.7965, longitude: -1.5416 },
        country_code: 'GB',
        maps_url: 'https://www.openstreetmap.org/node/1866179709',
      }),
      expect.objectContaining({
        business_name: 'Headrow Bread',
        place_id: 'osm:way/48211234',
        coordinates: { lat: 53.8021, lng: -1.5488, latitude: 53.8021, longitude: -1.5488 },
        phone: null,
      }),
    ]);
  });
});
