import { hoursFromOsm, hoursFromPeriods, parsePlaceRef, priceLevel, splitQuery } from '../../activities/maps/parse';
import { businessFromNominatim } from '../../activities/maps/business';
import { osmCategory, overpassQuery } from '../../activities/maps/overpass';
import { crawlMapsPayload } from '../../jobs/crawl-maps';

describe('maps place references', () => {
  test('a bare place id', () => {
    expect(parsePlaceRef('ChIJN1t_tDeuEmsRUsoyG83frY4')).toEqual({
      kind: 'google_place_id',
      placeId: 'ChIJN1t_tDeuEmsRUsoyG83frY4',
    });
  });

  test("a google.com/maps/place URL gives its name and the place's own coordinates (not the viewport's)", () => {
    const url =
      'https://www.google.com/maps/place/Toklas+Bakery/@51.5120,-0.1160,17z/data=!3m1!4b1!4m6!3m5!1s0x48761b:0x1!8m2!3d51.5122!4d-0.1151';
    expect(parsePlaceRef(url)).toEqual({
      kind: 'google_place_url',
      url,
      name: 'Toklas Bakery',
      lat: 51.5122,
      lng: -0.1151,
      placeId: null,
    });
  });

  test('a search URL with query_place_id carries the id', () => {
    expect(
      parsePlaceRef('https://www.google.com/maps/search/?api=1&query=Toklas&query_place_id=ChIJabcdefghijklmnop'),
    ).toMatchObject({ kind: 'google_place_url', placeId: 'ChIJabcdefghijklmnop', name: null });
  });

  test('Google Maps share links are links to follow; OSM URLs name their object; the rest is invalid', () => {
    expect(parsePlaceRef('https://maps.app.goo.gl/Ab12Cd34')).toEqual({
      kind: 'link',
      url: 'https://maps.app.goo.gl/Ab12Cd34',
    });
    expect(parsePlaceRef('https://goo.gl/maps/Ab12Cd34')).toEqual({
      kind: 'link',
      url: 'https://goo.gl/maps/Ab12Cd34',
    });
    expect(parsePlaceRef('https://maps.app.goo.gl/')).toEqual({
      kind: 'invalid',
      reason: 'a share link without its code',
    });
    expect(parsePlaceRef('https://example.com/some/page')).toEqual({
      kind: 'invalid',
      reason: 'not a Google Maps or OpenStreetMap place URL, nor a maps.app.goo.gl share link',
    });
    expect(parsePlaceRef('https://goo.gl/Ab12Cd34')).toMatchObject({ kind: 'invalid' });
    expect(parsePlaceRef('https://www.openstreetmap.org/way/123456#map=19/53.8/-1.5')).toEqual({
      kind: 'osm',
      osmType: 'W',
      osmId: '123456',
    });
    expect(parsePlaceRef('https://www.openstreetmap.org/search?query=x')).toMatchObject({ kind: 'invalid' });
    expect(parsePlaceRef('https://maps.google.com/?cid=123')).toMatchObject({
      kind: 'invalid',
      reason: expect.stringContaining('send the place id (maps_place_id in the results)'),
    });
    expect(parsePlaceRef('not a url')).toMatchObject({ kind: 'invalid' });
    expect(parsePlaceRef('ftp://example.com/x')).toMatchObject({ kind: 'invalid' });
  });

  test('the payload rejects a malformed URL and a missing url/search_query', () => {
    expect(crawlMapsPayload.safeParse({ url: 'not a url' }).success).toBe(false);
    expect(crawlMapsPayload.safeParse({ url: 'https://example.com/some/page' }).error?.issues).toEqual([
      expect.objectContaining({
        path: ['url'],
        message:
          'invalid maps URL or place id: not a Google Maps or OpenStreetMap place URL, nor a maps.app.goo.gl share link',
      }),
    ]);
    expect(crawlMapsPayload.parse({ url: ' https://maps.app.goo.gl/Ab12Cd34 ' }).url).toBe(
      'https://maps.app.goo.gl/Ab12Cd34',
    );
    expect(crawlMapsPayload.safeParse({}).success).toBe(false);
    expect(crawlMapsPayload.safeParse({ search_query: 'bakery', provider: 'bing' }).success).toBe(false);
    expect(crawlMapsPayload.parse({ search_query: 'bakery in Leeds' })).toMatchObject({
      max_results: 20,
      extract_reviews: false,
      dedupe_enabled: true,
      dedupe_unique_only: false,
    });
  });
});

