import type { Knex } from 'knex';
import { createIndexOnline, dropIndexOnline } from './online-index';

/** Outside a transaction: on a live idap_resources table the indexes are built and dropped concurrently (online-index.ts). */
export const config = { transaction: false };

// As db/repositories/resources.ts writes it (BUSINESS_NAME_KEY_SQL): the planner uses an index only
// for the same expression. test/integration/idap.test.ts checks that it does.
const SPACE = `[\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]`;
const nameKey = (lower: (e: string) => string) => {
  const normText = (e: string) =>
    `nullif(${lower(`regexp_replace(regexp_replace(${e}, '^${SPACE}+|${SPACE}+$', '', 'g'), '${SPACE}+', ' ', 'g')`)}, '')`;
  return `(client_id, ((${normText(`data->>'name'`)} || '|' || coalesce(${normText(`data->>'address'`)}, '')))) WHERE resource_type = 'businesses'`;
};
const icuLower = (e: string) => `lower((${e}) COLLATE "und-x-icu")`;
const localeLower = (e: string) => `lower(${e})`;

/**
 * The business name key's lower case is JavaScript's (Unicode's full case mapping, by ICU's root
 * locale), not the database locale's: with glibc's, a business named with a Turkish İ or a
 * word-final Σ was not found by its name and address. The index is rebuilt for the new expression.
 */
export async function up(knex: Knex): Promise<void> {
  await createIndexOnline(knex, 'idap_resources', 'idap_resources_business_name_icu_idx', nameKey(icuLower));
  await dropIndexOnline(knex, 'idap_resources', 'idap_resources_business_name_key_idx');
}

export async function down(knex: Knex): Promise<void> {
  await createIndexOnline(knex, 'idap_resources', 'idap_resources_business_name_key_idx', nameKey(localeLower));
  await dropIndexOnline(knex, 'idap_resources', 'idap_resources_business_name_icu_idx');
}
