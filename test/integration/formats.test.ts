import yaml from 'js-yaml';
import { bearer, startTestApi, type TestApi } from '../support/api';

let api: TestApi;
let auth: string;
beforeAll(async () => {
  api = await startTestApi({ RATE_LIMIT_ENABLED: 'false' });
  auth = bearer(await api.newClient());
});
afterAll(() => api.close());

const get = (path: string) => fetch(`${api.url}${path}`, { headers: { authorization: auth } });

describe('response formats (spec §1.2.5)', () => {
  test('?format=yaml returns the same data as YAML', async () => {
    const json = (await (await get('/api/v1/system/health')).json()) as Record<string, unknown>;
    const res = await get('/api/v1/system/health?format=yaml');
    expect(res.headers.get('content-type')).toBe('application/yaml; charset=utf-8');
    const doc = yaml.load(await res.text()) as Record<string, unknown>;
    expect({ ...doc, timestamp: 'x' }).toEqual({ ...json, timestamp: 'x' });
  });

  test('?format=md renders fields as a Markdown table', async () => {
    const res = await get('/api/v1/system/health?format=md');
    expect(res.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    const text = await res.text();
    expect(text).toContain('| field | value |');
    expect(text).toMatch(/\| status \| healthy \|/);
    expect(text).toMatch(/\| database \| connected \|/);
  });

  test('errors follow the requested format too', async () => {
    const res = await fetch(`${api.url}/api/v1/system/health?format=yaml`);
    expect(res.status).toBe(401);
    expect(yaml.load(await res.text())).toEqual({ detail: 'missing authentication credentials' });
  });

  test('an unknown format is a 422 in the validation shape', async () => {
    const res = await get('/api/v1/system/health?format=xml');
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({
      detail: [{ type: 'enum', loc: ['query', 'format'], msg: "Input should be 'json', 'yaml' or 'md'" }],
    });
  });

  test("?format is a GET's (spec §1.2.5, as the document says): other methods answer JSON whatever it says", async () => {
    const post = (query: string) =>
      fetch(`${api.url}/api/v1/jobs/crawlSite/submit${query}`, {
        method: 'POST',
        headers: { authorization: auth, 'content-type': 'application/json' },
        body: JSON.stringify({ payload: {} }),
      });
    const plain = await post('');
    const body = (await plain.json()) as unknown;
    expect(JSON.stringify(body)).toContain('url');
    for (const format of ['yaml', 'md', 'xml']) {
      const res = await post(`?format=${format}`);
      // The payload's own error (no url), not the format's, and in JSON.
      expect(res.status).toBe(plain.status);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toEqual(body);
    }
  });

  test('unknown paths are 404 and wrong methods 405, both with a detail', async () => {
    const missing = await get('/api/v1/nothing-here');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ detail: 'not found' });
    const wrong = await fetch(`${api.url}/api/v1/system/health`, {
      method: 'DELETE',
      headers: { authorization: auth },
    });
    expect(wrong.status).toBe(405);
    expect(await wrong.json()).toEqual({ detail: 'method DELETE not allowed' });
  });

  test('every response carries a request id, and a sane incoming one is kept', async () => {
    const res = await fetch(`${api.url}/api/v1/system/health`, {
      headers: { authorization: auth, 'x-request-id': 'trace-123' },
    });
    expect(res.headers.get('x-request-id')).toBe('trace-123');
    const other = await get('/api/v1/system/health');
    expect(other.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});
