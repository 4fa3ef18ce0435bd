import type { Knex } from 'knex';

/** API clients (tenants) and the shared rate-limit counters. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('clients', (t) => {
    t.text('id').primary(); // cli_…, public
    t.text('name').notNullable();
    // SHA-256 of the api key and secret: both are random 47+ characters, so a fast hash is enough.
    t.text('api_key_hash').notNullable();
    t.text('api_secret_hash').notNullable();
    t.boolean('is_active').notNullable().defaultTo(true);
    t.timestamp('deactivated_at', { useTz: true });
    t.timestamps(true, true);
  });
  // The layout rate-limiter-flexible's RateLimiterPostgres expects (tableCreated: true).
  await knex.schema.createTable('rate_limits', (t) => {
    t.string('key', 255).primary();
    t.integer('points').notNullable().defaultTo(0);
    t.bigInteger('expire');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('rate_limits');
  await knex.schema.dropTable('clients');
}
