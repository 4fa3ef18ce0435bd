import { projectResult } from '../../jobs';
import { parseConfig } from '../../lib/config';
import {
  isDisposable,
  isFreeProvider,
  isRoleAccount,
  parseAddress,
  type ParsedAddress,
} from '../../activities/verify/address';
import { distinctAddresses, KeyedLimiter } from '../../activities/verify/crawl-verify';
import { parseReplies, type SmtpReply } from '../../activities/verify/smtp';
import { classifyRcpt, verdict, type VerifyFacts } from '../../activities/verify/verdict';

const reply = (code: number, ...lines: string[]): SmtpReply => ({ code, lines });
const none = { disposable: false, free: false, role: false };
const servers = { kind: 'servers' as const, mx: 'mx.example.com' };

describe('SMTP reply parser', () => {
  test('multi-line replies are one reply with every line; a partial reply waits for the rest', () => {
    const { replies, rest } = parseReplies(
      '250-mx.example.com greets you\r\n250-PIPELINING\r\n250-STARTTLS\r\n250 SIZE 10240000\r\n354 go',
    );
    expect(replies).toEqual([reply(250, 'mx.example.com greets you', 'PIPELINING', 'STARTTLS', 'SIZE 10240000')]);
    expect(rest).toBe('354 go');
    expect(parseReplies('250-first\r\n250-sec')).toEqual({ replies: [], rest: '250-first\r\n250-sec' });
  });

  test('several replies in one chunk, bare LF endings and a bare code', () => {
    expect(parseReplies('220 ready\n250 ok\r\n221\r\n').replies).toEqual([
      reply(220, 'ready'),
      reply(250, 'ok'),
      reply(221, ''),
    ]);
  });

  test('a line without a reply code is a protocol error', () => {
    expect(() => parseReplies('HTTP/1.1 400 Bad Request\r\n')).toThrow(
      'malformed SMTP reply line "HTTP/1.1 400 Bad Request"',
    );
  });
});

describe('RCPT TO answers', () => {
  test.each([
    [reply(250, '2.1.5 Ok'), 'accepted'],
    [reply(550, '5.1.1 <a@b.c>: Recipient address rejected: User unknown in virtual mailbox table'), 'rejected'],
    [reply(550, 'Requested action not taken: mailbox unavailable'), 'rejected'],
    [reply(553, "sorry, that domain isn't in my list of allowed rcpthosts"), 'refused'],
    [reply(552, '5.2.2 mailbox full'), 'full'],
    [reply(452, '4.2.2 The email account that you tried to reach is over quota'), 'full'],
    [reply(451, '4.7.1 greylisted, try again later'), 'temporary'],
    [reply(550, '5.7.1 Service unavailable; client host blocked using Spamhaus'), 'refused'],
    [reply(554, '5.7.1 rejected by policy'), 'refused'],
  ])('%j is %s', (r, kind) => {
    expect(classifyRcpt(r)).toBe(kind);
  });
});

