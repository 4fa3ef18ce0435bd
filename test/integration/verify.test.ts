import { crawlVerifyResult, SCORE_RULES, type VerifyResultItem } from '../../jobs/crawl-verify';
import { bearer, ownQueues, startTestApi, type TestApi } from '../support/api';
import { caller, waitForStatus, type Caller } from '../support/jobs';
import { waitFor } from '../support/processes';
import { startTestWorker, type TestWorker } from '../support/worker';
import { startDnsStandIn, type DnsStandIn } from '../stand-ins/dns';
import { startSmtpStandIn, type SmtpStandIn } from '../stand-ins/smtp';

// crawlVerify over HTTP through the real API and worker, against a DNS server and mail servers on
// 127.0.0.1 (dns2, smtp-server and a server that never greets).
jest.setTimeout(90_000);

let dns: DnsStandIn;
let smtp: SmtpStandIn;
let api: TestApi;
let worker: TestWorker;
let c: Caller;

beforeAll(async () => {
  smtp = await startSmtpStandIn({ catchAllDomain: 'catchall.test' });
  const mx = (host: string) => ({ mx: [{ exchange: host, priority: 10 }] });
  dns = await startDnsStandIn({
    'verify.test': {
      mx: [
        { exchange: 'mx2.verify.test', priority: 20 },
        { exchange: 'mx.verify.test', priority: 10 },
      ],
    },
    'mx.verify.test': { a: [smtp.address] },
    'mx2.verify.test': { a: ['127.0.0.9'] },
    'catchall.test': mx('mx.verify.test'),
    'gmail.com': mx('mx.verify.test'),
    'mailinator.com': mx('mx.verify.test'),
    'xn--bcher-kva.test': mx('mx.verify.test'),
    'a-only.test': { a: [smtp.address] },
    'nomail.test': {},
    'broken.test': { servfail: true },
    'silent.test': mx('mx.silent.test'),
    'mx.silent.test': { a: [smtp.silentAddress] },
    'closed.test': mx('mx.closed.test'),
    'mx.closed.test': { a: ['127.0.0.3'] },
    'private.test': mx('mx.private.test'),
    'mx.private.test': { a: ['10.0.0.1'] },
  });
  const env = {
    ...ownQueues('verify'),
    DNS_SERVERS: dns.server,
    SMTP_PROBE_PORT: String(smtp.port),
    SMTP_HELO_NAME: 'probe.leadjobs.test',
    SMTP_FROM: 'verify@leadjobs.test',
    // The stand-ins' loopback addresses, not 10.0.0.0/8: private.test must meet the SSRF guard.
    USER_URL_ALLOW_HOSTS: '127.0.0.0/8',
  };
  api = await startTestApi({ RATE_LIMIT_ENABLED: 'false', ...env });
  worker = await startTestWorker({ types: ['crawlVerify'], identity: 'verify-worker', overrides: env });
  c = caller(api, bearer(await api.newClient()));
});

afterAll(async () => {
  await worker?.stop();
  await api?.close();
  await Promise.all([dns?.close(), smtp?.close()]);
});

async function submit(payload: Record<string, unknown>): Promise<string> {
  const res = await c.post('/api/v1/jobs/crawlVerify/submit', { payload });
  expect(res.status).toBe(201);
  return (await c.json<{ job_id: string }>(res)).job_id;
}

async function verify(payload: Record<string, unknown>): Promise<{
  jobId: string;
  data: { results: VerifyResultItem[]; summary: Record<string, number> };
  status: Record<string, unknown>;
}> {
  const jobId = await submit(payload);
  const status = await waitForStatus(c, jobId, ['completed', 'failed'], 60_000);
  expect(status).toMatchObject({ status: 'completed' });
  const envelope = await c.json<{ data: { results: VerifyResultItem[]; summary: Record<string, number> } }>(
    await c.get(`/api/v1/jobs/${jobId}/results`),
  );
  expect(() => crawlVerifyResult.strict().parse(envelope.data)).not.toThrow();
  return { jobId, data: envelope.data, status };
}

