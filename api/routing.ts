import Router from '@koa/router';
import type { Middleware } from 'koa';
import { z } from 'zod';
import type { AppContext, AppState } from './context';
import { validate } from './validation';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type Out<T> = T extends z.ZodType ? z.output<T> : undefined;

export interface ResponseDef {
  description: string;
  schema?: z.ZodType;
  /** Defaults to application/json (which also answers ?format=yaml|md). */
  contentType?: string;
}

/** Who may call a route: a client's Bearer credential, the `token` query parameter (SSE), or anyone. */
export type Security = 'client' | 'token' | 'none';

export interface RouteDef<P extends z.ZodType | undefined, Q extends z.ZodType | undefined, B extends z.ZodType | undefined> {
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

  constructor(private readonly guards: RouteGuards) {}

  add<P extends z.ZodType | undefined = undefined, Q extends z.ZodType | undefined = undefined, B extends z.ZodType | undefined = undefined>(
    def: RouteDef<P, Q, B>,
  ): this {
    this.routes.push(def);
    const koaPath = def.path.replace(/\{(\w+)\}/g, ':$1');
    if (def.ownFormat) this.ownFormatPaths.push(new RegExp(`^${def.path.replace(/\{\w+\}/g, '[^/]+')}/?$`));
    const shape: Middleware<AppState> = async (ctx, next) => {
      if (def.errorShape) ctx.state.errorShape = def.errorShape;
      return next();
    };
    const run: Middleware<AppState> = async (ctx) => {
      const input = {
        params: (def.params ? validate(def.params, ctx.params, 'path') : undefined) as Out<P>,
        query: (def.query ? validate(def.query, def.ownFormat ? ctx.query : withoutFormat(ctx.query), 'query') : undefined) as Out<Q>,
        body: (def.body ? validate(def.body, ctx.request.body, 'body') : undefined) as Out<B>,
      };
      await def.handler(ctx as AppContext, input);
    };
    this.router.register(koaPath, [def.method.toUpperCase()], [shape, ...this.guards[def.security], ...(def.before ?? []), run]);
    return this;
  }

  /** True for a path of a route that reads `?format=` itself. */
  ownsFormat(path: string): boolean {
    return this.ownFormatPaths.some((re) => re.test(path));
  }
}

/** `format` is handled for every route by the response-format middleware. */
function withoutFormat(query: Record<string, unknown>): Record<string, unknown> {
  const { format: _format, ...rest } = query;
  return rest;
}
