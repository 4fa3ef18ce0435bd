import type { Knex } from 'knex';
import { fuzzyKeys } from '../../lib/dedupe-fuzzy';
import type { DedupeRecord } from '../../lib/dedupe';
import { createIndexOnline, dropIndexOnline } from './online-index';

/** Outside a transaction: on a live canonical_records table the index is built concurrently (online-index.ts). */
export const config = { transaction: false };

const BATCH = 5000;

/**
 * Fuzzy de-duplication's keys (issue 41, lib/dedupe-fuzzy.ts): a business name key searched by
 * trigram similarity (pg_trgm; btree_gin puts the client in the same GIN index, so a search reads
 * only the client's trigrams) and a person key (company domain | last name) searched by equality.
 * The extensions go to the public schema (on every connection's search_path, db/index.ts), once
 * per database: both are trusted extensions, so the service's own role can create them. Existing
 * records get their keys in batches (the normalisation is the application's, not SQL's). And a
 * campaign's dedupe_fuzzy, which its location jobs' crawlMaps payloads carry.
 */
export async function up(knex: Knex): Promise<void> {
  for (const ext of ['pg_trgm', 'btree_gin']) await createExtension(knex, ext);
  await raiseTrigramCost(knex);
  await knex.raw(
    'ALTER TABLE canonical_records ADD COLUMN IF NOT EXISTS key_name text, ADD COLUMN IF NOT EXISTS key_person text',
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
  for (let last = 0; ;) {
    const { rows } = (await knex.raw('SELECT id, data FROM canonical_records WHERE id > ? ORDER BY id LIMIT ?', [
      last,
      BATCH,
    ])) as { rows: { id: string; data: DedupeRecord }[] };
    if (rows.length === 0) break;
    const keys = rows
      .map((r) => ({ id: r.id, ...fuzzyKeys(r.data) }))
      .filter((k) => k.name !== null || k.person !== null);
    if (keys.length > 0) {
      await knex.raw(
        `UPDATE canonical_records c SET key_name = x.name, key_person = x.person
         FROM jsonb_to_recordset(?::jsonb) AS x(id bigint, name text, person text) WHERE c.id = x.id`,
        [JSON.stringify(keys)],
      );
    }
    last = Number(rows[rows.length - 1]?.id);
  }
  await createIndexOnline(
    knex,
    'canonical_records',
    'canonical_records_key_name_trgm_idx',
    'USING gin (client_id, key_name public.gin_trgm_ops) WHERE key_name IS NOT NULL AND deleted_at IS NULL',
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
  await dropIndexOnline(knex, 'canonical_records', 'canonical_records_key_name_trgm_idx');
  await dropIndexOnline(knex, 'canonical_records', 'canonical_records_merged_into_idx');
  await knex.raw(
    'ALTER TABLE canonical_records DROP COLUMN IF EXISTS key_person, DROP COLUMN IF EXISTS key_name, DROP COLUMN IF EXISTS merged_into, DROP COLUMN IF EXISTS merged_at',
  );
  await knex.raw('ALTER TABLE campaigns DROP COLUMN IF EXISTS dedupe_fuzzy');
  // The extensions stay: other schemas of the database (other installs, test schemas) may use them.
}

/**
 * pg_trgm declares its `%` (similarity_op) as cheap as `=`, so on a table of a few thousand rows
 * the planner scans it and computes every row's trigrams for each name of a batch (7 ms a name at
 * 900 rows, growing with the table) instead of reading the trigram index (EXPLAIN in
 * docs/operations.md). Its real cost is about a hundred comparisons. Changing it needs the
 * function's owner (the superuser that installed the extension): a role without that right leaves
 * it, and docs/operations.md gives the statement to run once.
 */
async function raiseTrigramCost(knex: Knex): Promise<void> {
  const current = async () =>
    Number(
      (
        (await knex.raw(
          "SELECT procost FROM pg_proc WHERE oid = 'public.similarity_op(text, text)'::regprocedure",
        )) as { rows: { procost: number }[] }
      ).rows[0]?.procost,
    );
  if ((await current()) >= 100) return;
  try {
    await knex.raw('ALTER FUNCTION public.similarity_op(text, text) COST 100');
  } catch (err) {
    const code = (err as { code?: string }).code;
    // insufficient_privilege: left as it is; XX000 "tuple concurrently updated": another schema's migration changed it first.
    if (code !== '42501' && !(code === 'XX000' && (await current()) >= 100)) throw err;
  }
}

/** CREATE EXTENSION once per database; two schemas migrating at once race on it, and the loser finds it made. */
async function createExtension(knex: Knex, name: string): Promise<void> {
  try {
    await knex.raw(`CREATE EXTENSION IF NOT EXISTS ${name} SCHEMA public`);
  } catch (err) {
    if ((err as { code?: string }).code !== '23505') throw err;
  }
}
