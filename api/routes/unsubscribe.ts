import { koaBody } from 'koa-body';
import type { UnsubscribeRepository } from '../../db/repositories/unsubscribe';
import { AppError } from '../../lib/errors';
import {
  signUnsubscribeToken,
  unsubscribeUrl,
  verifyUnsubscribeToken,
  type UnsubscribeClaims,
} from '../../lib/unsubscribe';
import { clientIdOf, type AppContext } from '../context';
import { hasBody, requestBody, YAML_TYPES } from '../middleware/body';
import type { ApiRouter } from '../routing';
import {
  htmlPage,
  unsubscribeLinkBody,
  unsubscribeLinkResponse,
  unsubscribePreferencesQuery,
  unsubscribePreferencesResponse,
  unsubscribeTokenParams,
} from '../schemas/unsubscribe';
import { confirmPage, donePage, invalidPage, PAGE_HEADERS } from '../unsubscribe-pages';

export interface UnsubscribeRouteDeps {
  repo: UnsubscribeRepository;
  /** Undefined when UNSUBSCRIBE_SIGNING_KEY is not set: the routes answer 503 saying so. */
  key: Buffer | undefined;
  /** PUBLIC_BASE_URL; unset: links use the address the request came to. */
  publicBaseUrl: string | undefined;
}

/** Paths whose POST bodies are HTML forms (or RFC 8058 one-click posts), not JSON: the JSON/YAML body parser skips them. */
export const isUnsubscribePagePath = (path: string): boolean => path.startsWith('/u/');

const NOT_CONFIGURED = 'unsubscribe links are not configured on this server (UNSUBSCRIBE_SIGNING_KEY is unset)';

// A browser form is urlencoded; RFC 8058 allows multipart/form-data too. Small fields, no files.
const parseForm = koaBody({
  json: false,
  text: false,
  urlencoded: true,
  multipart: true,
  formLimit: '16kb',
  formidable: { maxFiles: 0, maxFields: 20, maxFieldsSize: 16 * 1024 },
});

// The API's own JSON and YAML bodies (spec §1.2.5: every POST accepts them), with the form's limit.
const parseData = requestBody({ limit: '16kb' });
const FORM_TYPES = ['application/x-www-form-urlencoded', 'multipart/form-data'];

/**
 * The POST's fields: a form's, or a JSON or YAML object's. Null when the body cannot be read, or is
 * of another type (its fields, such as a scope, would otherwise be ignored and the list alone left).
 */
async function readForm(ctx: AppContext): Promise<Record<string, unknown> | null> {
  const type = ctx.request.type;
  try {
    if (type === 'application/json' || YAML_TYPES.includes(type)) await parseData(ctx, async () => undefined);
    else if (FORM_TYPES.includes(type) || !hasBody(ctx.get('content-length'), ctx.get('transfer-encoding')))
      await parseForm(ctx, async () => undefined);
    else return null;
  } catch {
    return null;
  }
  const body = ctx.request.body as unknown;
  if (body === undefined || body === null) return {};
  return typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : null;
}

const first = (v: unknown): unknown => (Array.isArray(v) ? v[0] : v);

function html(ctx: AppContext, status: number, body: string): void {
  ctx.set(PAGE_HEADERS);
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = body;
}

