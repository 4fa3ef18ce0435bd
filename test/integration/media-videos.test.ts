import { lookup } from 'node:dns/promises';
import { createServer } from 'node:http';
import { hostname } from 'node:os';
import { isBlockedAddress } from '../../lib/outbound';
import { bearer, startTestApi, type TestApi } from '../support/api';
import { caller, type Caller } from '../support/jobs';
import { listenLocal } from '../stand-ins/listen';
import { startPeerTube, type PeerTubeStandIn } from '../stand-ins/peertube';

// Video import (spec §4.8, §2.14) through the real API and Postgres, against a stand-in PeerTube
// instance speaking PeerTube's REST API (OAuth client, password and refresh grants, imports,
// video state, problem+json errors, 429). The videos come from a small site on 127.0.0.1, which
// USER_URL_ALLOW_HOSTS allows as a public host would be; its redirects lead to another of its pages
// or to addresses the SSRF guard refuses.

let pt: PeerTubeStandIn;
let media: { baseUrl: string; close(): Promise<void> };
let api: TestApi;
let c: Caller;

const peertubeEnv = (p: PeerTubeStandIn, password = p.password) => ({
  RATE_LIMIT_ENABLED: 'false',
  USER_URL_ALLOW_HOSTS: '127.0.0.1',
  PEERTUBE_BASE_URL: p.baseUrl,
  PEERTUBE_USERNAME: p.username,
  PEERTUBE_PASSWORD: password,
  PEERTUBE_CHANNEL_ID: String(p.channelId),
});

/** Redirects of the media site, by path; every other path is a video (200, video/mp4). */
const REDIRECTS: Record<string, (base: string) => { status: number; location: string }> = {
  '/old/talk.mp4': (base) => ({ status: 302, location: `${base}/short/talk` }),
  '/short/talk': () => ({ status: 301, location: '/talks/talk.mp4' }),
  '/to-metadata': () => ({
    status: 302,
    location: 'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
  }),
  '/to-private': () => ({ status: 307, location: 'http://10.0.0.5/internal.mp4' }),
  '/to-localhost': (base) => ({ status: 301, location: `http://localhost:${new URL(base).port}/x.mp4` }),
  '/to-internal-name': () => ({ status: 302, location: 'http://minio.internal.invalid:9000/bucket/x.mp4' }),
};

async function startMediaSite() {
  const server = createServer((req, res) => {
    const redirect = REDIRECTS[new URL(req.url ?? '/', 'http://site').pathname]?.(site.baseUrl);
    if (redirect) res.writeHead(redirect.status, { location: redirect.location }).end();
    else
      res
        .writeHead(200, { 'content-type': 'video/mp4', 'content-length': '4' })
        .end(req.method === 'HEAD' ? undefined : 'mp4!');
  });
  const site = await listenLocal(server);
  return site;
}

beforeAll(async () => {
  pt = await startPeerTube();
  media = await startMediaSite();
  pt.sources.set(`${media.baseUrl}/talks/keynote`, 'Keynote: the year in review');
  api = await startTestApi(peertubeEnv(pt));
  c = caller(api, bearer(await api.newClient()));
});
afterAll(async () => {
  await api?.close();
  await pt?.close();
  await media?.close();
});
afterEach(() => {
  pt.setDelay(0);
  pt.setRateLimit(50);
  pt.setImportsEnabled(true);
});

type Video = Record<string, unknown> & { video_id: number };

async function importVideo(who: Caller, body: Record<string, unknown>): Promise<Video> {
  const res = await who.post('/api/v1/media/videos/import', body);
  const json = (await res.json()) as Video;
  if (res.status !== 201) throw new Error(`import answered ${res.status}: ${JSON.stringify(json)}`);
  return json;
}

const since = (from: number) => pt.requests.slice(from);

