import { z } from 'zod';
import { FLAGS, MEDIA_TYPES, RESOURCE_TYPES, SOURCES } from '../../lib/idap';
import { uuidParam } from './params';
import { UUID } from '../../lib/ids';

// ---- parameters (spec §4.5) -----------------------------------------------------------------

const anyType = z
  .enum([...RESOURCE_TYPES, ...MEDIA_TYPES])
  .describe(`${RESOURCE_TYPES.join(', ')}; media types (${MEDIA_TYPES.join(', ')}) are served by the media proxy`);

// Listings, stats, resolve and import take record types only: a media type is answered 400 with a
// pointer to the media proxy (the spec's wording), so the document lists the record types alone.
export const typeParams = z.object({
  resource_type: anyType.meta({ enum: [...RESOURCE_TYPES], description: RESOURCE_TYPES.join(', ') }),
});
// `media` is its own path (/idap/media/{media_id}, the media proxy), so it is not a type here.
const recordOrMediaType = anyType.meta({ enum: [...RESOURCE_TYPES, ...MEDIA_TYPES.filter((t) => t !== 'media')] });
export const resourceParams = z.object({
  resource_type: recordOrMediaType,
  resource_id: uuidParam('resource id (UUID)'),
});

/**
 * A comma list of `item`s (blanks around and empty entries ignored, duplicates once). `itemPattern`
 * (a regular expression for one entry) goes into the document as the whole list's pattern, so the
 * document refuses what validation refuses.
 */
const commaList = <T extends z.ZodType<unknown, string>>(item: T, max: number, itemPattern: string) =>
  z
    .string()
    .max(2000)
    .meta({ pattern: `^\\s*(?:${itemPattern})?\\s*(?:,\\s*(?:${itemPattern})?\\s*)*$` })
    .transform((s) => [
      ...new Set(
        s
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean),
      ),
    ])
    .pipe(z.array(item).max(max));

export const fieldsParam = commaList(
  z.string().regex(/^[A-Za-z0-9_]{1,64}$/, 'a field is a name of letters, digits and _'),
  50,
  '[A-Za-z0-9_]{1,64}',
)
  .optional()
  .describe(
    'comma list: top-level keys (tenant_id, created_at, modified_at, flags, data) and data keys; idap_ref, resource_type and resource_id are always present',
  );
export const includeParam = commaList(z.enum(RESOURCE_TYPES), RESOURCE_TYPES.length, RESOURCE_TYPES.join('|'))
  .optional()
  .describe('comma list of related resource types, returned under `related`');

const flagFilter = z.string().refine((v) => (FLAGS as readonly string[]).includes(v.replace(/^!/, '')), {
  message: `unknown flag; flags are ${FLAGS.join(', ')} (prefix ! to exclude)`,
});

export const listQuery = z.strictObject({
  since: z.iso.datetime({ offset: true }).optional().describe('modified after this ISO 8601 time'),
  until: z.iso.datetime({ offset: true }).optional().describe('modified before this ISO 8601 time'),
  limit: z.coerce.number().int().min(1).max(500).default(100),
  cursor: z.string().max(1000).optional().describe('opaque, from next_cursor; valid with the same sort and order'),
  fields: fieldsParam,
  include: includeParam,
  campaign_id: z.string().min(1).max(200).optional(),
  source: z.enum(SOURCES).optional(),
  flags: commaList(flagFilter, FLAGS.length, `!?(?:${FLAGS.join('|')})`)
    .optional()
    .describe(
      'comma list; all must be present; prefix ! excludes; rejected resources are excluded unless flags=rejected is passed',
    ),
  sort: z
    .enum(['created_at', 'updated_at', 'modified_at', 'name'])
    .default('created_at')
    .describe(
      'updated_at (= modified_at) with order=asc is the sync order: following next_cursor loses and repeats nothing while writes happen',
    ),
  order: z.enum(['asc', 'desc']).default('desc'),
});

export const getQuery = z.strictObject({ fields: fieldsParam, include: includeParam });

const PIN_KEYS = ['pin_name', 'pin_data_set_id', 'account_id', 'pin_subscription_id'] as const;
const NATURAL_KEYS = [
  'place_id',
  'website',
  'domain',
  'name',
  'address',
  'email',
  'proflink_url',
  'number',
  'country',
  'registry',
  'registry_id',
  'url',
] as const;
export const resolveQuery = z.strictObject({
  ...Object.fromEntries([...PIN_KEYS, ...NATURAL_KEYS].map((k) => [k, z.string().trim().min(1).max(500).optional()])),
  include: includeParam,
} as Record<(typeof PIN_KEYS)[number] | (typeof NATURAL_KEYS)[number], z.ZodOptional<z.ZodString>> & {
  include: typeof includeParam;
});
export { PIN_KEYS };

