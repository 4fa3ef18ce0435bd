import { createServer } from 'node:http';
import { companyLookupResult, companySearchResult, companyVatResult } from '../../jobs/crawl-company-data';
import { bearer, ownQueues, startTestApi, type TestApi } from '../support/api';
import { startCompanyDataWorker } from '../support/company-worker';
import { caller, waitForStatus, type Caller } from '../support/jobs';
import { waitFor } from '../support/processes';
import { listenLocal } from '../stand-ins/listen';
import { startCompaniesHouseStandIn, type CompaniesHouseStandIn } from '../stand-ins/companies-house';
import { startSecStandIn, SYNTHETIC_CIK_BASE, type SecStandIn } from '../stand-ins/sec';
import { startViesStandIn, type ViesStandIn } from '../stand-ins/vies';

// crawlCompanyData over HTTP through the real API and the production worker set (job queues plus
// the registries' rate-limited queues) on the stack, against stand-in registries on 127.0.0.1.
jest.setTimeout(90_000);

const CH_KEY = 'ch-test-key-5678';
const SEC_AGENT = 'leadjobs-test ops@leadjobs.example';

interface JobSet {
  api: TestApi;
  c: Caller;
  stop(): Promise<void>;
}

/** An API and a worker set on queues of their own, configured with `overrides`. */
async function startJobSet(name: string, overrides: Record<string, string>): Promise<JobSet> {
  const all = { RATE_LIMIT_ENABLED: 'false', USER_URL_ALLOW_HOSTS: '127.0.0.1', ...ownQueues(name), ...overrides };
  const api = await startTestApi(all);
  const worker = await startCompanyDataWorker({ identity: `${name}-worker`, overrides: all });
  const c = caller(api, bearer(await api.newClient()));
  return {
    api,
    c,
    stop: async () => {
      await worker.stop();
      await api.close();
    },
  };
}

interface Finished {
  jobId: string;
  status: Record<string, unknown>;
  data: Record<string, unknown>;
}

async function run(c: Caller, payload: Record<string, unknown>): Promise<Finished> {
  const res = await c.post('/api/v1/jobs/crawlCompanyData/submit', { payload });
  expect(res.status).toBe(201);
  const { job_id } = await c.json<{ job_id: string }>(res);
  const status = await waitForStatus(c, job_id, ['completed', 'failed'], 60_000);
  if (status.status !== 'completed') return { jobId: job_id, status, data: {} };
  const envelope = await c.json(await c.get(`/api/v1/jobs/${job_id}/results`));
  return { jobId: job_id, status, data: envelope.data as Record<string, unknown> };
}

const hours = (from: string, to: string) => (Date.parse(to) - Date.parse(from)) / 3_600_000;
/** The most requests that started within any one second (SEC counts any one-second window). */
const busiestSecond = (requests: { at: number }[]) =>
  Math.max(...requests.map((r) => requests.filter((o) => o.at >= r.at && o.at < r.at + 1000).length));

let sec: SecStandIn;
let ch: CompaniesHouseStandIn;
let vies: ViesStandIn;
let main: JobSet;

beforeAll(async () => {
  [sec, ch, vies] = await Promise.all([
    startSecStandIn({ syntheticFilers: 60 }),
    startCompaniesHouseStandIn({ apiKey: CH_KEY }),
    startViesStandIn(),
  ]);
  main = await startJobSet('company', {
    SEC_BASE_URL: sec.baseUrl,
    SEC_DATA_BASE_URL: sec.baseUrl,
    SEC_EFTS_BASE_URL: sec.baseUrl,
    SEC_USER_AGENT: SEC_AGENT,
    COMPANIES_HOUSE_BASE_URL: ch.baseUrl,
    COMPANIES_HOUSE_API_KEY: CH_KEY,
    VIES_BASE_URL: vies.baseUrl,
  });
});

afterAll(async () => {
  await main.stop();
  await Promise.all([sec.close(), ch.close(), vies.close()]);
});

