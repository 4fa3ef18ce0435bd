import { bearer, ownQueues, startTestApi, type TestApi } from '../support/api';
import { caller, waitForStatus, type Caller } from '../support/jobs';
import { waitFor } from '../support/processes';
import { startTestWorker, type TestWorker } from '../support/worker';
import { startDnsStandIn, type DnsStandIn } from '../stand-ins/dns';
import { startSmtpStandIn, type SmtpStandIn } from '../stand-ins/smtp';

// Issue 37 defect 6: every change that feeds a lead document reaches it through the outbox, not
// only a business written by a job. Real API, worker, Postgres, Elasticsearch and Temporal; the
// mail domain's MX and mailbox are the DNS and SMTP stand-ins on 127.0.0.1.
jest.setTimeout(120_000);

let dns: DnsStandIn;
let smtp: SmtpStandIn;
let api: TestApi;
let worker: TestWorker;
let c: Caller;

beforeAll(async () => {
  smtp = await startSmtpStandIn({ catchAllDomain: 'catchall.test' });
  dns = await startDnsStandIn({
    'verify.test': { mx: [{ exchange: 'mx.verify.test', priority: 10 }] },
    'mx.verify.test': { a: [smtp.address] },
  });
  const env = {
    ...ownQueues('leadverify'),
    DNS_SERVERS: dns.server,
    SMTP_PROBE_PORT: String(smtp.port),
    SMTP_HELO_NAME: 'probe.leadjobs.test',
    SMTP_FROM: 'verify@leadjobs.test',
    USER_URL_ALLOW_HOSTS: '127.0.0.0/8',
  };
  api = await startTestApi({ RATE_LIMIT_ENABLED: 'false', ...env });
  worker = await startTestWorker({ types: ['crawlVerify'], identity: 'lead-verify-worker', overrides: env });
  c = caller(api, bearer(await api.newClient()));
});

afterAll(async () => {
  await worker?.stop();
  await api?.close();
  await Promise.all([dns?.close(), smtp?.close()]);
});

type Hit = { name: string | null; email: string | null; email_verified: boolean };

const verifiedHits = async (): Promise<Hit[]> =>
  (await c.json<{ hits: Hit[] }>(await c.get('/api/v1/search/leads?email_verified=true&per_page=100'))).hits;

/** Polls lead search (bounded) until the business shows as verified; then returns its hit. */
async function verifiedHit(name: string): Promise<Hit | undefined> {
  await waitFor(
    async () => (await verifiedHits()).some((h) => h.name === name),
    30_000,
    `${name} to show email_verified`,
  ).catch(() => undefined);
  return (await verifiedHits()).find((h) => h.name === name);
}

async function importRecords(type: string, records: Record<string, unknown>[]): Promise<void> {
  const res = await c.post(`/api/v1/idap/${type}/import`, { records: records.map((data) => ({ data })) });
  expect(res.status).toBe(200);
}

test('an address verified by crawlVerify before a business names it: the imported business is found by email_verified=true with that e-mail', async () => {
  const submitted = await c.post('/api/v1/jobs/crawlVerify/submit', { payload: { email: 'ceo@verify.test' } });
  expect(submitted.status).toBe(201);
  const { job_id } = await c.json<{ job_id: string }>(submitted);
  expect(await waitForStatus(c, job_id, ['completed', 'failed'], 60_000)).toMatchObject({ status: 'completed' });
  const emails = async () =>
    (
      await c.json<{ items: { data: Record<string, unknown> }[] }>(
        await c.get('/api/v1/idap/emails?source=crawl_verify&limit=100'),
      )
    ).items;
  await waitFor(
    async () => (await emails()).some((e) => e.data.address === 'ceo@verify.test' && e.data.verified === true),
    15_000,
    'the verified e-mail resource',
  );

  await importRecords('businesses', [
    { name: 'Early Verified Bakery', website: 'https://early-verified.example', email: 'Ceo@verify.test' },
  ]);
  expect(await verifiedHit('Early Verified Bakery')).toMatchObject({ email: 'ceo@verify.test', email_verified: true });
});

test('a verdict imported through IDAP as an e-mail resource reaches the lead of the business that names the address', async () => {
  await importRecords('businesses', [
    {
      name: 'Imported Verdict Bakery',
      website: 'https://imported-verdict.example',
      email: 'owner@imported-verdict.example',
    },
  ]);
  await waitFor(
    async () =>
      (
        await c.json<{ total: number }>(
          await c.get(`/api/v1/search/leads?query=${encodeURIComponent('Imported Verdict Bakery')}`),
        )
      ).total === 1,
    30_000,
    'the imported lead',
  );
  expect((await verifiedHits()).map((h) => h.name)).not.toContain('Imported Verdict Bakery');

  await importRecords('emails', [
    { address: 'owner@imported-verdict.example', verified: true, verification_status: 'valid' },
  ]);
  expect(await verifiedHit('Imported Verdict Bakery')).toMatchObject({
    email: 'owner@imported-verdict.example',
    email_verified: true,
  });
});
