import { createServer } from 'node:http';
import { ViesClient } from '../../activities/company/vies';
import { OutboundClient } from '../../lib/outbound';
import { listenLocal } from '../stand-ins/listen';
import { describeRecordedGithub, recordedGithub } from '../support/recorded-github';

/**
 * EU VIES REST answers (POST check-vat-number) recorded from the live service by the
 * id-sign/business-registers test suite (test/fixtures/recorded/SOURCES.md, "EU VIES"), replayed
 * byte for byte over HTTP through the real adapter. VIES writes them pretty-printed (`"valid" : true`).
 * Not committed, and in no git copy at hand: laid out from a folder by
 * test/support/recorded-github.ts (--files DIR); skipped without them.
 */

/** The recorded answer per number asked (country code + number; filled in beforeAll), and the bodies received. */
const ANSWERS: Record<string, Buffer> = {};
const bodies: string[] = [];

let http: OutboundClient;
let server: { baseUrl: string; close: () => Promise<void> };
let client: ViesClient;

beforeAll(async () => {
  ANSWERS.CZ45274649 = recordedGithub('vies', 'check-vat-number-CZ45274649.json');
  ANSWERS.CZ11111111 = recordedGithub('vies', 'check-vat-number-CZ11111111.json');
  ANSWERS.ESA15075062 = recordedGithub('vies', 'check-vat-number-ESA15075062-trader.json');
  const s = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      bodies.push(raw);
      const input = JSON.parse(raw) as { countryCode: string; vatNumber: string };
      const answer =
        req.method === 'POST' && req.url === '/check-vat-number' && ANSWERS[input.countryCode + input.vatNumber];
      if (!answer) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(answer);
    });
  });
  server = await listenLocal(s);
  http = new OutboundClient({ allowHosts: ['127.0.0.1'], userAgent: 'leadjobs-test/1.0', timeoutMs: 5000 });
  client = new ViesClient({ baseUrl: server.baseUrl, http, retries: 0 });
});

afterAll(async () => {
  await http?.close();
  await server?.close();
});

beforeEach(() => {
  bodies.length = 0;
});

describeRecordedGithub('vies')('VIES adapter on recorded answers', () => {
  test('a registered Czech number (ČEZ) is valid with its registered name and its address as VIES writes it, one line per \\n', async () => {
    const result = await client.check('CZ 4527 4649');
    // The body VIES answered the recording to (the recording's test asserts it byte for byte).
    expect(bodies).toEqual(['{"countryCode":"CZ","vatNumber":"45274649"}']);
    expect(result).toEqual({
      valid: true,
      vat_number: '45274649',
      country_code: 'CZ',
      company_name: 'ČEZ, a. s.',
      company_address: 'Duhová 1444/2\nPRAHA 4 - MICHLE\n140 00  PRAHA 4',
      request_date: '2026-10-03T21:02:05.698Z',
    });
  });

  test('an unregistered number is an answer, valid false, not a failure', async () => {
    await expect(client.check('CZ11111111')).resolves.toMatchObject({
      valid: false,
      vat_number: '11111111',
      country_code: 'CZ',
      request_date: '2026-10-03T21:02:07.463Z',
    });
  });

  test("Spain's withheld name and address are the literal --- VIES sends, on a valid number", async () => {
    await expect(client.check('ESA15075062')).resolves.toEqual({
      valid: true,
      vat_number: 'A15075062',
      country_code: 'ES',
      company_name: '---',
      company_address: '---',
      request_date: '2026-10-04T15:34:53.673Z',
    });
  });
});
