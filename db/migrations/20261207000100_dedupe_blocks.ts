import type { Knex } from 'knex';
import { writeFuzzyKeys } from './fuzzy-keys';
import { createIndexOnline, dropIndexOnline } from './online-index';

/**
 * The blocking keys of fuzzy de-duplication (lib/dedupe-fuzzy.ts fuzzyKeys) as rows of their own,
 * one a (record, key), in a btree led by the client: a check reads each key's newest entries from
 * the index alone and stops after a few hundred, however many records share the key. The GIN index
 * of canonical_records.key_blocks it replaces had to fetch and sort every record of a key (a trade
 * word in a town: 250 rows at 1M records) for each of a batch's ~200 keys.
 *
 * canonical_records.key_blocks stays the source: statement-level triggers keep the rows in step with
 * every insert, update (keys, soft delete, campaign) and delete of canonical records, a client's
 * deletion included (its cascade fires them), so no write path can forget them.
 */
export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TABLE IF NOT EXISTS canonical_blocks (
    client_id text NOT NULL,
    record_type text NOT NULL,
    key text NOT NULL,
    record_id bigint NOT NULL,
    campaign_id text,
    PRIMARY KEY (client_id, record_type, key, record_id)
  )`);
  // A live record's keys; a soft-deleted record has none. Each branch names only the transition
  // tables its trigger has (a DELETE trigger has no new_rows).
  const changed = `(n.key_blocks IS DISTINCT FROM o.key_blocks OR (n.deleted_at IS NULL) <> (o.deleted_at IS NULL)
    OR n.campaign_id IS DISTINCT FROM o.campaign_id)`;
  const remove = (from: string, where: string) =>
    `DELETE FROM canonical_blocks b USING ${from}
      WHERE b.client_id = o.client_id AND b.record_type = o.record_type AND b.key = ANY (o.key_blocks) AND b.record_id = o.id ${where};`;
  const add = (from: string, where: string) =>
    `INSERT INTO canonical_blocks (client_id, record_type, key, record_id, campaign_id)
      SELECT n.client_id, n.record_type, k.key, n.id, n.campaign_id FROM ${from} CROSS JOIN LATERAL unnest(n.key_blocks) AS k(key)
      WHERE n.deleted_at IS NULL ${where}
      ON CONFLICT DO NOTHING;`;
  await knex.raw(`CREATE OR REPLACE FUNCTION canonical_blocks_sync() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP = 'INSERT' THEN
      ${add('new_rows n', '')}
    ELSIF TG_OP = 'UPDATE' THEN
      ${remove('old_rows o JOIN new_rows n ON n.id = o.id', `AND ${changed}`)}
      ${add('new_rows n JOIN old_rows o ON o.id = n.id', `AND ${changed}`)}
    ELSE
      ${remove('old_rows o', '')}
    END IF;
    RETURN NULL;
  END $$`);
  // Transition tables allow one event a trigger.
  await knex.raw(`DROP TRIGGER IF EXISTS canonical_blocks_insert ON canonical_records`);
  await knex.raw(`CREATE TRIGGER canonical_blocks_insert AFTER INSERT ON canonical_records
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION canonical_blocks_sync()`);
  await knex.raw(`DROP TRIGGER IF EXISTS canonical_blocks_update ON canonical_records`);
  await knex.raw(`CREATE TRIGGER canonical_blocks_update AFTER UPDATE ON canonical_records
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION canonical_blocks_sync()`);
  await knex.raw(`DROP TRIGGER IF EXISTS canonical_blocks_delete ON canonical_records`);
  await knex.raw(`CREATE TRIGGER canonical_blocks_delete AFTER DELETE ON canonical_records
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION canonical_blocks_sync()`);
  // The keys as fuzzyKeys writes them now (a longer word's whole word added): the triggers file the
  // changed ones, the statement below the rest.
  await writeFuzzyKeys(knex);
  await knex.raw(`INSERT INTO canonical_blocks (client_id, record_type, key, record_id, campaign_id)
    SELECT c.client_id, c.record_type, k.key, c.id, c.campaign_id FROM canonical_records c CROSS JOIN LATERAL unnest(c.key_blocks) AS k(key)
    WHERE c.deleted_at IS NULL
    ON CONFLICT DO NOTHING`);
  await dropIndexOnline(knex, 'canonical_records', 'canonical_records_key_blocks_idx');
}

export async function down(knex: Knex): Promise<void> {
  await createIndexOnline(
    knex,
    'canonical_records',
    'canonical_records_key_blocks_idx',
    'USING gin (key_blocks) WHERE key_blocks IS NOT NULL AND deleted_at IS NULL',
  );
  for (const t of ['insert', 'update', 'delete'])
    await knex.raw(`DROP TRIGGER IF EXISTS canonical_blocks_${t} ON canonical_records`);
  await knex.raw('DROP FUNCTION IF EXISTS canonical_blocks_sync()');
  await knex.raw('DROP TABLE IF EXISTS canonical_blocks');
}
