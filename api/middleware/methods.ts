import type { Middleware } from 'koa';
import type { AppState } from '../context';

/**
 * Wraps the router's allowedMethods: a method the router does not implement at all (TRACE,
 * CONNECT...) on a known path is a 405 with `Allow` like any other wrong method, not a 501 (501
 * is the spec's answer for media on IDAP fetch only), and on an unknown path a 404. The error
 * middleware then gives both the spec's `{detail}` body.
 */
export function methodNotAllowed(): Middleware<AppState> {
  return async (ctx, next) => {
    await next();
    if (ctx.status !== 501 || (ctx.body !== undefined && ctx.body !== null)) return;
    if (ctx.response.get('Allow')) {
      ctx.status = 405;
    } else {
      ctx.remove('Allow');
      ctx.status = 404;
    }
  };
}
