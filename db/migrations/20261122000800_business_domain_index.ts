import type { Knex } from 'knex';
import { createIndexOnline, dropIndexOnline } from './online-index';

/** Outside a transaction: on a live idap_resources table the index is built and dropped concurrently (online-index.ts). */
export const config = { transaction: false };

/**
 * Businesses are found by their registrable domain when a maps listing and a crawl of its website
 * meet (db/repositories/resources.ts businessesByDomain), on every business upsert.
 */
export async function up(knex: Knex): Promise<void> {
  await createIndexOnline(
    knex,
    'idap_resources',
    'idap_resources_business_domain_idx',
    `(client_id, (data->>'domain')) WHERE resource_type = 'businesses'`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await dropIndexOnline(knex, 'idap_resources', 'idap_resources_business_domain_idx');
}
