import { z } from 'zod';
import type { AnyRouteDef } from './routing';

/** The version the spec's machine-readable description declares (spec §9.2). */
export const API_VERSION = '2.10.0';

const errorSchema = z.object({ detail: z.string() }).meta({ description: 'Error (spec §7.1)' });
const validationErrorSchema = z
  .object({
    detail: z.array(z.object({ type: z.string(), loc: z.array(z.union([z.string(), z.number()])), msg: z.string() })),
  })
  .meta({ description: 'Validation error (422)' });
const successErrorSchema = z.object({ success: z.literal(false), error: z.string(), detail: z.unknown() });

/** Named schemas (zod `.meta({ id })`), shared by every operation under components.schemas. */
type Components = Record<string, unknown>;

// ---- what a request may carry (api/validation.ts) ---------------------------------------------

/** No string of a request (nor a key of its objects) may hold NUL: api/validation.ts refuses it, as Postgres cannot store it. */
const NO_NUL = '^[^\\u0000]*$';
const SCHEMA_KEYS = [
  'items',
  'additionalProperties',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'unevaluatedProperties',
  'unevaluatedItems',
];
const SCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const SCHEMA_MAPS = ['properties', 'patternProperties', 'dependentSchemas'];
const CONSTRAINING = ['type', '$ref', 'allOf', 'anyOf', 'oneOf', 'const', 'enum', 'not', 'if', 'properties', 'items'];

/**
 * Any JSON value without NUL in its strings and keys, to the depth a request's free-form values are
 * read at here (three levels; deeper, anything): JSON Schema tools handle a recursive one poorly.
 */
function storableJson(depth: number): Record<string, unknown> {
  if (depth === 0) return {};
  const inner = storableJson(depth - 1);
  return {
    anyOf: [
      { type: ['null', 'boolean', 'number'] },
      { type: 'string', pattern: NO_NUL },
      { type: 'array', items: inner },
      { type: 'object', propertyNames: { pattern: NO_NUL }, additionalProperties: inner },
    ],
  };
}
const STORABLE_JSON = 'StorableJson';

/**
 * A request's JSON Schema with what api/validation.ts refuses in any request stated: every string and
 * every key of an open object without NUL; a free-form value (`{}`, or one with only a description)
 * is a StorableJson.
 */
function storable(node: unknown): unknown {
  if (node === null || typeof node !== 'object' || Array.isArray(node)) return node;
  const n = node as Record<string, unknown>;
  const out: Record<string, unknown> = { ...n };
  for (const k of SCHEMA_KEYS) if (k in n && typeof n[k] === 'object') out[k] = storable(n[k]);
  for (const k of SCHEMA_LISTS) if (Array.isArray(n[k])) out[k] = (n[k] as unknown[]).map(storable);
  for (const k of SCHEMA_MAPS) {
    if (n[k] && typeof n[k] === 'object')
      out[k] = Object.fromEntries(Object.entries(n[k] as Record<string, unknown>).map(([p, v]) => [p, storable(v)]));
  }
  if (!CONSTRAINING.some((k) => k in n)) return { ...out, $ref: `#/components/schemas/${STORABLE_JSON}` };
  const types = [n.type].flat();
  if (types.includes('string')) {
    if (out.pattern === undefined) out.pattern = NO_NUL;
    else out.allOf = [...((out.allOf as unknown[] | undefined) ?? []), { pattern: NO_NUL }];
  }
  if (types.includes('object') && n.additionalProperties !== false && out.propertyNames === undefined)
    out.propertyNames = { pattern: NO_NUL };
  return out;
}

