import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { errorHandler } from '../../api/middleware/errors';
import { rateLimit } from '../../api/middleware/rate-limit';
import { requestContext } from '../../api/middleware/request-id';
import type { AppState } from '../../api/context';
import { createDb } from '../../db';
import { createLogger } from '../../lib/logger';
import { startDnsStandIn } from '../stand-ins/dns';
import { bearer, startTestApi, type TestApi } from '../support/api';
import { SourceAddresses } from '../support/source-address';

const apis: TestApi[] = [];
const sources = new SourceAddresses();
afterAll(async () => {
  await sources.close();
  await Promise.all(apis.map((a) => a.close()));
});
async function api(overrides: Record<string, string> = {}) {
  const a = await startTestApi(overrides);
  apis.push(a);
  return a;
}
/**
 * A documentation address (TEST-NET) with a random last part, so that no other run's counts meet
 * it, and never one this file drew before: the limit store counts by address, so two tests that
 * drew the same one within the minute shared a budget (a 1-in-254 draw failed CI with a 429).
 */
const drawn = new Set<string>();
function freshAddress(net: '192.0.2' | '198.51.100' | '203.0.113'): string {
  let address: string;
  do address = `${net}.${1 + Math.floor(Math.random() * 254)}`;
  while (drawn.has(address));
  drawn.add(address);
  return address;
}

const get = (a: TestApi, auth: string) => fetch(`${a.url}/api/v1/system/health`, { headers: { authorization: auth } });

