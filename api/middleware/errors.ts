import type { Middleware } from 'koa';
import { ZodError } from 'zod';
import { isUniqueViolation } from '../../db';
import { AppError, DOMAIN_STATUS, DomainError, ValidationError } from '../../lib/errors';
import { UNAVAILABLE_DETAIL, unavailableDependency } from '../../lib/outages';
import { issuesFromZod } from '../validation';
import type { AppContext, AppState } from '../context';

/**
 * The one place errors become responses (spec §7): typed AppError -> its status and {detail};
 * a DomainError from db/ or a service -> its kind's status (409, 400, 404);
 * validation -> 422 with detail [{type, loc, msg}]; unique violation -> 409; a backing service
 * that does not answer (lib/outages.ts) -> 503 with Retry-After; anything else ->
 * 500 with the request id and no internals. Handlers have no try/catch.
 */
export function errorHandler(): Middleware<AppState> {
  return async (ctx, next) => {
    try {
      await next();
      // Koa's own 404 and the router's 405 come without a body.
      if (ctx.status === 404 && ctx.body == null) send(ctx, 404, 'not found', 'not_found');
      if (ctx.status === 405 && ctx.body == null)
        send(ctx, 405, `method ${ctx.method} not allowed`, 'method_not_allowed');
    } catch (err) {
      if (err instanceof AppError) {
        for (const [k, v] of Object.entries(err.headers)) ctx.set(k, v);
        // Every 503 says when to retry (queue service unavailable included), as the outage answers below do.
        if (err.status === 503 && !ctx.response.get('Retry-After')) ctx.set('Retry-After', '5');
        send(ctx, err.status, err.detail, err.error);
      } else if (err instanceof DomainError) {
        send(ctx, DOMAIN_STATUS[err.kind], err.detail, err.error ?? err.kind);
      } else if (err instanceof ValidationError) {
        send(ctx, 422, err.issues, 'validation_error');
      } else if (err instanceof ZodError) {
        send(ctx, 422, issuesFromZod(err, []), 'validation_error');
      } else if (isUniqueViolation(err)) {
        send(ctx, 409, 'resource already exists', 'conflict');
      } else if (isHttpError(err)) {
        // Errors Koa and its body parser raise (payload too large, aborted request, ...).
        send(ctx, err.status, err.expose ? err.message : 'bad request', 'bad_request');
      } else if (unavailableDependency(err)) {
        const dependency = unavailableDependency(err) ?? 'database';
        ctx.state.log.warn({ err, dependency }, 'dependency unavailable');
        ctx.set('Retry-After', '5');
        send(ctx, 503, UNAVAILABLE_DETAIL[dependency], `${dependency}_unavailable`);
      } else {
        ctx.state.log.error({ err }, 'unhandled error');
        send(ctx, 500, `internal server error (request id ${ctx.state.requestId})`, 'internal_error');
      }
    }
  };
}

function isHttpError(err: unknown): err is { status: number; expose: boolean; message: string } {
  const e = err as { status?: unknown; expose?: unknown };
  return (
    typeof e === 'object' &&
    e !== null &&
    typeof e.status === 'number' &&
    e.status >= 400 &&
    e.status < 500 &&
    typeof e.expose === 'boolean'
  );
}

function send(ctx: AppContext, status: number, detail: unknown, error = 'error'): void {
  ctx.status = status;
  ctx.body = ctx.state.errorShape === 'success' ? { success: false, error, detail } : { detail };
}
