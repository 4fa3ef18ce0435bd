import type { Knex } from 'knex';

/**
 * The cities that campaigns and `GET /api/v1/locations` choose from (db/seeds/locations.ts loads
 * them after the migrations). `id` is the GeoNames id, stable across data releases.
 * `search_key` is the name lower-cased with accents stripped (db/repositories/locations.ts
 * searchKey); text_pattern_ops lets `LIKE 'prefix%'` use the btree whatever the database collation.
 * `location_data` holds the version of the loaded data, so the seed reloads only when it changes.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('locations', (t) => {
    t.integer('id').primary();
    t.text('name').notNullable();
    t.text('ascii_name').notNullable();
    t.specificType('country_code', 'char(2)').notNullable();
    t.text('country').notNullable();
    t.text('region');
    t.double('latitude').notNullable();
    t.double('longitude').notNullable();
    t.integer('population').notNullable();
    t.text('search_key').notNullable();
  });
  await knex.raw('CREATE INDEX locations_search_key_idx ON locations (search_key text_pattern_ops)');
  // Biggest first, with and without a country filter, without sorting the whole table.
  await knex.raw('CREATE INDEX locations_population_idx ON locations (population DESC, id)');
  await knex.raw('CREATE INDEX locations_country_population_idx ON locations (country_code, population DESC, id)');
  await knex.schema.createTable('location_data', (t) => {
    t.text('version').notNullable();
    t.integer('count').notNullable();
    t.timestamp('loaded_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('location_data');
  await knex.schema.dropTableIfExists('locations');
}
