import type { Knex } from 'knex';
import { writeFuzzyKeys } from './fuzzy-keys';
import { createIndexOnline, dropIndexOnline } from './online-index';

/** Outside a transaction: on a live canonical_records table the indexes are built concurrently (online-index.ts). */
export const config = { transaction: false };

/**
 * Fuzzy de-duplication (issue 41, lib/dedupe-fuzzy.ts): a business's blocking keys (a name word's
 * start with its town, house number and street), searched in a GIN index of the keys alone (the
 * client's own rows are then picked from the few a key holds: with the client in the index too, via
 * btree_gin, every probe read the client's whole posting list, 480 ms a batch at 100k records), and
 * a person key (company domain | last name) searched by equality. Existing records get their keys
 * in batches (the normalisation is the application's, not SQL's). Also: a merged record's pointer
 * to its canonical record, and a campaign's dedupe_fuzzy, which its location jobs' crawlMaps
 * payloads carry.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    'ALTER TABLE canonical_records ADD COLUMN IF NOT EXISTS key_blocks text[], ADD COLUMN IF NOT EXISTS key_person text',
  );
  // A merged record points to its canonical record (POST /api/v1/dedupe/canonical/{id}/merge).
  await knex.raw(
    'ALTER TABLE canonical_records ADD COLUMN IF NOT EXISTS merged_into bigint REFERENCES canonical_records (id) ON DELETE SET NULL, ADD COLUMN IF NOT EXISTS merged_at timestamptz',
  );
  await createIndexOnline(
    knex,
    'canonical_records',
    'canonical_records_merged_into_idx',
    '(merged_into) WHERE merged_into IS NOT NULL',
  );
  // A campaign's location jobs match fuzzily when it says so (crawlMaps dedupe_fuzzy).
  await knex.raw('ALTER TABLE campaigns ADD COLUMN IF NOT EXISTS dedupe_fuzzy boolean NOT NULL DEFAULT false');
  await writeFuzzyKeys(knex);
  await createIndexOnline(
    knex,
    'canonical_records',
    'canonical_records_key_blocks_idx',
    'USING gin (key_blocks) WHERE key_blocks IS NOT NULL AND deleted_at IS NULL',
  );
  await createIndexOnline(
    knex,
    'canonical_records',
    'canonical_records_key_person_idx',
    '(client_id, record_type, key_person) WHERE key_person IS NOT NULL AND deleted_at IS NULL',
  );
}

export async function down(knex: Knex): Promise<void> {
  await dropIndexOnline(knex, 'canonical_records', 'canonical_records_key_person_idx');
  await dropIndexOnline(knex, 'canonical_records', 'canonical_records_key_blocks_idx');
  await dropIndexOnline(knex, 'canonical_records', 'canonical_records_merged_into_idx');
  await knex.raw(
    'ALTER TABLE canonical_records DROP COLUMN IF EXISTS key_person, DROP COLUMN IF EXISTS key_blocks, DROP COLUMN IF EXISTS merged_into, DROP COLUMN IF EXISTS merged_at',
  );
  await knex.raw('ALTER TABLE campaigns DROP COLUMN IF EXISTS dedupe_fuzzy');
}