test('an import: OAuth client + password token, the multipart import, and the §2.14 answer in state importing', async () => {
  const from = pt.requests.length;
  const video = await importVideo(c, {
    url: `${media.baseUrl}/talks/keynote`,
    title: 'Our keynote',
    description: 'Recorded live',
    privacy: 1,
  });
  const stored = pt.videos.get(video.video_id);
  expect(stored).toBeDefined();
  expect(video).toEqual({
    success: true,
    video_id: stored?.id,
    title: 'Our keynote',
    description: 'Recorded live',
    watch_url: `${pt.baseUrl}/w/${stored?.shortUUID}`,
    embed_url: `${pt.baseUrl}/videos/embed/${stored?.uuid}`,
    channel_name: 'Imported videos',
    privacy: 1,
    state: 'importing',
    state_label: 'To import',
  });
  const calls = since(from);
  const imported = calls.find((r) => r.path === '/api/v1/videos/imports');
  expect(imported?.fields).toEqual({
    channelId: String(pt.channelId),
    targetUrl: `${media.baseUrl}/talks/keynote`,
    privacy: '1',
    name: 'Our keynote',
    description: 'Recorded live',
  });
  expect(imported?.auth).toMatch(/^[0-9a-f]{40}$/);
});

test('without a title the source title is used; privacy defaults to 2 (unlisted)', async () => {
  const video = await importVideo(c, { url: `${media.baseUrl}/talks/keynote` });
  expect(video.title).toBe('Keynote: the year in review');
  expect(video.privacy).toBe(2);
  const imported = pt.requests.filter((r) => r.path === '/api/v1/videos/imports').pop();
  expect(imported?.fields?.name).toBeUndefined();
  expect(imported?.fields?.privacy).toBe('2');
});

test('GET /api/v1/media/videos/{id} follows the state; another client gets 404', async () => {
  const video = await importVideo(c, { url: `${media.baseUrl}/clip.mp4`, title: 'A clip', privacy: 3 });
  const first = (await (await c.get(`/api/v1/media/videos/${video.video_id}`)).json()) as Video;
  expect(first).toMatchObject({
    video_id: video.video_id,
    state: 'importing',
    state_label: 'To import',
    privacy: 3,
    title: 'A clip',
  });
  pt.setState(video.video_id, { id: 2, label: 'To transcode' });
  expect(((await (await c.get(`/api/v1/media/videos/${video.video_id}`)).json()) as Video).state).toBe('processing');
  pt.setState(video.video_id, { id: 1, label: 'Published' });
  const done = (await (await c.get(`/api/v1/media/videos/${video.video_id}`)).json()) as Video;
  expect(done).toMatchObject({
    state: 'published',
    state_label: 'Published',
    watch_url: video.watch_url,
    embed_url: video.embed_url,
  });

  const other = caller(api, bearer(await api.newClient('other')));
  const res = await other.get(`/api/v1/media/videos/${video.video_id}`);
  expect(res.status).toBe(404);
  expect(await res.json()).toMatchObject({ success: false });
});

test('an expired access token is refreshed; a refused refresh token falls back to the password grant', async () => {
  await importVideo(c, { url: `${media.baseUrl}/a.mp4`, title: 'Warm up' });
  pt.expireAccessTokens();
  let from = pt.requests.length;
  const after = await importVideo(c, { url: `${media.baseUrl}/b.mp4`, title: 'After expiry' });
  let calls = since(from);
  // The first try is answered 401 invalid_token; then the refresh grant and the same import again.
  expect(calls.map((r) => r.grant ?? r.path)).toEqual([
    '/api/v1/videos/imports',
    'refresh_token',
    '/api/v1/videos/imports',
    `/api/v1/videos/${after.video_id}`,
  ]);
  expect(after.title).toBe('After expiry');

  pt.expireAccessTokens();
  pt.expireRefreshTokens();
  from = pt.requests.length;
  const video = await importVideo(c, { url: `${media.baseUrl}/c.mp4`, title: 'Both expired' });
  calls = since(from);
  expect(calls.filter((r) => r.grant).map((r) => r.grant)).toEqual(['refresh_token', 'password']);
  expect(video.state).toBe('importing');
});

