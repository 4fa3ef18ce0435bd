import type { Knex } from 'knex';
import { createIndexOnline, dropIndexOnline } from './online-index';

/** Outside a transaction: on a live jobs table the indexes are built and dropped concurrently (online-index.ts). */
export const config = { transaction: false };

/**
 * Queue capacity is a task queue's (spec §1.7): the submit gate counts the queued jobs of the queue
 * the new job goes to, so this partial index replaces the one by type.
 */
export async function up(knex: Knex): Promise<void> {
  await createIndexOnline(knex, 'jobs', 'jobs_queued_task_queue_idx', `(task_queue) WHERE status = 'queued'`);
  await dropIndexOnline(knex, 'jobs', 'jobs_queued_type_idx');
}

export async function down(knex: Knex): Promise<void> {
  await createIndexOnline(knex, 'jobs', 'jobs_queued_type_idx', `(type) WHERE status = 'queued'`);
  await dropIndexOnline(knex, 'jobs', 'jobs_queued_task_queue_idx');
}
