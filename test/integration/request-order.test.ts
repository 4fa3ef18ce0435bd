import { bearer, startTestApi, type TestApi } from '../support/api';

// What of a request is read before its caller is known. The body parser and the `?format=` check
// ran before every route's guards: an anonymous caller got its JSON or YAML parsed (up to 2 MB) and
// a 415/422 instead of 401, outside the rate limit, and a media or integration route's body and
// format errors came in the {detail} shape instead of its own {success:false, error, detail}.

let api: TestApi;
let auth: string;
beforeAll(async () => {
  api = await startTestApi({
    RATE_LIMIT_ENABLED: 'true',
    RATE_LIMIT_PER_MINUTE: '1000',
    AUTH_FAILURES_PER_MINUTE: '1000',
  });
  auth = bearer(await api.newClient());
});
afterAll(() => api.close());

const post = (path: string, body: string, type: string, authorization?: string) =>
  fetch(`${api.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': type, ...(authorization ? { authorization } : {}) },
    body,
  });

describe('an unauthenticated request is answered 401 before its body or format is looked at', () => {
  test.each([
    ['malformed JSON', '/api/v1/dedupe/check', '{', 'application/json'],
    ['malformed YAML', '/api/v1/jobs/crawlSite/submit', 'url: [unclosed', 'text/yaml'],
    ['an unsupported content type', '/api/v1/dedupe/check', 'x', 'text/plain'],
    ['an integration route', '/api/v1/integrations', '{', 'application/json'],
  ])(
    '%s: no credential -> 401 missing credentials; a wrong one -> 401 invalid credentials',
    async (_what, path, body, type) => {
      const anonymous = await post(path, body, type);
      expect(anonymous.status).toBe(401);
      expect(JSON.stringify(await anonymous.json())).toContain('missing authentication credentials');
      const wrong = await post(path, body, type, 'Bearer cli_nobody:sk_nothing:secret_nothing');
      expect(wrong.status).toBe(401);
      expect(JSON.stringify(await wrong.json())).toContain('invalid client credentials');
    },
  );

  test('?format=xml without a credential -> 401', async () => {
    const res = await fetch(`${api.url}/api/v1/idap/businesses?format=xml`);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ detail: 'missing authentication credentials' });
  });
});

describe('an authenticated request still gets its body and format errors, counted by the rate limit', () => {
  test('malformed JSON -> 422 json_invalid with the rate-limit headers', async () => {
    const res = await post('/api/v1/dedupe/check', '{', 'application/json', auth);
    expect(res.status).toBe(422);
    expect(res.headers.get('x-ratelimit-limit')).toBe('1000');
    expect(await res.json()).toEqual({ detail: [expect.objectContaining({ type: 'json_invalid', loc: ['body'] })] });
  });

  test('?format=xml -> 422 in the validation shape', async () => {
    const res = await fetch(`${api.url}/api/v1/idap/businesses?format=xml`, { headers: { authorization: auth } });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({
      detail: [{ type: 'enum', loc: ['query', 'format'], msg: "Input should be 'json', 'yaml' or 'md'" }],
    });
  });
});

describe('media and integration routes answer body and format errors in their own shape (spec §7.1)', () => {
  test.each([
    [
      'malformed JSON',
      () => post('/api/v1/integrations', '{"provider_name":', 'application/json', auth),
      422,
      'validation_error',
    ],
    [
      'malformed YAML',
      () => post('/api/v1/integrations', 'provider_name: [unclosed\n', 'text/yaml', auth),
      422,
      'validation_error',
    ],
    [
      'an unsupported content type',
      () => post('/api/v1/integrations', 'x', 'text/plain', auth),
      415,
      'unsupported_media_type',
    ],
    [
      '?format=xml on the integrations list',
      () => fetch(`${api.url}/api/v1/integrations?format=xml`, { headers: { authorization: auth } }),
      422,
      'validation_error',
    ],
    [
      'an unsupported content type on a video import',
      () => post('/api/v1/media/videos/import', 'x', 'text/plain', auth),
      415,
      'unsupported_media_type',
    ],
  ])('%s', async (_what, send, status, error) => {
    const res = await send();
    expect(res.status).toBe(status);
    expect(await res.json()).toMatchObject({ success: false, error, detail: expect.anything() });
  });
});