test("PeerTube refusing the configured account: 503 naming the settings and PeerTube's reason", async () => {
  const wrong = await startTestApi(peertubeEnv(pt, 'not the password'));
  try {
    const who = caller(wrong, bearer(await wrong.newClient()));
    const res = await who.post('/api/v1/media/videos/import', { url: `${media.baseUrl}/x.mp4` });
    expect(res.status).toBe(503);
    const body = (await res.json()) as { success: boolean; detail: string };
    expect(body.success).toBe(false);
    expect(body.detail).toContain('PEERTUBE_PASSWORD');
    expect(body.detail).toContain('Invalid grant: user credentials are invalid');
  } finally {
    await wrong.close();
  }
});

test('PeerTube refusing the import: 400 with its reason; rate limited: 503 with Retry-After', async () => {
  pt.setImportsEnabled(false);
  const refused = await c.post('/api/v1/media/videos/import', { url: `${media.baseUrl}/y.mp4` });
  expect(refused.status).toBe(400);
  expect(await refused.json()).toEqual({
    success: false,
    error: 'Video import refused',
    detail: expect.stringContaining('HTTP import is not enabled on this instance.'),
  });
  pt.setImportsEnabled(true);

  pt.setRateLimit(0, 30_000);
  const limited = await c.post('/api/v1/media/videos/import', { url: `${media.baseUrl}/z.mp4` });
  expect(limited.status).toBe(503);
  expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(((await limited.json()) as { detail: string }).detail).toContain('rate limiting');
});

test('bad input: 422 in the media error shape; a private address is refused before PeerTube is called', async () => {
  for (const body of [
    {},
    { url: 'not a url' },
    { url: 'ftp://media.example.com/a' },
    { url: 'https://media.example.com/a', privacy: 4 },
    { url: 'https://media.example.com/a', extra: 1 },
  ]) {
    const res = await c.post('/api/v1/media/videos/import', body);
    expect(res.status).toBe(422);
    expect(((await res.json()) as { success: boolean }).success).toBe(false);
  }
  // The privacy refusal names the values (it said only "Invalid input").
  const privacy = await c.post('/api/v1/media/videos/import', { url: 'https://media.example.com/a', privacy: 5 });
  expect(((await privacy.json()) as { detail: { msg: string }[] }).detail).toEqual([
    expect.objectContaining({
      loc: ['body', 'privacy'],
      msg: 'privacy must be 1 (public), 2 (unlisted) or 3 (private)',
    }),
  ]);
  // As in production: USER_URL_ALLOW_HOSTS lists nothing, so 127.0.0.1 is refused too.
  const strict = await startTestApi({ ...peertubeEnv(pt), USER_URL_ALLOW_HOSTS: '' });
  try {
    const who = caller(strict, bearer(await strict.newClient()));
    const from = pt.requests.length;
    // A trailing dot and a name that resolves to loopback (this machine's own name, from /etc/hosts)
    // went to PeerTube: only literal addresses and "localhost" were judged.
    const own = hostname();
    expect((await lookup(own, { all: true })).every((a) => isBlockedAddress(a.address).blocked)).toBe(true);
    for (const url of [
      'http://127.0.0.1:9000/secret',
      'http://169.254.169.254/latest/meta-data',
      'http://localhost/x',
      'http://[::1]/x',
      'http://localhost./admin',
      `http://${own}:8080/admin`,
      'http://0x7f.1/x',
    ]) {
      const res = await who.post('/api/v1/media/videos/import', { url });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { detail: string }).detail).toContain('non-public address');
    }
    expect(since(from)).toEqual([]);
  } finally {
    await strict.close();
  }
});

