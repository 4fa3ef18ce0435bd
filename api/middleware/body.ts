import { isUtf8 } from 'node:buffer';
import type { Readable } from 'node:stream';
import { createGunzip, createInflate } from 'node:zlib';
import type { Middleware } from 'koa';
// koa-body's declaration of ctx.request.body (its multipart parser serves the upload routes).
import type {} from 'koa-body';
import getRawBody from 'raw-body';
import yaml from 'js-yaml';
import { AppError, ValidationError } from '../../lib/errors';
import type { AppContext, AppState } from '../context';

export const YAML_TYPES = ['text/yaml', 'application/yaml', 'application/x-yaml'];
const JSON_TYPES = ['application/json'];

/** Collections inside collections; the top-level object or list is the first level. */
export const MAX_BODY_DEPTH = 64;
/** Alias uses (`*name`) per YAML body: enough for shared defaults, too few to build a bomb from alone. */
export const MAX_YAML_ALIASES = 50;
/**
 * YAML bodies are read up to this size (or the route's limit, if smaller). js-yaml takes about
 * 0.7 us a byte on the API's thread, 5-10 times JSON.parse: 2 MB of nested lists held it 1.5 s, so
 * one client within its rate limit could keep the API from answering anyone. Hand-written YAML
 * payloads are a few KB; larger bodies can be sent as JSON.
 */
export const MAX_YAML_BODY = '256kb';

/**
 * Request bodies of POST/PUT/PATCH: JSON (default) or YAML (spec §1.2.5). Any other content type
 * -> 415; a body that does not parse -> 422 in the validation shape, like any other bad input.
 * Routes that take multipart/form-data install their own parser and are listed in `skip`.
 *
 * The size limit holds for the parsed document too. js-yaml returns an alias as a second reference
 * to its anchor's value, so a few hundred bytes of nested aliases stand for gigabytes once anything
 * serialises them (billion laughs). So a YAML body may use at most MAX_YAML_ALIASES aliases (422),
 * no alias may sit inside its own anchor (422), and the document, counting every alias use in
 * full, may hold no more values and no more bytes of text than a JSON body within the limit could
 * (413). Bodies of either type may nest at most MAX_BODY_DEPTH levels (422).
 */
export function requestBody(options: { limit: string; skip?: (path: string) => boolean }): Middleware<AppState> {
  const budget: Budget = {
    maxValues: parseSize(options.limit),
    maxTextBytes: parseSize(options.limit),
    maxDepth: MAX_BODY_DEPTH,
    limit: options.limit,
  };
  const yamlLimit = parseSize(MAX_YAML_BODY) < parseSize(options.limit) ? MAX_YAML_BODY : options.limit;
  return async (ctx, next) => {
    if (!['POST', 'PUT', 'PATCH'].includes(ctx.method) || options.skip?.(ctx.path)) return next();
    if (!hasBody(ctx.get('content-length'), ctx.get('transfer-encoding'))) {
      ctx.request.body = undefined;
      return next();
    }
    const type = ctx.request.type; // media type without parameters, lower-cased
    const isYaml = YAML_TYPES.includes(type);
    if (type !== '' && !isYaml && !JSON_TYPES.includes(type)) {
      throw new AppError(
        415,
        `unsupported content type '${type}'; send application/json or YAML (${YAML_TYPES.join(', ')})`,
        'unsupported_media_type',
      );
    }
    const charset = ctx.request.charset.toLowerCase();
    if (charset !== '' && charset !== 'utf-8' && charset !== 'utf8') {
      throw new AppError(415, `unsupported charset '${charset}'; request bodies are UTF-8`, 'unsupported_media_type');
    }
    if (isYaml) {
      const text = await readUtf8(
        ctx,
        yamlLimit,
        yamlLimit === options.limit ? '' : ' (the limit of a YAML body; send larger bodies as JSON)',
      );
      ctx.request.body = parseYaml(text) as typeof ctx.request.body;
      measure(ctx.request.body, budget);
    } else {
      const text = await readUtf8(ctx, options.limit);
      try {
        ctx.request.body = JSON.parse(text) as typeof ctx.request.body;
      } catch (err) {
        throw new ValidationError([
          { type: 'json_invalid', loc: ['body'], msg: `JSON decode error: ${(err as Error).message}` },
        ]);
      }
      // A JSON document holds no shared values: within the byte limit it is within the value and
      // text budgets too, and only its depth needs a walk.
      if (depthOf(ctx.request.body, MAX_BODY_DEPTH) > MAX_BODY_DEPTH) throw tooDeep();
    }
    return next();
  };
}

