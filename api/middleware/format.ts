import type { Middleware } from 'koa';
import yaml from 'js-yaml';
import { toMarkdown } from '../../lib/markdown';
import { ValidationError } from '../../lib/errors';
import type { AppState } from '../context';

export const FORMATS = ['json', 'yaml', 'md'] as const;
export type Format = (typeof FORMATS)[number];

/**
 * `?format=json|yaml|md` on a GET's response whose body is data (spec §1.2.5: "every GET"; the
 * OpenAPI document declares it on GETs only). Error bodies are rendered the same way, so a YAML
 * client gets YAML errors too. Other methods answer JSON and ignore `format` (routing.ts drops it
 * before a route's query is validated). Routes declared with `ownFormat` (exports) are left alone.
 */
export function responseFormat(ownsFormat: (path: string) => boolean = () => false): Middleware<AppState> {
  return async (ctx, next) => {
    // Exports read `format` as csv|xlsx|ndjson and stream their own bodies; their errors stay JSON.
    if (ownsFormat(ctx.path) || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    const raw = ctx.query.format;
    if (raw !== undefined && (typeof raw !== 'string' || !(FORMATS as readonly string[]).includes(raw))) {
      // Refused by the route after its guards (formatCheck): an anonymous caller gets 401 first,
      // and a media or integration route answers in its own error shape. Answered in JSON.
      ctx.state.badFormat = true;
      return next();
    }
    await next();
    const format = (raw ?? 'json') as Format;
    if (format === 'json' || !isData(ctx.body)) return;
    const plain = JSON.parse(JSON.stringify(ctx.body)) as unknown;
    if (format === 'yaml') {
      ctx.body = yaml.dump(plain, { noRefs: true, lineWidth: -1 });
      ctx.type = 'application/yaml; charset=utf-8';
    } else {
      ctx.body = toMarkdown(plain);
      ctx.type = 'text/markdown; charset=utf-8';
    }
  };
}

/** In each route after authentication and rate limiting: 422 for a `?format=` the response-format middleware could not serve. */
export function formatCheck(): Middleware<AppState> {
  return async (ctx, next) => {
    if (ctx.state.badFormat)
      throw new ValidationError([
        { type: 'enum', loc: ['query', 'format'], msg: "Input should be 'json', 'yaml' or 'md'" },
      ]);
    return next();
  };
}

function isData(body: unknown): boolean {
  if (body === null || typeof body !== 'object') return false;
  if (Buffer.isBuffer(body) || typeof (body as { pipe?: unknown }).pipe === 'function') return false;
  return true;
}