describe('rate limit (spec §8)', () => {
  test('every response carries the limit headers; the minute window ends in a 429 with Retry-After and the spec detail', async () => {
    const a = await api({ RATE_LIMIT_PER_MINUTE: '5', RATE_LIMIT_BURST: '50' });
    const auth = bearer(await a.newClient());
    const remaining: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await get(a, auth);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBe('5');
      remaining.push(Number(res.headers.get('x-ratelimit-remaining')));
      const reset = Number(res.headers.get('x-ratelimit-reset'));
      expect(reset).toBeGreaterThan(Date.now() / 1000);
      expect(reset).toBeLessThanOrEqual(Date.now() / 1000 + 61);
    }
    expect(remaining).toEqual([4, 3, 2, 1, 0]);
    const limited = await get(a, auth);
    expect(limited.status).toBe(429);
    expect(await limited.json()).toEqual({ detail: 'rate limit exceeded, maximum 5 requests per minute' });
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
  });

  test('defaults: 100 per minute with a burst of 20 at once', async () => {
    const a = await api();
    // 25 requests at once. The burst window is one second from the first request: responses that
    // arrive within a second of sending were all counted in it, so at most 20 of them pass. On a
    // busy machine the 25 can take longer than that, and the late ones fall in the next window;
    // a few tries (each a new client) find a round that fits in one second, which must then be
    // exactly 20 passed and 5 refused.
    let exact: number[] | undefined;
    // 25 connections opened first (an unknown path: no credentials, no limit), so a round is only requests.
    await Promise.all(Array.from({ length: 25 }, () => fetch(`${a.url}/warm-up`).then((r) => r.arrayBuffer())));
    // Up to 30 tries half a second apart: a neighbouring test file's storm can hold the machine for a while.
    for (let attempt = 0; attempt < 30 && !exact; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, 500));
      const auth = bearer(await a.newClient());
      const sent = Date.now();
      const answers = await Promise.all(
        Array.from({ length: 25 }, () => get(a, auth).then((r) => ({ status: r.status, ms: Date.now() - sent }))),
      );
      expect(answers.filter((r) => r.ms < 1000 && r.status === 200).length).toBeLessThanOrEqual(20);
      if (answers.every((r) => r.ms < 1000)) exact = answers.map((r) => r.status);
    }
    expect(exact).toBeDefined();
    expect(exact?.filter((s) => s === 200)).toHaveLength(20);
    expect(exact?.filter((s) => s === 429)).toHaveLength(5);
  });

  test('the limit is per client and shared by every API process', async () => {
    const one = await api({ RATE_LIMIT_PER_MINUTE: '4', RATE_LIMIT_BURST: '50' });
    const two = await api({ RATE_LIMIT_PER_MINUTE: '4', RATE_LIMIT_BURST: '50' });
    const alice = bearer(await one.newClient('alice'));
    const bob = bearer(await one.newClient('bob'));
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await get(i % 2 ? two : one, alice)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    expect((await get(two, bob)).status).toBe(200);
  });

  test('the routes without credentials carry the limit headers on every response, not only on their 429', async () => {
    // A verified site (its DNS TXT record on the stand-in), so that the public reads answer 200.
    const dns = await startDnsStandIn({});
    const a = await api({ PUBLIC_RATE_LIMIT_PER_MINUTE: '3', PUBLIC_RATE_LIMIT_BURST: '50', DNS_SERVERS: dns.server });
    const domain = `limits-${randomUUID().slice(0, 8)}.example.com`;
    const dashboard = { authorization: bearer(await a.newClient()), 'content-type': 'application/json' };
    const registered = await fetch(`${a.url}/api/v1/dashboard/content/sites`, {
      method: 'POST',
      headers: dashboard,
      body: JSON.stringify({ domain }),
    });
    expect(registered.status).toBe(201);
    const site = (await registered.json()) as { id: string; verification: { value: string } };
    dns.set(domain, { txt: [site.verification.value] });
    const verified = await fetch(`${a.url}/api/v1/dashboard/content/sites/${site.id}/verify`, {
      method: 'POST',
      headers: dashboard,
    });
    await dns.close();
    expect(verified.status).toBe(200);
    const send = sources.from();
    const answers = [];
    // A public content read, an unsubscribe page, another read, then one past the limit.
    for (const [path, headers] of [
      ['/api/v1/content/authors', { 'x-content-domain': domain }],
      ['/u/not-a-token', {}],
      ['/api/v1/content/posts', { 'x-content-domain': domain }],
      ['/u/not-a-token', {}],
    ] as const) {
      const res = await send(`${a.url}${path}`, headers);
      await res.arrayBuffer();
      answers.push({
        status: res.status,
        limit: res.headers.get('x-ratelimit-limit'),
        remaining: res.headers.get('x-ratelimit-remaining'),
        reset: Number(res.headers.get('x-ratelimit-reset')),
      });
    }
    expect(answers.map(({ status, limit, remaining }) => [status, limit, remaining])).toEqual([
      [200, '3', '2'],
      [422, '3', '1'],
      [200, '3', '0'],
      [429, '3', '0'],
    ]);
    for (const { reset } of answers) {
      expect(reset).toBeGreaterThan(Date.now() / 1000);
      expect(reset).toBeLessThanOrEqual(Date.now() / 1000 + 61);
    }
  });

  test('the routes without credentials are limited per source address; X-Forwarded-For counts only with TRUST_PROXY', async () => {
    const limits = { PUBLIC_RATE_LIMIT_PER_MINUTE: '3', PUBLIC_RATE_LIMIT_BURST: '50' };
    const one = await api(limits);
    const two = await api(limits);
    // A public content read and an unsubscribe page, from one address of this test's own, through two processes.
    const send = sources.from();
    const posts = (a: TestApi, headers: Record<string, string> = {}) =>
      send(`${a.url}/api/v1/content/posts`, { 'x-content-domain': 'nobody.example', ...headers });
    const page = (a: TestApi) => send(`${a.url}/u/not-a-token`);
    const statuses = [(await posts(one)).status, (await page(two)).status, (await posts(two)).status];
    // A domain of no site is a 422 (the header's validation), counted like any answer.
    expect(statuses).toEqual([422, 422, 422]);
    const limited = await page(one);
    expect(limited.status).toBe(429);
    expect(await limited.json()).toEqual({ detail: 'rate limit exceeded, maximum 3 requests per minute' });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // A client's own limit is another budget: the same address still calls the authenticated API.
    expect((await get(one, bearer(await one.newClient()))).status).toBe(200);
    // Without TRUST_PROXY a forged X-Forwarded-For is no way around the limit.
    expect((await posts(one, { 'x-forwarded-for': '203.0.113.9' })).status).toBe(429);

    const proxied = await api({ ...limits, TRUST_PROXY: 'true' });
    // Behind a trusted proxy each forwarded address has its own budget.
    const first = freshAddress('198.51.100');
    const second = freshAddress('198.51.100');
    for (let i = 0; i < 3; i++) expect((await posts(proxied, { 'x-forwarded-for': first })).status).toBe(422);
    expect((await posts(proxied, { 'x-forwarded-for': first })).status).toBe(429);
    expect((await posts(proxied, { 'x-forwarded-for': second })).status).toBe(422);
  });

  test('behind a trusted proxy the address is TRUSTED_PROXY_HOPS from the right: entries the caller writes itself change nothing', async () => {
    const limits = { PUBLIC_RATE_LIMIT_PER_MINUTE: '2', PUBLIC_RATE_LIMIT_BURST: '50', TRUST_PROXY: 'true' };
    const posts = (a: TestApi, xff: string) =>
      fetch(`${a.url}/api/v1/content/posts`, {
        headers: { 'x-content-domain': 'nobody.example', 'x-forwarded-for': xff },
      });
    const doc = freshAddress;
    // One proxy (the default): it appends the address it saw, so only the right-most entry counts.
    const one = await api(limits);
    const seen = doc('198.51.100');
    for (let i = 0; i < 2; i++) expect((await posts(one, `${doc('203.0.113')}, ${seen}`)).status).toBe(422);
    // Koa took the left-most entry: a fresh made-up one per request was a fresh budget.
    expect((await posts(one, `${doc('203.0.113')}, ${seen}`)).status).toBe(429);
    expect((await posts(one, `${doc('192.0.2')}`)).status).toBe(422);
    // Two proxies (a CDN, then a load balancer): the second entry from the right is the caller's.
    const two = await api({ ...limits, TRUSTED_PROXY_HOPS: '2' });
    const caller = doc('198.51.100');
    for (let i = 0; i < 2; i++)
      expect((await posts(two, `${doc('203.0.113')}, ${caller}, ${doc('192.0.2')}`)).status).toBe(422);
    expect((await posts(two, `${doc('203.0.113')}, ${caller}, ${doc('192.0.2')}`)).status).toBe(429);
  });
});

test('the limit store (Postgres) not answering is a 503 saying so, not a 429', async () => {
  // The limiter's union reports a store error inside its per-window object, which read as a
  // refusal: 429 "rate limit exceeded" with Retry-After NaN, while the database was down. With
  // authentication served from the client cache, the limiter is a request's first database call.
  const down = createDb({
    DATABASE_URL: 'postgres://postgres@127.0.0.1:1/leadjobs',
    DATABASE_SCHEMA: 'public',
    DATABASE_POOL_MAX: 1,
  });
  const app = new Koa<AppState>();
  app.use(requestContext(createLogger('silent')));
  app.use(errorHandler());
  app.use(rateLimit(down, { perMinute: 100, burst: 20, schema: 'public', per: 'address' }));
  app.use((ctx) => {
    ctx.body = { ok: true };
  });
  const server = app.listen(0, '127.0.0.1');
  try {
    await new Promise((resolve) => server.once('listening', resolve));
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(await res.json()).toEqual({ detail: 'service unavailable: the database does not answer, retry later' });
  } finally {
    server.close();
    await down.destroy();
  }
});