describe('opening hours', () => {
  test('Google periods (0 = Sunday) as lowercase days, Monday first, Closed where none', () => {
    const periods = [1, 2, 3, 4, 5].map((day) => ({
      open: { day, hour: 9, minute: 0 },
      close: { day, hour: 17, minute: 30 },
    }));
    periods.push(
      { open: { day: 6, hour: 10, minute: 0 }, close: { day: 6, hour: 14, minute: 0 } },
      { open: { day: 6, hour: 18, minute: 0 }, close: { day: 0, hour: 2, minute: 0 } },
    );
    const hours = hoursFromPeriods(periods);
    expect(hours).toEqual({
      monday: '09:00-17:30',
      tuesday: '09:00-17:30',
      wednesday: '09:00-17:30',
      thursday: '09:00-17:30',
      friday: '09:00-17:30',
      saturday: '10:00-14:00, 18:00-02:00',
      sunday: 'Closed',
    });
    expect(Object.keys(hours ?? {})[0]).toBe('monday');
  });

  test('a lone open period without close is open around the clock; no periods, no hours', () => {
    expect(hoursFromPeriods([{ open: { day: 0, hour: 0, minute: 0 } }])?.wednesday).toBe('00:00-24:00');
    expect(hoursFromPeriods([])).toBeNull();
    expect(hoursFromPeriods(undefined)).toBeNull();
  });

  test('a Google period that closes at midnight reads 24:00, as the OSM path writes the same hours (issue 37)', () => {
    const periods = [{ open: { day: 5, hour: 17, minute: 0 }, close: { day: 6, hour: 0, minute: 0 } }];
    expect(hoursFromPeriods(periods)?.friday).toBe('17:00-24:00');
    expect(hoursFromPeriods(periods)?.friday).toBe(hoursFromOsm('Fr 17:00-24:00')?.friday);
  });

  test('OSM opening_hours through the opening_hours library', () => {
    expect(hoursFromOsm('Mo-Fr 08:00-20:00; Sa 09:00-12:00,13:00-17:00')).toEqual({
      monday: '08:00-20:00',
      tuesday: '08:00-20:00',
      wednesday: '08:00-20:00',
      thursday: '08:00-20:00',
      friday: '08:00-20:00',
      saturday: '09:00-12:00, 13:00-17:00',
      sunday: 'Closed',
    });
    expect(hoursFromOsm('24/7')?.sunday).toBe('00:00-24:00');
    expect(hoursFromOsm('Mo-Su 07:00-22:00; Tu off')?.tuesday).toBe('Closed');
    expect(hoursFromOsm('whenever we feel like it')).toBeNull();
    expect(hoursFromOsm('')).toBeNull();
  });
});

describe('price level and queries', () => {
  test('Google price levels as $..$$$$; free and unspecified have none', () => {
    expect(
      ['PRICE_LEVEL_INEXPENSIVE', 'PRICE_LEVEL_MODERATE', 'PRICE_LEVEL_EXPENSIVE', 'PRICE_LEVEL_VERY_EXPENSIVE'].map(
        priceLevel,
      ),
    ).toEqual(['$', '$$', '$$$', '$$$$']);
    expect(priceLevel('PRICE_LEVEL_FREE')).toBeUndefined();
    expect(priceLevel('PRICE_LEVEL_UNSPECIFIED')).toBeUndefined();
    expect(priceLevel(undefined)).toBeUndefined();
  });

  test('"what in where" splits; without a place the whole text is the what', () => {
    expect(splitQuery('artisan bakery in Leeds')).toEqual({ what: 'artisan bakery', where: 'Leeds' });
    expect(splitQuery('cafes near York')).toEqual({ what: 'cafes', where: 'York' });
    expect(splitQuery('bakery')).toEqual({ what: 'bakery', where: null });
  });
});

describe('Overpass categories', () => {
  test('category words, singular or plural, map to their OSM tag; other words do not', () => {
    expect(osmCategory('bakeries')).toEqual(['shop', 'bakery']);
    expect(osmCategory('Cafes')).toEqual(['amenity', 'cafe']);
    expect(osmCategory('pubs')).toEqual(['amenity', 'pub']);
    expect(osmCategory('artisan sourdough')).toBeUndefined();
  });

  test('the query quotes the area name, so a quote in it cannot change the query', () => {
    expect(overpassQuery(['shop', 'bakery'], 'Leeds', 20)).toBe(
      '[out:json][timeout:25];area["name"="Leeds"]->.a;nwr["shop"="bakery"](area.a);out center tags 20;',
    );
    expect(overpassQuery(['shop', 'bakery'], 'x"];out;', 5)).toContain('area["name"="x\\"];out;"]');
  });
});

describe('Nominatim results', () => {
  // Nominatim's jsonv2 search as geocoder-php's tests recorded it (2021): no `name` field, and an
  // unnamed house's display_name starts with its number.
  const house = {
    place_id: 283591,
    osm_type: 'node',
    osm_id: 3520426914,
    lat: '51.5033',
    lon: '-0.1276',
    display_name: '10, Downing Street, Westminster, London, Greater London, England, SW1A 2AA, United Kingdom',
    address: { house_number: '10', road: 'Downing Street', city: 'London', country_code: 'gb' },
  };

  test('an unnamed house is called by its address, not by its number', () => {
    expect(businessFromNominatim(house).name).toBe('10 Downing Street');
    expect(businessFromNominatim({ ...house, name: null }).name).toBe('10 Downing Street');
  });

  test("a named place keeps its name; without one, display_name's first part", () => {
    expect(businessFromNominatim({ ...house, name: 'Prime Minister’s Office' }).name).toBe('Prime Minister’s Office');
    expect(
      businessFromNominatim({ ...house, display_name: 'Coudenberg, Place des Palais, Bruxelles', address: {} }).name,
    ).toBe('Coudenberg');
  });
});
