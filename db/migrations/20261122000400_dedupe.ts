import type { Knex } from 'knex';

const KEYS = ['maps_place_id', 'key_email', 'key_proflink', 'key_phone', 'key_domain', 'record_hash'] as const;

/** The de-duplication store (spec §2.7, §4.6): canonical records and the check-batch idempotency cache. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('canonical_records', (t) => {
    // Integer ids: the API's matched_canonical_id / canonical_id are integers.
    t.bigIncrements('id').primary();
    t.text('client_id').notNullable().references('id').inTable('clients').onDelete('CASCADE');
    t.text('record_type').notNullable();
    t.text('campaign_id');
    t.text('record_hash').notNullable();
    // The record's fields as given (trimmed), shown by the canonical listing.
    for (const f of [
      'email',
      'full_name',
      'company_name',
      'company_domain',
      'maps_place_id',
      'proflink_url',
      'phone',
      'city',
      'country',
    ])
      t.text(f);
    // Normalised match keys (lib/dedupe.ts matchKeys); maps_place_id is its own key.
    t.text('key_email');
    t.text('key_proflink');
    t.text('key_phone');
    t.text('key_domain');
    t.jsonb('data').notNullable();
    t.text('source_worker').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('deleted_at', { useTz: true });
  });
  await knex.raw(
    `ALTER TABLE canonical_records ADD CONSTRAINT canonical_records_type_check CHECK (record_type IN ('business','contact','email','profile'))`,
  );
  // One live record per (client, type, key, campaign scope): two concurrent checks of the same new
  // record cannot both insert. The key leads the campaign so that a check without campaign_id
  // (matching across all campaigns) uses the same index by its prefix.
  for (const key of KEYS) {
    await knex.raw(
      `CREATE UNIQUE INDEX canonical_records_${key}_uniq ON canonical_records (client_id, record_type, ${key}, (coalesce(campaign_id, '')))
       WHERE ${key} IS NOT NULL AND deleted_at IS NULL`,
    );
  }
  // The canonical listing: newest first, with or without a record_type filter.
  await knex.raw(
    `CREATE INDEX canonical_records_list_idx ON canonical_records (client_id, created_at DESC, id DESC) WHERE deleted_at IS NULL`,
  );
  await knex.raw(
    `CREATE INDEX canonical_records_list_type_idx ON canonical_records (client_id, record_type, created_at DESC, id DESC) WHERE deleted_at IS NULL`,
  );

  await knex.schema.createTable('dedupe_idempotency', (t) => {
    t.text('client_id').notNullable().references('id').inTable('clients').onDelete('CASCADE');
    t.text('idempotency_key').notNullable();
    t.jsonb('response').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['client_id', 'idempotency_key']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('dedupe_idempotency');
  await knex.schema.dropTable('canonical_records');
}