describe('crawlCompanyData: UK Companies House', () => {
  test('search returns uk_registry records in the search result shape', async () => {
    const { status, data } = await run(main.c, { mode: 'search', name: 'Shell', country: 'GB', limit: 5 });
    expect(status).toMatchObject({ status: 'completed', results_count: 3 });
    expect(data).toMatchObject({
      success: true,
      query: 'Shell',
      country: 'GB',
      total_results: 3,
      sources_queried: ['uk_registry'],
      query_time_ms: expect.any(Number),
      metadata: { skipped_items: 0, dedupe_stats: { processed: false }, cached: false },
    });
    const results = data.results as Record<string, unknown>[];
    expect(results.map((r) => r.registration_number).sort()).toEqual(['03323845', '04366849', 'SC123456']);
    const shell = results.find((r) => r.registration_number === '03323845');
    expect(shell).toMatchObject({
      name: 'SHELL GROUP LIMITED',
      source: 'uk_registry',
      source_id: '03323845',
      country_code: 'GB',
      status: 'active',
      legal_form: 'ltd',
      incorporation_date: '1997-02-25',
      address: { line_1: 'Shell Centre, York Road', country: 'United Kingdom' },
      source_url: 'https://find-and-update.company-information.service.gov.uk/company/03323845',
      metadata: { cached: false, data_freshness: 'live' },
    });
    const meta = shell?.metadata as { retrieved_at: string; cache_expires_at: string };
    expect(hours(meta.retrieved_at, meta.cache_expires_at)).toBeCloseTo(24, 5);
    expect(results.find((r) => r.registration_number === 'SC123456')).toMatchObject({ status: 'liquidation' });
    expect(() => companySearchResult.parse(data)).not.toThrow();
  });

  test('a search answer holding an item without a title completes with the other companies and counts the one left out', async () => {
    ch.addUntitledSearchItem('Trading');
    // Not 'Shell Trading': people.test.ts asks the registry that, and the registry cache is shared.
    const { status, data } = await run(main.c, { mode: 'search', name: 'Shell Trading Plc', country: 'GB', limit: 5 });
    expect(status).toMatchObject({ status: 'completed', results_count: 1 });
    expect(data).toMatchObject({ total_results: 1, metadata: { skipped_items: 1 } });
    expect((data.results as Record<string, unknown>[]).map((r) => r.registration_number)).toEqual(['04366849']);
    expect(() => companySearchResult.parse(data)).not.toThrow();
  });

  test('lookup returns the full record with officers; the same company asked again comes from the cache', async () => {
    const profileBefore = ch.requests.get('/company/03323845') ?? 0;
    const officersBefore = ch.requests.get('/company/03323845/officers') ?? 0;
    const live = await run(main.c, { mode: 'lookup', country: 'GB', identifier: '03323845' });
    expect(live.status).toMatchObject({ status: 'completed', results_count: 1 });
    expect(live.data).toMatchObject({
      success: true,
      country: 'GB',
      query_time_ms: expect.any(Number),
      metadata: { source: 'uk_registry', cached: false },
    });
    expect(live.data.data).toMatchObject({
      name: 'SHELL GROUP LIMITED',
      status: 'active',
      registration_number: '03323845',
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
        { name: 'HARRIS, Jane Elizabeth', role: 'secretary', appointed_on: '2018-01-08', resigned_on: null },
      ],
      financials: null,
      tax_id: null,
      lei: null,
      metadata: { cached: false, data_freshness: 'live', confidence_score: 1 },
    });
    expect(ch.requests.get('/company/03323845')).toBe(profileBefore + 1);
    expect(ch.requests.get('/company/03323845/officers')).toBe(officersBefore + 1);
    expect(() => companyLookupResult.parse(live.data)).not.toThrow();

    // The record is also an IDAP company_registry resource of the client, keyed by registry and number.
    const registry = async () =>
      (
        await main.c.json<{ items: { data: Record<string, unknown> }[] }>(
          await main.c.get('/api/v1/idap/company_registry?source=crawl_company_data'),
        )
      ).items;
    await waitFor(
      async () => (await registry()).some((r) => r.data.registry_id === '03323845'),
      15_000,
      'the company_registry resource',
    );
    expect((await registry()).find((r) => r.data.registry_id === '03323845')?.data).toMatchObject({
      registry: 'uk_registry',
      source: 'uk_registry',
      name: 'SHELL GROUP LIMITED',
      status: 'active',
      source_url: expect.stringContaining('03323845'),
    });

    // Registry data is public: another client's job asking the same question is answered from the cache.
    const other = caller(main.api, bearer(await main.api.newClient('other')));
    const cached = await run(other, { mode: 'lookup', country: 'GB', identifier: '03323845' });
    expect(cached.status).toMatchObject({ status: 'completed', results_count: 1 });
    expect(cached.data.metadata).toMatchObject({ source: 'uk_registry', cached: true });
    const record = cached.data.data as Record<string, unknown> & { metadata: Record<string, unknown> };
    expect(record).toMatchObject({
      registration_number: '03323845',
      officers: expect.arrayContaining([expect.objectContaining({ name: 'HARRIS, Jane Elizabeth' })]),
    });
    const liveMeta = (live.data.data as { metadata: Record<string, unknown> }).metadata;
    expect(record.metadata).toEqual({ ...liveMeta, cached: true, data_freshness: 'cached' });
    expect(ch.requests.get('/company/03323845')).toBe(profileBefore + 1);
    expect(ch.requests.get('/company/03323845/officers')).toBe(officersBefore + 1);
  });

  test('an unknown company fails the job with "company not found", asked once', async () => {
    const { status } = await run(main.c, { mode: 'lookup', country: 'GB', identifier: '09999999' });
    expect(status.status).toBe('failed');
    expect(status.error_message).toBe('company not found: 09999999 (UK Companies House)');
    expect(ch.requests.get('/company/09999999')).toBe(1);
  });

  test('a registry outage is retried, then fails naming the registry', async () => {
    ch.failNext(503, 4);
    const { status } = await run(main.c, { mode: 'lookup', country: 'GB', identifier: '04366849' });
    expect(status.status).toBe('failed');
    expect(status.error_message).toBe('UK Companies House is unavailable: HTTP 503');
    expect(ch.requests.get('/company/04366849')).toBe(4);
  });
});

