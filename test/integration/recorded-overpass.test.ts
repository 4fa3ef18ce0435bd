import { createServer } from 'node:http';
import { businessFromNominatim, nominatimFromOverpass } from '../../activities/maps/business';
import { MapsError } from '../../activities/maps/errors';
import { OverpassClient, overpassQuery } from '../../activities/maps/overpass';
import { OutboundClient } from '../../lib/outbound';
import { listenLocal } from '../stand-ins/listen';
import { ensureRecorded, RECORDED_INSTALL_TIMEOUT_MS, recordedText } from '../support/recorded';

/**
 * Overpass answers recorded from the live API by python-overpy's test suite
 * (test/fixtures/recorded/SOURCES.md), replayed over HTTP through the real client.
 */

let http: OutboundClient;
let server: { baseUrl: string; close: () => Promise<void> };
/** The answers still to give, in order (the last one repeats), and the queries received. */
let answers: { status: number; type: string; body: string }[] = [];
const queries: string[] = [];
let client: OverpassClient;

const json = (body: string) => ({ status: 200, type: 'application/json', body });

beforeAll(async () => {
  await ensureRecorded('overpy');
  const s = createServer((req, res) => {
    let data = '';
    req.on('data', (c: Buffer) => (data += c.toString()));
    req.on('end', () => {
      queries.push(new URLSearchParams(data).get('data') ?? '');
      const answer = (answers.length > 1 ? answers.shift() : answers[0]) as {
        status: number;
        type: string;
        body: string;
      };
      res.writeHead(answer.status, { 'content-type': answer.type });
      res.end(answer.body);
    });
  });
  server = await listenLocal(s);
  http = new OutboundClient({ allowHosts: ['127.0.0.1'], userAgent: 'leadjobs-test/1.0', timeoutMs: 5000 });
  // No pauses between tries here: what is asked is what matters.
  client = new OverpassClient({ baseUrl: server.baseUrl, userAgent: 'leadjobs-test/1.0', http, backoffMs: [0, 0] });
}, RECORDED_INSTALL_TIMEOUT_MS);

afterAll(async () => {
  await http?.close();
  await server?.close();
});

beforeEach(() => {
  queries.length = 0;
});

const ql = overpassQuery(['shop', 'bakery'], 'Harrogate', 20);

describe('Overpass client on recorded answers', () => {
  test('a query that timed out (HTTP 200, no elements, runtime error remark) is asked again with longer timeouts, then fails saying so', async () => {
    answers = [json(recordedText('overpy', 'remark-runtime-error.json'))];
    const err = await client.query(ql, new AbortController().signal).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(MapsError);
    expect(err).toMatchObject({ type: 'ProviderTimeout', retryable: false });
    expect((err as Error).message).toMatch(/timed out.*Query timed out in "query" at line 4/);
    expect(queries.map((q) => /\[timeout:(\d+)\]/.exec(q)?.[1])).toEqual(['25', '60', '120']);
  });

  test('a timeout followed by an answer gives the answer', async () => {
    answers = [json(recordedText('overpy', 'remark-runtime-error.json')), json(recordedText('overpy', 'node-01.json'))];
    const elements = await client.query(ql, new AbortController().signal);
    expect(elements.map((e) => e.id)).toEqual([50878400, 100793192, 3233854234]);
    expect(queries).toHaveLength(2);
    // Elements without tags still become places (no name: their OSM id).
    expect(elements.map((e) => businessFromNominatim(nominatimFromOverpass(e, ['shop', 'bakery'])).place_id)).toEqual([
      'osm:node/50878400',
      'osm:node/100793192',
      'osm:node/3233854234',
    ]);
  });

  test('"out of memory" is the same failure; a runtime remark is only a note', async () => {
    const recorded = JSON.parse(recordedText('overpy', 'remark-runtime-error.json')) as Record<string, unknown>;
    answers = [
      json(
        JSON.stringify({ ...recorded, remark: 'runtime error: Query run out of memory using about 2048 MB of RAM.' }),
      ),
    ];
    await expect(client.query(ql, new AbortController().signal)).rejects.toMatchObject({
      type: 'ProviderTimeout',
      message: expect.stringMatching(/ran out of memory/),
    });

    queries.length = 0;
    answers = [json(recordedText('overpy', 'remark-runtime-remark.json'))];
    await expect(client.query(ql, new AbortController().signal)).resolves.toEqual([]);
    expect(queries).toHaveLength(1);
  });

  test("Overpass's 429 and 504 HTML pages are a busy provider, retried later", async () => {
    for (const status of [429, 504]) {
      answers = [
        {
          status,
          type: 'text/html',
          body: '<html><body><p>The server is probably too busy to handle your request.</p></body></html>',
        },
      ];
      await expect(client.query(ql, new AbortController().signal)).rejects.toMatchObject({
        type: 'ProviderQuotaExceeded',
        retryable: true,
      });
    }
  });

  test('a national-format phone of an element without addr:country is read in the country its area names (issue 37: "01423 560771" was lost)', async () => {
    const el = (id: number, tags: Record<string, string>) => ({ type: 'node', id, lat: 53.99, lon: -1.54, tags });
    answers = [
      json(
        JSON.stringify({
          version: 0.6,
          elements: [
            el(1, { shop: 'bakery', name: 'Bettys', 'addr:country': 'GB', 'addr:city': 'Harrogate' }),
            el(2, { shop: 'bakery', name: 'Hoopers', 'addr:country': 'GB' }),
            el(3, { shop: 'bakery', name: 'Corner Bakery', 'contact:phone': '01423 560771' }),
          ],
        }),
      ),
    ];
    const elements = await client.query(ql, new AbortController().signal);
    const corner = businessFromNominatim(
      nominatimFromOverpass(elements[2] as (typeof elements)[number], ['shop', 'bakery']),
    );
    expect(corner).toMatchObject({ phone: '01423 560771', phone_e164: '+441423560771', country_code: 'GB' });
  });
});
