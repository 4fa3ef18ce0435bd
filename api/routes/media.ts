import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import rangeParser from 'range-parser';
import type { MediaRepository } from '../../db/repositories/media';
import { AppError, notFound } from '../../lib/errors';
import { MEDIA_PROXY_PATH } from '../../lib/idap';
import { AllowList, OutboundError, type OutboundClient } from '../../lib/outbound';
import { PeerTubeError, videoStateOf, type PeerTubeClient, type PeerTubeVideo } from '../../lib/peertube';
import type { Storage } from '../../lib/storage';
import { clientIdOf, type AppContext } from '../context';
import { attachmentDisposition, INVALID_IMAGE, type MediaUploads, type UploadKind } from '../media-upload';
import type { ApiRouter } from '../routing';
import {
  mediaIdParams,
  uploadBodyDoc,
  uploadResponse,
  videoIdParams,
  videoImportBody,
  videoResponse,
} from '../schemas/media';

export const MEDIA_UPLOAD_PATHS = ['/api/v1/media/images/upload', '/api/v1/media/files/upload'];

export interface MediaRouteDeps {
  uploads: MediaUploads;
  repo: MediaRepository;
  storage: Storage;
  maxUploadBytes: number;
  /** The PeerTube client, or the names of the missing PEERTUBE_* settings. */
  peertube: PeerTubeClient | { missing: string[] };
  /** USER_URL_ALLOW_HOSTS: import URLs (and their redirects) naming private addresses are refused unless listed. */
  allowHosts: string[];
  /** The guarded client an import URL's redirects are followed with. */
  http: OutboundClient;
}

const RESOURCE_NOT_FOUND = 'resource_not_found';

/** The redirect check of an import URL, all hops together: the URL has to answer a HEAD by then. */
const URL_CHECK_TIMEOUT_MS = 5000;
/** Redirects followed when checking an import URL, as the outbound client's default. */
const URL_CHECK_MAX_REDIRECTS = 10;

/** Stored files never change under their id: cached for a year, privately (the proxy needs a credential). */
const CACHE_CONTROL = 'private, max-age=31536000, immutable';
/** An SVG opened directly still runs nothing and loads nothing (it is sanitised too). */
const SVG_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox";