describe("verdict rules (Reacher's, first match wins) and score", () => {
  const accepted = (catchAll = false) => ({ kind: 'accepted' as const, reply: reply(250, 'OK'), catchAll });
  const v = (f: Partial<VerifyFacts>) => verdict({ email: 'a@example.com', ...none, dns: servers, ...f });

  test('valid only when the server accepted the mailbox and nothing makes it risky', () => {
    expect(v({ mailbox: accepted() })).toMatchObject({
      status: 'valid',
      score: 100,
      is_deliverable: true,
      mx: 'mx.example.com',
      reason: 'the mail server accepted the mailbox: 250 OK',
    });
    expect(v({ mailbox: accepted(), free: true })).toMatchObject({ status: 'valid', score: 95, is_free_email: true });
  });

  test('risky: catch-all, full, disposable, role', () => {
    expect(v({ mailbox: accepted(true) })).toMatchObject({ status: 'risky', score: 70, is_catch_all: true });
    expect(v({ mailbox: { kind: 'full', reason: '552 full' } })).toMatchObject({
      status: 'risky',
      score: 0,
      reason: 'mailbox full: 552 full',
    });
    expect(v({ mailbox: { kind: 'skipped', reason: 'x' }, disposable: true })).toMatchObject({
      status: 'risky',
      score: 0,
      is_disposable: true,
    });
    expect(v({ mailbox: accepted(), role: true })).toMatchObject({ status: 'risky', score: 85, is_role_account: true });
  });

  test('invalid: syntax, no mail server, mailbox rejected; all score 0', () => {
    expect(v({ syntaxError: 'invalid syntax: x', dns: undefined })).toMatchObject({
      status: 'invalid',
      score: 0,
      mx: null,
      reason: 'invalid syntax: x',
    });
    expect(v({ dns: { kind: 'none', reason: 'example.com has no MX record and no address' } })).toMatchObject({
      status: 'invalid',
      mx: null,
    });
    expect(v({ mailbox: { kind: 'rejected', reason: '550 no such user' }, role: true })).toMatchObject({
      status: 'invalid',
      score: 0,
      reason: 'mailbox does not exist: 550 no such user',
    });
  });

  test('unknown always says why, and beats risky flags (nothing was learnt about the mailbox)', () => {
    expect(v({ dns: { kind: 'error', reason: 'DNS lookup of example.com failed (ETIMEOUT)' } })).toMatchObject({
      status: 'unknown',
      score: 40,
      reason: 'DNS lookup of example.com failed (ETIMEOUT)',
    });
    expect(v({ mailbox: { kind: 'unknown', reason: 'greylisted: ...' }, role: true })).toMatchObject({
      status: 'unknown',
      score: 25,
      reason: 'greylisted: ...',
    });
    expect(v({ mailbox: { kind: 'skipped', reason: 'mailbox not checked (smtp_check is false)' } })).toMatchObject({
      status: 'unknown',
      reason: 'mailbox not checked (smtp_check is false)',
    });
  });
});

describe('addresses', () => {
  const parsed = (raw: string) => parseAddress(raw) as ParsedAddress;

  test('normalised as crawlSite reports them; IDN domains in Unicode for display, punycode for DNS and SMTP', () => {
    expect(parseAddress(' Info@Bücher.DE ')).toEqual({
      display: 'info@bücher.de',
      local: 'info',
      domain: 'xn--bcher-kva.de',
      ascii: 'info@xn--bcher-kva.de',
    });
    expect(parsed('info@xn--bcher-kva.de').display).toBe('info@bücher.de');
    expect(parseAddress('mailto:sales@acme.co.uk')).toMatchObject({ display: 'sales@acme.co.uk' });
  });

  test('syntax errors', () => {
    for (const bad of [
      'no-at-sign',
      '@acme.com',
      'a@',
      'a b@acme.com',
      'a@acme',
      'a@-acme.com',
      'a..b@acme.com',
      'a@[127.0.0.1]',
    ]) {
      expect(parseAddress(bad)).toMatchObject({ error: expect.stringContaining('invalid syntax') });
    }
  });

  test('lists: disposable (mailchecker, subdomains too), free providers, role accounts', () => {
    expect(isDisposable(parsed('x@mailinator.com'))).toBe(true);
    expect(isDisposable(parsed('x@eu.mailinator.com'))).toBe(true);
    expect(isDisposable(parsed('x@acme.com'))).toBe(false);
    expect(isFreeProvider(parsed('x@gmail.com'))).toBe(true);
    expect(isFreeProvider(parsed('x@acme.com'))).toBe(false);
    expect(isRoleAccount(parsed('info+leads@acme.com'))).toBe(true);
    expect(isRoleAccount(parsed('info.smith@acme.com'))).toBe(false);
  });

  test('duplicates however written are verified once, in first-given order', () => {
    expect(
      distinctAddresses({ emails: ['B@x.com', 'a@bücher.de', 'b@X.com ', 'A@xn--bcher-kva.de'], email: 'c@x.com' }),
    ).toEqual(['B@x.com', 'a@bücher.de', 'c@x.com']);
  });
});

