import { chromium, type Browser, type Page } from 'playwright-core';
import { UnsubscribeRepository } from '../../db/repositories/unsubscribe';
import { launchOptions } from '../../lib/browser';
import { signUnsubscribeToken, unsubscribeSigningKey, verifyUnsubscribeToken } from '../../lib/unsubscribe';
import { bearer, startTestApi, type TestApi } from '../support/api';
import { caller, type Caller } from '../support/jobs';

// Unsubscribe links and pages (spec §4.12) through the real API on the real Postgres; the pages are
// opened and submitted in headless Chromium, the way a recipient's browser does.

let api: TestApi;
let browser: Browser;
let repo: UnsubscribeRepository;
beforeAll(async () => {
  api = await startTestApi({ RATE_LIMIT_ENABLED: 'false' });
  repo = new UnsubscribeRepository(api.deps.db);
  browser = await chromium.launch(launchOptions(process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'));
});
afterAll(async () => {
  await browser?.close();
  await api?.close();
});

type Client = Caller & { clientId: string };
async function newClient(): Promise<Client> {
  const creds = await api.newClient();
  return { ...caller(api, bearer(creds)), clientId: creds.client_id };
}

async function link(c: Client, email: string, list: string): Promise<{ token: string; url: string }> {
  const res = await c.post('/api/v1/unsubscribe/links', { email, list });
  const body = await c.json<{ token: string; url: string }>(res);
  if (res.status !== 201) throw new Error(`links answered ${res.status}: ${JSON.stringify(body)}`);
  return body;
}

const db = () => api.deps.db;
const auditRows = (clientId: string, email: string) =>
  db()('unsubscribe_audit').where({ client_id: clientId, email }).orderBy('id') as Promise<
    {
      list: string;
      scope: string;
      source: string;
      ip_address: string | null;
      user_agent: string | null;
      created_at: Date;
    }[]
  >;
const prefRows = (clientId: string, email: string) =>
  db()('unsubscribe_preferences').where({ client_id: clientId, email }).orderBy('list') as Promise<
    { list: string; status: string; updated_at: Date }[]
  >;

async function open(url: string): Promise<{ page: Page; status: number }> {
  const page = await browser.newPage();
  const res = await page.goto(url);
  return { page, status: res?.status() ?? 0 };
}

/** Clicks a submit button and waits for the page the POST answers with. */
async function submit(page: Page, button: string): Promise<number> {
  const [res] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST'),
    page.getByRole('button', { name: button }).click(),
  ]);
  await page.waitForLoadState();
  return res.status();
}