export function mediaRoutes(api: ApiRouter, deps: MediaRouteDeps): void {
  const limitMb = Math.round((deps.maxUploadBytes / (1024 * 1024)) * 10) / 10;
  const upload = (kind: UploadKind) => async (ctx: AppContext) => {
    ctx.body = await deps.uploads.upload(ctx.req, clientIdOf(ctx), kind);
    ctx.status = 201;
  };

  api.add({
    method: 'post',
    path: MEDIA_UPLOAD_PATHS[0] as string,
    operationId: 'uploadImage',
    summary: 'Upload an image (format from its content; a wrong extension is corrected)',
    description:
      `multipart/form-data: file (required), folder (optional). Formats: JPEG, PNG, WebP, GIF, BMP, ICO, TIFF, AVIF, HEIC (recognised from the leading bytes) and SVG (parsed; scripts, event handlers and external references are removed before it is stored). ` +
      `A filename whose extension does not match the content gets the right one (format_corrected). Stored in the client's bucket under media/{folder}/; a name already used there gets a suffix. ` +
      `At most ${limitMb} MB (MEDIA_MAX_UPLOAD_BYTES), streamed; larger -> 413 and nothing is stored. The file is the IDAP media resource idap://media/{file_id}.`,
    tags: ['media'],
    security: 'client',
    errorShape: 'success',
    bodyDoc: uploadBodyDoc,
    bodyContentType: 'multipart/form-data',
    responses: {
      201: { description: 'Stored', schema: uploadResponse },
      400: {
        description: `error '${INVALID_IMAGE}': the content is not one of the ten formats (or not a well-formed SVG, or one nested deeper than 256 levels or with more than 20,000 elements); error 'Invalid folder': folder tries to leave its folder`,
      },
      413: { description: 'Larger than MEDIA_MAX_UPLOAD_BYTES (an SVG: MEDIA_MAX_SVG_BYTES); nothing stored' },
      415: { description: 'Not multipart/form-data' },
    },
    handler: upload('image'),
  });

  api.add({
    method: 'post',
    path: MEDIA_UPLOAD_PATHS[1] as string,
    operationId: 'uploadFile',
    summary: 'Upload any file (no format check, no name correction)',
    description:
      `multipart/form-data: file (required), folder (optional). Stored as sent (the name normalised for a safe key, the part's content type kept) and served as an attachment. ` +
      `Same size limit as images (${limitMb} MB). The file is the IDAP media resource idap://media/{file_id}.`,
    tags: ['media'],
    security: 'client',
    errorShape: 'success',
    bodyDoc: uploadBodyDoc,
    bodyContentType: 'multipart/form-data',
    responses: {
      201: { description: 'Stored', schema: uploadResponse },
      400: { description: "error 'Invalid folder'" },
      413: { description: 'Larger than MEDIA_MAX_UPLOAD_BYTES; nothing stored' },
      415: { description: 'Not multipart/form-data' },
    },
    handler: upload('file'),
  });

  api.add({
    method: 'get',
    path: MEDIA_PROXY_PATH,
    operationId: 'idapMedia',
    summary: 'Stream a media resource (an upload) from storage',
    description:
      'The bytes of idap://media/{media_id}, with its content type, ETag (sha256 of the content), Cache-Control and Range support (one range: 206; unsatisfiable: 416). ' +
      "If-None-Match with the ETag -> 304. Another client's media id -> 404 resource_not_found.",
    tags: ['idap', 'media'],
    security: 'client',
    params: mediaIdParams,
    responses: {
      200: { description: 'The whole object', contentType: '*/*' },
      206: { description: 'The requested range', contentType: '*/*' },
      304: { description: 'Not modified (If-None-Match)' },
      400: { description: 'stats / resolve: media types have none' },
      404: { description: `detail ${RESOURCE_NOT_FOUND}` },
      416: { description: 'Range not satisfiable' },
    },
    handler: async (ctx, { params }) => {
      // This route is matched before the IDAP ones: /idap/media/stats and /resolve answer as those do for media types.
      if (params.media_id === 'stats' || params.media_id === 'resolve') {
        throw new AppError(
          400,
          `media are media resources: fetch each one through the media proxy GET ${MEDIA_PROXY_PATH}`,
          'bad_request',
        );
      }
      const file = await deps.repo.getFile(clientIdOf(ctx), params.media_id);
      if (!file) throw notFound(RESOURCE_NOT_FOUND);
      const size = Number(file.size);
      const etag = `"${file.sha256}"`;
      ctx.set('ETag', etag);
      ctx.set('Cache-Control', CACHE_CONTROL);
      ctx.set('Accept-Ranges', 'bytes');
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.set('Last-Modified', new Date(file.created_at).toUTCString());
      if (file.content_type === 'image/svg+xml') ctx.set('Content-Security-Policy', SVG_CSP);
      if (file.kind === 'file') ctx.set('Content-Disposition', attachmentDisposition(file.corrected_filename));
      ctx.status = 200;
      if (ctx.fresh) {
        ctx.status = 304;
        return;
      }
      let offset = 0;
      let length = size;
      const range = ctx.get('range');
      // If-Range with another validator: the whole object (RFC 9110 §13.1.5).
      const ifRange = ctx.get('if-range');
      if (range && size > 0 && (!ifRange || ifRange === etag)) {
        const ranges = rangeParser(size, range, { combine: true });
        if (ranges === -1) {
          throw new AppError(416, `range not satisfiable: the object has ${size} bytes`, 'range_not_satisfiable', {
            'Content-Range': `bytes */${size}`,
          });
        }
        // Several ranges would need multipart/byteranges; the whole object is a valid answer too.
        if (ranges !== -2 && ranges.type === 'bytes' && ranges.length === 1) {
          const [r] = ranges as { start: number; end: number }[];
          offset = (r as { start: number }).start;
          length = (r as { end: number }).end - offset + 1;
          ctx.status = 206;
          ctx.set('Content-Range', `bytes ${offset}-${offset + length - 1}/${size}`);
        }
      }
      ctx.type = file.content_type;
      ctx.length = length;
      ctx.body =
        length === 0
          ? ''
          : await deps.storage.stream(
              file.bucket,
              file.key,
              offset,
              offset === 0 && length === size ? undefined : length,
            );
    },
  });

  const peertube = (): PeerTubeClient => {
    if ('missing' in deps.peertube) {
      throw new AppError(
        503,
        `video import is not configured: set ${deps.peertube.missing.join(', ')}`,
        'Video import not configured',
      );
    }
    return deps.peertube;
  };
  const allow = new AllowList(deps.allowHosts);

  api.add({
    method: 'post',
    path: '/api/v1/media/videos/import',
    operationId: 'importVideo',
    summary: 'Import a video by URL into the PeerTube channel',
    description:
      'PeerTube fetches the URL itself (a video page it can import from, or a media file) into PEERTUBE_CHANNEL_ID; the answer comes once PeerTube has accepted the import, with state importing. ' +
      "First the URL's redirects are followed here (HEAD, each hop through the SSRF guard) and PeerTube is given the last URL: a host that does not resolve, or any hop naming a private, loopback or link-local address (unless USER_URL_ALLOW_HOSTS lists it), is refused. " +
      'Follow it with GET /api/v1/media/videos/{video_id}. PeerTube not configured -> 503 naming the missing settings.',
    tags: ['media'],
    security: 'client',
    errorShape: 'success',
    body: videoImportBody,
    responses: {
      201: { description: 'Import started (spec §2.14)', schema: videoResponse },
      400: {
        description:
          'PeerTube refused the import (its reason in detail); or the URL, or a redirect from it, names a private address or a host that does not resolve, or could not be checked (no answer within 5 s, refused, TLS error)',
      },
      503: {
        description:
          'PeerTube not configured, unreachable, too slow (PEERTUBE_TIMEOUT_MS), rate limiting (Retry-After) or refusing the configured account',
      },
    },
    handler: async (ctx, { body }) => {
      const client = peertube();
      const targetUrl = await finalTargetUrl(body.url, allow, deps.http);
      const signal = client.deadline();
      const started = await call(() =>
        client.importVideo(
          { targetUrl, name: body.title, description: body.description, privacy: body.privacy },
          signal,
        ),
      );
      // The import answer has no channel or description: the video itself says them.
      const video = await call(() => client.getVideo(started.video.id, signal)).catch((err: unknown) => {
        if (err instanceof AppError && err.status === 404) return undefined;
        throw err;
      });
      await deps.repo.insertVideo({
        client_id: clientIdOf(ctx),
        video_id: started.video.id,
        import_id: started.id,
        uuid: started.video.uuid,
        short_uuid: started.video.shortUUID ?? null,
        target_url: targetUrl,
        title: video?.name ?? started.video.name ?? body.title ?? null,
        description: video?.description ?? body.description ?? null,
        privacy: video?.privacy.id ?? body.privacy,
      });
      ctx.status = 201;
      // Just started: PeerTube has the video in "To import" whatever it reports a moment later.
      ctx.body = videoBody(client, video ?? started.video, {
        title: started.video.name ?? body.title ?? null,
        description: body.description ?? null,
        privacy: body.privacy,
        state: 'importing',
        state_label: started.video.state?.label ?? 'To import',
      });
    },
  });

  api.add({
    method: 'get',
    path: '/api/v1/media/videos/{video_id}',
    operationId: 'getVideo',
    summary: 'A video the client imported, with its current state from PeerTube',
    tags: ['media'],
    security: 'client',
    errorShape: 'success',
    params: videoIdParams,
    responses: {
      200: { description: 'The video (spec §2.14) and its state', schema: videoResponse },
      404: { description: 'Not a video this client imported, or deleted on PeerTube' },
      503: { description: 'PeerTube not configured or unavailable' },
    },
    handler: async (ctx, { params }) => {
      const row = await deps.repo.getVideo(clientIdOf(ctx), params.video_id);
      if (!row) throw new AppError(404, `video ${params.video_id} not found`, 'not_found');
      const client = peertube();
      const v: PeerTubeVideo = await call(() => client.getVideo(params.video_id, client.deadline()));
      ctx.body = videoBody(client, v, {
        title: row.title,
        description: row.description,
        privacy: v.privacy.id,
        state: videoStateOf(v.state),
        state_label: v.state.label,
      });
    },
  });
}

