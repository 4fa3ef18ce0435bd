import { bearer, startTestApi, type TestApi } from '../support/api';
import { caller, type Caller } from '../support/jobs';

// What the Schemathesis run (test/chaos/schemathesis.test.ts) found, each pinned here: the document
// says exactly what the API accepts and answers, and schema-shaped input never gets a 500.

let api: TestApi;
let c: Caller;
type Op = {
  parameters?: { name: string; in: string; schema: Record<string, unknown> }[];
  responses: Record<string, { content?: Record<string, unknown> }>;
};
let doc: { paths: Record<string, Record<string, Op>> };

beforeAll(async () => {
  api = await startTestApi({ RATE_LIMIT_ENABLED: 'false' });
  c = caller(api, bearer(await api.newClient('conformance')));
  doc = (await (await fetch(`${api.url}/openapi.json`)).json()) as typeof doc;
});
afterAll(async () => {
  await api?.close();
});

const send = (method: string, path: string, body?: unknown) =>
  fetch(`${api.url}${path}`, {
    method,
    headers: { authorization: c.auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
const param = (path: string, method: string, name: string) =>
  doc.paths[path]?.[method]?.parameters?.find((p) => p.name === name)?.schema;

describe('the document', () => {
  test('ids the API refuses unless UUID are documented as UUIDs', () => {
    expect(param('/api/v1/jobs/{job_id}/status', 'get', 'job_id')).toMatchObject({ type: 'string', format: 'uuid' });
    expect(param('/api/v1/campaigns/{id}', 'get', 'id')).toMatchObject({ format: 'uuid' });
    expect(param('/api/v1/webhooks/{webhook_id}', 'get', 'webhook_id')).toMatchObject({ format: 'uuid' });
  });

  test("IDAP listings take record types only; database ids have the integer column's bound", () => {
    const listType = param('/api/v1/idap/{resource_type}', 'get', 'resource_type') as { enum: string[] };
    expect(listType.enum).toContain('businesses');
    expect(listType.enum).not.toContain('screenshots');
    expect(
      (param('/api/v1/idap/{resource_type}/{resource_id}', 'patch', 'resource_type') as { enum: string[] }).enum,
    ).not.toContain('media');
    expect(param('/api/v1/mail/folders', 'get', 'mailbox_id')).toMatchObject({ maximum: 2147483647 });
  });

  test('errors of a GET are documented in every ?format, and 431 everywhere', () => {
    const status = doc.paths['/api/v1/jobs/{job_id}/status']?.get;
    expect(Object.keys(status?.responses['401']?.content ?? {})).toEqual([
      'application/json',
      'application/yaml',
      'text/markdown',
    ]);
    expect(status?.responses['431']).toBeDefined();
    // A {success: false} route's 422 may also come from the format check, which runs before routing.
    const integration = doc.paths['/api/v1/integrations/{integration_id}']?.get;
    expect(JSON.stringify(integration?.responses['422'])).toContain('anyOf');
  });
  test("exports document every format's media type (xlsx was answered but undocumented)", () => {
    for (const path of ['/api/v1/jobs/{job_id}/workflow-results/export', '/api/v1/campaigns/{campaign_id}/export']) {
      expect(Object.keys(doc.paths[path]?.get?.responses['200']?.content ?? {}).sort()).toEqual([
        'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
        'application/x-ndjson',
        'text/csv',
      ]);
    }
  });
});

describe('answers', () => {
  test("a method the path does not have is 405 with its own Allow, not another operation's answer", async () => {
    const get = await send('GET', '/api/v1/media/videos/import');
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect(await get.json()).toEqual({ detail: 'method GET not allowed' });
    const del = await send('DELETE', '/api/v1/jobs/submit');
    expect(del.status).toBe(405);
    const options = await send('OPTIONS', '/api/v1/jobs/submit');
    expect(options.headers.get('allow')).toBe('POST');
    const media = await send('OPTIONS', '/api/v1/idap/media/3f1e0a52-4b7e-4bb4-9a43-2f5d8f0c1e11');
    expect(media.headers.get('allow')).toBe('HEAD, GET');
  });

  test('an empty tag patch answers the tag as it is (was a 500)', async () => {
    const tag = (await (await c.post('/api/v1/dashboard/content/tags', { name: 'Cold leads' })).json()) as {
      id: string;
      name: string;
      slug: string;
    };
    const res = await send('PATCH', `/api/v1/dashboard/content/tags/${tag.id}`, {});
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: tag.id, name: 'Cold leads', slug: tag.slug });
  });

  test('flags on an IDAP id that is not a UUID: 404 (was a 500)', async () => {
    const res = await send('PATCH', '/api/v1/idap/businesses/0', { add: [], remove: ['do_not_contact'] });
    expect(res.status).toBe(404);
  });

  test('an id past the integer column: 422 naming the parameter (was a 500)', async () => {
    const res = await c.get('/api/v1/mail/folders?mailbox_id=9007199254740990');
    expect(res.status).toBe(422);
    expect(JSON.stringify(await res.json())).toContain('mailbox_id');
  });

  test("a mailbox address past RFC 5321's limits: 422 (was a 500)", async () => {
    const address = `${'a'.repeat(70)}@example.com`;
    const res = await c.post('/api/v1/mail/mailboxes', {
      address,
      smtp: { host: '127.0.0.1', port: 9, secure: false, username: 'u', password: 'p' },
    });
    expect(res.status).toBe(422);
    expect(JSON.stringify(await res.json())).toContain('address');
  });
});
