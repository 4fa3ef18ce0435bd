import type { Knex } from 'knex';

/**
 * The check-batch idempotency cache keeps the response as the text that was sent: jsonb reorders
 * keys (shortest first), so a replay read back from jsonb differed from the original response.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE dedupe_idempotency ALTER COLUMN response TYPE text USING response::text');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE dedupe_idempotency ALTER COLUMN response TYPE jsonb USING response::jsonb');
}