test('a redirect to a private, loopback or link-local address, or to a name that does not resolve, is refused before PeerTube is called', async () => {
  const from = pt.requests.length;
  // Only the first host was judged: PeerTube was handed the URL and followed the redirect itself.
  const refused: [string, string][] = [
    [
      '/to-metadata',
      'http://169.254.169.254/latest/meta-data/iam/security-credentials/, which points to a non-public address (169.254.169.254)',
    ],
    ['/to-private', 'http://10.0.0.5/internal.mp4, which points to a non-public address (10.0.0.5)'],
    ['/to-localhost', 'which points to a non-public address (localhost)'],
    [
      '/to-internal-name',
      'http://minio.internal.invalid:9000/bucket/x.mp4, whose host minio.internal.invalid does not resolve',
    ],
  ];
  for (const [path, detail] of refused) {
    const res = await c.post('/api/v1/media/videos/import', { url: `${media.baseUrl}${path}` });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      success: false,
      error: 'Video import refused',
      detail: expect.stringContaining(detail),
    });
  }
  expect(since(from)).toEqual([]);
});

test('a host that does not resolve from the API is refused; PeerTube is not asked to fetch it', async () => {
  const from = pt.requests.length;
  // Passed on to PeerTube, which may resolve it on its own network (an internal service name).
  const res = await c.post('/api/v1/media/videos/import', { url: 'http://peertube-db.internal.invalid/x.mp4' });
  expect(res.status).toBe(400);
  expect(await res.json()).toEqual({
    success: false,
    error: 'Video import refused',
    detail: expect.stringContaining('peertube-db.internal.invalid does not resolve'),
  });
  expect(since(from)).toEqual([]);
});

test('a URL that redirects to another allowed URL is imported with the final URL', async () => {
  const creds = await api.newClient('redirects');
  const who = caller(api, bearer(creds));
  const video = await importVideo(who, { url: `${media.baseUrl}/old/talk.mp4`, title: 'Moved talk' });
  const imported = pt.requests.filter((r) => r.path === '/api/v1/videos/imports').pop();
  expect(imported?.fields?.targetUrl).toBe(`${media.baseUrl}/talks/talk.mp4`);
  const rows = await api.deps.db('media_videos').where({ client_id: creds.client_id });
  expect(rows).toEqual([
    expect.objectContaining({ video_id: String(video.video_id), target_url: `${media.baseUrl}/talks/talk.mp4` }),
  ]);
});

test('a PeerTube slower than PEERTUBE_TIMEOUT_MS: 503 saying so, no record of an import', async () => {
  const slow = await startTestApi({ ...peertubeEnv(pt), PEERTUBE_TIMEOUT_MS: '1000' });
  try {
    const creds = await slow.newClient();
    const who = caller(slow, bearer(creds));
    pt.setDelay(1500);
    const res = await who.post('/api/v1/media/videos/import', { url: `${media.baseUrl}/slow.mp4` });
    expect(res.status).toBe(503);
    expect(((await res.json()) as { detail: string }).detail).toBe(
      'PeerTube did not answer within 1000 ms (PEERTUBE_TIMEOUT_MS)',
    );
    const rows = await slow.deps.db('media_videos').where({ client_id: creds.client_id });
    expect(rows).toEqual([]);
  } finally {
    pt.setDelay(0);
    await slow.close();
  }
});

test('not configured: 503 naming the missing settings', async () => {
  const bare = await startTestApi({ RATE_LIMIT_ENABLED: 'false', PEERTUBE_BASE_URL: pt.baseUrl });
  try {
    const who = caller(bare, bearer(await bare.newClient()));
    const res = await who.post('/api/v1/media/videos/import', { url: 'https://media.example.com/x.mp4' });
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({
      success: false,
      error: 'Video import not configured',
      detail: 'video import is not configured: set PEERTUBE_USERNAME, PEERTUBE_PASSWORD, PEERTUBE_CHANNEL_ID',
    });
  } finally {
    await bare.close();
  }
});
