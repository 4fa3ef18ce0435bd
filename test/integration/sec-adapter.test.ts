import { SecClient, legalForm } from '../../activities/company/sec';
import {
  CompanyNotFoundError,
  InvalidInputError,
  RegistryAuthError,
  RegistryRateLimitedError,
  RegistryUnavailableError,
  type CompanyRecord,
} from '../../activities/company/types';
import { OutboundClient } from '../../lib/outbound';
import { failure } from '../support/failure';
import { startSecStandIn, type SecStandIn } from '../stand-ins/sec';

const USER_AGENT = 'Leadjobs Test ops@leadjobs.example';
const TICKERS_PATH = '/files/company_tickers_exchange.json';

let http: OutboundClient;
beforeAll(() => {
  // The client's own agent has no email: the adapter must send its declared one on every request.
  http = new OutboundClient({ allowHosts: ['127.0.0.1'], userAgent: 'leadjobs-test/1.0', timeoutMs: 5000 });
});
afterAll(async () => {
  await http.close();
});

function clientFor(sec: SecStandIn, userAgent = USER_AGENT): SecClient {
  return new SecClient({ baseUrl: sec.baseUrl, dataBaseUrl: sec.baseUrl, eftsBaseUrl: sec.baseUrl, userAgent, http });
}

describe('US SEC EDGAR adapter', () => {
  let sec: SecStandIn;
  let client: SecClient;
  beforeAll(async () => {
    // A generous limit here; the default 10/s is exercised by its own stand-in below.
    sec = await startSecStandIn({ maxPerSecond: 1000 });
    client = clientFor(sec);
  });
  afterAll(async () => {
    await sec.close();
  });

  test('search ranks index names by similarity and builds us_registry records', async () => {
    const results = await client.search('Apple', 5);
    expect(results.map((r) => r.registration_number)).toEqual(['320193', '1418121']);
    const apple = results[0] as CompanyRecord;
    expect(apple).toEqual({
      name: 'Apple Inc.',
      source: 'us_registry',
      source_id: '320193',
      country_code: 'US',
      status: 'active',
      legal_form: null,
      registration_number: '320193',
      incorporation_date: null,
      address: { line_1: null, country: 'US' },
      industry: null,
      officers: [],
      financials: null,
      vat_number: null,
      tax_id: null,
      lei: null,
      dissolution_date: null,
      metadata: {
        cached: false,
        retrieved_at: expect.any(String),
        data_freshness: 'live',
        confidence_score: expect.any(Number),
        cache_expires_at: null,
      },
      source_url: 'https://www.sec.gov/cgi-bin/browse-edgar?action=getcompany&CIK=0000320193',
    });
    expect(Date.parse(apple.metadata.retrieved_at)).not.toBeNaN();
    const [first, second] = results.map((r) => r.metadata.confidence_score) as [number, number];
    expect(first).toBeGreaterThan(second);
    expect(second).toBeGreaterThan(0);

    // Unrelated names score below the threshold and are not candidates at all.
    expect(await client.search('Zebra Technologies', 5)).toEqual([]);

    const exact = await client.search('Microsoft Corp', 1);
    expect(exact).toHaveLength(1);
    expect(exact[0]).toMatchObject({ name: 'MICROSOFT CORP', source_id: '789019', metadata: { confidence_score: 1 } });
  });

  test('a CIK listed on two rows is one candidate with both tickers', async () => {
    const results = await client.search('Alphabet', 10);
    expect(results.filter((r) => r.source_id === '1652044')).toHaveLength(1);
    expect(results[0]).toMatchObject({ name: 'Alphabet Inc.', source_id: '1652044' });

    const [top] = await client.searchIndex('Alphabet', 1);
    expect(top?.entry).toEqual({
      cik: '1652044',
      name: 'Alphabet Inc.',
      tickers: ['GOOGL', 'GOOG'],
      exchanges: ['Nasdaq'],
    });
  });

  test('every request carries the declared User-Agent', async () => {
    await client.lookup('320193');
    expect(sec.requests.length).toBeGreaterThan(0);
    expect(new Set(sec.requests.map((r) => r.userAgent))).toEqual(new Set([USER_AGENT]));
  });

  test('lookup maps the submissions document field by field', async () => {
    const apple = await client.lookup('0000320193');
    expect(apple).toEqual({
      name: 'Apple Inc.',
      source: 'us_registry',
      source_id: '320193',
      country_code: 'US',
      status: 'active',
      legal_form: 'Inc',
      registration_number: '320193',
      incorporation_date: null,
      address: {
        line_1: 'ONE APPLE PARK WAY',
        line_2: null,
        city: 'CUPERTINO',
        region: 'CA',
        postal_code: '95014',
        country: 'US',
      },
      industry: { sic_codes: ['3571'], nace_codes: [], description: 'Electronic Computers' },
      officers: [],
      financials: null,
      vat_number: null,
      tax_id: '942404110',
      lei: null,
      dissolution_date: null,
      metadata: {
        cached: false,
        retrieved_at: expect.any(String),
        data_freshness: 'live',
        confidence_score: 1,
        cache_expires_at: null,
      },
      source_url: 'https://www.sec.gov/cgi-bin/browse-edgar?action=getcompany&CIK=0000320193',
    });
    expect(sec.count('/submissions/CIK0000320193.json')).toBeGreaterThanOrEqual(1);
  });

  test('lookup of a foreign filer takes country code, region and LEI from the document; a zero EIN is no EIN', async () => {
    const asml = await client.lookup('937966');
    expect(asml).toMatchObject({
      name: 'ASML HOLDING NV',
      country_code: 'NL',
      legal_form: 'N.V.',
      address: {
        line_1: 'DE RUN 6501',
        line_2: 'P.O. BOX 324',
        city: 'VELDHOVEN',
        region: 'Noord-Brabant',
        postal_code: '5504DR',
        country: 'Netherlands',
      },
      industry: { sic_codes: ['3559'], nace_codes: [], description: 'Special Industry Machinery, NEC' },
      tax_id: null,
      lei: '724500Y6DUVHQD6OXN27',
    });
  });

  test('foreign filers written in EDGAR codes, not ISO, come out in their own country (issue 37: SIEMENS AG was "US", region "2M")', async () => {
    const siemens = await client.lookup('940418');
    expect(siemens).toMatchObject({
      country_code: 'DE',
      address: { city: 'MUNICH', region: null, country: 'Germany' },
    });
    const energy = await client.lookup('1830056');
    expect(energy).toMatchObject({ country_code: 'DE', address: { region: null, country: 'Germany' } });
    const japan = await client.lookup('1911716');
    expect(japan).toMatchObject({ country_code: 'JP', address: { region: null, country: 'Japan' } });
  });

  test('lookup falls back to the mailing address when the business address is empty', async () => {
    const nicholas = await client.lookup('1000045');
    expect(nicholas).toMatchObject({
      name: 'NICHOLAS FINANCIAL INC /BC/',
      country_code: 'US',
      legal_form: 'Inc',
      address: {
        line_1: '26133 US HWY 19 NORTH',
        line_2: 'SUITE 300',
        city: 'CLEARWATER',
        region: 'FL',
        postal_code: '33763',
        country: 'US',
      },
      industry: null,
      tax_id: null,
    });
  });

  test('legal forms come from the name suffix', () => {
    expect(legalForm('MICROSOFT CORP')).toBe('Corp');
    expect(legalForm('TESLA, INC.')).toBe('Inc');
    expect(legalForm('Acme Widgets LLC')).toBe('LLC');
    expect(legalForm('BP PLC')).toBe('plc');
    expect(legalForm('Banco Santander, S.A.')).toBe('S.A.');
    expect(legalForm('ARM HOLDINGS LTD /UK')).toBe('Ltd');
    expect(legalForm('Berkshire Hathaway')).toBeNull();
  });

  test("legal forms of names as EDGAR's ticker index writes them: a bare trailing slash, a series numeral after the form", () => {
    // TOYOTA MOTOR CORP/, AMETEK INC/ and Ares Acquisition Corp II are in EDGAR's company_tickers_exchange.json.
    expect(legalForm('TOYOTA MOTOR CORP/')).toBe('Corp');
    expect(legalForm('AMETEK INC/')).toBe('Inc');
    expect(legalForm('Ares Acquisition Corp II')).toBe('Corp');
    expect(legalForm('EQV Ventures Acquisition Corp. II')).toBe('Corp');
    // The V of N V is the form's, not a numeral.
    expect(legalForm('ICTS INTERNATIONAL N V')).toBe('N.V.');
  });

  test('an unknown CIK (404 NoSuchKey) is CompanyNotFoundError', async () => {
    const err = await failure(client.lookup('1'));
    expect(err).toBeInstanceOf(CompanyNotFoundError);
    expect(err).toMatchObject({
      type: 'CompanyNotFound',
      retryable: false,
      registry: 'US SEC EDGAR',
      companyNumber: '1',
    });
    expect(sec.requests.at(-1)).toMatchObject({ path: '/submissions/CIK0000000001.json', status: 404 });
  });

  test('a CIK that is not up to 10 digits is InvalidInputError without a request', async () => {
    const before = sec.requests.length;
    for (const bad of ['AAPL', '12345678901', '', '320-193']) {
      const err = await failure(client.lookup(bad));
      expect(err).toBeInstanceOf(InvalidInputError);
      expect((err as InvalidInputError).type).toBe('InvalidInput');
    }
    expect(sec.requests.length).toBe(before);
  });

  test('a User-Agent without a contact email is refused: RegistryAuthError naming SEC', async () => {
    const undeclared = clientFor(sec, 'leadjobs/1.0');
    for (const attempt of [undeclared.lookup('320193'), undeclared.search('Apple', 1)]) {
      const err = await failure(attempt);
      expect(err).toBeInstanceOf(RegistryAuthError);
      expect(err).toMatchObject({ type: 'RegistryAuth', retryable: false });
      expect((err as Error).message).toMatch(/SEC EDGAR refused the request/);
      expect((err as Error).message).toMatch(/User-Agent must be declared/);
    }
    expect(sec.requests.at(-1)).toMatchObject({ userAgent: 'leadjobs/1.0', status: 403 });
  });

  test('the ticker index is fetched once for several searches', async () => {
    const fresh = clientFor(sec);
    const before = sec.count(TICKERS_PATH);
    // Two concurrent searches share one download, and a later one reuses it.
    await Promise.all([fresh.search('Apple', 2), fresh.search('Microsoft', 2)]);
    await fresh.search('ASML', 1);
    expect(sec.count(TICKERS_PATH)).toBe(before + 1);

    // With a zero TTL every search downloads it again.
    const uncached = new SecClient({
      baseUrl: sec.baseUrl,
      dataBaseUrl: sec.baseUrl,
      userAgent: USER_AGENT,
      http,
      tickersTtlMs: 0,
    });
    await uncached.search('Apple', 1);
    await uncached.search('Apple', 1);
    expect(sec.count(TICKERS_PATH)).toBe(before + 3);
  });
});