/**
 * The §2.14 video answer: what PeerTube says of the video, else what the client sent or we stored.
 * `v` is the video itself, or only the import's short form of it (no channel, description, privacy).
 */
function videoBody(
  client: PeerTubeClient,
  v: Pick<PeerTubeVideo, 'id' | 'uuid' | 'shortUUID' | 'name'> &
    Partial<Pick<PeerTubeVideo, 'description' | 'embedPath' | 'privacy' | 'channel'>>,
  known: { title: string | null; description: string | null; privacy: number; state: string; state_label: string },
) {
  return {
    success: true,
    video_id: v.id,
    title: v.name ?? known.title,
    description: v.description ?? known.description,
    watch_url: client.watchUrl(v),
    embed_url: client.embedUrl(v),
    channel_name: v.channel?.displayName ?? v.channel?.name ?? null,
    privacy: v.privacy?.id ?? known.privacy,
    state: known.state,
    state_label: known.state_label,
  };
}

/** PeerTube errors as the API's (media error shape). */
async function call<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (!(err instanceof PeerTubeError)) throw err;
    switch (err.kind) {
      case 'refused':
        throw new AppError(400, `PeerTube refused the import: ${err.message}`, 'Video import refused');
      case 'not_found':
        throw new AppError(404, `not found on PeerTube: ${err.message}`, 'not_found');
      case 'rate_limited':
        throw new AppError(503, err.message, 'PeerTube unavailable', { 'Retry-After': String(err.retryAfter ?? 10) });
      default:
        throw new AppError(503, err.message, 'PeerTube unavailable');
    }
  }
}

