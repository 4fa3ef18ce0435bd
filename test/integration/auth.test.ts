import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ClientRepository } from '../../db/repositories/clients';
import { bearer, startTestApi, type TestApi } from '../support/api';

const run = promisify(execFile);
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ RATE_LIMIT_ENABLED: 'false' });
});
afterAll(() => api.close());

const health = (authorization?: string) =>
  fetch(`${api.url}/api/v1/system/health`, { headers: authorization ? { authorization } : {} });

async function expectDetail(res: Response, status: number, detail: string) {
  expect(res.status).toBe(status);
  expect(await res.json()).toEqual({ detail });
}

describe('authentication (spec §5)', () => {
  test('a missing header is 401 missing authentication credentials', async () => {
    const res = await health();
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    await expectDetail(res, 401, 'missing authentication credentials');
  });

  test.each([
    ['no colons', 'Bearer justonepart'],
    ['two parts', 'Bearer cli_a:sk_b'],
    ['four parts', 'Bearer a:b:c:d'],
    ['an empty part', 'Bearer cli_a::secret_c'],
    ['another scheme', 'Basic Y2xpX2E6c2tfYg=='],
  ])('a credential with %s is 401 naming the expected format', async (_name, header) => {
    await expectDetail(
      await health(header),
      401,
      'invalid authentication format, expected client_id:api_key:api_secret',
    );
  });

  test('unknown client, wrong key and wrong secret are all 401 invalid client credentials', async () => {
    const c = await api.newClient();
    await expectDetail(
      await health(`Bearer cli_nosuchclient:${c.api_key}:${c.api_secret}`),
      401,
      'invalid client credentials',
    );
    // The key with its last character changed (to x, or to y when it was an x: a CI run drew a key ending in x).
    const wrongKey = `${c.api_key.slice(0, -1)}${c.api_key.endsWith('x') ? 'y' : 'x'}`;
    await expectDetail(
      await health(`Bearer ${c.client_id}:${wrongKey}:${c.api_secret}`),
      401,
      'invalid client credentials',
    );
    await expectDetail(
      await health(`Bearer ${c.client_id}:${c.api_key}:${c.api_secret}x`),
      401,
      'invalid client credentials',
    );
  });

  test('valid credentials pass', async () => {
    const c = await api.newClient();
    const res = await health(bearer(c));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'healthy', database: 'connected' });
  });
});

describe('operator CLI', () => {
  const npm = (args: string[]) =>
    run('npm', ['run', '--silent', ...args], { env: process.env, cwd: `${__dirname}/../..` });

  test('client:create prints one JSON object with well-formed credentials, stores only hashes, client:deactivate gives 403 and client:activate undoes it', async () => {
    const { stdout } = await npm(['client:create', '--', '--name', 'Acme Leads']);
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const creds = JSON.parse(lines[0] as string) as { client_id: string; api_key: string; api_secret: string };
    expect(Object.keys(creds).sort()).toEqual(['api_key', 'api_secret', 'client_id']);
    expect(creds.client_id).toMatch(/^cli_[a-z0-9]+$/);
    expect(creds.api_key).toMatch(/^sk_[A-Za-z0-9]{47}$/);
    expect(creds.api_secret).toMatch(/^secret_[A-Za-z0-9]{48}$/);

    const row = await api.deps.db('clients').where({ id: creds.client_id }).first();
    expect(row.name).toBe('Acme Leads');
    expect(JSON.stringify(row)).not.toContain(creds.api_key);
    expect(JSON.stringify(row)).not.toContain(creds.api_secret);

    expect((await health(bearer(creds))).status).toBe(200);
    await npm(['client:deactivate', '--', '--client-id', creds.client_id]);
    await expectDetail(await health(bearer(creds)), 403, 'client account is inactive');
    await npm(['client:activate', '--', '--client-id', creds.client_id]);
    // The API process drops its cached row on the clients table's NOTIFY: at once, give or take a moment.
    let status = 0;
    for (let i = 0; i < 20 && status !== 200; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 100));
      status = (await health(bearer(creds))).status;
    }
    expect(status).toBe(200);
  });

  test('client:rotate issues a new key and secret; the old pair keeps working for the grace period only', async () => {
    // An endpoint that needs only Postgres: the health check also reports the other services.
    const jobsList = (authorization: string) => fetch(`${api.url}/api/v1/jobs/list`, { headers: { authorization } });
    const old = await api.newClient('rotating');
    expect((await jobsList(bearer(old))).status).toBe(200);
    const { stdout } = await npm(['client:rotate', '--', '--client-id', old.client_id]);
    const rotated = JSON.parse(stdout.trim()) as {
      client_id: string;
      api_key: string;
      api_secret: string;
      previous_valid_until: string;
    };
    expect(rotated.client_id).toBe(old.client_id);
    expect(rotated.api_key).toMatch(/^sk_[A-Za-z0-9]{47}$/);
    expect(rotated.api_key).not.toBe(old.api_key);
    expect(rotated.api_secret).not.toBe(old.api_secret);
    // The documented default grace: 24 hours.
    expect(Date.parse(rotated.previous_valid_until) - Date.now()).toBeGreaterThan(23.9 * 3600_000);
    expect((await jobsList(bearer(rotated))).status).toBe(200);
    expect((await jobsList(bearer(old))).status).toBe(200);
    // The old key with the new secret (or the reverse) is no pair at all.
    await expectDetail(
      await jobsList(`Bearer ${old.client_id}:${old.api_key}:${rotated.api_secret}`),
      401,
      'invalid client credentials',
    );
    // The grace period over (as if a day had passed): the old pair is refused, the new one works.
    await api.deps
      .db('clients')
      .where({ id: old.client_id })
      .update({ previous_valid_until: new Date(Date.now() - 1000) });
    await expectDetail(await jobsList(bearer(old)), 401, 'invalid client credentials');
    expect((await jobsList(bearer(rotated))).status).toBe(200);
    // A grace of 0 (`--grace-hours 0`, for a leaked pair): the pair it replaces is refused at once.
    const again = (await new ClientRepository(api.deps.db).rotate(old.client_id, 0)) as typeof rotated;
    let status = 0;
    for (let i = 0; i < 20 && status !== 401; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 100));
      status = (await jobsList(bearer(rotated))).status;
    }
    expect(status).toBe(401);
    expect((await jobsList(bearer(again))).status).toBe(200);
    expect(await new ClientRepository(api.deps.db).rotate('cli_nosuchclient', 0)).toBeUndefined();
  }, 180_000);

  test('client:create without --name fails with usage and prints no credentials', async () => {
    await expect(npm(['client:create'])).rejects.toMatchObject({ code: 2, stdout: '' });
  });
});