const byEmail = (results: VerifyResultItem[]) => new Map(results.map((r) => [r.email, r]));

test('each verdict with its reason; duplicates verified once; MX answers cached for the job; STARTTLS used', async () => {
  const sessionsBefore = smtp.sessions.length;
  const { data, status } = await verify({
    emails: [
      'alice@verify.test',
      ' ALICE@Verify.test',
      'bob@verify.test',
      'nobody@verify.test',
      'anyone@catchall.test',
      'full@verify.test',
      'grey@verify.test',
      'info@verify.test',
      'alice@gmail.com',
      'someone@mailinator.com',
      'not-an-email',
      'alice@nonexistent.test',
      'alice@nomail.test',
      'alice@a-only.test',
      'alice@broken.test',
      'alice@closed.test',
      'alice@private.test',
      'ALICE@Bücher.test',
      'alice@xn--bcher-kva.test',
    ],
  });
  expect(status).toMatchObject({ results_count: 17 });
  const r = byEmail(data.results);
  expect(data.results.map((x) => x.email)).toHaveLength(17);

  expect(r.get('alice@verify.test')).toEqual({
    email: 'alice@verify.test',
    status: 'valid',
    score: 100,
    is_deliverable: true,
    is_free_email: false,
    is_disposable: false,
    is_role_account: false,
    is_catch_all: false,
    mx: 'mx.verify.test',
    reason: expect.stringContaining('accepted the mailbox: 250'),
  });
  expect(r.get('nobody@verify.test')).toMatchObject({
    status: 'invalid',
    score: 0,
    is_deliverable: false,
    reason: 'mailbox does not exist: 550 5.1.1 <nobody@verify.test>: no such user',
  });
  expect(r.get('anyone@catchall.test')).toMatchObject({
    status: 'risky',
    score: 70,
    is_deliverable: true,
    is_catch_all: true,
    reason: expect.stringContaining('catch-all'),
  });
  expect(r.get('full@verify.test')).toMatchObject({
    status: 'risky',
    score: 0,
    is_deliverable: false,
    reason: 'mailbox full: 552 5.2.2 <full@verify.test>: mailbox full',
  });
  // Greylisted at first (451), accepted on the retry.
  expect(r.get('grey@verify.test')).toMatchObject({ status: 'valid', is_deliverable: true });
  expect(smtp.sessions.filter((s) => s.rcpts.some((x) => x.address === 'grey@verify.test'))).toHaveLength(2);
  expect(r.get('info@verify.test')).toMatchObject({
    status: 'risky',
    score: 85,
    is_role_account: true,
    reason: expect.stringContaining('role account (info@)'),
  });
  expect(r.get('alice@gmail.com')).toMatchObject({ status: 'valid', score: 95, is_free_email: true });
  expect(r.get('someone@mailinator.com')).toMatchObject({
    status: 'risky',
    is_disposable: true,
    reason: 'disposable address provider (mailinator.com)',
  });
  expect(r.get('not-an-email')).toMatchObject({
    status: 'invalid',
    score: 0,
    mx: null,
    reason: expect.stringContaining('invalid syntax'),
  });
  expect(r.get('alice@nonexistent.test')).toMatchObject({
    status: 'invalid',
    mx: null,
    reason: expect.stringContaining('does not exist (NXDOMAIN)'),
  });
  expect(r.get('alice@nomail.test')).toMatchObject({
    status: 'invalid',
    reason: expect.stringContaining('no MX record and no address'),
  });
  expect(r.get('alice@a-only.test')).toMatchObject({ status: 'valid', mx: 'a-only.test' });
  expect(r.get('alice@broken.test')).toMatchObject({
    status: 'unknown',
    score: 40,
    reason: expect.stringMatching(/DNS lookup of broken\.test failed \(ESERVFAIL\)/),
  });
  expect(r.get('alice@closed.test')).toMatchObject({
    status: 'unknown',
    mx: 'mx.closed.test',
    reason: expect.stringContaining('connection refused by mx.closed.test (127.0.0.3)'),
  });
  expect(r.get('alice@private.test')).toMatchObject({
    status: 'unknown',
    reason: 'mail server mx.private.test is not allowed (only public internet hosts can be reached)',
  });
  expect(r.get('alice@bücher.test')).toMatchObject({ status: 'valid' });
  expect(data.summary).toEqual({ valid: 6, risky: 4, invalid: 4, unknown: 3 });

  const sessions = smtp.sessions.slice(sessionsBefore);
  // Duplicates once: one session asked about alice@verify.test, one about the IDN address however written (smtp-server shows its domain in Unicode).
  expect(sessions.filter((s) => s.rcpts[0]?.address === 'alice@verify.test')).toHaveLength(1);
  expect(sessions.filter((s) => s.rcpts[0]?.address === 'alice@bücher.test')).toHaveLength(1);
  // STARTTLS was offered and taken before MAIL FROM; the probe names itself as configured.
  expect(sessions.every((s) => s.rcpts.every((x) => x.secure))).toBe(true);
  expect(sessions[0]).toMatchObject({ helo: 'probe.leadjobs.test', from: 'verify@leadjobs.test' });
  // Catch-all detection asked a random mailbox after an accepted one.
  expect(sessions.find((s) => s.rcpts[0]?.address === 'alice@verify.test')?.rcpts[1]?.address).toMatch(
    /^x[0-9a-f]{19}@verify\.test$/,
  );
  // Two addresses at verify.test (and five more on its server) cost one MX lookup; the server never had more than two sessions at once.
  expect(dns.queries.filter((q) => q === 'MX verify.test')).toHaveLength(1);
  expect(smtp.maxConcurrent()).toBeLessThanOrEqual(2);
});