/**
 * The body as text, refused unless it is valid UTF-8 (422: replacement characters would silently
 * change names and addresses), at most `limit` bytes after decompression (413; gzip and deflate
 * are inflated, counting the inflated bytes, so a small zip bomb is stopped at the limit).
 */
async function readUtf8(ctx: AppContext, limit: string, why = ''): Promise<string> {
  const encoding = ctx.get('content-encoding').toLowerCase() || 'identity';
  let stream: NodeJS.ReadableStream = ctx.req;
  if (encoding === 'gzip' || encoding === 'x-gzip') stream = ctx.req.pipe(createGunzip());
  else if (encoding === 'deflate') stream = ctx.req.pipe(createInflate());
  else if (encoding !== 'identity')
    throw new AppError(
      415,
      `unsupported content encoding '${encoding}'; send identity, gzip or deflate`,
      'unsupported_media_type',
    );
  let raw: Buffer;
  try {
    raw = await getRawBody(stream as Readable, {
      limit,
      ...(encoding === 'identity' && ctx.get('content-length') ? { length: ctx.get('content-length') } : {}),
    });
  } catch (err) {
    const e = err as { status?: number; type?: string; code?: string; message?: string };
    if (e.type === 'entity.too.large')
      throw new AppError(413, `request body is larger than ${limit}${why}`, 'payload_too_large');
    if (e.code === 'Z_DATA_ERROR' || e.code === 'Z_BUF_ERROR')
      throw new AppError(400, `request body is not valid ${encoding} data`, 'bad_request');
    if (e.type === 'request.aborted' || e.type === 'request.size.invalid')
      throw new AppError(400, e.message ?? 'request body incomplete', 'bad_request');
    throw err;
  } finally {
    if (stream !== ctx.req) ctx.req.unpipe();
  }
  if (!isUtf8(raw))
    throw new ValidationError([{ type: 'utf8_invalid', loc: ['body'], msg: 'request body is not valid UTF-8' }]);
  const text = raw.toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** Whether a request has a body, by its Content-Length and Transfer-Encoding headers. */
export function hasBody(length: string, transferEncoding: string): boolean {
  return transferEncoding !== '' || (length !== '' && length !== '0');
}

function parseYaml(text: string): unknown {
  try {
    // js-yaml counts the levels its parser has open including the one it is about to open, so
    // MAX_BODY_DEPTH + 1 lets exactly MAX_BODY_DEPTH levels through; measure() then counts the
    // levels that aliases add.
    return yaml.load(text, { maxAliases: MAX_YAML_ALIASES, maxDepth: MAX_BODY_DEPTH + 1 });
  } catch (err) {
    const message = (err as Error).message;
    if (/exceeded maxAliases/.test(message)) throw yamlTooManyAliases();
    if (/exceeded maxDepth/.test(message)) throw tooDeep();
    throw new ValidationError([
      { type: 'yaml_invalid', loc: ['body'], msg: `YAML decode error: ${message.split('\n')[0]}` },
    ]);
  }
}

interface Budget {
  maxValues: number;
  maxTextBytes: number;
  maxDepth: number;
  /** The body limit as configured (e.g. `2mb`), for messages. */
  limit: string;
}

interface Extent {
  values: number;
  textBytes: number;
  /** Levels of collections from this one down, itself included. */
  levels: number;
}

const yamlTooManyAliases = () =>
  new ValidationError([
    { type: 'yaml_too_many_aliases', loc: ['body'], msg: `YAML body uses more than ${MAX_YAML_ALIASES} aliases` },
  ]);
const tooDeep = () =>
  new ValidationError([{ type: 'too_deep', loc: ['body'], msg: `body nests deeper than ${MAX_BODY_DEPTH} levels` }]);
const tooLarge = (what: string, limit: string) =>
  new AppError(
    413,
    `request body is too large once YAML aliases are expanded: more than ${what} (the limit of a ${limit} body)`,
    'payload_too_large',
  );

/**
 * Counts the parsed body as it would be serialised: every value (collections, scalars, and each
 * use of an aliased value again in full), the UTF-8 bytes of its strings and keys, and its depth.
 * A collection met again (an alias) adds the extent remembered from its first walk, so the walk
 * costs as much as the parsed document, never its expansion, and it stops at the first budget
 * exceeded. A collection met inside itself is an alias within its own anchor: a cycle.
 */
function measure(body: unknown, budget: Budget): void {
  const known = new Map<object, Extent>();
  const open = new Set<object>();
  let values = 0;
  let textBytes = 0;
  const add = (v: number, bytes: number) => {
    values += v;
    textBytes += bytes;
    if (values > budget.maxValues) throw tooLarge(`${budget.maxValues} values`, budget.limit);
    if (textBytes > budget.maxTextBytes) throw tooLarge(`${budget.limit} of text`, budget.limit);
  };
  /** Walks `value`, which sits inside `outer` collections; returns its levels. */
  const walk = (value: unknown, outer: number): number => {
    if (typeof value === 'string') {
      add(1, Buffer.byteLength(value));
      return 0;
    }
    if (value === null || typeof value !== 'object') {
      add(1, 0);
      return 0;
    }
    const seen = known.get(value);
    if (seen) {
      if (outer + seen.levels > budget.maxDepth) throw tooDeep();
      add(seen.values, seen.textBytes);
      return seen.levels;
    }
    if (open.has(value))
      throw new ValidationError([
        { type: 'yaml_recursive_alias', loc: ['body'], msg: 'a YAML alias refers to a node that contains it' },
      ]);
    if (outer + 1 > budget.maxDepth) throw tooDeep();
    open.add(value);
    const [values0, bytes0] = [values, textBytes];
    add(1, 0);
    let below = 0;
    if (Array.isArray(value)) {
      for (const item of value) below = Math.max(below, walk(item, outer + 1));
    } else {
      for (const [key, item] of Object.entries(value)) {
        add(0, Buffer.byteLength(key));
        below = Math.max(below, walk(item, outer + 1));
      }
    }
    open.delete(value);
    const extent = { values: values - values0, textBytes: textBytes - bytes0, levels: below + 1 };
    known.set(value, extent);
    return extent.levels;
  };
  walk(body, 0);
}

/** The levels of collections in a JSON value, counted no further than one past `max`. */
function depthOf(value: unknown, max: number): number {
  if (value === null || typeof value !== 'object') return 0;
  if (max <= 0) return 1;
  let below = 0;
  for (const item of Array.isArray(value) ? value : Object.values(value)) {
    if (item !== null && typeof item === 'object') below = Math.max(below, depthOf(item, max - 1));
    if (below >= max) break;
  }
  return below + 1;
}

/** `2mb`, `1kb`, `512b` or a plain byte count (the units koa-body's limits take; k = 1024). */
function parseSize(limit: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?\s*$/i.exec(limit);
  if (!match) throw new Error(`body limit '${limit}' is not a size such as 2mb`);
  const unit = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 }[
    (match[2] ?? 'b').toLowerCase() as 'b' | 'kb' | 'mb' | 'gb'
  ];
  return Math.floor(Number(match[1]) * unit);
}
