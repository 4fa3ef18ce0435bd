import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { businessFromNominatim } from '../../activities/maps/business';
import { NominatimClient } from '../../activities/maps/nominatim';
import { OutboundClient } from '../../lib/outbound';
import { listenLocal } from '../stand-ins/listen';
import { describeRecordedGithub, recordedGithub, type RecordedGithubName } from '../support/recorded-github';

/**
 * Nominatim jsonv2 search answers (addressdetails=1, extratags=1) recorded from
 * nominatim.openstreetmap.org by geocoder-php's Nominatim provider tests, 2021
 * (test/fixtures/recorded/SOURCES.md, "OpenStreetMap Nominatim"), replayed over HTTP through the
 * real client and mapped to businesses as crawlMaps does. Not committed: laid out from a git copy
 * of geocoder-php/Geocoder by test/support/recorded-github.ts; skipped without them.
 */

type File = RecordedGithubName<'nominatim'>;
const recorded = (file: File) => recordedGithub('nominatim', file).toString('utf8');

let http: OutboundClient;
let server: { baseUrl: string; close: () => Promise<void> };
let client: NominatimClient;
/** The body the replay server answers, and the requests it received. */
let body = '[]';
const requests: { url: URL; headers: Record<string, string | string[] | undefined> }[] = [];

beforeAll(async () => {
  const s = createServer((req, res) => {
    requests.push({ url: new URL(req.url ?? '/', 'http://replay'), headers: req.headers });
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    res.end(body);
  });
  server = await listenLocal(s);
  http = new OutboundClient({ allowHosts: ['127.0.0.1'], userAgent: 'leadjobs-test/1.0', timeoutMs: 5000 });
  client = new NominatimClient({ baseUrl: server.baseUrl, userAgent: 'leadjobs-test/1.0 (ops@example.org)', http });
});

afterAll(async () => {
  await http?.close();
  await server?.close();
});

beforeEach(() => {
  requests.length = 0;
});

async function search(file: File, q: string, options: { language?: string; countryCode?: string } = {}) {
  body = recorded(file);
  return client.search({ q, limit: 5, excludePlaceIds: [], ...options }, new AbortController().signal);
}

