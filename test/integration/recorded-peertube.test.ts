import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { PeerTubeClient, videoStateOf } from '../../lib/peertube';
import { listenLocal } from '../stand-ins/listen';
import { describeRecordedGithub, recordedGithub, type RecordedGithubName } from '../support/recorded-github';

/**
 * PeerTube's GET /api/v1/videos/{id} answers recorded from framatube.org (PeerTube 7, July 2025)
 * by NewPipeExtractor's mock downloader (test/fixtures/recorded/SOURCES.md, "PeerTube"), replayed
 * over HTTP through the real client. The OAuth client and token answers before them are not
 * recorded anywhere found: they are written here in PeerTube's documented shape. Not committed:
 * laid out from a git copy of TeamNewPipe/NewPipeExtractor by test/support/recorded-github.ts;
 * skipped without them.
 */

type File = RecordedGithubName<'peertube'>;
const recorded = (file: File) => recordedGithub('peertube', file).toString('utf8');

let server: { baseUrl: string; close: () => Promise<void> };
let client: PeerTubeClient;
/** Recorded video bodies by the path they answer; the requests received. */
const videos = new Map<string, string>();
const requests: { method: string; path: string; authorization?: string }[] = [];

beforeAll(async () => {
  const s = createServer((req, res) => {
    const p = new URL(req.url ?? '/', 'http://replay').pathname;
    requests.push({ method: req.method ?? 'GET', path: p, authorization: req.headers.authorization });
    req.resume();
    req.on('end', () => {
      const json = (status: number, body: string) =>
        res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(body);
      if (p === '/api/v1/oauth-clients/local')
        return json(200, JSON.stringify({ client_id: 'replay-client', client_secret: 'replay-secret' }));
      if (p === '/api/v1/users/token') {
        return json(
          200,
          JSON.stringify({
            token_type: 'Bearer',
            access_token: 'replay-access',
            refresh_token: 'replay-refresh',
            expires_in: 14399,
            refresh_token_expires_in: 1209599,
          }),
        );
      }
      const video = videos.get(p);
      json(video ? 200 : 404, video ?? JSON.stringify({ title: 'Not Found', detail: 'Video not found', status: 404 }));
    });
  });
  server = await listenLocal(s);
  client = new PeerTubeClient({
    baseUrl: server.baseUrl,
    username: 'importer',
    password: 'replay',
    channelId: 7,
    timeoutMs: 5000,
  });
  videos.set('/api/v1/videos/1717', recorded('video-framatube-what-is-peertube.json'));
  videos.set('/api/v1/videos/1007', recorded('video-framatube-remote-no-description.json'));
});

afterAll(async () => {
  await server?.close();
});

beforeEach(() => {
  requests.length = 0;
});

describeRecordedGithub('peertube')('PeerTube client on recorded answers', () => {
  test('the recordings are the files SOURCES.md names', () => {
    const sha = (f: File) => createHash('sha256').update(recordedGithub('peertube', f)).digest('hex');
    expect(sha('video-framatube-what-is-peertube.json')).toBe(
      '2fc9c67d8625c565dcd38bc37734e06c3c93eab33282713259fbdef6d888bd3f',
    );
    expect(sha('video-framatube-remote-no-description.json')).toBe(
      'dbc8bbf0f57ef2bbca886e5311ed8716ee37aaad9201378207196f61f0c3b926',
    );
  });

  test('a published video: its title, description, channel and state, and the short watch and embed links', async () => {
    const video = await client.getVideo(1717, client.deadline());
    expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /api/v1/oauth-clients/local',
      'POST /api/v1/users/token',
      'GET /api/v1/videos/1717',
    ]);
    expect(requests[2]?.authorization).toBe('Bearer replay-access');

    expect(video).toMatchObject({
      id: 1717,
      uuid: '9c9de5e8-0a1e-484a-b099-e80766180a6d',
      shortUUID: 'kkGMgK9ZtnKfYAgnEtQxbv',
      name: 'What is PeerTube?',
      privacy: { id: 1, label: 'Public' },
      state: { id: 1, label: 'Published' },
      channel: { id: 2215, name: 'joinpeertube', displayName: 'A propos de PeerTube' },
    });
    // The description is PeerTube's Markdown as written, with its CRLF line ends.
    expect(video.description).toMatch(/^\*\*\[Want to help to translate this video\?\]\(https:\/\/weblate/);
    expect(video.description).toContain('\r\n*Directed by* Aryeom\r\n');
    expect(videoStateOf(video.state)).toBe('published');
    expect(client.watchUrl(video)).toBe(`${server.baseUrl}/w/kkGMgK9ZtnKfYAgnEtQxbv`);
    // PeerTube 7's embedPath names the short UUID.
    expect(video.embedPath).toBe('/videos/embed/kkGMgK9ZtnKfYAgnEtQxbv');
    expect(client.embedUrl(video)).toBe(`${server.baseUrl}/videos/embed/kkGMgK9ZtnKfYAgnEtQxbv`);
  });

  test('a video federated from another instance, with a null description, reads the same way', async () => {
    const video = await client.getVideo(1007, client.deadline());
    expect(requests.at(-1)).toEqual({
      method: 'GET',
      path: '/api/v1/videos/1007',
      authorization: 'Bearer replay-access',
    });
    expect(video).toMatchObject({
      id: 1007,
      name: 'Tous rebelles - Arte - 2012 08 11 jz ACTA contestation anonymous occupy',
      description: null,
      url: 'https://video.lqdn.fr/videos/watch/d5907aad-2252-4207-89ec-a4b687b9337d',
      channel: { id: 1126, name: 'lqdn_channel', displayName: 'La Quadrature du Net' },
      state: { id: 1, label: 'Published' },
    });
    expect(client.watchUrl(video)).toBe(`${server.baseUrl}/w/snySgRJE4ydm9YCNBurS2T`);
    expect(client.embedUrl(video)).toBe(`${server.baseUrl}/videos/embed/snySgRJE4ydm9YCNBurS2T`);
  });
});
