import type { Response } from 'undici';
import type { IssuedCredentials } from '../../lib/credentials';
import { bearer, startTestApi, type TestApi } from '../support/api';
import { SourceAddresses } from '../support/source-address';

// Failed authentications per source address (issue 10). Each test sends from a loopback address
// of its own, so the addresses it blocks are its own.
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
const from = (address?: string) => sources.from(address);
const token = (c: IssuedCredentials) => `${c.client_id}:${c.api_key}:${c.api_secret}`;

async function expectLimited(res: Response, perMinute: number) {
  expect(res.status).toBe(429);
  expect(await res.json()).toEqual({
    detail: `too many failed authentication attempts from this address, maximum ${perMinute} per minute`,
  });
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(300);
}

describe('failed authentications are limited per source address', () => {
  test('after 10 failures the 11th is 429 with Retry-After; valid clients from that address still pass, other addresses still get 401', async () => {
    const a = await api();
    const good = await a.newClient('good');
    const attacker = from();
    const health = `${a.url}/api/v1/system/health`;
    const stream = `${a.url}/api/v1/events/stream`;
    const wrongSecret = `Bearer ${good.client_id}:${good.api_key}:${good.api_secret}x`;

    // Wrong secrets, a missing header and bad event-stream tokens all count.
    const failures = [
      ...Array.from({ length: 6 }, () => attacker(health, { authorization: wrongSecret })),
      attacker(health),
      attacker(`${stream}?token=${good.client_id}:nope:nope`),
      attacker(`${stream}?token=not-a-token`),
      attacker(`${stream}?token=cli_nosuchclient:sk_x:y`),
    ];
    for (const res of await Promise.all(failures)) expect(res.status).toBe(401);

    await expectLimited(await attacker(health, { authorization: wrongSecret }), 10);
    await expectLimited(await attacker(`${stream}?token=${good.client_id}:nope:nope`), 10);

    const ok = await attacker(health, { authorization: bearer(good) });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ status: 'healthy' });
    const events = new AbortController();
    const live = await attacker(`${stream}?token=${encodeURIComponent(token(good))}`, {}, { signal: events.signal });
    expect(live.status).toBe(200);
    events.abort();

    const elsewhere = await from()(health, { authorization: wrongSecret });
    expect(elsewhere.status).toBe(401);
    expect(await elsewhere.json()).toEqual({ detail: 'invalid client credentials' });
  });

  test('AUTH_FAILURES_PER_MINUTE sets the limit, and every API process shares it', async () => {
    const one = await api({ AUTH_FAILURES_PER_MINUTE: '3' });
    const two = await api({ AUTH_FAILURES_PER_MINUTE: '3' });
    const send = from();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push(
        (await send(`${(i % 2 ? two : one).url}/api/v1/system/health`, { authorization: 'Bearer a:b:c' })).status,
      );
    expect(statuses).toEqual([401, 401, 401, 429]);
    await expectLimited(await send(`${one.url}/api/v1/system/health`, { authorization: 'Bearer a:b:c' }), 3);
  });
});
