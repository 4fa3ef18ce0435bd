import { bearer, startTestApi, type TestApi } from '../support/api';
import { caller } from '../support/jobs';
import { SseReader } from '../support/sse';

// Issue 38 item 15: what the API's public listener tells about the whole process. /metrics (every
// route, queue depths, outbox lag) is the operator's: on PORT only with METRICS_TOKEN, never open;
// /events/status tells a client its own streams, not every tenant's.
const apis: TestApi[] = [];
const readers: SseReader[] = [];
afterAll(async () => {
  await Promise.all(readers.map((r) => r.close()));
  await Promise.all(apis.map((a) => a.close()));
});
async function api(overrides: Record<string, string> = {}): Promise<TestApi> {
  const a = await startTestApi({ RATE_LIMIT_ENABLED: 'false', ...overrides });
  apis.push(a);
  return a;
}

describe('GET /metrics on the API port', () => {
  test('without METRICS_PORT or METRICS_TOKEN it is not served: 404, with or without a client credential', async () => {
    const a = await api();
    const anyone = await fetch(`${a.url}/metrics`);
    expect(anyone.status).toBe(404);
    expect(await anyone.text()).not.toContain('leadjobs_http_request_duration_seconds');
    const client = await fetch(`${a.url}/metrics`, { headers: { authorization: bearer(await a.newClient()) } });
    expect(client.status).toBe(404);
  });

  test('with METRICS_TOKEN it needs that bearer token: 401 without it or with a client credential, 200 with it', async () => {
    const token = 'metrics-operator-token-0123456789';
    const a = await api({ METRICS_TOKEN: token });
    const without = await fetch(`${a.url}/metrics`);
    expect(without.status).toBe(401);
    expect(without.headers.get('www-authenticate')).toContain('Bearer');
    expect(await without.json()).toEqual({
      detail: 'metrics need the operator token (METRICS_TOKEN) as a bearer credential',
    });
    expect((await fetch(`${a.url}/metrics`, { headers: { authorization: bearer(await a.newClient()) } })).status).toBe(
      401,
    );
    expect((await fetch(`${a.url}/metrics`, { headers: { authorization: `Bearer ${token}x` } })).status).toBe(401);
    const scraped = await fetch(`${a.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toMatch(/^# TYPE leadjobs_http_request_duration_seconds histogram/m);
  });
});

test("GET /api/v1/events/status counts the caller's own streams, not other clients'", async () => {
  const a = await api();
  const one = await a.newClient();
  const other = await a.newClient();
  for (let i = 0; i < 2; i++) {
    const r = await new SseReader().open(`${a.url}/api/v1/events/stream`, { authorization: bearer(one) });
    readers.push(r);
    await r.waitFor((e) => e.event === 'connected');
  }
  const status = async (who: typeof one) => {
    const c = caller(a, bearer(who));
    return c.json<{ active_subscriptions: number }>(await c.get('/api/v1/events/status'));
  };
  expect(await status(one)).toMatchObject({ status: 'healthy', listening: true, active_subscriptions: 2 });
  // Before: 2 here as well, the process-wide count of every tenant's streams.
  expect(await status(other)).toMatchObject({ status: 'healthy', active_subscriptions: 0 });
});