describeRecordedGithub('nominatim')('Nominatim client on recorded answers', () => {
  test('the recordings are the files SOURCES.md names', () => {
    const sha = (f: File) => createHash('sha256').update(recordedGithub('nominatim', f)).digest('hex');
    expect(sha('search-place-des-palais.json')).toBe(
      '061ec5f0339b627db4c3fe69de92c0a1864cbcabf7a5716759a8c988cfdb4bda',
    );
    expect(sha('search-elbphilharmonie.json')).toBe('6164481c2169e8e7ac89643b338c7b700bd128133422c7af9caf618d5264b753');
    expect(sha('search-10-downing-street.json')).toBe(
      '62a7117d7b9ad8147d4598739443c08a4afed287a192348c5f99f419f6711519',
    );
    expect(sha('search-90210.json')).toBe('32f2689a31361cc7edb8c10c1eecb5f475427e0d41e487e25c305379f58974ee');
    expect(sha('search-italia-stream.json')).toBe('908d24e190890d4500ee5ee26d9f87c92226f967e671817ff7c7c2e0d52946dc');
    expect(sha('search-no-results.json')).toBe('4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945');
  });

  test('a search in Brussels: five places, named, placed and linked to OpenStreetMap, the request as the policy asks', async () => {
    const places = await search('search-place-des-palais.json', '1 Place des Palais 1000 bruxelles', {
      language: 'fr',
      countryCode: 'BE',
    });
    const req = requests[0]?.url;
    expect(req?.pathname).toBe('/search');
    expect(Object.fromEntries(req?.searchParams ?? [])).toEqual({
      q: '1 Place des Palais 1000 bruxelles',
      limit: '5',
      countrycodes: 'be',
      format: 'jsonv2',
      addressdetails: '1',
      extratags: '1',
    });
    expect(requests[0]?.headers['user-agent']).toBe('leadjobs-test/1.0 (ops@example.org)');
    expect(requests[0]?.headers['accept-language']).toBe('fr');

    const businesses = places.map((p) => businessFromNominatim(p));
    // These 2021 answers carry no `name`: the names come from display_name.
    expect(businesses.map((b) => b.business_name)).toEqual([
      'Palais Royal - Koninklijk Paleis',
      'Coudenberg',
      'Musée BELvue - BELvue Museum',
      // An unnamed house (display_name "1, Place des Palais - Paleizenplein, ..."), not "1".
      '1 Place des Palais - Paleizenplein',
      'Les Filles',
    ]);
    expect(businesses.map((b) => b.country_code)).toEqual(['BE', 'BE', 'BE', 'BE', 'BE']);
    expect(businesses[0]).toMatchObject({
      place_id: 'osm:relation/3299902',
      maps_url: 'https://www.openstreetmap.org/relation/3299902',
      coordinates: { lat: 50.8419916, lng: 4.3619888303182375 },
      categories: ['attraction', 'tourism'],
      phone: null,
      website: null,
    });
    expect(businesses[3]?.place_id).toBe('osm:node/2514258857');
  });

  test('contact:phone and contact:website are read; the phone in E.164 and the wheelchair tag as accessibility', async () => {
    const [, coudenberg] = (await search('search-place-des-palais.json', '1 Place des Palais 1000 bruxelles')).map(
      (p) => businessFromNominatim(p),
    );
    expect(coudenberg).toMatchObject({
      phone: '+32 2 500 45 54',
      phone_e164: '+3225004554',
      phone_valid: true,
      website: 'https://www.coudenberg.com',
      accessibility: 'wheelchair: limited',
      categories: ['museum', 'tourism'],
      maps_url: 'https://www.openstreetmap.org/node/3860604720',
    });

    const [elbphilharmonie] = (
      await search('search-elbphilharmonie.json', 'Elbphilharmonie, Platz der deutschen Einheit 1, Hamburg')
    ).map((p) => businessFromNominatim(p));
    expect(elbphilharmonie).toMatchObject({
      business_name: 'Elbphilharmonie',
      phone: '+49 40 3576660',
      phone_e164: '+49403576660',
      phone_valid: true,
      website: 'https://www.elbphilharmonie.de/de/',
      country_code: 'DE',
      place_id: 'osm:way/24981342',
      coordinates: { lat: 53.54129165, lng: 9.984205766993528 },
      accessibility: 'wheelchair: limited',
    });
  });

  test("a museum's seasonal opening_hours read for an ordinary week; outdoor_seating=garden is outdoor seating", async () => {
    const places = await search('search-place-des-palais.json', '1 Place des Palais 1000 bruxelles');
    const [, , belvue, , lesFilles] = places.map((p) => businessFromNominatim(p));
    // Recorded: "Mo off; Tu-Fr 09:00-17:00; Sa-Su 10:00-18:00; Jul-Aug Tu-Fr 10:00-18:00; Jan 1 off; Dec 24 ...".
    expect(belvue?.hours).toEqual({
      monday: 'Closed',
      tuesday: '09:00-17:00',
      wednesday: '09:00-17:00',
      thursday: '09:00-17:00',
      friday: '09:00-17:00',
      saturday: '10:00-18:00',
      sunday: '10:00-18:00',
    });
    expect(belvue?.website).toBe('https://belvue.be/');
    expect(lesFilles).toMatchObject({
      website: 'https://www.lesfilles.be/',
      amenities: ['outdoor_seating'],
      categories: ['restaurant', 'amenity'],
      hours: null,
    });
  });

  test('10 Downing Street: a website tag, and the unnamed house beside the office called by its address', async () => {
    const [office, house] = (await search('search-10-downing-street.json', '10 Downing St, London, UK')).map((p) =>
      businessFromNominatim(p),
    );
    expect(office).toMatchObject({
      business_name: 'Prime Minister’s Office',
      website: 'http://www.number10.gov.uk/',
      country_code: 'GB',
      place_id: 'osm:relation/1879842',
    });
    expect(house).toMatchObject({ business_name: '10 Downing Street', country_code: 'GB', website: null });
  });

  test('a postcode without osm_type or osm_id, and a stream without a country, still map', async () => {
    const [postcode] = (await search('search-90210.json', '90210,United States')).map((p) => businessFromNominatim(p));
    expect(postcode).toMatchObject({
      business_name: 'Beverly Hills',
      place_id: 'osm:place/261099446',
      maps_url: null,
      country_code: 'US',
      categories: ['postcode', 'place'],
      coordinates: { lat: 34.09508267309781, lng: -118.39932247264571 },
    });

    const [stream] = (await search('search-italia-stream.json', 'Italia')).map((p) => businessFromNominatim(p, 'AQ'));
    expect(stream).toMatchObject({
      business_name: 'Italia',
      country_code: null,
      place_id: 'osm:way/62194430',
      maps_url: 'https://www.openstreetmap.org/way/62194430',
      phone: null,
    });
  });

  test('no match is an empty list', async () => {
    await expect(
      search('search-no-results.json', 'jsajhgsdkfjhsfkjhaldkadjaslgldasd', { language: 'en' }),
    ).resolves.toEqual([]);
  });
});