export const patchBody = z
  .strictObject({
    add: z.array(z.enum(FLAGS)).max(FLAGS.length).default([]),
    remove: z.array(z.enum(FLAGS)).max(FLAGS.length).default([]),
  })
  .refine((b) => b.add.length + b.remove.length > 0, { message: 'give flags to add or remove', path: [] })
  .refine((b) => !b.add.some((f) => b.remove.includes(f)), {
    message: 'a flag cannot be both added and removed',
    path: [],
  })
  .meta({
    id: 'IdapFlagsPatch',
    description: 'Flags to add and to remove (spec §2.9 values); at least one, none in both',
    anyOf: [
      { required: ['add'], properties: { add: { minItems: 1 } } },
      { required: ['remove'], properties: { remove: { minItems: 1 } } },
    ],
  });

const BUSINESS_KEYS = ['place_id', 'website', 'domain', 'name', 'address'] as const;
const BUSINESS_REF = new RegExp(`^idap://businesses/${UUID.source.slice(1)}`);

/** A pin's parent business (resolve: pin to parent business): its idap_ref, or its keys. */
export const pinParent = z
  .union(
    [
      z
        .string()
        .regex(BUSINESS_REF, 'a parent is a business: idap://businesses/{uuid}, or an object of its keys')
        .describe("the business's idap_ref, idap://businesses/{uuid}"),
      z
        .strictObject(
          Object.fromEntries(BUSINESS_KEYS.map((k) => [k, z.string().trim().min(1).max(500).optional()])) as Record<
            (typeof BUSINESS_KEYS)[number],
            z.ZodOptional<z.ZodString>
          >,
        )
        .describe(
          "the business's keys (place_id, website or domain, or name with address), matched as businesses/resolve matches them",
        ),
    ],
    {
      error:
        'a parent is a business: its idap_ref idap://businesses/{uuid}, or an object of its keys (place_id, website, domain, name, address)',
    },
  )
  .describe(
    'pins only: the parent business of the pin, which pins/resolve answers. It must be a business of this client, else the import is refused ' +
      '(422, detail loc body.records.{i}.parent). A pin has one parent: a new one replaces it; omitted, the stored one is kept.',
  );

export const importBody = z
  .strictObject({
    records: z
      .array(
        z.strictObject({
          data: z
            .record(z.string(), z.unknown())
            .describe(
              'the resource data; its natural key is derived from it (e.g. address for emails, place_id/website/name for businesses)',
            ),
          flags: z.array(z.enum(FLAGS)).max(FLAGS.length).optional(),
          campaign_id: z.string().min(1).max(200).optional(),
          parent: pinParent.optional(),
        }),
      )
      .min(1)
      .max(1000)
      .describe('1-1000 records; records with the same natural key are merged'),
    source: z.enum(SOURCES).default('import'),
  })
  .meta({ id: 'IdapImportRequest' });

// ---- responses ------------------------------------------------------------------------------

export const idapResource = z
  .object({
    idap_ref: z.string().describe('idap://{resource_type}/{resource_id}'),
    resource_type: z.string(),
    resource_id: z.string().uuid(),
    tenant_id: z.string().optional().describe('the client id'),
    created_at: z.string().optional().describe('ISO 8601 with microseconds'),
    modified_at: z
      .string()
      .optional()
      .describe('ISO 8601 with microseconds; pass the latest as since for a delta sync'),
    flags: z.array(z.enum(FLAGS)).optional(),
    data: z.record(z.string(), z.unknown()).optional(),
    related: z
      .record(z.string(), z.array(z.record(z.string(), z.unknown())))
      .optional()
      .describe('with include: related resources by type, each {idap_ref, resource_id, ...data}'),
  })
  .meta({ id: 'IdapResource' });

export const listResponse = z
  .object({
    resource_type: z.string(),
    count: z.number().int().describe('items in this page'),
    has_more: z.boolean(),
    next_cursor: z.string().nullable(),
    items: z.array(idapResource),
  })
  .meta({ id: 'IdapListResponse' });

export const statsResponse = z
  .object({
    resource_type: z.string(),
    total: z.number().int(),
    by_flag: z.record(z.string(), z.number().int()).describe('only flags held by at least one resource'),
    by_source: z.record(z.string(), z.number().int()),
    last_24h: z.object({
      created: z.number().int(),
      updated: z.number().int().describe('modified in the last 24 hours after their creation'),
    }),
  })
  .meta({ id: 'IdapStatsResponse' });

export const resolveResponse = idapResource
  .extend({
    resolved_from: z.string().describe('idap_ref of the resource the keys matched (the pin, for pins)'),
  })
  .meta({ id: 'IdapResolveResponse' });

export const importResponse = z
  .object({
    success: z.boolean(),
    resource_type: z.string(),
    received: z.number().int(),
    created: z.number().int(),
    updated: z.number().int(),
    unchanged: z.number().int(),
    duplicates: z.number().int().describe('records merged into an earlier record of the same request'),
    items: z.array(
      z.object({
        index: z.number().int(),
        idap_ref: z.string(),
        resource_id: z.string().uuid(),
        status: z.enum(['created', 'updated', 'unchanged', 'duplicate']),
      }),
    ),
  })
  .meta({ id: 'IdapImportResponse' });
