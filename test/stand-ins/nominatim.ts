import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenLocal } from './listen';

/**
 * A stand-in for OpenStreetMap's Nominatim on 127.0.0.1 in its real wire format
 * (../../../shared/providers.md, "Maps listings"): GET /search?q=...&format=jsonv2&addressdetails=1
 * &extratags=1 with limit (at most 40) and exclude_place_ids paging, and GET /lookup?osm_ids=N1,W2.
 * Like the real service it refuses requests without a User-Agent (403) and answers 429 to a
 * request less than one second after the previous one; it records every request's time. A test
 * fixture only.
 */

export interface NominatimStandInPlace {
  place_id: number;
  licence: string;
  osm_type: 'node' | 'way' | 'relation';
  osm_id: number;
  lat: string;
  lon: string;
  category: string;
  type: string;
  place_rank: number;
  importance: number;
  addresstype: string;
  name: string;
  display_name: string;
  address: Record<string, string>;
  extratags: Record<string, string>;
  boundingbox: string[];
}

export interface NominatimStandIn {
  baseUrl: string;
  places: NominatimStandInPlace[];
  requests: { path: string; query: URLSearchParams; userAgent: string | undefined; at: number; status: number }[];
  close(): Promise<void>;
}

/** `count` bakeries in Leeds as OSM nodes 9000001...; the first has opening hours, a phone and an image. */
export function osmBakeries(count: number, imageBase?: string): NominatimStandInPlace[] {
  return Array.from({ length: count }, (_, k): NominatimStandInPlace => {
    const i = k + 1;
    const extratags: Record<string, string> =
      i === 1
        ? {
            opening_hours: 'Mo-Fr 08:00-18:00; Sa 09:00-12:00,13:00-17:00; Su off',
            phone: '+44 113 496 0999',
            website: 'https://osm-bakery.example.org/',
            wheelchair: 'yes',
            takeaway: 'yes',
            outdoor_seating: 'no',
          }
        : i === 2
          ? { 'contact:phone': '0113 496 0998', opening_hours: 'not a schedule' }
          : {};
    if (i === 1 && imageBase) extratags.image = `${imageBase}/osm-bakery-1.gif`;
    const lat = (53.79 + k * 0.001).toFixed(7);
    const lon = (-1.54 - k * 0.001).toFixed(7);
    return {
      place_id: 300000 + i,
      licence: 'Data © OpenStreetMap contributors, ODbL 1.0. http://osm.org/copyright',
      osm_type: 'node',
      osm_id: 9000000 + i,
      lat,
      lon,
      category: 'shop',
      type: 'bakery',
      place_rank: 30,
      importance: 0.0001,
      addresstype: 'shop',
      name: `OSM Bakery ${i}`,
      display_name: `OSM Bakery ${i}, ${i} Kirkgate, City Centre, Leeds, West Yorkshire, England, LS1 6BH, United Kingdom`,
      address: {
        shop: `OSM Bakery ${i}`,
        house_number: String(i),
        road: 'Kirkgate',
        city: 'Leeds',
        postcode: 'LS1 6BH',
        country: 'United Kingdom',
        country_code: 'gb',
      },
      extratags,
      boundingbox: [lat, lat, lon, lon],
    };
  });
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

export async function startNominatimStandIn(
  options: { places?: NominatimStandInPlace[] } = {},
): Promise<NominatimStandIn> {
  const requests: NominatimStandIn['requests'] = [];
  let last = 0;
  let places = options.places ?? osmBakeries(50);

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    if (url.pathname.endsWith('.gif')) {
      res.writeHead(200, { 'content-type': 'image/gif' });
      res.end(Buffer.from('47494638396101000100800000ffffff0000002c00000000010001000002024401003b', 'hex'));
      return;
    }
    const at = Date.now();
    const userAgent = req.headers['user-agent'];
    const record = (status: number) =>
      requests.push({ path: url.pathname, query: url.searchParams, userAgent, at, status });
    if (!userAgent) {
      record(403);
      res.writeHead(403, { 'content-type': 'text/html' }).end('<html><body><h1>Access blocked</h1></body></html>');
      return;
    }
    // The real service blocks clients that exceed 1 request/s; 950 ms leaves room for timer jitter.
    if (at - last < 950) {
      record(429);
      res
        .writeHead(429, { 'content-type': 'text/html', 'retry-after': '1' })
        .end('<html><body>Too Many Requests</body></html>');
      return;
    }
    last = at;
    if (url.searchParams.get('format') !== 'jsonv2') {
      record(400);
      return json(res, 400, { error: { code: 400, message: 'Parameter format: expected jsonv2 in this stand-in' } });
    }
    if (url.pathname === '/search') {
      const q = (url.searchParams.get('q') ?? '').toLowerCase();
      const limit = Math.min(40, Number(url.searchParams.get('limit') ?? 10));
      const excluded = new Set(
        (url.searchParams.get('exclude_place_ids') ?? '').split(',').filter(Boolean).map(Number),
      );
      const what = q.split(/\s+in\s+/)[0] ?? q;
      const found = places
        .filter((p) => (p.type === what || p.name.toLowerCase().includes(q)) && !excluded.has(p.place_id))
        .slice(0, limit);
      record(200);
      return json(res, 200, found);
    }
    if (url.pathname === '/lookup') {
      const ids = (url.searchParams.get('osm_ids') ?? '').split(',');
      const found = places.filter((p) => ids.includes(`${p.osm_type[0]?.toUpperCase()}${p.osm_id}`));
      record(200);
      return json(res, 200, found);
    }
    record(404);
    json(res, 404, { error: 'not found' });
  };

  const server = createServer(handle);
  const { baseUrl, close } = await listenLocal(server);
  if (!options.places) places = osmBakeries(50, baseUrl);
  return {
    baseUrl,
    get places() {
      return places;
    },
    requests,
    close,
  };
}
