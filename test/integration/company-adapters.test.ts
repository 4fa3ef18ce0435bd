import { CompaniesHouseClient } from '../../activities/company/companies-house';
import {
  CompanyNotFoundError,
  InvalidInputError,
  RegistryAuthError,
  RegistryRateLimitedError,
  RegistryUnavailableError,
  type CompanyRecord,
} from '../../activities/company/types';
import { ViesClient } from '../../activities/company/vies';
import { OutboundClient } from '../../lib/outbound';
import { failure } from '../support/failure';
import { startCompaniesHouseStandIn, type CompaniesHouseStandIn } from '../stand-ins/companies-house';
import { startViesStandIn, type ViesStandIn } from '../stand-ins/vies';

const API_KEY = 'test-ch-key-1234';

let http: OutboundClient;
beforeAll(() => {
  http = new OutboundClient({ allowHosts: ['127.0.0.1'], userAgent: 'leadjobs-test/1.0', timeoutMs: 5000 });
});
afterAll(async () => {
  await http.close();
});

describe('UK Companies House adapter', () => {
  let ch: CompaniesHouseStandIn;
  let client: CompaniesHouseClient;
  beforeAll(async () => {
    ch = await startCompaniesHouseStandIn({ apiKey: API_KEY });
    client = new CompaniesHouseClient({ baseUrl: ch.baseUrl, apiKey: API_KEY, http });
  });
  afterAll(async () => {
    await ch.close();
  });

  test('search returns company records with status, legal form, line_1/country address and a name score', async () => {
    const results = await client.search('Shell Group', 2);
    expect(results.map((r) => r.registration_number)).toEqual(['03323845']);
    const shell = results[0] as CompanyRecord;
    expect(shell).toMatchObject({
      name: 'SHELL GROUP LIMITED',
      source: 'uk_registry',
      source_id: '03323845',
      country_code: 'GB',
      status: 'active',
      legal_form: 'ltd',
      incorporation_date: '1997-02-25',
      address: { line_1: 'Shell Centre, York Road', country: 'United Kingdom' },
      dissolution_date: null,
      source_url: 'https://find-and-update.company-information.service.gov.uk/company/03323845',
      metadata: { cached: false, data_freshness: 'live', confidence_score: 1, cache_expires_at: null },
    });
    expect(Date.parse(shell.metadata.retrieved_at)).not.toBeNaN();

    const broad = await client.search('shell', 2);
    expect(broad).toHaveLength(2);
    const trading = broad.find((r) => r.registration_number === '04366849');
    expect(trading).toMatchObject({ status: 'dissolved', legal_form: 'plc', dissolution_date: '2019-06-11' });
    for (const r of broad) {
      expect(r.metadata.confidence_score).toBeGreaterThan(0);
      expect(r.metadata.confidence_score).toBeLessThan(1);
    }
  });

  test('lookup returns the full record: parsed address, SIC codes and officers', async () => {
    const before = ch.requests.get('/company/03323845/officers') ?? 0;
    const shell = await client.lookup('03323845');
    expect(shell).toEqual({
      name: 'SHELL GROUP LIMITED',
      source: 'uk_registry',
      source_id: '03323845',
      country_code: 'GB',
      status: 'active',
      legal_form: 'ltd',
      registration_number: '03323845',
      incorporation_date: '1997-02-25',
      address: {
        line_1: 'Shell Centre, York Road',
        line_2: null,
        city: 'London',
        region: null,
        postal_code: 'SE1 7NA',
        country: 'United Kingdom',
      },
      industry: { sic_codes: ['70100', '06100'], nace_codes: [], description: null },
      officers: [
        {
          name: 'COOKSON, Alastair John Ivor',
          role: 'director',
          appointed_on: '2013-12-23',
          resigned_on: '2017-05-22',
          nationality: 'British',
          occupation: 'Investor',
          country_of_residence: 'England',
        },
        {
          name: 'HARRIS, Jane Elizabeth',
          role: 'secretary',
          appointed_on: '2018-01-08',
          resigned_on: null,
          nationality: null,
          occupation: null,
          country_of_residence: null,
        },
      ],
      financials: null,
      vat_number: null,
      tax_id: null,
      lei: null,
      dissolution_date: null,
      metadata: {
        cached: false,
        retrieved_at: expect.any(String),
        data_freshness: 'live',
        confidence_score: 1,
        cache_expires_at: null,
      },
      source_url: 'https://find-and-update.company-information.service.gov.uk/company/03323845',
    });
    expect(ch.requests.get('/company/03323845/officers')).toBe(before + 1);
  });

  test('lookup maps dissolved and insolvent companies, and pads a number given without leading zeros', async () => {
    const dissolved = await client.lookup('4366849');
    expect(dissolved).toMatchObject({
      registration_number: '04366849',
      status: 'dissolved',
      legal_form: 'plc',
      dissolution_date: '2019-06-11',
      address: {
        line_1: '2nd Floor, 80 Strand',
        line_2: 'Covent Garden',
        city: 'London',
        region: 'Greater London',
        postal_code: 'WC2R 0DT',
        country: 'England',
      },
    });
    expect(dissolved.officers).toHaveLength(1);

    // No officers resource at all (404) is an empty list, not "company not found".
    const insolvent = await client.lookup('SC123456');
    expect(insolvent).toMatchObject({
      status: 'liquidation',
      legal_form: 'llp',
      officers: [],
      industry: { sic_codes: [] },
    });
  });

  test('a bad API key is RegistryAuthError and an unknown company is CompanyNotFoundError', async () => {
    const badKey = new CompaniesHouseClient({ baseUrl: ch.baseUrl, apiKey: 'wrong', http });
    const auth = await failure(badKey.lookup('03323845'));
    expect(auth).toBeInstanceOf(RegistryAuthError);
    expect(auth).toMatchObject({
      type: 'RegistryAuth',
      message: 'the registry rejected the credentials (UK Companies House)',
    });

    const missing = await failure(client.lookup('09999999'));
    expect(missing).toBeInstanceOf(CompanyNotFoundError);
    expect((missing as CompanyNotFoundError).type).toBe('CompanyNotFound');
    expect((missing as Error).message).toMatch(/company not found/);
  });

  test('a gateway error (5xx) is RegistryUnavailableError naming the registry', async () => {
    ch.failNext(502);
    const err = await failure(client.lookup('03323845'));
    expect(err).toBeInstanceOf(RegistryUnavailableError);
    expect((err as Error).message).toMatch(/UK Companies House/);
    expect((err as RegistryUnavailableError).type).toBe('RegistryUnavailable');
  });

  test('over the rate limit, 429 becomes RegistryRateLimitedError with the wait until X-Ratelimit-Reset', async () => {
    const limited = await startCompaniesHouseStandIn({ apiKey: API_KEY, limit: 2, windowSeconds: 60 });
    try {
      const c = new CompaniesHouseClient({ baseUrl: limited.baseUrl, apiKey: API_KEY, http });
      await c.search('shell', 1);
      await c.search('shell', 1);
      const err = await failure(c.search('shell', 1));
      expect(err).toBeInstanceOf(RegistryRateLimitedError);
      const { retryAfterMs, type } = err as RegistryRateLimitedError;
      expect(type).toBe('RegistryRateLimited');
      expect(retryAfterMs).toBeGreaterThanOrEqual(1000);
      expect(retryAfterMs).toBeLessThanOrEqual(60_000);
      expect(limited.totalRequests()).toBe(3);
    } finally {
      await limited.close();
    }
  });
});

