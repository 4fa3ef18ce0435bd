import type { Knex } from 'knex';

/**
 * A rate-limited outside source's next turn, shared by every worker (activities/pacing.ts): the
 * theoretical arrival time of the generic cell rate algorithm, one row per pacing key.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE TABLE source_pacing (key text PRIMARY KEY, next_at timestamptz NOT NULL)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS source_pacing');
}
