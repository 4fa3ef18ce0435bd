import type { Knex } from 'knex';

/**
 * Businesses are found by their registrable domain when a maps listing and a crawl of its website
 * meet (db/repositories/resources.ts businessesByDomain), on every business upsert.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE INDEX idap_resources_business_domain_idx ON idap_resources (client_id, (data->>'domain')) WHERE resource_type = 'businesses'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS idap_resources_business_domain_idx');
}
