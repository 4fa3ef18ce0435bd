import { ClientRepository } from '../../db/repositories/clients';
import { hashSecret, issueCredentials } from '../../lib/credentials';
import { bearer, startTestApi, type TestApi } from '../support/api';

// Two API processes' worth of apps on the same schema, each with its own credential cache that may
// serve a client row for an hour: only the clients table's NOTIFY can make them see a change.
let apis: TestApi[];
beforeAll(async () => {
  apis = await Promise.all([1, 2].map(() => startTestApi({ RATE_LIMIT_ENABLED: 'false', AUTH_CACHE_SECONDS: '3600' })));
});
afterAll(() => Promise.all(apis.map((a) => a.close())));

const health = (api: TestApi, authorization: string) =>
  fetch(`${api.url}/api/v1/system/health`, { headers: { authorization } });

/** Each API's status for this credential, once every API answers `status` or 1 s has passed (the issue's bound). */
async function statusesWithinOneSecond(authorization: string, status: number): Promise<number[]> {
  const deadline = Date.now() + 1000;
  for (;;) {
    const statuses = await Promise.all(apis.map(async (api) => (await health(api, authorization)).status));
    if (statuses.every((s) => s === status) || Date.now() > deadline) return statuses;
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function detail(res: Response): Promise<unknown> {
  return ((await res.json()) as { detail: unknown }).detail;
}

describe('cached client credentials across two API processes', () => {
  test('a deactivated client gets 403 from both within 1 s, and is let in again once reactivated', async () => {
    const c = await apis[0]!.newClient();
    const repo = new ClientRepository(apis[0]!.deps.db);
    // Both caches hold the active client now.
    expect(await statusesWithinOneSecond(bearer(c), 200)).toEqual([200, 200]);

    // The call client:deactivate makes.
    expect(await repo.setActive(c.client_id, false)).toBe(true);
    expect(await statusesWithinOneSecond(bearer(c), 403)).toEqual([403, 403]);
    for (const api of apis) expect(await detail(await health(api, bearer(c)))).toBe('client account is inactive');

    expect(await repo.setActive(c.client_id, true)).toBe(true);
    expect(await statusesWithinOneSecond(bearer(c), 200)).toEqual([200, 200]);
  });

  test('a replaced secret is refused by both within 1 s and the new one accepted', async () => {
    const c = await apis[1]!.newClient();
    expect(await statusesWithinOneSecond(bearer(c), 200)).toEqual([200, 200]);

    // An operator rotating the secret: a new one's hash in the row.
    const fresh = issueCredentials().api_secret;
    await apis[1]!.deps
      .db('clients')
      .where({ id: c.client_id })
      .update({ api_secret_hash: hashSecret(fresh) });
    expect(await statusesWithinOneSecond(bearer(c), 401)).toEqual([401, 401]);
    for (const api of apis) expect(await detail(await health(api, bearer(c)))).toBe('invalid client credentials');
    expect(await statusesWithinOneSecond(bearer({ ...c, api_secret: fresh }), 200)).toEqual([200, 200]);
  });

  test("a cached client is still refused with a wrong key or secret, or another client's secret", async () => {
    const [c, other] = [await apis[0]!.newClient(), await apis[0]!.newClient()];
    expect(await statusesWithinOneSecond(bearer(c), 200)).toEqual([200, 200]);
    const wrong = [
      { ...c, api_secret: `${c.api_secret.slice(0, -1)}${c.api_secret.endsWith('x') ? 'y' : 'x'}` },
      { ...c, api_key: `${c.api_key.slice(0, -1)}${c.api_key.endsWith('x') ? 'y' : 'x'}` },
      { ...c, api_secret: other.api_secret },
      { ...c, api_key: other.api_key, api_secret: other.api_secret },
    ];
    for (const creds of wrong) {
      for (const api of apis) {
        const res = await health(api, bearer(creds));
        expect(res.status).toBe(401);
        expect(await detail(res)).toBe('invalid client credentials');
      }
    }
    // The right credentials still pass after the refusals.
    expect(await statusesWithinOneSecond(bearer(c), 200)).toEqual([200, 200]);
  });

  test('a deleted client is refused by both within 1 s', async () => {
    const c = await apis[0]!.newClient();
    expect(await statusesWithinOneSecond(bearer(c), 200)).toEqual([200, 200]);
    await apis[0]!.deps.db('clients').where({ id: c.client_id }).delete();
    expect(await statusesWithinOneSecond(bearer(c), 401)).toEqual([401, 401]);
  });
});
