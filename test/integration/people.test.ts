import { crawlPeopleResult } from '../../jobs/crawl-people';
import { bearer, ownQueues, startTestApi, type TestApi } from '../support/api';
import { startCompanyDataWorker } from '../support/company-worker';
import { caller, waitForStatus, type Caller } from '../support/jobs';
import { waitFor } from '../support/processes';
import { startCompaniesHouseStandIn, type CompaniesHouseStandIn } from '../stand-ins/companies-house';
import { startWebsite, type Website } from '../stand-ins/website';

// crawlPeople over HTTP through the real API and the production worker set (the job queue and the
// registry queues) on the stack: a stand-in company website with a team page (test/stand-ins/website.ts)
// and a stand-in Companies House for the registry's officers and search.
jest.setTimeout(120_000);

const CH_KEY = 'ch-people-key-1234';

let api: TestApi;
let c: Caller;
let site: Website;
let ch: CompaniesHouseStandIn;
let worker: { stop(): Promise<void> };

beforeAll(async () => {
  [site, ch] = await Promise.all([startWebsite(), startCompaniesHouseStandIn({ apiKey: CH_KEY })]);
  const config = {
    RATE_LIMIT_ENABLED: 'false',
    USER_URL_ALLOW_HOSTS: '127.0.0.1',
    SITE_DELAY_MS: '0',
    COMPANIES_HOUSE_BASE_URL: ch.baseUrl,
    COMPANIES_HOUSE_API_KEY: CH_KEY,
    ...ownQueues('people'),
  };
  api = await startTestApi(config);
  worker = await startCompanyDataWorker({
    identity: 'people-worker',
    overrides: config,
    types: ['crawlPeople', 'crawlCompanyData'],
  });
  c = caller(api, bearer(await api.newClient()));
});

afterAll(async () => {
  await worker.stop();
  await api.close();
  await Promise.all([site.close(), ch.close()]);
});

async function run(
  who: Caller,
  type: string,
  payload: Record<string, unknown>,
): Promise<{ jobId: string; status: Record<string, unknown>; data: Record<string, unknown> }> {
  const res = await who.post(`/api/v1/jobs/${type}/submit`, { payload });
  expect(res.status).toBe(201);
  const { job_id } = await who.json<{ job_id: string }>(res);
  const status = await waitForStatus(who, job_id, ['completed', 'failed'], 90_000);
  if (status.status !== 'completed') return { jobId: job_id, status, data: {} };
  const envelope = await who.json(await who.get(`/api/v1/jobs/${job_id}/results`));
  return { jobId: job_id, status, data: envelope.data as Record<string, unknown> };
}

type Person = Record<string, unknown> & { full_name: string; sources: string[] };
const byName = (data: Record<string, unknown>) => new Map((data.people as Person[]).map((p) => [p.full_name, p]));