describe('EU VIES adapter', () => {
  let vies: ViesStandIn;
  let client: ViesClient;
  beforeAll(async () => {
    vies = await startViesStandIn();
    client = new ViesClient({ baseUrl: vies.baseUrl, http, retries: 2, backoffMs: 5 });
  });
  afterAll(async () => {
    await vies.close();
  });

  test('a registered number is valid, with name and address as the member state sends them', async () => {
    const result = await client.check('IE 6388047V');
    expect(result).toEqual({
      valid: true,
      vat_number: '6388047V',
      country_code: 'IE',
      company_name: 'GOOGLE IRELAND LIMITED',
      company_address: '3RD FLOOR, GORDON HOUSE, BARROW STREET\nDUBLIN 4',
      request_date: expect.any(String),
    });
    expect(Date.parse(result.request_date)).not.toBeNaN();
  });

  test('a withheld name and address stay the literal ---', async () => {
    const result = await client.check('DE282741168');
    expect(result).toMatchObject({
      valid: true,
      vat_number: '282741168',
      country_code: 'DE',
      company_name: '---',
      company_address: '---',
    });
  });

  test('an unregistered number is valid:false', async () => {
    const result = await client.check('DE123456789');
    expect(result.valid).toBe(false);
    expect(vies.requests.get('DE123456789')).toBe(1);
  });

  test('errorWrappers sent with HTTP 200 are retried, then the answer is returned', async () => {
    vies.failNext('NL004495445B01', [
      { error: 'MS_MAX_CONCURRENT_REQ' },
      { error: 'GLOBAL_MAX_CONCURRENT_REQ', status: 503 },
    ]);
    const result = await client.check('NL004495445B01');
    expect(result).toMatchObject({ valid: true, company_name: 'KONINKLIJKE PHILIPS N.V.' });
    expect(vies.requests.get('NL004495445B01')).toBe(3);
  });

  test('HTTP 5xx and 429 without errorWrappers are retried too', async () => {
    vies.failNext('IE6388047V', [
      { error: 'Service Temporarily Unavailable', status: 503, html: true },
      { error: 'Too Many Requests', status: 429, html: true },
    ]);
    const before = vies.requests.get('IE6388047V') ?? 0;
    expect(await client.check('IE6388047V')).toMatchObject({ valid: true, company_name: 'GOOGLE IRELAND LIMITED' });
    expect(vies.requests.get('IE6388047V')).toBe(before + 3);
  });

  test('a member state that stays unavailable is RegistryUnavailableError, never "invalid"', async () => {
    vies.failNext(
      'FR40303265045',
      Array.from({ length: 5 }, () => ({ error: 'MS_UNAVAILABLE' })),
    );
    const err = await failure(client.check('FR40303265045'));
    expect(err).toBeInstanceOf(RegistryUnavailableError);
    expect((err as RegistryUnavailableError).type).toBe('RegistryUnavailable');
    expect((err as Error).message).toMatch(/EU VIES/);
    expect((err as Error).message).toMatch(/MS_UNAVAILABLE/);
    // The first attempt and the two configured retries.
    expect(vies.requests.get('FR40303265045')).toBe(3);
  });

  test('INVALID_INPUT is InvalidInputError and is not retried', async () => {
    const err = await failure(client.check('XX123456789'));
    expect(err).toBeInstanceOf(InvalidInputError);
    expect((err as InvalidInputError).type).toBe('InvalidInput');
    expect(vies.requests.get('XX123456789')).toBe(1);

    // Without a country prefix the adapter refuses before asking VIES.
    const before = vies.totalRequests();
    expect(await failure(client.check('123456789'))).toBeInstanceOf(InvalidInputError);
    expect(vies.totalRequests()).toBe(before);
  });
});