test('a server that never greets and one that greylists for good end unknown, saying why, within timeout_seconds', async () => {
  const before = smtp.silent.length;
  const { data } = await verify({
    emails: ['alice@silent.test', 'bob@silent.test', 'carol@silent.test', 'stuck@verify.test'],
    timeout_seconds: 3,
  });
  const r = byEmail(data.results);
  // Three addresses at a server that never greets, two sessions at a time: the third waits for a slot, and gets its own 3 s afterwards.
  for (const who of ['alice', 'bob', 'carol']) {
    expect(r.get(`${who}@silent.test`)).toMatchObject({
      status: 'unknown',
      mx: 'mx.silent.test',
      reason: expect.stringMatching(
        /^mx\.silent\.test \(127\.0\.0\.2\):\d+ did not answer with its greeting within \d+ ms$/,
      ),
    });
  }
  expect(smtp.silent.length - before).toBe(3);
  expect(r.get('stuck@verify.test')).toMatchObject({
    status: 'unknown',
    reason: expect.stringMatching(
      /^greylisted: the mail server answered 451 4\.7\.1 greylisted.* after [2-9] attempts$/,
    ),
  });
});

test('smtp_check false: no mail server is asked', async () => {
  const before = smtp.sessions.length;
  const { data } = await verify({ email: 'bob@verify.test', smtp_check: false });
  expect(data.results).toEqual([
    expect.objectContaining({
      email: 'bob@verify.test',
      status: 'unknown',
      score: 40,
      mx: 'mx.verify.test',
      reason: 'mailbox not checked (smtp_check is false)',
    }),
  ]);
  expect(smtp.sessions.length).toBe(before);
});

test('cancel while the mail server never answers: the job is cancelled and the socket closed within 3 s', async () => {
  const jobId = await submit({ email: 'bob@silent.test', timeout_seconds: 60 });
  const before = smtp.silent.length;
  await waitFor(async () => smtp.silent.length > before, 30_000, 'the probe connection');
  const res = await c.del(`/api/v1/jobs/${jobId}`);
  const cancelledAt = Date.now();
  expect(res.status).toBe(200);
  await waitFor(async () => smtp.silent[before]?.closedAt !== undefined, 10_000, 'the probe socket to close');
  expect((smtp.silent[before]?.closedAt ?? Infinity) - cancelledAt).toBeLessThan(3000);
  expect((await c.json(await c.get(`/api/v1/jobs/${jobId}/status`))).status).toBe('cancelled');
});