describe('crawlPeople', () => {
  test("from a website: team cards, JSON-LD people and profile links, plus the UK registry's current officers, merged with their sources", async () => {
    // A crawlCompanyData lookup makes the company's registry record (with officers) known to the client.
    const lookup = await run(c, 'crawlCompanyData', { mode: 'lookup', country: 'GB', identifier: '09876543' });
    expect(lookup.status.status).toBe('completed');
    await waitFor(
      async () =>
        (await c.get('/api/v1/idap/company_registry/resolve?registry=uk_registry&registry_id=09876543')).status === 200,
      20_000,
      'the registry record in IDAP',
    );

    const { status, data, jobId } = await run(c, 'crawlPeople', {
      url: `${site.baseUrl}/`,
      company_name: 'Acme Widgets Limited',
    });
    expect(status.status).toBe('completed');
    expect(() => crawlPeopleResult.parse(data)).not.toThrow();
    expect(data.company).toEqual({
      name: 'Acme Widgets Limited',
      domain: '127.0.0.1',
      website: `${site.baseUrl}/`,
      resolved_via: 'payload',
      resolution: `the website given: ${site.baseUrl}/`,
      registry: {
        source: 'uk_registry',
        source_id: '09876543',
        name: 'ACME WIDGETS LIMITED',
        source_url: 'https://find-and-update.company-information.service.gov.uk/company/09876543',
      },
    });
    expect(data.sources_used).toEqual(['site', 'proflink', 'uk_registry']);
    const team = `${site.baseUrl}/team`;
    const people = byName(data);
    expect([...people.keys()].sort()).toEqual(['Ada Lovelace', 'Alan Turing', 'Grace Hopper', 'Jane Elizabeth Harris']);
    expect(people.get('Grace Hopper')).toEqual({
      full_name: 'Grace Hopper',
      first_name: 'Grace',
      last_name: 'Hopper',
      position: 'Head of Engineering',
      seniority: 'director',
      email: 'grace@acme-widgets.co.uk',
      email_guess: null,
      proflink_url: 'https://www.linkedin.com/in/grace-hopper',
      sources: [team],
      canonical_id: expect.any(Number),
      dedupe_unique: true,
    });
    expect(people.get('Ada Lovelace')).toMatchObject({
      position: 'Chief Technology Officer',
      seniority: 'executive',
      email: 'ada@acme-widgets.co.uk',
      proflink_url: 'https://www.linkedin.com/in/ada-lovelace',
    });
    // Grace's and Ada's addresses are first@: Alan gets a guess of that pattern, marked as such.
    expect(data.email_pattern).toEqual({ pattern: 'first', domain: 'acme-widgets.co.uk', examples: 2 });
    expect(people.get('Alan Turing')).toMatchObject({
      position: 'Research Lead',
      seniority: 'manager',
      email: null,
      email_guess: 'alan@acme-widgets.co.uk',
      sources: [team],
    });
    // The resigned director is left out; the secretary is there, from the registry page.
    expect(people.get('Jane Elizabeth Harris')).toMatchObject({
      position: 'secretary',
      email: null,
      email_guess: 'jane@acme-widgets.co.uk',
      sources: ['https://find-and-update.company-information.service.gov.uk/company/09876543'],
    });

    // IDAP: the people as contacts of the site's business, their profiles as proflink_profiles.
    let business: Record<string, unknown> = {};
    await waitFor(
      async () => {
        const res = await c.get(
          `/api/v1/idap/businesses/resolve?website=${encodeURIComponent(site.baseUrl)}&include=contacts,proflink_profiles`,
        );
        if (res.status !== 200) return false;
        business = await c.json(res);
        const contacts = (business.related as Record<string, unknown[]> | undefined)?.contacts ?? [];
        return contacts.length >= 4;
      },
      20_000,
      'the people as IDAP contacts',
    );
    const related = business.related as Record<string, Record<string, unknown>[]>;
    expect((related.contacts ?? []).map((x) => x.full_name).sort()).toEqual([
      'Ada Lovelace',
      'Alan Turing',
      'Grace Hopper',
      'Jane Elizabeth Harris',
    ]);
    expect((related.contacts ?? []).find((x) => x.full_name === 'Alan Turing')).toMatchObject({
      email_guess: 'alan@acme-widgets.co.uk',
      company_domain: '127.0.0.1',
    });
    expect((related.proflink_profiles ?? []).map((x) => x.url).sort()).toEqual([
      'https://www.linkedin.com/in/ada-lovelace',
      'https://www.linkedin.com/in/grace-hopper',
    ]);

    // The same people again: the canonical store knows them (same records), so none is unique now.
    const again = await run(c, 'crawlPeople', {
      company_domain: '127.0.0.1',
      url: `${site.baseUrl}/team`,
      company_name: 'Acme Widgets Limited',
      max_pages: 5,
    });
    expect(again.jobId).not.toBe(jobId);
    const second = byName(again.data);
    for (const [name, p] of people)
      expect(second.get(name)).toMatchObject({ dedupe_unique: false, canonical_id: p.canonical_id });
  });

  test('roles keep only matching positions', async () => {
    const { data } = await run(c, 'crawlPeople', {
      url: `${site.baseUrl}/`,
      roles: ['founder', 'executive'],
      max_pages: 10,
    });
    expect((data.people as Person[]).map((p) => p.full_name)).toEqual(['Ada Lovelace']);
    // The pattern is learnt from everyone found, not only those kept.
    expect(data.email_pattern).toMatchObject({ pattern: 'first' });
  });

  test("from a company name: the client's IDAP business of that name gives the website", async () => {
    // A client of its own: the other tests' projections name the same (127.0.0.1) business.
    const own = caller(api, bearer(await api.newClient('imported business')));
    const imported = await own.post('/api/v1/idap/businesses/import', {
      records: [{ data: { name: 'Acme Widgets Ltd', website: site.baseUrl } }],
    });
    expect(imported.status).toBeLessThan(300);
    const { status, data } = await run(own, 'crawlPeople', { company_name: 'Acme Widgets', max_pages: 10 });
    expect(status).toMatchObject({ status: 'completed', error_message: null });
    expect(data.company).toMatchObject({
      name: 'Acme Widgets',
      resolved_via: 'idap_business',
      website: site.baseUrl,
      resolution: 'the client\'s IDAP business "Acme Widgets Ltd" (127.0.0.1)',
    });
    expect([...byName(data).keys()]).toEqual(expect.arrayContaining(['Ada Lovelace', 'Alan Turing', 'Grace Hopper']));
  });

  test('a name that cannot be resolved fails saying what was looked at', async () => {
    const unknown = await run(c, 'crawlPeople', { company_name: 'Nowhere Holdings' });
    expect(unknown.status).toMatchObject({
      status: 'failed',
      error_message:
        'no website for "Nowhere Holdings": none of the client\'s IDAP businesses is named like "Nowhere Holdings"; give url or company_domain, or country (US or GB) for a registry search',
    });
    const searched = await run(c, 'crawlPeople', { company_name: 'Shell Trading', country: 'GB' });
    expect(searched.status).toMatchObject({
      status: 'failed',
      error_message:
        'no website for "Shell Trading": none of the client\'s IDAP businesses is named like "Shell Trading"; the UK registry (Companies House) knows "SHELL TRADING PLC" (04366849) but registry records carry no website, and no IDAP business is named like it',
    });
    expect(ch.requests.get('/search/companies')).toBeGreaterThanOrEqual(1);
  });

  test('a registry search finds a company whose officers the client knows: its people without a website', async () => {
    // A client of its own, whose only knowledge of the company is its registry record.
    const own = caller(api, bearer(await api.newClient('registry only')));
    expect(
      (await run(own, 'crawlCompanyData', { mode: 'lookup', country: 'GB', identifier: '09876543' })).status.status,
    ).toBe('completed');
    await waitFor(
      async () =>
        (await own.get('/api/v1/idap/company_registry/resolve?registry=uk_registry&registry_id=09876543')).status ===
        200,
      20_000,
      'the registry record in IDAP',
    );
    const { status, data } = await run(own, 'crawlPeople', { company_name: 'Acme Widgets', country: 'GB' });
    expect(status.status).toBe('completed');
    expect(data.company).toMatchObject({ website: null, resolved_via: null, registry: { source_id: '09876543' } });
    expect((data.people as Person[]).map((p) => p.full_name)).toEqual(['Jane Elizabeth Harris']);
    expect(data.sources_used).toEqual(['uk_registry']);
  });

  test('cancelling a crawl of a slow site stops its requests within 3 seconds', async () => {
    const slow = await startWebsite({ mode: 'slow', pageDelayMs: 300 });
    try {
      const res = await c.post('/api/v1/jobs/crawlPeople/submit', {
        payload: { url: `${slow.baseUrl}/`, max_pages: 100 },
      });
      const { job_id } = await c.json<{ job_id: string }>(res);
      await waitFor(async () => slow.total() >= 4, 30_000, 'the crawl to be under way');
      const cancelledAt = Date.now();
      expect((await c.del(`/api/v1/jobs/${job_id}`)).status).toBe(200);
      await waitFor(
        async () => (await c.json(await c.get(`/api/v1/jobs/${job_id}/status`))).status === 'cancelled',
        5_000,
        'the job to be cancelled',
      );
      await new Promise((r) => setTimeout(r, 3000));
      const after = slow.total();
      await new Promise((r) => setTimeout(r, 1500));
      expect(slow.total()).toBe(after);
      expect(slow.lastRequestAt() - cancelledAt).toBeLessThan(3000);
    } finally {
      await slow.close();
    }
  });

  test('payload checks: one of url, company_domain or company_name; country only with a name', async () => {
    const none = await c.post('/api/v1/jobs/crawlPeople/submit', { payload: { max_results: 5 } });
    expect(none.status).toBe(422);
    expect((await c.json<{ detail: { msg: string }[] }>(none)).detail[0]?.msg).toBe(
      'one of url, company_domain or company_name must be provided',
    );
    const country = await c.post('/api/v1/jobs/crawlPeople/submit', {
      payload: { url: 'https://acme.test/', country: 'GB' },
    });
    expect((await c.json<{ detail: { loc: string[]; msg: string }[] }>(country)).detail[0]).toMatchObject({
      loc: ['body', 'payload', 'country'],
      msg: 'country is only used with company_name',
    });
  });
});
