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
const schema = z.strictObject({ name: z.string(), priority: z.number().int().min(0).max(10).default(0), tags: z.array(z.string()).optional() });
let server: Server;
let url: string;
beforeAll(async () => {
  const app = new Koa<AppState>();
  app.silent = true;
  const router = new Router<AppState>();
  router.post('/echo', (ctx) => { ctx.body = validate(schema, ctx.request.body, 'body'); });
  router.get('/boom', () => { throw new Error('secret internals'); });
  app.use(requestContext(createLogger('silent'))).use(responseFormat()).use(errorHandler()).use(requestBody({ limit: '1kb' })).use(router.routes());
  server = await new Promise((r) => { const s = app.listen(0, '127.0.0.1', () => r(s)); });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((r) => server.close(r)));

// Bytes, not a string: fetch would label a string text/plain.
const post = (body: string, type?: string) =>
  fetch(`${url}/echo`, { method: 'POST', body: Buffer.from(body), headers: type ? { 'content-type': type } : {} });

describe('request bodies', () => {
  test.each(['text/yaml', 'application/yaml', 'application/x-yaml', 'application/yaml; charset=utf-8'])('%s bodies parse like JSON', async (type) => {
    const res = await post('name: Acme\npriority: 7\ntags:\n  - a\n  - b\n', type);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ name: 'Acme', priority: 7, tags: ['a', 'b'] });
  });

  test('JSON is the default when no content type is sent', async () => {
    expect(await (await post('{"name":"x"}')).json()).toEqual({ name: 'x', priority: 0 });
    expect(await (await post('{"name":"x"}', 'application/json')).json()).toEqual({ name: 'x', priority: 0 });
  });

  test.each(['application/x-www-form-urlencoded', 'text/plain'])('%s is 415 with a detail naming the accepted types', async (type) => {
    const res = await post('name=x', type);
    expect(res.status).toBe(415);
    const { detail } = (await res.json()) as { detail: string };
    expect(detail).toContain(`unsupported content type '${type}'`);
    expect(detail).toContain('application/json');
    expect(detail).toContain('text/yaml');
  });

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
    expect(detail).toEqual(expect.arrayContaining([
      { type: 'missing', loc: ['body', 'name'], msg: 'Field required' },
      expect.objectContaining({ type: 'too_big', loc: ['body', 'priority'] }),
      expect.objectContaining({ type: 'extra_forbidden', loc: ['body'], msg: 'Unknown field(s): extra' }),
    ]));
  });

  test('bodies over the limit are 413', async () => {
    const res = await post(JSON.stringify({ name: 'x'.repeat(2000) }), 'application/json');
    expect(res.status).toBe(413);
  });

  test('an unexpected error is a 500 with the request id and no internals', async () => {
    const res = await fetch(`${url}/boom`);
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).not.toContain('secret internals');
    expect(JSON.parse(text)).toEqual({ detail: `internal server error (request id ${res.headers.get('x-request-id')})` });
  });
});
