import type { Knex } from 'knex';

/**
 * The projection outbox (issue 38 item 8): a completed job whose result still has to reach IDAP
 * and the lead index. The row is written in the transaction that completes the job and deleted in
 * the one that projects it, so no completed job's leads depend on the workflow's own attempts; each
 * worker's sweeper (workers/projection-sweep.ts) retries what is due, with backoff, until
 * PROJECTION_RETRY_HOURS after the job completed, and then marks it given up (kept, and counted).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('projection_outbox', (t) => {
    t.uuid('job_id').primary().references('id').inTable('jobs').onDelete('CASCADE');
    t.text('client_id').notNullable().references('id').inTable('clients').onDelete('CASCADE');
    t.text('type').notNullable();
    t.timestamp('enqueued_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('next_attempt_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.integer('attempts').notNullable().defaultTo(0);
    t.text('last_error');
    t.timestamp('given_up_at', { useTz: true });
  });
  // The sweeper's claim: the due rows still retried, oldest due first.
  await knex.raw(
    'CREATE INDEX projection_outbox_due_idx ON projection_outbox (next_attempt_at) WHERE given_up_at IS NULL',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('projection_outbox');
}