/**
 * The URL PeerTube is given: the client's, or where its redirects end. PeerTube fetches from its
 * own network, so every hop is judged here as the SSRF guard judges an outbound fetch: its host has
 * to resolve, and to no private, loopback or link-local address unless USER_URL_ALLOW_HOSTS lists it.
 * The hops are followed with HEAD through the guarded client (nothing is downloaded). What PeerTube
 * does later is its own side: a name that answers its lookup differently (DNS rebinding), or a
 * server that redirects PeerTube elsewhere than here, must be refused by PeerTube's own settings.
 */
async function finalTargetUrl(raw: string, allow: AllowList, http: OutboundClient): Promise<string> {
  const first = new URL(raw);
  let current = first.href;
  try {
    await checkTargetUrl(first, allow);
    const res = await http.fetch(first.href, {
      method: 'HEAD',
      timeoutMs: URL_CHECK_TIMEOUT_MS,
      maxRedirects: URL_CHECK_MAX_REDIRECTS,
      onRedirect: async ({ from, to }) => {
        current = to;
        // The guard has refused a location that is not an http(s) URL; this judges the host as PeerTube would reach it.
        await checkTargetUrl(new URL(to), allow, new URL(from));
      },
    });
    return res.url;
  } catch (err) {
    if (err instanceof OutboundError && err.kind === 'timeout')
      throw refused(
        `url could not be checked before the import: ${current} did not answer within ${URL_CHECK_TIMEOUT_MS} ms`,
      );
    if (err instanceof OutboundError) throw refused(`url could not be checked before the import: ${err.message}`);
    throw err;
  }
}

function refused(detail: string): AppError {
  return new AppError(400, detail, 'Video import refused');
}

/**
 * One hop's host: refused when it does not resolve here (it may on PeerTube's network: an internal
 * service name), or when any of its addresses is private (PeerTube could pick that one).
 */
async function checkTargetUrl(url: URL, allow: AllowList, from?: URL): Promise<void> {
  // "localhost." is localhost: a trailing dot names the same host.
  const host = url.hostname
    .replace(/^\[(.*)\]$/, '$1')
    .toLowerCase()
    .replace(/\.+$/, '');
  const which = from ? `url redirects (from ${from.href}) to ${url.href}, which` : 'url';
  // Names the host the URL gave, never the address it resolved to nor its range (issue 38 item 14).
  const refuse = (): never => {
    throw refused(`${which} points to a non-public address (${host}); only public addresses can be imported`);
  };
  if (host === 'localhost' || host.endsWith('.localhost')) {
    if (!allow.allows(host, host)) refuse();
    return;
  }
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map((a) => a.address);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    const whose = from ? `url redirects (from ${from.href}) to ${url.href}, whose host` : 'url host';
    throw refused(
      `${whose} ${host} does not resolve${typeof code === 'string' ? ` (${code})` : ''}; only a host that resolves to a public address can be imported`,
    );
  }
  for (const address of addresses) {
    if (allow.refusal(host, address)) refuse();
  }
}
