import type { Knex } from 'knex';

/** Jobs, their results, and the client event log behind the SSE stream. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('jobs', (t) => {
    t.uuid('id').primary();
    t.text('client_id').notNullable().references('id').inTable('clients');
    t.text('type').notNullable();
    t.text('status').notNullable().defaultTo('queued');
    t.smallint('priority').notNullable();
    t.jsonb('payload').notNullable();
    // sha256 of the canonical payload: the 24-hour submission de-duplication key with client and type.
    t.text('payload_hash').notNullable();
    t.text('campaign_id');
    t.text('workflow_id').notNullable();
    t.text('task_queue').notNullable();
    t.text('worker_id');
    t.integer('results_count');
    t.text('error_message');
    t.timestamp('started_at', { useTz: true });
    t.timestamp('completed_at', { useTz: true });
    t.double('processing_time_seconds');
    t.timestamps(true, true);
    t.index(['client_id', 'type', 'payload_hash', 'created_at'], 'jobs_dedupe_idx');
    t.index(['client_id', 'created_at'], 'jobs_client_created_idx');
    t.index(['client_id', 'campaign_id'], 'jobs_client_campaign_idx');
  });
  await knex.raw(
    `ALTER TABLE jobs ADD CONSTRAINT jobs_status_check CHECK (status IN ('queued','processing','completed','failed','cancelled'))`,
  );
  // Queue capacity counts queued jobs per type: keep that count an index-only scan.
  await knex.raw(`CREATE INDEX jobs_queued_type_idx ON jobs (type) WHERE status = 'queued'`);

  await knex.schema.createTable('job_results', (t) => {
    t.uuid('job_id').primary().references('id').inTable('jobs').onDelete('CASCADE');
    // Small results inline; large ones as an object in the private results bucket.
    t.jsonb('data');
    t.text('object_key');
    t.integer('size_bytes').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('events', (t) => {
    t.bigIncrements('id').primary();
    t.text('client_id').notNullable();
    t.text('name').notNullable();
    t.uuid('job_id');
    t.text('campaign_id');
    t.jsonb('data').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['client_id', 'id'], 'events_client_id_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('events');
  await knex.schema.dropTable('job_results');
  await knex.schema.dropTable('jobs');
}