/**
 * zod's JSON Schema for one request or response. Named sub-schemas come out as `$defs` with
 * `#/$defs/...` references, which would resolve against the OpenAPI document's root: they are
 * hoisted into components.schemas and the references rewritten to point there.
 */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output', components: Components): Record<string, unknown> {
  const {
    $schema: _ignored,
    $defs,
    ...rest
  } = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as Record<string, unknown>;
  const rewrite = (value: unknown): unknown =>
    JSON.parse(
      JSON.stringify(value).replace(
        /"#\/\$defs\/([^"]+)"/g,
        (_m, id: string) => `"#/components/schemas/${io === 'input' ? `${id}Input` : id}"`,
      ),
    );
  // A request states what api/validation.ts refuses in any request (NUL), besides its own schema.
  const fit = io === 'input' ? storable : (v: unknown) => v;
  if (io === 'input') components[STORABLE_JSON] ??= storableJson(3);
  for (const [id, def] of Object.entries(($defs ?? {}) as Record<string, unknown>)) {
    components[io === 'input' ? `${id}Input` : id] = fit(rewrite(def));
  }
  return fit(rewrite(rest)) as Record<string, unknown>;
}

/** Query, path or header parameters from a zod object schema. */
function parameters(
  schema: z.ZodType | undefined,
  where: 'query' | 'path' | 'header',
  components: Components,
): Record<string, unknown>[] {
  if (!schema) return [];
  const js = jsonSchema(schema, 'input', components) as {
    properties?: Record<string, Record<string, unknown>>;
    required?: string[];
  };
  return Object.entries(js.properties ?? {}).map(([name, prop]) => ({
    name,
    in: where,
    required: where === 'path' || (js.required ?? []).includes(name),
    ...(prop.description ? { description: prop.description } : {}),
    schema: prop,
  }));
}

const formatParameter = {
  name: 'format',
  in: 'query',
  required: false,
  description: 'Response representation (spec §1.2.5): json (default), yaml, or md (Markdown; lists render as tables).',
  schema: { type: 'string', enum: ['json', 'yaml', 'md'], default: 'json' },
};

