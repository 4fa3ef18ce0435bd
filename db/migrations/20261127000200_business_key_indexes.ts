import type { Knex } from 'knex';
import { createIndexOnline, dropIndexOnline } from './online-index';

/** Outside a transaction: on a live idap_resources table the indexes are built and dropped concurrently (online-index.ts). */
export const config = { transaction: false };

// As db/repositories/resources.ts writes them (HELD_BUSINESS_KEYS): the planner uses an index only
// for the same expression. test/integration/idap-business-keys.test.ts checks that it does.
const SPACE = `[\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]`;
const normText = (e: string) =>
  `nullif(lower(regexp_replace(regexp_replace(${e}, '^${SPACE}+|${SPACE}+$', '', 'g'), '${SPACE}+', ' ', 'g')), '')`;

/**
 * A business is found by a natural key it holds besides the one it is stored under (a place id a
 * crawled site kept from the listing that joined it, a listing's name and address) when an import
 * names its parent or a key is resolved (findBusinessByKey): without these, each lookup read every
 * business of the client. The domain has its index already (20261122000800).
 */
export async function up(knex: Knex): Promise<void> {
  await createIndexOnline(
    knex,
    'idap_resources',
    'idap_resources_business_place_idx',
    `(client_id, (btrim(data->>'place_id'))) WHERE resource_type = 'businesses'`,
  );
  await createIndexOnline(
    knex,
    'idap_resources',
    'idap_resources_business_maps_place_idx',
    `(client_id, (btrim(data->>'maps_place_id'))) WHERE resource_type = 'businesses'`,
  );
  await createIndexOnline(
    knex,
    'idap_resources',
    'idap_resources_business_name_key_idx',
    `(client_id, ((${normText(`data->>'name'`)} || '|' || coalesce(${normText(`data->>'address'`)}, '')))) WHERE resource_type = 'businesses'`,
  );
}

export async function down(knex: Knex): Promise<void> {
  for (const name of [
    'idap_resources_business_name_key_idx',
    'idap_resources_business_maps_place_idx',
    'idap_resources_business_place_idx',
  ])
    await dropIndexOnline(knex, 'idap_resources', name);
}
