import type { Knex } from 'knex';
import { createIndexOnline, dropIndexOnline } from './online-index';

/** Outside a transaction: on a live jobs table the indexes are built and dropped concurrently (online-index.ts). */
export const config = { transaction: false };

/**
 * The submission's de-duplication lookup by one key, `client_id/type/payload_hash` (the key of its
 * advisory lock too). The lookup used to name the three columns, which every index starting with
 * client_id also serves: for a client newer than the table's statistics the planner saw no
 * difference and could take one of those, reading all of the client's jobs of the last 24 hours
 * on each submission (test/integration/submit-lookup.test.ts). No other index has this
 * expression, and jobs of campaigns, never de-duplicated, are left out.
 */
export async function up(knex: Knex): Promise<void> {
  await createIndexOnline(
    knex,
    'jobs',
    'jobs_dedupe_key_idx',
    `((client_id || '/' || type || '/' || payload_hash), created_at) WHERE campaign_id IS NULL`,
  );
  await dropIndexOnline(knex, 'jobs', 'jobs_dedupe_idx');
}

export async function down(knex: Knex): Promise<void> {
  await createIndexOnline(knex, 'jobs', 'jobs_dedupe_idx', '(client_id, type, payload_hash, created_at)');
  await dropIndexOnline(knex, 'jobs', 'jobs_dedupe_key_idx');
}
