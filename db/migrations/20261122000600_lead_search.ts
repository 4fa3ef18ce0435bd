import type { Knex } from 'knex';

/**
 * Lead search: the outbox of businesses whose Elasticsearch document must be (re)written, and each
 * client's ideal-customer profile (ICP) that icp_score measures leads against.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('search_outbox', (t) => {
    t.text('client_id').notNullable().references('id').inTable('clients').onDelete('CASCADE');
    // An idap_resources id of type businesses; no FK: a deleted business must still leave the index.
    t.uuid('resource_id').notNullable();
    t.text('job_id');
    t.timestamp('enqueued_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.integer('attempts').notNullable().defaultTo(0);
    t.text('last_error');
    t.primary(['client_id', 'resource_id']);
  });
  await knex.schema.createTable('icp_profiles', (t) => {
    t.text('client_id').primary().references('id').inTable('clients').onDelete('CASCADE');
    t.specificType('industries', 'text[]').notNullable().defaultTo('{}');
    t.specificType('countries', 'text[]').notNullable().defaultTo('{}');
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('icp_profiles');
  await knex.schema.dropTable('search_outbox');
}
