import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenLocal } from './listen';

/**
 * A stand-in for OpenStreetMap's Overpass API on 127.0.0.1 in its real wire format
 * (../../../shared/providers.md, "Maps listings"): POST /api/interpreter with a form field `data`
 * holding Overpass QL. It understands the one query shape crawlMaps sends
 * (`area["name"="X"]->.a;nwr["k"="v"](area.a);out center tags N;`) and answers
 * `{"elements":[...]}` with nodes (lat/lon) and ways (center); 429 to a request less than a second
 * after the previous one. A test fixture only.
 */

export interface OverpassStandIn {
  baseUrl: string;
  requests: { query: string; userAgent: string | undefined; at: number; status: number }[];
  close(): Promise<void>;
}

interface Fixture {
  area: string;
  element: Record<string, unknown> & { tags: Record<string, string> };
}

/** Two bakeries in Leeds (a node and a way) and a cafe; one bakery in York. */
export const OVERPASS_FIXTURES: Fixture[] = [
  {
    area: 'Leeds',
    element: {
      type: 'node',
      id: 1866179709,
      lat: 53.7965,
      lon: -1.5416,
      tags: {
        shop: 'bakery',
        name: 'Kirkgate Loaves',
        'addr:housenumber': '12',
        'addr:street': 'Kirkgate',
        'addr:city': 'Leeds',
        'addr:postcode': 'LS1 6BH',
        'addr:country': 'GB',
        'contact:phone': '0113 496 0777',
        'contact:website': 'https://kirkgate-loaves.example.org/',
        opening_hours: 'Tu-Sa 07:30-15:00',
      },
    },
  },
  {
    area: 'Leeds',
    element: {
      type: 'way',
      id: 48211234,
      center: { lat: 53.8021, lon: -1.5488 },
      tags: { shop: 'bakery', name: 'Headrow Bread', 'addr:street': 'The Headrow', 'addr:city': 'Leeds' },
    },
  },
  {
    area: 'Leeds',
    element: { type: 'node', id: 1866170001, lat: 53.8, lon: -1.55, tags: { amenity: 'cafe', name: 'Not A Bakery' } },
  },
  {
    area: 'York',
    element: { type: 'node', id: 1866170002, lat: 53.96, lon: -1.08, tags: { shop: 'bakery', name: 'York Bakery' } },
  },
];

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startOverpassStandIn(): Promise<OverpassStandIn> {
  const requests: OverpassStandIn['requests'] = [];
  let last = 0;
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const at = Date.now();
    const query = new URLSearchParams(await body(req)).get('data') ?? '';
    const record = (status: number) => requests.push({ query, userAgent: req.headers['user-agent'], at, status });
    if (req.method !== 'POST' || req.url !== '/api/interpreter') {
      record(404);
      return void res.writeHead(404).end();
    }
    if (at - last < 950) {
      record(429);
      return void res.writeHead(429, { 'content-type': 'text/html' }).end('<p>rate_limited</p>');
    }
    last = at;
    const m = /area\["name"="([^"]+)"\]->\.a;nwr\["([^"]+)"="([^"]+)"\]\(area\.a\);out center tags (\d+);/.exec(query);
    if (!m) {
      record(400);
      return void res.writeHead(400, { 'content-type': 'text/html' }).end('<p>Error: line 1: parse error</p>');
    }
    const [, area, key, value, limit] = m as unknown as [string, string, string, string, string];
    const elements = OVERPASS_FIXTURES.filter((f) => f.area === area && f.element.tags[key] === value)
      .map((f) => f.element)
      .slice(0, Number(limit));
    record(200);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        version: 0.6,
        generator: 'Overpass API stand-in',
        osm3s: { copyright: 'The data included in this document is from www.openstreetmap.org.' },
        elements,
      }),
    );
  };
  const { baseUrl, close } = await listenLocal(createServer((req, res) => void handle(req, res)));
  return { baseUrl, requests, close };
}