describe('crawlCompanyData: US SEC EDGAR', () => {
  test('search ranks listed companies by name; lookup maps the submissions document', async () => {
    const search = await run(main.c, { mode: 'search', name: 'apple', country: 'US', limit: 10 });
    expect(search.data).toMatchObject({
      success: true,
      query: 'apple',
      country: 'US',
      sources_queried: ['us_registry'],
      metadata: { cached: false },
    });
    const results = search.data.results as Record<string, unknown>[];
    expect(results[0]).toMatchObject({
      name: 'Apple Inc.',
      source: 'us_registry',
      source_id: '320193',
      country_code: 'US',
      address: { line_1: null, country: 'US' },
    });
    expect(results.map((r) => r.source_id)).toContain('1418121');
    expect(results.map((r) => r.source_id)).not.toContain('789019');

    const lookup = await run(main.c, { mode: 'lookup', country: 'US', identifier: '0000320193' });
    expect(lookup.data).toMatchObject({
      success: true,
      country: 'US',
      metadata: { source: 'us_registry', cached: false },
    });
    expect(lookup.data.data).toMatchObject({
      name: 'Apple Inc.',
      source_id: '320193',
      registration_number: '320193',
      legal_form: 'Inc',
      address: { line_1: 'ONE APPLE PARK WAY', city: 'CUPERTINO', region: 'CA', postal_code: '95014', country: 'US' },
      industry: { sic_codes: ['3571'], description: 'Electronic Computers' },
      tax_id: '942404110',
    });
    expect(sec.requests.every((r) => r.userAgent === SEC_AGENT)).toBe(true);
  });

  test('30 lookups at once never exceed 10 SEC requests in any second', async () => {
    const first = sec.requests.length;
    const ids = Array.from({ length: 30 }, (_, i) => String(SYNTHETIC_CIK_BASE + i));
    const finished = await Promise.all(
      ids.map((identifier) => run(main.c, { mode: 'lookup', country: 'US', identifier })),
    );
    expect(finished.map((f) => f.status.status)).toEqual(ids.map(() => 'completed'));
    expect(finished.map((f) => (f.data.data as { source_id: string }).source_id).sort()).toEqual([...ids].sort());

    const burst = sec.requests.slice(first);
    expect(burst).toHaveLength(30);
    expect(burst.every((r) => r.status === 200)).toBe(true);
    expect(busiestSecond(burst)).toBeLessThanOrEqual(10);
  });

  test("lookups that a busy worker starts together still keep SEC's rate: none is refused", async () => {
    // CI, 2026-11-27: on a loaded machine activities the queue had dispatched at its rate started
    // together, and SEC's stand-in refused two of 30 requests for going past 10 in a second.
    const first = sec.requests.length;
    const ids = Array.from({ length: 16 }, (_, i) => String(SYNTHETIC_CIK_BASE + 40 + i));
    const jobs = await Promise.all(
      ids.map(async (identifier) => {
        const res = await main.c.post('/api/v1/jobs/crawlCompanyData/submit', {
          payload: { mode: 'lookup', country: 'US', identifier },
        });
        expect(res.status).toBe(201);
        return (await main.c.json<{ job_id: string }>(res)).job_id;
      }),
    );
    await waitFor(async () => sec.requests.length > first, 30_000, 'the first SEC request');
    // This process (worker and stand-in alike) busy for 4 s: the queue goes on dispatching lookups,
    // which then start at once.
    const until = Date.now() + 4000;
    while (Date.now() < until) {
      /* busy */
    }
    // The freeze also stalls this process's HTTP client: a status poll on a connection pooled before
    // it was once reset (ECONNRESET, CI 2026-12-02 under load; not reproduced alone). What this test
    // asserts is SEC's rate, so a reset poll is asked again, as any poller would.
    const poll = async (id: string): Promise<Record<string, unknown>> => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await waitForStatus(main.c, id, ['completed', 'failed'], 60_000);
        } catch (err) {
          if (
            attempt >= 3 ||
            !(err instanceof TypeError && /ECONNRESET|socket/i.test(String((err as { cause?: unknown }).cause)))
          )
            throw err;
        }
      }
    };
    const finished = await Promise.all(jobs.map(poll));
    expect(finished.map((f) => f.status)).toEqual(jobs.map(() => 'completed'));
    const burst = sec.requests.slice(first);
    expect(burst.filter((r) => r.status !== 200)).toEqual([]);
    expect(busiestSecond(burst)).toBeLessThanOrEqual(10);
  });
});