describe('unsubscribe links', () => {
  test('POST /api/v1/unsubscribe/links gives a signed token bound to the client, recipient and list, and its page URL', async () => {
    const c = await newClient();
    const a = await link(c, ' Alice@Example.COM ', 'Newsletter');
    const b = await link(c, 'alice@example.com', 'newsletter');
    expect(a.token).not.toBe(b.token);
    expect(a.url).toBe(`${api.url}/u/${a.token}`);
    const key = unsubscribeSigningKey(api.deps.config);
    expect(key).toBeDefined();
    expect(verifyUnsubscribeToken(key as Buffer, a.token)).toEqual({
      clientId: c.clientId,
      email: 'alice@example.com',
      list: 'newsletter',
    });
    // The recipient is now known as subscribed to that list.
    const prefs = await c.json<{ unsubscribed_all: boolean; lists: Record<string, { status: string }> }>(
      await c.get('/api/v1/unsubscribe/preferences?email=ALICE@example.com'),
    );
    expect(prefs.unsubscribed_all).toBe(false);
    expect(prefs.lists).toEqual({ newsletter: { status: 'subscribed', updated_at: expect.any(String) } });
  });

  test('with PUBLIC_BASE_URL the link is on that address', async () => {
    const behind = await startTestApi({ RATE_LIMIT_ENABLED: 'false', PUBLIC_BASE_URL: 'https://mail.example.com/' });
    try {
      const c = caller(behind, bearer(await behind.newClient()));
      const { token, url } = await c.json<{ token: string; url: string }>(
        await c.post('/api/v1/unsubscribe/links', { email: 'a@example.com', list: 'news' }),
      );
      expect(url).toBe(`https://mail.example.com/u/${token}`);
    } finally {
      await behind.close();
    }
  });

  test('bad input is a 422; no credential is a 401', async () => {
    const c = await newClient();
    for (const body of [
      { email: 'not-an-address', list: 'news' },
      { email: 'a@example.com', list: '*' },
      { email: 'a@example.com' },
      { email: 'a@example.com', list: 'news', extra: 1 },
    ]) {
      expect((await c.post('/api/v1/unsubscribe/links', body)).status).toBe(422);
    }
    expect((await c.get('/api/v1/unsubscribe/preferences')).status).toBe(422);
    expect(
      (
        await fetch(`${api.url}/api/v1/unsubscribe/links`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"email":"a@example.com","list":"x"}',
        })
      ).status,
    ).toBe(401);
  });

  test('without UNSUBSCRIBE_SIGNING_KEY the API answers 503 naming it, and pages say so', async () => {
    const bare = await startTestApi({ RATE_LIMIT_ENABLED: 'false', UNSUBSCRIBE_SIGNING_KEY: '' });
    try {
      const c = caller(bare, bearer(await bare.newClient()));
      const res = await c.post('/api/v1/unsubscribe/links', { email: 'a@example.com', list: 'news' });
      expect(res.status).toBe(503);
      expect(JSON.stringify(await res.json())).toContain('UNSUBSCRIBE_SIGNING_KEY');
      expect((await fetch(`${bare.url}/u/abc.def`)).status).toBe(503);
    } finally {
      await bare.close();
    }
  });
});

