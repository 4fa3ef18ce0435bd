import type { Knex } from 'knex';

/**
 * Company-registry answers (crawlCompanyData), shared by all clients: registry data is public, and
 * one cached answer saves every client a request against the registries' limits.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('registry_cache', (t) => {
    // us_registry | uk_registry | eu_vies
    t.text('source').notNullable();
    // The normalised question, e.g. `search:acme widgets:10`, `lookup:00445790`, `vat:DE282741168`.
    t.text('query_key').notNullable();
    t.jsonb('answer').notNullable();
    t.timestamp('retrieved_at', { useTz: true }).notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.primary(['source', 'query_key']);
    t.index(['expires_at'], 'registry_cache_expires_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('registry_cache');
}
