import type { Knex } from 'knex';

/**
 * Queue capacity is a task queue's (spec §1.7): the submit gate counts the queued jobs of the queue
 * the new job goes to, so this partial index replaces the one by type.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE INDEX jobs_queued_task_queue_idx ON jobs (task_queue) WHERE status = 'queued'`);
  await knex.raw('DROP INDEX IF EXISTS jobs_queued_type_idx');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`CREATE INDEX jobs_queued_type_idx ON jobs (type) WHERE status = 'queued'`);
  await knex.raw('DROP INDEX IF EXISTS jobs_queued_task_queue_idx');
}
