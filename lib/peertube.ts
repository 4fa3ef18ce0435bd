import type { Config } from './config';

/**
 * PeerTube's REST API for the media video import (spec §4.8, §2.14; ../shared/providers.md
 * "Video hosting"): the instance's local OAuth client (GET /api/v1/oauth-clients/local), a user
 * token by password grant and its refresh (POST /api/v1/users/token), an import by URL
 * (POST /api/v1/videos/imports, multipart) and the video's state (GET /api/v1/videos/{id}).
 *
 * One client per process: it keeps the OAuth client and the user token, refreshes the token
 * shortly before it expires or when PeerTube answers 401 (expired or revoked), and falls back to
 * the password grant when the refresh token is refused too. Errors are RFC 7807 problem+json.
 */

export interface PeerTubeSettings {
  baseUrl: string;
  username: string;
  password: string;
  channelId: number;
  timeoutMs: number;
}

export type PeerTubeErrorKind =
  'not_configured' | 'credentials' | 'refused' | 'not_found' | 'rate_limited' | 'unavailable' | 'timeout';

export class PeerTubeError extends Error {
  constructor(
    readonly kind: PeerTubeErrorKind,
    message: string,
    readonly status?: number,
    /** Seconds, from Retry-After on a 429, else from X-RateLimit-Reset. */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

export interface PeerTubeState {
  id: number;
  label: string;
}

export interface PeerTubeVideo {
  id: number;
  uuid: string;
  shortUUID?: string;
  url?: string;
  name: string;
  description?: string | null;
  embedPath?: string;
  privacy: PeerTubeState;
  state: PeerTubeState;
  channel?: { id: number; name: string; displayName?: string; url?: string };
}

export interface PeerTubeImport {
  id: number;
  targetUrl: string;
  state: PeerTubeState;
  video: { id: number; uuid: string; shortUUID?: string; name: string; state?: PeerTubeState };
}

export interface ImportInput {
  targetUrl: string;
  /** Omitted: PeerTube takes the source's title. */
  name?: string;
  description?: string;
  privacy: 1 | 2 | 3;
}

const CONFIG_NAMES = ['PEERTUBE_BASE_URL', 'PEERTUBE_USERNAME', 'PEERTUBE_PASSWORD', 'PEERTUBE_CHANNEL_ID'] as const;

/** The settings, or the names of those missing. */
export function peerTubeSettings(config: Config): PeerTubeSettings | { missing: string[] } {
  const missing = CONFIG_NAMES.filter((n) => config[n] === undefined);
  if (missing.length > 0) return { missing };
  return {
    baseUrl: (config.PEERTUBE_BASE_URL as string).replace(/\/+$/, ''),
    username: config.PEERTUBE_USERNAME as string,
    password: config.PEERTUBE_PASSWORD as string,
    channelId: config.PEERTUBE_CHANNEL_ID as number,
    timeoutMs: config.PEERTUBE_TIMEOUT_MS,
  };
}

interface Token {
  access: string;
  refresh: string | null;
  /** ms since epoch */
  expiresAt: number;
}

/** Refresh this long before PeerTube's expiry, so a token never runs out in flight. */
const EXPIRY_MARGIN_MS = 60_000;

interface Problem {
  detail?: string;
  error?: string;
  title?: string;
  code?: string;
}

export class PeerTubeClient {
  private oauthClient: { client_id: string; client_secret: string } | undefined;
  private token: Token | undefined;
  /** One token request at a time; concurrent callers share it. */
  private pendingToken: Promise<Token> | undefined;

  constructor(
    readonly settings: PeerTubeSettings,
    private readonly now: () => number = Date.now,
  ) {}

  /** Address of the video's page: `{base}/w/{shortUUID}` (PeerTube's short watch link), else by uuid. */
  watchUrl(v: { uuid: string; shortUUID?: string | null }): string {
    return `${this.settings.baseUrl}/w/${v.shortUUID ?? v.uuid}`;
  }

  embedUrl(v: { uuid: string; embedPath?: string }): string {
    return `${this.settings.baseUrl}${v.embedPath ?? `/videos/embed/${v.uuid}`}`;
  }

  /** A deadline for one API request's calls together (PEERTUBE_TIMEOUT_MS). */
  deadline(): AbortSignal {
    return AbortSignal.timeout(this.settings.timeoutMs);
  }

  /** Starts an import into the configured channel. Not idempotent on PeerTube's side: each call imports again. */
  async importVideo(input: ImportInput, signal: AbortSignal): Promise<PeerTubeImport> {
    const form = new FormData();
    form.set('channelId', String(this.settings.channelId));
    form.set('targetUrl', input.targetUrl);
    form.set('privacy', String(input.privacy));
    if (input.name !== undefined) form.set('name', input.name);
    if (input.description !== undefined) form.set('description', input.description);
    const res = await this.authed('POST', '/api/v1/videos/imports', () => form, signal);
    return (await res.json()) as PeerTubeImport;
  }

  async getVideo(id: number, signal: AbortSignal): Promise<PeerTubeVideo> {
    const res = await this.authed('GET', `/api/v1/videos/${id}`, () => undefined, signal);
    return (await res.json()) as PeerTubeVideo;
  }

  /** A request with the user token; a 401 (expired, revoked) gets a new token and one more try. */
  private async authed(
    method: string,
    path: string,
    body: () => FormData | undefined,
    signal: AbortSignal,
  ): Promise<Response> {
    for (let attempt = 0; ; attempt += 1) {
      const token = await this.accessToken(signal);
      const res = await this.send(
        path,
        { method, headers: { authorization: `Bearer ${token.access}` }, body: body() },
        signal,
      );
      if (res.status === 401 && attempt === 0) {
        await res.body?.cancel();
        // Only drop the token if no one replaced it meanwhile.
        if (this.token === token) this.token = { ...token, expiresAt: 0 };
        continue;
      }
      if (res.ok) return res;
      throw await this.failure(res, path);
    }
  }

  private async accessToken(signal: AbortSignal): Promise<Token> {
    if (this.token && this.token.expiresAt - EXPIRY_MARGIN_MS > this.now()) return this.token;
    this.pendingToken ??= this.newToken(signal).finally(() => {
      this.pendingToken = undefined;
    });
    return this.pendingToken;
  }

  /** Refresh grant when there is a refresh token; the password grant when there is none or it is refused. */
  private async newToken(signal: AbortSignal): Promise<Token> {
    const refresh = this.token?.refresh;
    if (refresh) {
      const refreshed = await this.tokenRequest({ grant_type: 'refresh_token', refresh_token: refresh }, signal, false);
      if (refreshed) return refreshed;
    }
    const token = await this.tokenRequest(
      { grant_type: 'password', username: this.settings.username, password: this.settings.password },
      signal,
      true,
    );
    return token as Token;
  }

  private async tokenRequest(
    grant: Record<string, string>,
    signal: AbortSignal,
    final: boolean,
  ): Promise<Token | undefined> {
    for (let attempt = 0; ; attempt += 1) {
      const client = await this.localClient(signal);
      const res = await this.send(
        '/api/v1/users/token',
        { method: 'POST', body: new URLSearchParams({ ...client, ...grant }) },
        signal,
      );
      if (res.ok) {
        const t = (await res.json()) as { access_token: string; refresh_token?: string; expires_in?: number };
        this.token = {
          access: t.access_token,
          refresh: t.refresh_token ?? null,
          expiresAt: this.now() + (t.expires_in ?? 3600) * 1000,
        };
        return this.token;
      }
      const problem = await problemOf(res);
      // The instance's OAuth client changed (reinstalled instance): fetch it again, once.
      if (problem.code === 'invalid_client' && attempt === 0) {
        this.oauthClient = undefined;
        continue;
      }
      if (res.status === 400 && !final) return undefined; // refused refresh token: the password grant follows
      if (res.status === 400 || res.status === 401) {
        throw new PeerTubeError(
          'credentials',
          `PeerTube refused the configured account (PEERTUBE_USERNAME / PEERTUBE_PASSWORD): ${messageOf(problem, res)}`,
          res.status,
        );
      }
      throw this.upstream(res, problem, '/api/v1/users/token');
    }
  }

  private async localClient(signal: AbortSignal): Promise<{ client_id: string; client_secret: string }> {
    if (this.oauthClient) return this.oauthClient;
    const res = await this.send('/api/v1/oauth-clients/local', { method: 'GET' }, signal);
    if (!res.ok) {
      const problem = await problemOf(res);
      if (res.status === 403) {
        throw new PeerTubeError(
          'unavailable',
          `PeerTube did not hand out its OAuth client (403: ${messageOf(problem, res)}); PEERTUBE_BASE_URL must be the instance's own public address`,
          403,
        );
      }
      throw this.upstream(res, problem, '/api/v1/oauth-clients/local');
    }
    const c = (await res.json()) as { client_id: string; client_secret: string };
    this.oauthClient = { client_id: c.client_id, client_secret: c.client_secret };
    return this.oauthClient;
  }

  private async send(path: string, init: RequestInit, signal: AbortSignal): Promise<Response> {
    try {
      return await fetch(`${this.settings.baseUrl}${path}`, {
        ...init,
        headers: { accept: 'application/json', ...init.headers },
        signal,
        redirect: 'error',
      });
    } catch (err) {
      if (signal.aborted)
        throw new PeerTubeError(
          'timeout',
          `PeerTube did not answer within ${this.settings.timeoutMs} ms (PEERTUBE_TIMEOUT_MS)`,
        );
      throw new PeerTubeError(
        'unavailable',
        `PeerTube at ${this.settings.baseUrl} could not be reached: ${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message}`,
      );
    }
  }

  private async failure(res: Response, path: string): Promise<PeerTubeError> {
    const problem = await problemOf(res);
    if (res.status === 404) return new PeerTubeError('not_found', messageOf(problem, res), 404);
    if (res.status === 400 || res.status === 403 || res.status === 409 || res.status === 413 || res.status === 422) {
      return new PeerTubeError('refused', messageOf(problem, res), res.status);
    }
    return this.upstream(res, problem, path);
  }

  private upstream(res: Response, problem: Problem, path: string): PeerTubeError {
    if (res.status === 429) {
      // Retry-After in seconds; else PeerTube's X-RateLimit-Reset, a Unix time (as its answers carry it).
      const reset = Number(res.headers.get('x-ratelimit-reset') ?? NaN);
      const retry = Number(
        res.headers.get('retry-after') ?? (Number.isFinite(reset) ? reset - Date.now() / 1000 : NaN),
      );
      const after = Number.isFinite(retry) && retry >= 0 ? Math.ceil(retry) : 10;
      return new PeerTubeError(
        'rate_limited',
        `PeerTube is rate limiting this service; retry after ${after} s`,
        429,
        after,
      );
    }
    return new PeerTubeError(
      'unavailable',
      `PeerTube answered ${res.status} to ${path}: ${messageOf(problem, res)}`,
      res.status,
    );
  }
}

async function problemOf(res: Response): Promise<Problem> {
  try {
    const body = (await res.json()) as unknown;
    return typeof body === 'object' && body !== null ? (body as Problem) : {};
  } catch {
    return {};
  }
}

const messageOf = (p: Problem, res: Response) => p.detail ?? p.error ?? p.title ?? `HTTP ${res.status}`;

/** PeerTube's video state -> the spec's word (§2.14: `importing` after a start). */
export function videoStateOf(state: PeerTubeState): 'importing' | 'processing' | 'published' | 'failed' {
  switch (state.id) {
    case 1:
      return 'published';
    case 3:
      return 'importing';
    // 7 transcoding failed, 8/11 moving failed, 12 import failed (newer instances)
    case 7:
    case 8:
    case 11:
    case 12:
      return 'failed';
    default:
      // 2 to transcode, 6/10 moving storage, 9 to edit, 4/5 live
      return 'processing';
  }
}