/** OpenAPI 3.1 document built from the route definitions and their zod schemas. */
export function buildOpenApi(routes: AnyRouteDef[], serverUrl?: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const components: Components = {};
  for (const r of routes) {
    const responses: Record<string, unknown> = {};
    // A JSON answer of a GET is also served as YAML or Markdown on ?format=yaml|md (api/middleware/format.ts).
    const formats = r.method === 'get' && !r.ownFormat;
    for (const [status, res] of Object.entries(r.responses)) {
      const contentTypes = [res.contentType ?? 'application/json'].flat();
      // An error status declared with a description only has the route's error body.
      const bodySchema =
        res.schema ??
        (Number(status) >= 400 && !res.contentType
          ? r.errorShape === 'success'
            ? successErrorSchema
            : status === '422'
              ? validationErrorSchema
              : errorSchema
          : undefined);
      const schema = bodySchema ? jsonSchema(bodySchema, 'output', components) : undefined;
      const content: Record<string, unknown> = schema
        ? Object.fromEntries(contentTypes.map((type) => [type, { schema }]))
        : {};
      if (schema && formats && res.contentType === undefined) {
        content['application/yaml'] = { schema };
        content['text/markdown'] = { schema: { type: 'string' } };
      }
      responses[status] = { description: res.description, ...(schema ? { content } : {}) };
    }
    const errorBody = r.errorShape === 'success' ? successErrorSchema : errorSchema;
    // Error bodies follow ?format= too (api/middleware/format.ts): YAML and Markdown besides JSON.
    const errorContent = (schema: Record<string, unknown>) =>
      formats
        ? {
            'application/json': { schema },
            'application/yaml': { schema },
            'text/markdown': { schema: { type: 'string' } },
          }
        : { 'application/json': { schema } };
    const addError = (status: number, description: string, schema: z.ZodType = errorBody) => {
      if (!(String(status) in responses))
        responses[status] = { description, content: errorContent(jsonSchema(schema, 'output', components)) };
    };
    if (r.security !== 'none') {
      addError(401, 'Missing or invalid credentials');
      addError(403, 'Client account is inactive');
      addError(429, 'Rate limit exceeded (100 requests per minute, burst 20 per second)');
    } else {
      addError(
        429,
        'Too many requests from this address (PUBLIC_RATE_LIMIT_PER_MINUTE, PUBLIC_RATE_LIMIT_BURST); retry after Retry-After',
      );
    }
    // An unknown ?format= and an unreadable body are refused before the route is known
    // (api/middleware/format.ts, body.ts), in the common validation shape: a route whose own errors
    // are {success: false} documents both shapes, and one whose 422 is a page, JSON too.
    if ((formats || r.body) && r.errorShape === 'success') {
      responses[422] = {
        description: r.responses[422]?.description ?? 'Validation error',
        content: errorContent({
          anyOf: [
            jsonSchema(successErrorSchema, 'output', components),
            jsonSchema(validationErrorSchema, 'output', components),
          ],
        }),
      };
    } else if (formats || r.params || r.query || r.body || r.bodyDoc || r.headers) {
      addError(422, 'Validation error', r.errorShape === 'success' ? successErrorSchema : validationErrorSchema);
    }
    const declared422 = responses[422] as { content?: Record<string, unknown> } | undefined;
    if (formats && declared422?.content && !('application/json' in declared422.content)) {
      declared422.content['application/json'] = { schema: jsonSchema(validationErrorSchema, 'output', components) };
    }
    // Node answers a request line or headers past its limit (16 KiB) with 431 and no body, before the app.
    responses[431] = { description: 'Request line or headers too large' };
    const bodyTypes = r.bodyContentType
      ? [r.bodyContentType]
      : ['application/json', 'application/yaml', 'text/yaml', 'application/x-yaml'];
    if (r.body && r.bodyErrors !== 'bad_request') addError(415, 'Unsupported request content type');
    // Every parsed body has a size limit (api/middleware/body.ts), inflated gzip/deflate included.
    if (r.body) addError(413, 'Request body too large');
    // Any request that reaches a backing service can meet it down (lib/outages.ts): 503 with Retry-After, never a 500.
    addError(503, 'A backing service (database, queue, search or storage) is unavailable; retry after Retry-After');

    (paths[r.path] ??= {})[r.method] = {
      operationId: r.operationId,
      summary: r.summary,
      ...(r.description ? { description: r.description } : {}),
      tags: r.tags,
      security:
        r.security === 'client' ? [{ bearerCredential: [] }] : r.security === 'token' ? [{ tokenQuery: [] }] : [],
      parameters: [
        ...parameters(r.params, 'path', components),
        ...parameters(r.headers, 'header', components),
        ...parameters(r.query, 'query', components),
        ...(r.method === 'get' && !r.ownFormat ? [formatParameter] : []),
      ],
      // A route that reads its body itself (multipart uploads) documents it with bodyDoc alone.
      ...(r.body || r.bodyDoc
        ? {
            requestBody: {
              required: true,
              content: Object.fromEntries(
                bodyTypes.map((t) => [
                  t,
                  { schema: jsonSchema((r.bodyDoc ?? r.body) as z.ZodType, 'input', components) },
                ]),
              ),
            },
          }
        : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'leadjobs — asynchronous lead-data job service',
      version: API_VERSION,
      description:
        'Submit scraping and enrichment jobs, poll or stream their progress, and read de-duplicated leads. ' +
        'Every GET accepts ?format=yaml|md; POST/PATCH accept JSON or YAML bodies. All data is scoped to the authenticated client.',
    },
    ...(serverUrl ? { servers: [{ url: serverUrl }] } : {}),
    components: {
      schemas: components,
      securitySchemes: {
        bearerCredential: {
          type: 'http',
          scheme: 'bearer',
          description: 'Authorization: Bearer <client_id>:<api_key>:<api_secret> (three parts joined with colons).',
        },
        tokenQuery: {
          type: 'apiKey',
          in: 'query',
          name: 'token',
          description: 'client_id:api_key:api_secret, for the event stream.',
        },
      },
    },
    paths,
  };
}
