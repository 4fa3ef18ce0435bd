import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenLocal } from './listen';

/**
 * A stand-in for a PeerTube instance's REST API on 127.0.0.1, in its wire formats
 * (../../../shared/providers.md "Video hosting"): GET /api/v1/oauth-clients/local (403 unless the
 * Host header is the instance's), POST /api/v1/users/token (form; password and refresh_token
 * grants; invalid_client / invalid_grant errors), POST /api/v1/videos/imports (multipart;
 * Bearer; 401 invalid_token for unknown or expired tokens; 400 with invalid-params; 409 when HTTP
 * import is disabled) and GET /api/v1/videos/{id|uuid|shortUUID}. Errors are RFC 7807
 * problem+json as PeerTube writes them; past the rate limit (50 requests per 10 s by default)
 * it answers 429 with Retry-After. A test fixture only.
 */

export interface StandInVideo {
  id: number;
  uuid: string;
  shortUUID: string;
  name: string;
  description: string | null;
  privacy: { id: number; label: string };
  state: { id: number; label: string };
  ownerToken: string;
}

export interface PeerTubeStandIn {
  baseUrl: string;
  username: string;
  password: string;
  channelId: number;
  /** Titles PeerTube would read from the source page, by target URL. */
  sources: Map<string, string>;
  videos: Map<number, StandInVideo>;
  /** Requests received: method, path, grant type of token requests, the multipart fields of imports. */
  requests: { method: string; path: string; grant?: string; fields?: Record<string, string>; auth?: string }[];
  /** Every access token issued so far stops working (as after expires_in). */
  expireAccessTokens(): void;
  /** Every refresh token stops working too. */
  expireRefreshTokens(): void;
  setPassword(password: string): void;
  setState(videoId: number, state: { id: number; label: string }): void;
  setImportsEnabled(enabled: boolean): void;
  /** Rate limit: `max` API requests per `windowMs` (PeerTube's default 50 per 10 s). */
  setRateLimit(max: number, windowMs?: number): void;
  /** Delay every answer (deadline tests). */
  setDelay(ms: number): void;
  close(): Promise<void>;
}

const PRIVACY: Record<number, string> = { 1: 'Public', 2: 'Unlisted', 3: 'Private', 4: 'Internal' };
const STATES: Record<number, string> = { 1: 'Published', 2: 'To transcode', 3: 'To import' };