describe('US SEC EDGAR unreachable', () => {
  test('a refused connection is RegistryUnavailableError naming US SEC EDGAR', async () => {
    const gone = await startSecStandIn();
    await gone.close();
    const client = clientFor(gone);
    for (const attempt of [client.lookup('320193'), client.search('Apple', 1)]) {
      const err = await failure(attempt);
      expect(err).toBeInstanceOf(RegistryUnavailableError);
      expect(err).toMatchObject({ type: 'RegistryUnavailable', retryable: true });
      expect((err as Error).message).toMatch(/^US SEC EDGAR is unavailable/);
    }
  });
});

describe('US SEC EDGAR fair-access limit', () => {
  test('a burst over 10 requests/second gets 403 "Request Rate Threshold Exceeded": RegistryRateLimitedError', async () => {
    const sec = await startSecStandIn();
    try {
      const client = clientFor(sec);
      const outcomes = await Promise.allSettled(Array.from({ length: 15 }, () => client.lookup('320193')));
      const ok = outcomes.filter((o) => o.status === 'fulfilled');
      const limited = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as unknown] : []));
      expect(ok).toHaveLength(10);
      expect(limited).toHaveLength(5);
      for (const err of limited) {
        expect(err).toBeInstanceOf(RegistryRateLimitedError);
        expect(err).toMatchObject({ type: 'RegistryRateLimited', retryable: true, retryAfterMs: 10_000 });
        expect((err as Error).message).toMatch(/US SEC EDGAR/);
      }
      expect(sec.requests).toHaveLength(15);
      expect(sec.requests.filter((r) => r.status === 403)).toHaveLength(5);
    } finally {
      await sec.close();
    }
  });
});
