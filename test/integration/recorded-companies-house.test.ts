import { createServer, type Server } from 'node:http';
import { CompaniesHouseClient } from '../../activities/company/companies-house';
import { CompanyNotFoundError } from '../../activities/company/types';
import { OutboundClient } from '../../lib/outbound';
import { listenLocal } from '../stand-ins/listen';
import { ensureRecorded, RECORDED_INSTALL_TIMEOUT_MS, recordedText, type ChApiRecording } from '../support/recorded';

/**
 * Companies House answers recorded from the live API by the ch-api package's test suite
 * (test/fixtures/recorded/SOURCES.md), replayed over HTTP through the real adapter.
 */

type Recording = ChApiRecording & { content: { json: Record<string, unknown> } };
const recording = (file: Parameters<typeof recordedText<'ch-api'>>[1]): Recording =>
  JSON.parse(recordedText('ch-api', file)) as Recording;

let http: OutboundClient;
let server: { baseUrl: string; close: () => Promise<void> };
/** What the replay server answers per path (query ignored: the adapter's page size differs from the recording's). */
const answers = new Map<string, { status: number; body: unknown }>();
let client: CompaniesHouseClient;

beforeAll(async () => {
  await ensureRecorded('ch-api');
  const s: Server = createServer((req, res) => {
    const answer = answers.get(new URL(req.url ?? '/', 'http://x').pathname);
    res.writeHead(answer?.status ?? 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(answer?.body ?? { errors: [{ error: 'company-profile-not-found', type: 'ch:service' }] }));
  });
  server = await listenLocal(s);
  http = new OutboundClient({ allowHosts: ['127.0.0.1'], userAgent: 'leadjobs-test/1.0', timeoutMs: 5000 });
  client = new CompaniesHouseClient({ baseUrl: server.baseUrl, apiKey: 'recorded', http });
}, RECORDED_INSTALL_TIMEOUT_MS);

afterAll(async () => {
  await http?.close();
  await server?.close();
});

function serve(path: string, rec: Recording, body: unknown = rec.content.json): void {
  answers.set(path, { status: rec.status_code, body });
}

describe('Companies House adapter on recorded answers', () => {
  test('a recorded search page of 100 companies parses whole, names and address lines cleaned of stray spaces and empty parts', async () => {
    serve('/search/companies', recording('search-apple-100.json'));
    const records = await client.search('Apple', 100);
    expect(records).toHaveLength(100);
    // Recorded: premises "104", address_line_1 ", Walter Road".
    expect(records.find((r) => r.registration_number === '06595372')?.address.line_1).toBe('104, Walter Road');
    // Recorded: premises "Unit-2,  Ground Floor".
    expect(records.find((r) => r.registration_number === '16364350')?.address.line_1).toBe(
      'Unit-2, Ground Floor, 234-236 Whitechapel Road',
    );
    for (const r of records) {
      expect(r.name).toBe(r.name.replace(/\s+/g, ' ').trim());
      expect(r.address.line_1 ?? '').not.toMatch(/\s,|,\s*,|\s{2}|^,/);
    }

    serve('/search/companies', recording('search-apple-0.json'));
    const first = await client.search('Apple', 100);
    // Recorded title: "APPLE  BITE YEOVIL LIMITED".
    expect(first.find((r) => r.registration_number === '12350997')?.name).toBe('APPLE BITE YEOVIL LIMITED');
  });

  test('one search item without a title is skipped and counted; the rest of the page is kept', async () => {
    const rec = recording('search-apple-100.json');
    const items = (rec.content.json.items as Record<string, unknown>[]).map((i) => ({ ...i }));
    delete items[3]?.title;
    serve('/search/companies', rec, { ...rec.content.json, items });
    // Before: TypeError (reading 'toLowerCase') and no record at all.
    expect(await client.search('Apple', 100)).toHaveLength(99);
    const { records, skipped } = await client.searchItems('Apple', 100);
    expect(skipped).toBe(1);
    expect(records.map((r) => r.registration_number)).not.toContain(items[3]?.company_number);
  });

  test('a recorded profile and officers list give the full record', async () => {
    serve('/company/09370755', recording('company-09370755.json'));
    serve('/company/09370755/officers', recording('officers-09370755.json'));
    const record = await client.lookup('9370755');
    expect(record).toMatchObject({
      name: 'NES ITALIA LTD',
      registration_number: '09370755',
      status: 'active',
      legal_form: 'ltd',
      incorporation_date: '2014-12-31',
      address: {
        line_1: 'Apt 222, 87 High Street, Manchester High Street',
        city: 'Manchester',
        postal_code: 'M4 1BF',
        country: 'England',
        line_2: null,
        region: null,
      },
      industry: { sic_codes: ['26400', '46520'] },
    });
    expect(record.officers).toEqual([
      {
        name: 'PERUGIA, Uriel',
        role: 'director',
        appointed_on: '2014-12-31',
        resigned_on: null,
        nationality: 'Italian',
        occupation: null,
        country_of_residence: 'Italy',
      },
    ]);
  });

  test('the recorded 404 of an unknown company is "not found"', async () => {
    serve('/company/INVALID', recording('company-invalid.json'));
    await expect(client.lookup('invalid')).rejects.toBeInstanceOf(CompanyNotFoundError);
  });
});