test('the per-server limiter lets `limit` holders in per key and queues the rest', async () => {
  const limiter = new KeyedLimiter(2);
  let inside = 0;
  let most = 0;
  const release: (() => void)[] = [];
  const work = () =>
    limiter.run('mx', undefined, async () => {
      inside++;
      most = Math.max(most, inside);
      await new Promise<void>((r) => release.push(r));
      inside--;
    });
  const other = limiter.run('other-mx', undefined, async () => 'free');
  const all = [work(), work(), work(), work()];
  await expect(other).resolves.toBe('free');
  await new Promise((r) => setImmediate(r));
  expect(inside).toBe(2);
  while (release.length > 0 || inside > 0) {
    release.shift()?.();
    await new Promise((r) => setImmediate(r));
  }
  await Promise.all(all);
  expect(most).toBe(2);
});

describe('IDAP projection', () => {
  const item = (email: string, status: string) => ({
    email,
    status,
    score: status === 'valid' ? 100 : 0,
    is_deliverable: status === 'valid',
    is_free_email: false,
    is_disposable: false,
    is_role_account: false,
    is_catch_all: false,
    mx: 'mx.x.com',
    reason: 'r',
  });

  test('each result is an e-mail resource with its verdict; verified only when valid', () => {
    const plan = projectResult(
      'crawlVerify',
      { results: [item('a@bücher.de', 'valid'), item('b@x.com', 'risky')], summary: {} },
      { jobId: 'j' },
    );
    expect(plan.source).toBe('crawl_verify');
    expect(plan.nodes).toEqual([
      {
        type: 'emails',
        data: expect.objectContaining({
          address: 'a@bücher.de',
          verified: true,
          verification_status: 'valid',
          score: 100,
        }),
      },
      {
        type: 'emails',
        data: expect.objectContaining({ address: 'b@x.com', verified: false, verification_status: 'risky', score: 0 }),
      },
    ]);
  });

  test('a crawlSite result does not overwrite a verdict: its e-mails carry no verified value (upserts skip nulls)', () => {
    const site = {
      url: 'https://x.com/',
      final_url: 'https://x.com/',
      emails: ['a@x.com'],
      phones: [],
      team_members: [],
      company_info: {},
    };
    const email = projectResult('crawlSite', site, { jobId: 'j' }).nodes.find((n) => n.type === 'emails');
    expect(email?.data.address).toBe('a@x.com');
    expect(email?.data.verified ?? null).toBeNull();
    expect(email?.data.verification_status ?? null).toBeNull();
  });
});

test('DNS_SERVERS takes IP addresses with optional ports (what the resolver accepts); a host name fails naming the variable', () => {
  const env = { MINIO_ACCESS_KEY: 'k', MINIO_SECRET_KEY: 's' };
  expect(parseConfig({ ...env, DNS_SERVERS: '1.1.1.1, 127.0.0.1:5353,[2606:4700::1111]:53,::1' }).DNS_SERVERS).toEqual([
    '1.1.1.1',
    '127.0.0.1:5353',
    '[2606:4700::1111]:53',
    '::1',
  ]);
  expect(parseConfig(env)).toMatchObject({ DNS_SERVERS: [], SMTP_PROBE_PORT: 25, VERIFY_CONCURRENCY_PER_DOMAIN: 2 });
  expect(() => parseConfig({ ...env, DNS_SERVERS: 'dns.google' })).toThrow(
    /DNS_SERVERS\.0: each entry must be an IP address/,
  );
  expect(() => parseConfig({ ...env, DNS_SERVERS: '1.1.1.1:99999' })).toThrow(/DNS_SERVERS/);
});
