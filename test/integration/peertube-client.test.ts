import { createServer } from 'node:http';
import { PeerTubeClient, PeerTubeError } from '../../lib/peertube';
import { failure } from '../support/failure';
import { listenLocal } from '../stand-ins/listen';

/**
 * lib/peertube.ts against a server that answers as PeerTube's rate limiter does: a 429 whose reset
 * comes as X-RateLimit-Reset, a Unix time (PeerTube's answers carry no RateLimit-Reset; NewPipe's
 * recordings of framatube.org, test/fixtures/recorded/SOURCES.md), with or without Retry-After.
 */

let server: { baseUrl: string; close: () => Promise<void> };
let client: PeerTubeClient;
let retryAfter: string | undefined;
let resetIn = 0;

beforeAll(async () => {
  const s = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
        res
          .writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers })
          .end(JSON.stringify(body));
      const p = new URL(req.url ?? '/', 'http://local').pathname;
      if (p === '/api/v1/oauth-clients/local') return json(200, { client_id: 'c', client_secret: 's' });
      if (p === '/api/v1/users/token')
        return json(200, { token_type: 'Bearer', access_token: 'a', refresh_token: 'r', expires_in: 14399 });
      json(
        429,
        { error: 'Too many requests, please try again later.' },
        {
          'x-ratelimit-limit': '50',
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + resetIn),
          ...(retryAfter !== undefined ? { 'retry-after': retryAfter } : {}),
        },
      );
    });
  });
  server = await listenLocal(s);
  client = new PeerTubeClient({ baseUrl: server.baseUrl, username: 'u', password: 'p', channelId: 1, timeoutMs: 5000 });
});

afterAll(async () => {
  await server?.close();
});

test('a 429 without Retry-After waits until its X-RateLimit-Reset (a Unix time), not a default', async () => {
  retryAfter = undefined;
  resetIn = 42;
  const err = (await failure(client.getVideo(1, new AbortController().signal))) as PeerTubeError;
  expect(err).toBeInstanceOf(PeerTubeError);
  expect(err.message).toMatch(/rate limiting/);
  // 42 s from the answer, less the moment the answer took to be read.
  expect(err.retryAfter).toBeGreaterThanOrEqual(40);
  expect(err.retryAfter).toBeLessThanOrEqual(43);
});

test('Retry-After, when sent, is the wait', async () => {
  retryAfter = '7';
  resetIn = 60;
  const err = (await failure(client.getVideo(1, new AbortController().signal))) as PeerTubeError;
  expect(err.retryAfter).toBe(7);
});