describe('crawlCompanyData: EU VIES', () => {
  test('a registered number is valid; a withheld name and address stay ---', async () => {
    const philips = await run(main.c, { mode: 'vat', vat_number: 'NL 004495445 B01' });
    expect(philips.data).toMatchObject({
      success: true,
      query_time_ms: expect.any(Number),
      data: {
        valid: true,
        vat_number: '004495445B01',
        country_code: 'NL',
        company_name: 'KONINKLIJKE PHILIPS N.V.',
        company_address: 'HIGH TECH CAMPUS 00052\n5656AG EINDHOVEN',
        request_date: expect.any(String),
      },
      metadata: { source: 'eu_vies', cached: false },
    });
    expect(() => companyVatResult.parse(philips.data)).not.toThrow();
    const withheld = await run(main.c, { mode: 'vat', vat_number: 'DE282741168' });
    expect(withheld.data.data).toMatchObject({
      valid: true,
      country_code: 'DE',
      company_name: '---',
      company_address: '---',
    });
    const unknown = await run(main.c, { mode: 'vat', vat_number: 'DE999999999' });
    expect(unknown.status.status).toBe('completed');
    expect(unknown.data.data).toMatchObject({ valid: false, country_code: 'DE' });
  });

  test('errorWrappers sent with HTTP 200 are retried, never reported as invalid; test jobs run on the test queue', async () => {
    vies.failNext('IE6388047V', [{ error: 'MS_MAX_CONCURRENT_REQ' }, { error: 'MS_UNAVAILABLE', status: 200 }]);
    const { jobId, status, data } = await run(main.c, { mode: 'vat', vat_number: 'IE6388047V', test: true });
    expect(status.status).toBe('completed');
    const described = await main.api.deps.temporal.client.workflow.getHandle(`job/${jobId}`).describe();
    expect(described.taskQueue).toMatch(/-crawl-company-data-test$/);
    expect(data.data).toMatchObject({ valid: true, company_name: 'GOOGLE IRELAND LIMITED' });
    expect(vies.requests.get('IE6388047V')).toBe(3);
  });
});