function problem(res: ServerResponse, status: number, detail: string, extra: Record<string, unknown> = {}): void {
  const title =
    { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 409: 'Conflict' }[status] ?? 'Error';
  const body = {
    type: `https://docs.joinpeertube.org/api-rest-reference.html#section/Errors/${extra.code ?? status}`,
    title,
    detail,
    status,
    ...extra,
    ...(extra.code ? { error: detail } : {}),
  };
  res.writeHead(status, { 'content-type': 'application/problem+json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

export async function startPeerTube(): Promise<PeerTubeStandIn> {
  const client = { client_id: randomBytes(16).toString('hex'), client_secret: randomBytes(16).toString('hex') };
  const access = new Set<string>();
  const refresh = new Set<string>();
  let password = 'correct horse battery staple';
  let importsEnabled = true;
  let limit = { max: 50, windowMs: 10_000 };
  let window = { start: Date.now(), count: 0 };
  let nextVideoId = 100;
  let nextImportId = 40;
  let host = '';
  let delayMs = 0;

  const state: Omit<PeerTubeStandIn, 'baseUrl' | 'close'> = {
    username: 'importer',
    password,
    channelId: 7,
    sources: new Map(),
    videos: new Map(),
    requests: [],
    expireAccessTokens: () => access.clear(),
    expireRefreshTokens: () => refresh.clear(),
    setPassword: (p) => {
      password = p;
    },
    setState: (id, s) => {
      const v = state.videos.get(id);
      if (v) v.state = s;
    },
    setImportsEnabled: (e) => {
      importsEnabled = e;
    },
    setDelay: (ms) => {
      delayMs = ms;
    },
    setRateLimit: (max, windowMs = 10_000) => {
      limit = { max, windowMs };
      window = { start: Date.now(), count: 0 };
    },
  };

  const videoJson = (v: StandInVideo) => ({
    id: v.id,
    uuid: v.uuid,
    shortUUID: v.shortUUID,
    url: `${baseUrl}/videos/watch/${v.uuid}`,
    name: v.name,
    description: v.description,
    truncatedDescription: v.description?.slice(0, 250) ?? null,
    embedPath: `/videos/embed/${v.uuid}`,
    privacy: v.privacy,
    state: v.state,
    isLive: false,
    duration: 0,
    channel: {
      id: state.channelId,
      name: 'imports',
      displayName: 'Imported videos',
      url: `${baseUrl}/video-channels/imports`,
      host: new URL(baseUrl).host,
    },
  });

  const bearer = (req: IncomingMessage) => /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', baseUrl);
      const entry: PeerTubeStandIn['requests'][number] = {
        method: req.method ?? 'GET',
        path: url.pathname,
        auth: bearer(req),
      };
      state.requests.push(entry);
      if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
      if (Date.now() - window.start > limit.windowMs) window = { start: Date.now(), count: 0 };
      window.count += 1;
      if (window.count > limit.max) {
        const retry = Math.ceil((window.start + limit.windowMs - Date.now()) / 1000);
        // PeerTube's headers are the X-RateLimit-* ones, the reset a Unix time (its recorded answers).
        res.writeHead(429, {
          'content-type': 'text/html; charset=utf-8',
          'retry-after': String(retry),
          'x-ratelimit-limit': String(limit.max),
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset': String(Math.ceil((window.start + limit.windowMs) / 1000)),
        });
        res.end('Too many requests, please try again later.');
        return;
      }

      if (req.method === 'GET' && url.pathname === '/api/v1/oauth-clients/local') {
        if (req.headers.host !== host)
          return problem(res, 403, `Getting client tokens for host ${req.headers.host} is forbidden`);
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify(client));
      }

      if (req.method === 'POST' && url.pathname === '/api/v1/users/token') {
        const form = new URLSearchParams((await bodyOf(req)).toString('utf8'));
        entry.grant = form.get('grant_type') ?? undefined;
        if (form.get('client_id') !== client.client_id || form.get('client_secret') !== client.client_secret) {
          return problem(res, 400, 'Invalid client: client is invalid', { code: 'invalid_client' });
        }
        if (entry.grant === 'password') {
          if (form.get('username') !== state.username || form.get('password') !== password) {
            return problem(res, 400, 'Invalid grant: user credentials are invalid', { code: 'invalid_grant' });
          }
        } else if (entry.grant === 'refresh_token') {
          const token = form.get('refresh_token') ?? '';
          if (!refresh.has(token))
            return problem(res, 400, 'Invalid grant: refresh token is invalid', { code: 'invalid_grant' });
          refresh.delete(token);
        } else {
          return problem(res, 400, 'Unsupported grant type: grant_type is invalid', { code: 'unsupported_grant_type' });
        }
        const token = { access_token: randomBytes(20).toString('hex'), refresh_token: randomBytes(20).toString('hex') };
        access.add(token.access_token);
        refresh.add(token.refresh_token);
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(
          JSON.stringify({ token_type: 'Bearer', ...token, expires_in: 14399, refresh_token_expires_in: 1209599 }),
        );
      }

      const needsToken = (): string | undefined => {
        const token = bearer(req);
        if (!token || !access.has(token)) {
          problem(res, 401, 'Invalid token: access token has expired', { code: 'invalid_token' });
          return undefined;
        }
        return token;
      };

      if (req.method === 'POST' && url.pathname === '/api/v1/videos/imports') {
        const token = needsToken();
        if (!token) {
          await bodyOf(req);
          return;
        }
        const body = await bodyOf(req);
        let fields: Record<string, string>;
        try {
          const form = await new Response(new Uint8Array(body), {
            headers: { 'content-type': req.headers['content-type'] ?? '' },
          }).formData();
          fields = Object.fromEntries([...form.entries()].map(([k, v]) => [k, String(v)]));
        } catch {
          return problem(res, 400, 'Incorrect request parameters: body must be multipart/form-data');
        }
        entry.fields = fields;
        const invalid: Record<string, unknown> = {};
        let target: URL | undefined;
        try {
          target = new URL(fields.targetUrl ?? '');
        } catch {
          target = undefined;
        }
        if (!target || !/^https?:$/.test(target.protocol))
          invalid.targetUrl = {
            value: fields.targetUrl,
            msg: 'Should have a valid video import target URL',
            path: 'targetUrl',
            location: 'body',
          };
        if (!/^\d+$/.test(fields.channelId ?? ''))
          invalid.channelId = {
            value: fields.channelId,
            msg: 'Should have correct video channel id',
            path: 'channelId',
            location: 'body',
          };
        if (fields.privacy !== undefined && !PRIVACY[Number(fields.privacy)])
          invalid.privacy = {
            value: fields.privacy,
            msg: 'Should have correct video privacy',
            path: 'privacy',
            location: 'body',
          };
        if (fields.name !== undefined && (fields.name.length < 3 || fields.name.length > 120))
          invalid.name = { value: fields.name, msg: 'Should have a valid name', path: 'name', location: 'body' };
        if (Object.keys(invalid).length > 0) {
          return problem(res, 400, `Incorrect request parameters: ${Object.keys(invalid).join(', ')}`, {
            instance: url.pathname,
            'invalid-params': invalid,
          });
        }
        if (!importsEnabled) return problem(res, 409, 'HTTP import is not enabled on this instance.');
        if (Number(fields.channelId) !== state.channelId)
          return problem(res, 403, 'Cannot use video channel of another user');
        const id = nextVideoId++;
        const uuid = randomUUID();
        const video: StandInVideo = {
          id,
          uuid,
          shortUUID: Buffer.from(uuid.replace(/-/g, ''), 'hex').toString('base64url').slice(0, 22),
          // Without a name PeerTube takes the source's title (youtube-dl's metadata).
          name: fields.name ?? state.sources.get(fields.targetUrl as string) ?? 'Untitled source',
          description: fields.description ?? null,
          privacy: { id: Number(fields.privacy ?? 1), label: PRIVACY[Number(fields.privacy ?? 1)] as string },
          state: { id: 3, label: STATES[3] as string },
          ownerToken: token,
        };
        state.videos.set(id, video);
        const now = new Date().toISOString();
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(
          JSON.stringify({
            id: nextImportId++,
            targetUrl: fields.targetUrl,
            magnetUri: null,
            torrentName: null,
            state: { id: 1, label: 'Pending' },
            error: null,
            createdAt: now,
            updatedAt: now,
            video: { ...videoJson(video), channel: undefined },
          }),
        );
      }

      const m = /^\/api\/v1\/videos\/([^/]+)$/.exec(url.pathname);
      if (req.method === 'GET' && m) {
        const key = decodeURIComponent(m[1] as string);
        const video = [...state.videos.values()].find(
          (v) => String(v.id) === key || v.uuid === key || v.shortUUID === key,
        );
        if (!video) return problem(res, 404, 'Video not found');
        if (video.privacy.id === 3) {
          const token = bearer(req);
          if (!token) return problem(res, 401, 'Cannot get this private video without authentication');
          if (!access.has(token))
            return problem(res, 401, 'Invalid token: access token has expired', { code: 'invalid_token' });
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify(videoJson(video)));
      }

      problem(res, 404, `Cannot ${req.method} ${url.pathname}`);
    })().catch((err: unknown) => {
      res.writeHead(500);
      res.end(String(err));
    });
  });

  const { baseUrl, close } = await listenLocal(server);
  host = new URL(baseUrl).host;
  return Object.assign(state, { baseUrl, close }) as PeerTubeStandIn;
}
