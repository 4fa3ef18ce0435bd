import Router from '@koa/router';
import type { Middleware } from 'koa';
import { z } from 'zod';
import { AppError, ValidationError } from '../lib/errors';
import type { AppContext, AppState } from './context';
import { validate } from './validation';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type Out<T> = T extends z.ZodType ? z.output<T> : undefined;

export interface ResponseDef {
  description: string;
  schema?: z.ZodType;
  /** Defaults to application/json (which also answers ?format=yaml|md); several when the request chooses one. */
  contentType?: string | string[];
}

/** Who may call a route: a client's Bearer credential, the `token` query parameter (SSE), or anyone. */
export type Security = 'client' | 'token' | 'none';

export interface RouteDef<
  P extends z.ZodType | undefined,
  Q extends z.ZodType | undefined,
  B extends z.ZodType | undefined,
> {
  method: Method;
  /** OpenAPI-style path: /api/v1/jobs/{job_id} */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  security: Security;
  params?: P;
  query?: Q;
  body?: B;
  /** Request headers the route reads (validated by its handler; documented as header parameters). */
  headers?: z.ZodType;
  /** A fuller schema for the OpenAPI document when `body` is validated in stages (e.g. per job type). */
  bodyDoc?: z.ZodType;
  /** Extra request media types documented for the body (e.g. multipart/form-data). */
  bodyContentType?: string;
  errorShape?: 'detail' | 'success';
  /**
   * How a request body that cannot be read is answered: `validation` (default) as the body parser
   * raises it (422 in the validation shape; 415 for a content type, charset or encoding it does not
   * read); `bad_request` as a 400 with a string detail, for routes whose spec answers "400 ...
   * invalid body" (POST /dashboard/content/posts). Size limits stay 413 either way.
   */
  bodyErrors?: 'validation' | 'bad_request';
  responses: Record<number, ResponseDef>;
  /**
   * The route reads `?format=` itself (exports: csv|xlsx|ndjson) instead of the json|yaml|md of the
   * response-format middleware, which then leaves it alone (ApiRouter.ownsFormat).
   */
  ownFormat?: boolean;
  /** Route-specific middleware run after auth and rate limiting, before validation. */
  before?: Middleware<AppState>[];
  handler: (ctx: AppContext, input: { params: Out<P>; query: Out<Q>; body: Out<B> }) => Promise<void> | void;
}

// The registry keeps heterogeneous definitions; their generics only matter at the call site.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRouteDef = RouteDef<any, any, any>;

export interface RouteGuards {
  client: Middleware<AppState>[];
  token: Middleware<AppState>[];
  none: Middleware<AppState>[];
}

/**
 * Declares routes once: the Koa route (guards, validation, handler) and the OpenAPI operation
 * (api/openapi.ts) both come from the same definition and its zod schemas.
 */
export class ApiRouter {
  readonly router = new Router<AppState>();
  readonly routes: AnyRouteDef[] = [];
  private readonly ownFormatPaths: RegExp[] = [];

  /**
   * `guards` per security kind; `afterGuards` runs in every route once its guards have let the
   * caller in, before the route's own middleware: the `?format=` check and the request body parser
   * (api/app.ts), so an anonymous or rate-limited caller is answered before anything of its request
   * is read, and every error of a route comes in that route's error shape.
   */
  constructor(
    private readonly guards: RouteGuards,
    private readonly afterGuards: Middleware<AppState>[] = [],
  ) {}

  add<
    P extends z.ZodType | undefined = undefined,
    Q extends z.ZodType | undefined = undefined,
    B extends z.ZodType | undefined = undefined,
  >(def: RouteDef<P, Q, B>): this {
    this.routes.push(def);
    const koaPath = def.path.replace(/\{(\w+)\}/g, ':$1');
    if (def.ownFormat) this.ownFormatPaths.push(new RegExp(`^${def.path.replace(/\{\w+\}/g, '[^/]+')}/?$`));
    const shape: Middleware<AppState> = async (ctx, next) => {
      if (def.errorShape) ctx.state.errorShape = def.errorShape;
      return next();
    };
    const asBadRequest = def.bodyErrors === 'bad_request';
    const run: Middleware<AppState> = async (ctx) => {
      const params = (def.params ? validate(def.params, ctx.params, 'path') : undefined) as Out<P>;
      const query = (
        def.query ? validate(def.query, def.ownFormat ? ctx.query : withoutFormat(ctx.query), 'query') : undefined
      ) as Out<Q>;
      let body: Out<B>;
      try {
        body = (def.body ? validate(def.body, ctx.request.body, 'body') : undefined) as Out<B>;
      } catch (err) {
        throw asBadRequest ? bodyErrorAs400(err) : err;
      }
      await def.handler(ctx as AppContext, { params, query, body });
    };
    const afterGuards = asBadRequest ? this.afterGuards.map(bodyErrorsAs400) : this.afterGuards;
    this.router.register(
      koaPath,
      [def.method.toUpperCase()],
      [shape, ...this.guards[def.security], ...afterGuards, ...(def.before ?? []), run],
    );
    return this;
  }