describe('crawlCompanyData: configuration and limits', () => {
  test('a rejected Companies House key fails the job saying the registry rejected the credentials', async () => {
    const badKey = await startJobSet('company-badkey', {
      COMPANIES_HOUSE_BASE_URL: ch.baseUrl,
      COMPANIES_HOUSE_API_KEY: 'not-the-key',
      VIES_BASE_URL: vies.baseUrl,
    });
    try {
      const { status } = await run(badKey.c, { mode: 'search', name: 'Northern', country: 'GB' });
      expect(status.status).toBe('failed');
      expect(status.error_message).toBe('the registry rejected the credentials (UK Companies House)');
      // Without SEC_USER_AGENT, US jobs fail at once and say what to set.
      const us = await run(badKey.c, { mode: 'lookup', country: 'US', identifier: '789019' });
      expect(us.status.error_message).toMatch(/SEC_USER_AGENT/);
    } finally {
      await badKey.stop();
    }
  });

  test('a Companies House 429 waits until X-Ratelimit-Reset and then completes', async () => {
    const limited = await startCompaniesHouseStandIn({ apiKey: CH_KEY, limit: 1, windowSeconds: 2 });
    const set = await startJobSet('company-limited', {
      COMPANIES_HOUSE_BASE_URL: limited.baseUrl,
      COMPANIES_HOUSE_API_KEY: CH_KEY,
    });
    try {
      // Profile and officers are two requests: the second is over the limit of 1 per 2 s.
      const { status, data } = await run(set.c, { mode: 'lookup', country: 'GB', identifier: 'SC123456' });
      expect(status.status).toBe('completed');
      expect(data.data).toMatchObject({ name: 'NORTHERN SHELLFISH LLP', status: 'liquidation', officers: [] });
      expect(limited.requests.get('/company/SC123456/officers')).toBeGreaterThanOrEqual(2);
    } finally {
      await set.stop();
      await limited.close();
    }
  });

  test('cancelling a job whose registry never answers stops the request within 3 seconds', async () => {
    // A VIES that accepts requests and never answers; each is recorded with when the worker hung up.
    const calls: { startedAt: number; closedAt?: number }[] = [];
    const hanging = await listenLocal(
      createServer((req, res) => {
        const call: { startedAt: number; closedAt?: number } = { startedAt: Date.now() };
        calls.push(call);
        res.on('close', () => {
          call.closedAt = Date.now();
        });
      }),
    );
    const set = await startJobSet('company-hang', { VIES_BASE_URL: hanging.baseUrl });
    try {
      // A number no other test asks about: registry answers are cached for every client.
      const res = await set.c.post('/api/v1/jobs/crawlCompanyData/submit', {
        payload: { mode: 'vat', vat_number: `DE${Math.floor(1e8 + Math.random() * 9e8)}` },
      });
      const { job_id } = await set.c.json<{ job_id: string }>(res);
      await waitFor(async () => calls.length > 0, 30_000, 'the registry request');
      const cancelledAt = Date.now();
      expect((await set.c.del(`/api/v1/jobs/${job_id}`)).status).toBe(200);
      await waitFor(async () => calls[0]?.closedAt !== undefined, 5_000, 'the worker to hang up on the registry');
      expect((calls[0]?.closedAt ?? Infinity) - cancelledAt).toBeLessThan(3000);
      // And it does not ask again.
      await new Promise((r) => setTimeout(r, 2000));
      expect(calls).toHaveLength(1);
      expect((await set.c.json(await set.c.get(`/api/v1/jobs/${job_id}/status`))).status).toBe('cancelled');
    } finally {
      await set.stop();
      await hanging.close();
    }
  });
});
