import type { Middleware } from 'koa';
import { koaBody } from 'koa-body';
import yaml from 'js-yaml';
import { AppError, ValidationError } from '../../lib/errors';
import type { AppState } from '../context';

export const YAML_TYPES = ['text/yaml', 'application/yaml', 'application/x-yaml'];
const JSON_TYPES = ['application/json'];

/**
 * Request bodies of POST/PUT/PATCH: JSON (default) or YAML (spec §1.2.5). Any other content type
 * -> 415; a body that does not parse -> 422 in the validation shape, like any other bad input.
 * Routes that take multipart/form-data install their own parser and are listed in `skip`.
 */
export function requestBody(options: { limit: string; skip?: (path: string) => boolean }): Middleware<AppState> {
  const parse = koaBody({
    json: true,
    text: true,
    urlencoded: false,
    multipart: false,
    jsonStrict: false,
    jsonLimit: options.limit,
    textLimit: options.limit,
    includeUnparsed: false,
    textTypes: YAML_TYPES,
  });
  return async (ctx, next) => {
    if (!['POST', 'PUT', 'PATCH'].includes(ctx.method) || options.skip?.(ctx.path)) return next();
    if (!hasBody(ctx.get('content-length'), ctx.get('transfer-encoding'))) {
      ctx.request.body = undefined;
      return next();
    }
    const type = ctx.request.type; // media type without parameters, lower-cased
    const isYaml = YAML_TYPES.includes(type);
    if (type !== '' && !isYaml && !JSON_TYPES.includes(type)) {
      throw new AppError(415, `unsupported content type '${type}'; send application/json or YAML (${YAML_TYPES.join(', ')})`, 'unsupported_media_type');
    }
    if (type === '') ctx.request.headers['content-type'] = 'application/json';
    try {
      await parse(ctx, async () => undefined);
    } catch (err) {
      const e = err as { status?: number; message?: string };
      if (e.status === 413) throw new AppError(413, `request body is larger than ${options.limit}`, 'payload_too_large');
      throw new ValidationError([{ type: 'json_invalid', loc: ['body'], msg: `JSON decode error: ${e.message ?? 'invalid JSON'}` }]);
    }
    if (isYaml) {
      try {
        ctx.request.body = yaml.load(String(ctx.request.body ?? '')) as typeof ctx.request.body;
      } catch (err) {
        throw new ValidationError([{ type: 'yaml_invalid', loc: ['body'], msg: `YAML decode error: ${(err as Error).message.split('\n')[0]}` }]);
      }
    }
    return next();
  };
}

function hasBody(length: string, transferEncoding: string): boolean {
  return transferEncoding !== '' || (length !== '' && length !== '0');
}
