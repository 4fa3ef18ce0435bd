import { createServer } from 'node:http';
import { legalForm, SecClient } from '../../activities/company/sec';
import { OutboundClient } from '../../lib/outbound';
import { listenLocal } from '../stand-ins/listen';
import {
  describeRecordedGithub,
  haveRecordedGithub,
  recordedGithub,
  type RecordedGithubName,
} from '../support/recorded-github';

/**
 * SEC EDGAR answers recorded from the live service by the edgarkit crate's test suite
 * (test/fixtures/recorded/SOURCES.md, "US SEC EDGAR"), replayed byte for byte over HTTP through the
 * real adapter: the ticker index as www.sec.gov serves it and two submissions documents, Apple's of
 * 2024 (address objects without isForeignLocation, country or countryCode, no lei) and a blank-check
 * company's of 2026 (those fields present, mostly null). Not committed: laid out by
 * test/support/recorded-github.ts, Apple's and the index from a git copy of r007/edgarkit, the 2026
 * one (newer than that copy) from a folder only; the tests of what is absent are skipped.
 */

const recorded = (file: RecordedGithubName<'sec'>) => recordedGithub('sec', file);
const EQV = 'submissions-CIK0002042902.json';

/** The recorded answers by the path the adapter asks for (filled in beforeAll with those laid out). */
const ANSWERS: Record<string, Buffer> = {};
const USER_AGENT = 'Leadjobs Test ops@leadjobs.example';

let http: OutboundClient;
let server: { baseUrl: string; close: () => Promise<void> };
const requests: { path: string; userAgent: string | undefined }[] = [];
let client: SecClient;

beforeAll(async () => {
  ANSWERS['/files/company_tickers_exchange.json'] = recorded('company_tickers_exchange.json');
  ANSWERS['/submissions/CIK0000320193.json'] = recorded('submissions-CIK0000320193.json');
  if (haveRecordedGithub('sec', [EQV])) ANSWERS['/submissions/CIK0002042902.json'] = recorded(EQV);
  const s = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    requests.push({ path: url.pathname, userAgent: req.headers['user-agent'] });
    const body = ANSWERS[url.pathname];
    if (!body)
      return void res
        .writeHead(404, { 'content-type': 'application/xml' })
        .end('<Error><Code>NoSuchKey</Code></Error>');
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  server = await listenLocal(s);
  http = new OutboundClient({ allowHosts: ['127.0.0.1'], userAgent: 'leadjobs-test/1.0', timeoutMs: 5000 });
  client = new SecClient({ baseUrl: server.baseUrl, dataBaseUrl: server.baseUrl, userAgent: USER_AGENT, http });
});

afterAll(async () => {
  await http?.close();
  await server?.close();
});

beforeEach(() => {
  requests.length = 0;
});

describeRecordedGithub('sec', ['company_tickers_exchange.json', 'submissions-CIK0000320193.json'])(
  'SEC EDGAR adapter on recorded answers',
  () => {
    test("Apple's recorded submissions (2024: no isForeignLocation, country, countryCode or lei) give the full record", async () => {
      const apple = await client.lookup('0000320193');
      expect(requests).toEqual([{ path: '/submissions/CIK0000320193.json', userAgent: USER_AGENT }]);
      expect(apple).toMatchObject({
        name: 'Apple Inc.',
        source: 'us_registry',
        source_id: '320193',
        registration_number: '320193',
        country_code: 'US',
        legal_form: 'Inc',
        address: {
          line_1: 'ONE APPLE PARK WAY',
          line_2: null,
          city: 'CUPERTINO',
          region: 'CA',
          postal_code: '95014',
          country: 'US',
        },
        industry: { sic_codes: ['3571'], nace_codes: [], description: 'Electronic Computers' },
        tax_id: '942404110',
        lei: null,
        source_url: 'https://www.sec.gov/cgi-bin/browse-edgar?action=getcompany&CIK=0000320193',
      });
    });

    describeRecordedGithub('sec', [EQV])('the 2026 submissions', () => {
      test('a 2026 answer with its address fields null, incorporated in the Cayman Islands (E9) but located in Utah, is a US record in UT; a series numeral does not hide the legal form', async () => {
        const eqv = await client.lookup('2042902');
        expect(eqv).toMatchObject({
          name: 'EQV Ventures Acquisition Corp. II',
          registration_number: '2042902',
          // stateOfIncorporation "E9" is where it is incorporated, not where it is: the address says UT.
          country_code: 'US',
          // Before: null ("... Corp. II" ends in the numeral, not the form).
          legal_form: 'Corp',
          address: {
            line_1: '1090 CENTER DRIVE',
            line_2: null,
            city: 'PARK CITY',
            region: 'UT',
            postal_code: '84098',
            country: 'US',
          },
          industry: { sic_codes: ['6770'], nace_codes: [], description: 'Blank Checks' },
          // ein "000000000" is EDGAR's "none".
          tax_id: null,
          lei: null,
        });
      });
    });

    test('the recorded ticker index (10,015 rows) is downloaded once and searched: best name first, share classes merged, rows without an exchange kept', async () => {
      const apple = await client.search('Apple', 3);
      expect(apple.map((r) => [r.registration_number, r.name])).toEqual([
        ['320193', 'Apple Inc.'],
        ['1134982', 'Apple iSports Group, Inc.'],
        ['1418121', 'Apple Hospitality REIT, Inc.'],
      ]);
      const entry = async (name: string) => (await client.searchIndex(name, 1))[0]?.entry;
      expect(await entry('Alphabet')).toEqual({
        cik: '1652044',
        name: 'Alphabet Inc.',
        tickers: ['GOOGL', 'GOOG'],
        exchanges: ['Nasdaq'],
      });
      expect(await entry('Berkshire Hathaway')).toMatchObject({ cik: '1067983', tickers: ['BRK-B', 'BRK-A'] });
      expect(await entry('ASML Holding')).toMatchObject({ tickers: ['ASML', 'ASMLF'], exchanges: ['Nasdaq', 'OTC'] });
      // Recorded as [2007855, "Venture Global, Inc.", "VG", null].
      expect(await entry('Venture Global')).toEqual({
        cik: '2007855',
        name: 'Venture Global, Inc.',
        tickers: ['VG'],
        exchanges: [],
      });
      expect(requests.map((r) => r.path)).toEqual(['/files/company_tickers_exchange.json']);
    });

    test('legal forms of names as EDGAR writes them in the recorded index: a trailing "/" and a series numeral after the form', () => {
      const index = JSON.parse(recorded('company_tickers_exchange.json').toString('utf8')) as { data: unknown[][] };
      const names = new Set(index.data.map((row) => row[1]));
      const cases: [string, string][] = [
        ['TOYOTA MOTOR CORP/', 'Corp'],
        ['AMETEK INC/', 'Inc'],
        ['Ares Acquisition Corp II', 'Corp'],
        ['Hennessy Capital Investment Corp. VI', 'Corp'],
        // A trailing "V" that is part of the form, not a numeral.
        ['ICTS INTERNATIONAL N V', 'N.V.'],
        ['ARM HOLDINGS PLC /UK', 'plc'],
      ];
      for (const [name, form] of cases) {
        expect(names.has(name)).toBe(true);
        expect([name, legalForm(name)]).toEqual([name, form]);
      }
    });
  },
);