test('bad payloads are 422 naming the field; the generic submit takes the same payload', async () => {
  const bad = async (payload: unknown) => {
    const res = await c.post('/api/v1/jobs/crawlVerify/submit', { payload });
    expect(res.status).toBe(422);
    return (await c.json<{ detail: { loc: (string | number)[]; msg: string }[] }>(res)).detail;
  };
  expect(await bad({})).toEqual([
    expect.objectContaining({
      loc: expect.arrayContaining(['emails']),
      msg: 'emails (1-1000 addresses) or email is required',
    }),
  ]);
  expect((await bad({ emails: [] }))[0]?.loc).toContain('emails');
  expect((await bad({ emails: Array.from({ length: 1001 }, (_, i) => `a${i}@verify.test`) }))[0]?.loc).toContain(
    'emails',
  );
  expect((await bad({ email: 'a@verify.test', timeout_seconds: 500 }))[0]?.loc).toContain('timeout_seconds');
  expect((await bad({ email: 'a@verify.test', smtp_check: 'yes' }))[0]?.loc).toContain('smtp_check');
  expect(await bad({ email: 'a@verify.test', domain: 'x' })).toEqual([
    expect.objectContaining({ msg: expect.stringContaining('domain') }),
  ]);

  const res = await c.post('/api/v1/jobs/submit', { type: 'crawlVerify', payload: { email: 'ceo@verify.test' } });
  expect(res.status).toBe(201);
  const { job_id } = await c.json<{ job_id: string }>(res);
  expect(await waitForStatus(c, job_id, ['completed', 'failed'], 30_000)).toMatchObject({
    status: 'completed',
    results_count: 1,
  });
});

test('verdicts update the IDAP e-mail and the lead index: an imported business whose address is verified becomes email_verified', async () => {
  const imported = await c.post('/api/v1/idap/businesses/import', {
    records: [
      { data: { name: 'Verified Bakery', website: 'https://verified-bakery.example', email: 'Owner@verify.test' } },
    ],
  });
  expect(imported.status).toBe(200);
  const verifiedLeads = async () =>
    (
      await c.json<{ hits: { name: string; email_verified: boolean }[] }>(
        await c.get('/api/v1/search/leads?email_verified=true'),
      )
    ).hits.map((h) => h.name);
  await waitFor(
    async () => (await c.json<{ total: number }>(await c.get('/api/v1/search/leads?query=bakery'))).total === 1,
    30_000,
    'the imported lead',
  );
  expect(await verifiedLeads()).not.toContain('Verified Bakery');

  await verify({ emails: ['owner@verify.test', 'nobody@verify.test'] });
  const emails = async () =>
    (
      await c.json<{ items: { data: Record<string, unknown> }[] }>(
        await c.get('/api/v1/idap/emails?source=crawl_verify&limit=100'),
      )
    ).items;
  await waitFor(
    async () => (await emails()).some((e) => e.data.address === 'owner@verify.test'),
    15_000,
    'the e-mail resource',
  );
  const list = await emails();
  expect(list.find((e) => e.data.address === 'owner@verify.test')?.data).toMatchObject({
    verified: true,
    verification_status: 'valid',
    score: 100,
  });
  expect(list.find((e) => e.data.address === 'nobody@verify.test')?.data).toMatchObject({
    verified: false,
    verification_status: 'invalid',
    score: 0,
  });
  await waitFor(
    async () => (await verifiedLeads()).includes('Verified Bakery'),
    30_000,
    'the lead to show email_verified',
  );
});

test('the OpenAPI document has the typed submit route and the result schema with how the score is computed', async () => {
  const doc = (await (await fetch(`${api.url}/openapi.json`)).json()) as {
    paths: Record<string, unknown>;
    components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
  };
  expect(doc.paths['/api/v1/jobs/crawlVerify/submit']).toHaveProperty('post');
  expect(JSON.stringify(doc.components.schemas.CrawlVerifyResult)).toContain(SCORE_RULES);
});