  /**
   * Answers a method the path's own operation does not have before the router can hand the request
   * to a less specific one: `GET /media/videos/import` is 405 (the path has POST only), not `GET
   * /media/videos/{video_id}` with the id "import". Of the route paths that match, the most specific
   * (a literal segment beats a parameter, left to right) decides, and `Allow` (also the answer to
   * OPTIONS) lists its methods only. Paths no route matches go on (404).
   */
  methodGuard(): Middleware<AppState> {
    return async (ctx, next) => {
      const allowed = this.methodsFor(ctx.path);
      if (!allowed) return next();
      const method = ctx.method === 'HEAD' ? 'GET' : ctx.method;
      if (allowed.includes(method)) return next();
      const allow = [...(allowed.includes('GET') ? ['HEAD'] : []), ...allowed].join(', ');
      ctx.set('Allow', allow);
      if (ctx.method === 'OPTIONS') {
        ctx.status = 200;
        ctx.body = '';
        return;
      }
      ctx.status = 405;
    };
  }

  /** The methods of the most specific route path matching `path`, or undefined when none does. */
  private methodsFor(path: string): string[] | undefined {
    const segments = path.replace(/\/+$/, '').split('/');
    let best: { rank: string; methods: Set<string> } | undefined;
    for (const r of this.templates().get(segments.length) ?? []) {
      if (!r.segments.every((t, i) => t === undefined || t === segments[i])) continue;
      if (!best || r.rank > best.rank) best = { rank: r.rank, methods: new Set() };
      if (r.rank === best.rank) best.methods.add(r.method);
    }
    return best ? [...best.methods] : undefined;
  }

  private templateCache?: { count: number; bySegments: Map<number, RouteTemplate[]> };

  /** The routes' paths split once (per number of routes, which only grows while the app is built), by segment count. */
  private templates(): Map<number, RouteTemplate[]> {
    if (this.templateCache?.count !== this.routes.length) {
      const bySegments = new Map<number, RouteTemplate[]>();
      for (const r of this.routes) {
        const parts = r.path.split('/');
        // '1' for a literal segment, '0' for a parameter: the greater string is the more specific path.
        const template = {
          segments: parts.map((t) => (t.startsWith('{') ? undefined : t)),
          rank: parts.map((t) => (t.startsWith('{') ? '0' : '1')).join(''),
          method: r.method.toUpperCase(),
        };
        bySegments.set(parts.length, [...(bySegments.get(parts.length) ?? []), template]);
      }
      this.templateCache = { count: this.routes.length, bySegments };
    }
    return this.templateCache.bySegments;
  }

  /** True for a path of a route that reads `?format=` itself. */
  ownsFormat(path: string): boolean {
    return this.ownFormatPaths.some((re) => re.test(path));
  }
}

/** A route path split into segments (undefined for a parameter), its specificity rank and method. */
interface RouteTemplate {
  segments: (string | undefined)[];
  rank: string;
  method: string;
}

/**
 * `mw` with the body errors it raises itself (the body parser's) answered as 400; what the
 * middleware after it throws passes untouched.
 */
function bodyErrorsAs400(mw: Middleware<AppState>): Middleware<AppState> {
  return async (ctx, next) => {
    let passedOn = false;
    try {
      await mw(ctx, () => {
        passedOn = true;
        return next();
      });
    } catch (err) {
      throw passedOn ? err : bodyErrorAs400(err);
    }
  };
}

/**
 * A request body problem as a 400 with a string detail: validation issues located in the body
 * (a body that does not parse, NUL characters) and an unsupported content type, charset or
 * encoding (415). Anything else, a ?format= error or a 413 among them, is returned unchanged.
 */
function bodyErrorAs400(err: unknown): unknown {
  if (err instanceof ValidationError && err.issues.every((i) => i.loc[0] === 'body')) {
    const detail = err.issues
      .map((i) => (i.loc.length > 1 ? `${i.loc.slice(1).join('.')}: ${i.msg}` : i.msg))
      .join('; ');
    return new AppError(400, detail, 'bad_request');
  }
  if (err instanceof AppError && err.status === 415) return new AppError(400, err.detail, 'bad_request', err.headers);
  return err;
}

/** `format` is handled for every route by the response-format middleware. */
function withoutFormat(query: Record<string, unknown>): Record<string, unknown> {
  const { format: _format, ...rest } = query;
  return rest;
}