describe('unsubscribe pages in Chromium', () => {
  test('GET shows a confirmation page and changes nothing; POST unsubscribes with an audit row; a repeat is idempotent and audited', async () => {
    const c = await newClient();
    const email = 'bob@example.com';
    const { url } = await link(c, 'Bob@Example.com', 'newsletter');

    const { page, status } = await open(url);
    expect(status).toBe(200);
    await expect(page.title()).resolves.toBe('Unsubscribe');
    expect(await page.locator('#email').textContent()).toBe(email);
    expect(await page.locator('#list').textContent()).toBe('newsletter');
    // Opening the page (as mail scanners do) changed nothing.
    expect(await auditRows(c.clientId, email)).toEqual([]);
    expect((await prefRows(c.clientId, email)).map((r) => r.status)).toEqual(['subscribed']);
    expect(await repo.suppressed(c.clientId, [email], 'newsletter')).toEqual([]);

    expect(await submit(page, 'Unsubscribe from newsletter')).toBe(200);
    expect(await page.locator('h1').textContent()).toBe('You are unsubscribed');
    expect(await page.locator('#result').getAttribute('data-scope')).toBe('list');
    const [pref] = await prefRows(c.clientId, email);
    expect(pref?.status).toBe('unsubscribed');
    const audit = await auditRows(c.clientId, email);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ list: 'newsletter', scope: 'list', source: 'page' });
    expect(audit[0]?.ip_address).toMatch(/127\.0\.0\.1$/);
    expect(audit[0]?.user_agent).toMatch(/Chrome/);

    // The mail side: this address (in any case) is suppressed for that list only.
    expect(await repo.suppressed(c.clientId, ['BOB@example.com', 'carol@example.com'], 'newsletter')).toEqual([
      'BOB@example.com',
    ]);
    expect(await repo.suppressed(c.clientId, ['bob@example.com'], 'offers')).toEqual([]);
    expect(await repo.suppressed(c.clientId, ['bob@example.com'], null)).toEqual([]);

    // Again, from a fresh page: same preference (its time unchanged), one more audit row.
    await page.goto(url);
    expect(await submit(page, 'Unsubscribe from newsletter')).toBe(200);
    const [again] = await prefRows(c.clientId, email);
    expect(again?.status).toBe('unsubscribed');
    expect(again?.updated_at.toISOString()).toBe(pref?.updated_at.toISOString());
    expect(await auditRows(c.clientId, email)).toHaveLength(2);
    await page.close();

    const prefs = await c.json<{
      email: string;
      unsubscribed_all: boolean;
      lists: Record<string, { status: string; updated_at: string }>;
      audit: { scope: string; source: string; user_agent: string }[];
    }>(await c.get(`/api/v1/unsubscribe/preferences?email=${encodeURIComponent('BOB@example.com')}`));
    expect(prefs).toMatchObject({
      email,
      unsubscribed_all: false,
      lists: { newsletter: { status: 'unsubscribed', updated_at: pref?.updated_at.toISOString() } },
    });
    expect(prefs.audit).toHaveLength(2);
    expect(prefs.audit[0]).toMatchObject({
      scope: 'list',
      source: 'page',
      user_agent: expect.stringMatching(/Chrome/),
    });

    // Another client knows nothing of this recipient.
    const other = await newClient();
    const theirs = await other.json<{ unsubscribed_all: boolean; lists: object; audit: unknown[] }>(
      await other.get(`/api/v1/unsubscribe/preferences?email=${email}`),
    );
    expect(theirs).toEqual({ email, unsubscribed_all: false, lists: {}, audit: [] });
    expect(await repo.suppressed(other.clientId, [email], 'newsletter')).toEqual([]);
  });

  test('"all mailing lists" unsubscribes from everything (unsubscribed_all)', async () => {
    const c = await newClient();
    const email = 'dana@example.com';
    const { url } = await link(c, email, 'offers');
    const { page } = await open(url);
    expect(await submit(page, 'Unsubscribe from all mailing lists')).toBe(200);
    expect(await page.locator('#result').textContent()).toContain('all mailing lists');
    await page.close();

    const prefs = await c.json<{
      unsubscribed_all: boolean;
      lists: Record<string, { status: string }>;
      audit: { scope: string }[];
    }>(await c.get(`/api/v1/unsubscribe/preferences?email=${email}`));
    expect(prefs.unsubscribed_all).toBe(true);
    expect(prefs.lists.offers?.status).toBe('unsubscribed');
    expect(prefs.audit.map((a) => a.scope)).toEqual(['all']);
    // Any list, and mail with no list at all.
    expect(await repo.suppressed(c.clientId, ['Dana@Example.com', 'erin@example.com'], 'newsletter')).toEqual([
      'Dana@Example.com',
    ]);
    expect(await repo.suppressed(c.clientId, ['dana@example.com'], null)).toEqual(['dana@example.com']);
  });

  test('a JSON or YAML body is read as the form is (spec §1.2.5); a body of another type is a 422, not the list alone', async () => {
    const c = await newClient();
    const prefsOf = async (email: string) =>
      c.json<{ unsubscribed_all: boolean; audit: { scope: string }[] }>(
        await c.get(`/api/v1/unsubscribe/preferences?email=${email}`),
      );
    const post = async (token: string, type: string, body: string) =>
      fetch(`${api.url}/u/${token}`, { method: 'POST', headers: { 'content-type': type }, body });
    for (const [email, type, body] of [
      ['json@example.com', 'application/json', '{"scope":"all"}'],
      ['yaml@example.com', 'application/yaml', 'scope: all'],
    ] as const) {
      const { token } = await link(c, email, 'news');
      expect((await post(token, type, body)).status).toBe(200);
      expect(await prefsOf(email)).toMatchObject({ unsubscribed_all: true, audit: [{ scope: 'all' }] });
    }
    const { token } = await link(c, 'odd@example.com', 'news');
    for (const [type, body] of [
      ['text/plain', 'scope=all'],
      ['application/json', '["all"]'],
      ['application/json', '{"scope":'],
      ['application/json', '{"scope":"everything"}'],
    ] as const) {
      const res = await post(token, type, body);
      expect([type, body, res.status]).toEqual([type, body, 422]);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    }
    expect(await prefsOf('odd@example.com')).toMatchObject({ unsubscribed_all: false, audit: [] });
  });

  test('a tampered or malformed token gets a 422 page and changes nothing', async () => {
    const c = await newClient();
    const email = 'frank@example.com';
    const { token } = await link(c, email, 'newsletter');
    const [payload, mac] = token.split('.') as [string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const otherList = Buffer.from(JSON.stringify({ ...claims, l: 'offers' })).toString('base64url');
    for (const bad of [
      `${otherList}.${mac}`,
      `${payload}.${mac[0] === 'A' ? 'B' : 'A'}${mac.slice(1)}`,
      'nonsense',
      `${payload}`,
    ]) {
      const { page, status } = await open(`${api.url}/u/${bad}`);
      expect(status).toBe(422);
      expect(await page.locator('h1').textContent()).toBe('This unsubscribe link is not valid');
      await page.close();
      const post = await fetch(`${api.url}/u/${bad}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'scope=all',
      });
      expect(post.status).toBe(422);
      expect(post.headers.get('content-type')).toMatch(/^text\/html/);
    }
    expect(await auditRows(c.clientId, email)).toEqual([]);
    expect((await prefRows(c.clientId, email)).map((r) => r.status)).toEqual(['subscribed']);
  });

  test('everything on the page is escaped', async () => {
    const c = await newClient();
    // Signed directly: the API would not take this address, but the page must not trust the token's text either.
    const key = unsubscribeSigningKey(api.deps.config) as Buffer;
    const token = signUnsubscribeToken(key, {
      clientId: c.clientId,
      email: '"<img src=x onerror=alert(1)>"@example.com',
      list: 'news',
    });
    const { page, status } = await open(`${api.url}/u/${token}`);
    expect(status).toBe(200);
    expect(await page.locator('#email').textContent()).toBe('"<img src=x onerror=alert(1)>"@example.com');
    expect(await page.locator('img').count()).toBe(0);
    await page.close();
    const res = await fetch(`${api.url}/u/${token}`);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('cache-control')).toBe('no-store');
  });
});

describe('RFC 8058 one-click', () => {
  test('POST List-Unsubscribe=One-Click (urlencoded or multipart) on the same URL unsubscribes from the list', async () => {
    const c = await newClient();
    const email = 'gina@example.com';
    const { url } = await link(c, email, 'digest');
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'MailProvider/1.0' },
      body: 'List-Unsubscribe=One-Click',
    });
    expect(res.status).toBe(200);
    const form = new FormData();
    form.set('List-Unsubscribe', 'One-Click');
    expect((await fetch(url, { method: 'POST', body: form })).status).toBe(200);

    const audit = await auditRows(c.clientId, email);
    expect(audit.map((a) => [a.source, a.scope])).toEqual([
      ['one_click', 'list'],
      ['one_click', 'list'],
    ]);
    expect(audit[0]?.user_agent).toBe('MailProvider/1.0');
    expect(await repo.suppressed(c.clientId, [email], 'digest')).toEqual([email]);
    expect(await repo.suppressed(c.clientId, [email], null)).toEqual([]);
  });

  test('an unknown scope is a 422 and changes nothing', async () => {
    const c = await newClient();
    const { url } = await link(c, 'hal@example.com', 'digest');
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'scope=everyone',
    });
    expect(res.status).toBe(422);
    expect(await auditRows(c.clientId, 'hal@example.com')).toEqual([]);
  });
});

test('the routes are in /openapi.json', async () => {
  const doc = (await (await fetch(`${api.url}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>>;
  };
  expect(Object.keys(doc.paths['/api/v1/unsubscribe/links'] ?? {})).toEqual(['post']);
  expect(Object.keys(doc.paths['/api/v1/unsubscribe/preferences'] ?? {})).toEqual(['get']);
  expect(Object.keys(doc.paths['/u/{token}'] ?? {}).sort()).toEqual(['get', 'post']);
  expect(Object.keys(doc.paths['/u/{token}']?.get?.responses['200']?.content ?? {})).toEqual(['text/html']);
});
