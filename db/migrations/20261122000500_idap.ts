import type { Knex } from 'knex';

/**
 * IDAP resources (spec §2.9, §4.5) and the relations between them. Writes go through
 * db/repositories/resources.ts, which keeps change_seq in commit order per client (see there).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE SEQUENCE idap_change_seq');
  await knex.schema.createTable('idap_resources', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('client_id').notNullable().references('id').inTable('clients').onDelete('CASCADE');
    t.text('resource_type').notNullable();
    // lib/idap.ts naturalKeyOf: place id, domain, e-mail, E.164 phone, registry+id, profile URL, ...
    t.text('natural_key').notNullable();
    t.jsonb('data').notNullable().defaultTo('{}');
    t.specificType('flags', 'text[]').notNullable().defaultTo('{}');
    t.specificType('sources', 'text[]').notNullable().defaultTo('{}');
    t.specificType('campaign_ids', 'text[]').notNullable().defaultTo('{}');
    // Bumped from idap_change_seq on every write: the keyset of the sync order (sort=updated_at).
    t.bigInteger('change_seq').notNullable();
    t.timestamp('created_at', { useTz: true, precision: 6 }).notNullable();
    t.timestamp('modified_at', { useTz: true, precision: 6 }).notNullable();
    t.unique(['client_id', 'resource_type', 'natural_key'], { indexName: 'idap_resources_natural_key_uniq' });
  });
  await knex.raw(
    `ALTER TABLE idap_resources ADD CONSTRAINT idap_resources_type_check CHECK (resource_type IN ('businesses','domains','contacts','emails','phones','company_registry','proflink_profiles','pins'))`,
  );
  // Keyset indexes: sync (modified order) and the default listing (created_at), both directions.
  await knex.raw(
    'CREATE UNIQUE INDEX idap_resources_sync_idx ON idap_resources (client_id, resource_type, change_seq)',
  );
  await knex.raw(
    'CREATE INDEX idap_resources_created_idx ON idap_resources (client_id, resource_type, created_at, id)',
  );
  await knex.raw(
    `CREATE INDEX idap_resources_name_idx ON idap_resources (client_id, resource_type, (coalesce(data->>'name', '')), id)`,
  );
  // resolve: pins by pin_name, pin_data_set_id, account_id, pin_subscription_id.
  await knex.raw(
    `CREATE INDEX idap_resources_pin_keys_idx ON idap_resources USING gin (data jsonb_path_ops) WHERE resource_type = 'pins'`,
  );

  await knex.schema.createTable('idap_relations', (t) => {
    t.text('client_id').notNullable().references('id').inTable('clients').onDelete('CASCADE');
    t.uuid('from_id').notNullable().references('id').inTable('idap_resources').onDelete('CASCADE');
    t.text('to_type').notNullable();
    t.uuid('to_id').notNullable().references('id').inTable('idap_resources').onDelete('CASCADE');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // Stored in both directions: `include` reads one side with this primary key.
    t.primary(['from_id', 'to_type', 'to_id']);
  });
  await knex.raw('CREATE INDEX idap_relations_to_idx ON idap_relations (to_id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('idap_relations');
  await knex.schema.dropTable('idap_resources');
  await knex.raw('DROP SEQUENCE idap_change_seq');
}