export function unsubscribeRoutes(api: ApiRouter, deps: UnsubscribeRouteDeps): void {
  const keyOf = () => {
    if (!deps.key) throw new AppError(503, NOT_CONFIGURED, 'not_configured');
    return deps.key;
  };
  /** The token's claims, or an answered 422 page (null). */
  const claimsOf = (ctx: AppContext, token: string): UnsubscribeClaims | null => {
    if (!deps.key) {
      html(ctx, 503, invalidPage('Unsubscribing is not available on this server at the moment.'));
      return null;
    }
    const claims = verifyUnsubscribeToken(deps.key, token);
    if (!claims) html(ctx, 422, invalidPage('The link is incomplete or has been altered.'));
    return claims;
  };

  api.add({
    method: 'post',
    path: '/api/v1/unsubscribe/links',
    operationId: 'createUnsubscribeLink',
    summary: 'A signed unsubscribe link for one recipient and list',
    description:
      'The token binds the client, the recipient and the list, and carries a random nonce (every call gives a new one; all stay valid). ' +
      "The link's page lets the recipient leave this list or every list. Mail sent by this service adds it (List-Unsubscribe, RFC 8058 one-click) and honours the preferences.",
    tags: ['unsubscribe'],
    security: 'client',
    body: unsubscribeLinkBody,
    responses: {
      201: { description: "The token and its page's address", schema: unsubscribeLinkResponse },
      503: { description: 'UNSUBSCRIBE_SIGNING_KEY is not set' },
    },
    handler: async (ctx, { body }) => {
      const key = keyOf();
      const clientId = clientIdOf(ctx);
      const token = signUnsubscribeToken(key, { clientId, email: body.email, list: body.list });
      await deps.repo.register(clientId, body.email, body.list);
      ctx.status = 201;
      // Koa 3's ctx.origin is the Origin header; the API's own address is protocol and Host.
      ctx.body = { token, url: unsubscribeUrl(deps.publicBaseUrl ?? `${ctx.protocol}://${ctx.host}`, token) };
    },
  });

  api.add({
    method: 'get',
    path: '/api/v1/unsubscribe/preferences',
    operationId: 'getUnsubscribePreferences',
    summary: "A recipient's unsubscribe preferences and audit trail",
    tags: ['unsubscribe'],
    security: 'client',
    query: unsubscribePreferencesQuery,
    responses: { 200: { description: 'Preferences for this client only', schema: unsubscribePreferencesResponse } },
    handler: async (ctx, { query }) => {
      const p = await deps.repo.preferences(clientIdOf(ctx), query.email);
      ctx.body = {
        email: p.email,
        unsubscribed_all: p.unsubscribed_all,
        lists: Object.fromEntries(
          Object.entries(p.lists).map(([list, v]) => [
            list,
            { status: v.status, updated_at: v.updated_at.toISOString() },
          ]),
        ),
        audit: p.audit.map((a) => ({
          list: a.list,
          scope: a.scope,
          source: a.source,
          ip_address: a.ip_address,
          user_agent: a.user_agent,
          created_at: new Date(a.created_at).toISOString(),
        })),
      };
    },
  });

  const page = { tags: ['unsubscribe'], security: 'none' as const, params: unsubscribeTokenParams };

  api.add({
    ...page,
    method: 'get',
    path: '/u/{token}',
    operationId: 'showUnsubscribePage',
    summary: 'Unsubscribe confirmation page (changes nothing)',
    description:
      'An HTML page naming the recipient and the list, with a form to leave that list or every list. No credential: the token is the capability.',
    responses: {
      200: { description: 'The confirmation page', schema: htmlPage, contentType: 'text/html' },
      422: { description: 'A malformed or tampered token', schema: htmlPage, contentType: 'text/html' },
    },
    handler: (ctx, { params }) => {
      const claims = claimsOf(ctx, params.token);
      if (claims) html(ctx, 200, confirmPage(claims.email, claims.list));
    },
  });

  api.add({
    ...page,
    method: 'post',
    path: '/u/{token}',
    operationId: 'applyUnsubscribe',
    summary: "Unsubscribe (the page's form, or RFC 8058 one-click)",
    description:
      "Form field `scope` = `list` (default) or `all`; an RFC 8058 body `List-Unsubscribe=One-Click` (urlencoded or multipart) leaves the token's list. The same fields may come as a JSON or YAML object (spec §1.2.5); a body of any other type is a 422. " +
      'The preference and an audit row (time, source address, user agent) commit together. A repeat changes nothing but adds another audit row.',
    bodyContentType: 'application/x-www-form-urlencoded',
    responses: {
      200: { description: 'Unsubscribed (also on a repeat)', schema: htmlPage, contentType: 'text/html' },
      422: {
        description: 'A malformed or tampered token, or an unknown scope',
        schema: htmlPage,
        contentType: 'text/html',
      },
    },
    handler: async (ctx, { params }) => {
      const claims = claimsOf(ctx, params.token);
      if (!claims) return;
      const form = await readForm(ctx);
      if (form === null) return html(ctx, 422, invalidPage('The request could not be read.'));
      const oneClick = first(form['List-Unsubscribe']) === 'One-Click';
      const scope = first(form.scope) ?? 'list';
      if (scope !== 'list' && scope !== 'all')
        return html(ctx, 422, invalidPage('Choose this list or all mailing lists.'));
      const applied = await deps.repo.apply({
        clientId: claims.clientId,
        email: claims.email,
        list: claims.list,
        scope,
        source: oneClick ? 'one_click' : 'page',
        ipAddress: ctx.ip || null,
        userAgent: ctx.get('user-agent') || null,
      });
      if (!applied) return html(ctx, 422, invalidPage('The sender of this link no longer exists.'));
      html(ctx, 200, donePage(claims.email, claims.list, scope));
    },
  });
}
