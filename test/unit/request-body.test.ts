import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import Koa from 'koa';
import Router from '@koa/router';
import { z } from 'zod';
import type { AppState } from '../../api/context';
import { requestBody } from '../../api/middleware/body';
import { errorHandler } from '../../api/middleware/errors';
import { responseFormat } from '../../api/middleware/format';
import { requestContext } from '../../api/middleware/request-id';
import { validate } from '../../api/validation';
import { createLogger } from '../../lib/logger';

// The API's middleware chain in front of one echo route, over real HTTP.
const schema = z.strictObject({
  name: z.string(),
  priority: z.number().int().min(0).max(10).default(0),
  tags: z.array(z.string()).optional(),
  payload: z.unknown().optional(),
});
let server: Server;
let url: string;
beforeAll(async () => {
  const app = new Koa<AppState>();
  app.silent = true;
  const router = new Router<AppState>();
  router.post('/echo', (ctx) => {
    ctx.body = validate(schema, ctx.request.body, 'body');
  });
  router.get('/boom', () => {
    throw new Error('secret internals');
  });
  app
    .use(requestContext(createLogger('silent')))
    .use(responseFormat())
    .use(errorHandler())
    .use(requestBody({ limit: '1kb' }))
    .use(router.routes());
  server = await new Promise((r) => {
    const s = app.listen(0, '127.0.0.1', () => r(s));
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((r) => server.close(r)));

// Bytes, not a string: fetch would label a string text/plain.
const post = (body: string, type?: string) =>
  fetch(`${url}/echo`, { method: 'POST', body: Buffer.from(body), headers: type ? { 'content-type': type } : {} });

describe('request bodies', () => {
  test.each(['text/yaml', 'application/yaml', 'application/x-yaml', 'application/yaml; charset=utf-8'])(
    '%s bodies parse like JSON',
    async (type) => {
      const res = await post('name: Acme\npriority: 7\ntags:\n  - a\n  - b\n', type);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ name: 'Acme', priority: 7, tags: ['a', 'b'] });
    },
  );

  test('JSON is the default when no content type is sent', async () => {
    expect(await (await post('{"name":"x"}')).json()).toEqual({ name: 'x', priority: 0 });
    expect(await (await post('{"name":"x"}', 'application/json')).json()).toEqual({ name: 'x', priority: 0 });
  });

  test.each(['application/x-www-form-urlencoded', 'text/plain'])(
    '%s is 415 with a detail naming the accepted types',
    async (type) => {
      const res = await post('name=x', type);
      expect(res.status).toBe(415);
      const { detail } = (await res.json()) as { detail: string };
      expect(detail).toContain(`unsupported content type '${type}'`);
      expect(detail).toContain('application/json');
      expect(detail).toContain('text/yaml');
    },
  );

  test('malformed JSON and YAML are 422 in the validation shape', async () => {
    const json = await post('{"name":', 'application/json');
    expect(json.status).toBe(422);
    expect(await json.json()).toMatchObject({ detail: [{ type: 'json_invalid', loc: ['body'] }] });
    const yml = await post('name: [unclosed', 'text/yaml');
    expect(yml.status).toBe(422);
    expect(await yml.json()).toMatchObject({ detail: [{ type: 'yaml_invalid', loc: ['body'] }] });
  });

  test('schema violations are 422 with one {type, loc, msg} per problem', async () => {
    const res = await post(JSON.stringify({ priority: 11, extra: true }), 'application/json');
    expect(res.status).toBe(422);
    const { detail } = (await res.json()) as { detail: { type: string; loc: unknown[]; msg: string }[] };
    expect(detail).toEqual(
      expect.arrayContaining([
        { type: 'missing', loc: ['body', 'name'], msg: 'Field required' },
        expect.objectContaining({ type: 'too_big', loc: ['body', 'priority'] }),
        expect.objectContaining({ type: 'extra_forbidden', loc: ['body'], msg: 'Unknown field(s): extra' }),
      ]),
    );
  });

  test('bodies over the limit are 413', async () => {
    const res = await post(JSON.stringify({ name: 'x'.repeat(2000) }), 'application/json');
    expect(res.status).toBe(413);
  });

  test('YAML aliases count once per use: past the body limit in values or in text they are 413', async () => {
    // 8 + 8 + 8 aliases standing for 8^3 lists of 8 nulls: 4,681 values from 120 bytes.
    const values = await post(
      'name: x\npayload:\n  a: &a [~, ~, ~, ~, ~, ~, ~, ~]\n  b: &b [*a, *a, *a, *a, *a, *a, *a, *a]\n  c: &c [*b, *b, *b, *b, *b, *b, *b, *b]\n  d: [*c, *c, *c, *c, *c, *c, *c, *c]\n',
      'text/yaml',
    );
    expect(values.status).toBe(413);
    expect(await values.json()).toEqual({
      detail:
        'request body is too large once YAML aliases are expanded: more than 1024 values (the limit of a 1kb body)',
    });
    const text = await post(`name: x\npayload:\n  a: &a "${'x'.repeat(300)}"\n  b: [*a, *a, *a, *a]\n`, 'text/yaml');
    expect(text.status).toBe(413);
    expect(await text.json()).toEqual({
      detail:
        'request body is too large once YAML aliases are expanded: more than 1kb of text (the limit of a 1kb body)',
    });
  });

  test('YAML aliases within the budgets work; more than 50 aliases, or an alias inside its own anchor, are 422', async () => {
    const ok = await post('name: &n Acme\ntags: [*n, *n]\n', 'text/yaml');
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ name: 'Acme', priority: 0, tags: ['Acme', 'Acme'] });
    const many = await post(`name: &n x\ntags: [${Array.from({ length: 51 }, () => '*n').join(', ')}]\n`, 'text/yaml');
    expect(many.status).toBe(422);
    expect(await many.json()).toEqual({
      detail: [{ type: 'yaml_too_many_aliases', loc: ['body'], msg: 'YAML body uses more than 50 aliases' }],
    });
    const loop = await post('name: x\npayload: &loop {self: *loop}\n', 'text/yaml');
    expect(loop.status).toBe(422);
    expect(await loop.json()).toEqual({
      detail: [{ type: 'yaml_recursive_alias', loc: ['body'], msg: 'a YAML alias refers to a node that contains it' }],
    });
  });

  test('bodies nested deeper than 64 levels are 422, in JSON, in YAML and through YAML aliases', async () => {
    const tooDeep = { detail: [{ type: 'too_deep', loc: ['body'], msg: 'body nests deeper than 64 levels' }] };
    const nest = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
    // The top-level object is the first level.
    expect((await post(`{"name":"x","payload":${nest(63)}}`, 'application/json')).status).toBe(200);
    const json = await post(`{"name":"x","payload":${nest(64)}}`, 'application/json');
    expect(json.status).toBe(422);
    expect(await json.json()).toEqual(tooDeep);
    const yml = await post(`name: x\npayload: ${nest(64)}\n`, 'text/yaml');
    expect(yml.status).toBe(422);
    expect(await yml.json()).toEqual(tooDeep);
    // Each half is 40 levels deep; the alias puts one inside the other.
    const aliased = await post(
      `name: x\npayload: [&a ${nest(40)}, ${'['.repeat(30)}*a${']'.repeat(30)}]\n`,
      'text/yaml',
    );
    expect(aliased.status).toBe(422);
    expect(await aliased.json()).toEqual(tooDeep);
  });

  test('an unexpected error is a 500 with the request id and no internals', async () => {
    const res = await fetch(`${url}/boom`);
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).not.toContain('secret internals');
    expect(JSON.parse(text)).toEqual({
      detail: `internal server error (request id ${res.headers.get('x-request-id')})`,
    });
  });
});
