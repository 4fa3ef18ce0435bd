import { bearer, startTestApi, type TestApi } from '../support/api';

const apis: TestApi[] = [];
afterAll(() => Promise.all(apis.map((a) => a.close())));
async function api(overrides: Record<string, string> = {}) {
  const a = await startTestApi(overrides);
  apis.push(a);
  return a;
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
    const auth = bearer(await a.newClient());
    const statuses = (await Promise.all(Array.from({ length: 25 }, () => get(a, auth)))).map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(20);
    expect(statuses.filter((s) => s === 429)).toHaveLength(5);
    const res = await get(a, auth);
    if (res.status === 429) expect(await res.json()).toEqual({ detail: 'rate limit exceeded, maximum 100 requests per minute' });
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
});
