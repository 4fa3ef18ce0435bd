import type { Knex } from 'knex';

/**
 * Webhooks, their delivery outbox and the delivery log. A delivery row is written in the same
 * transaction as its event (db/repositories/webhooks.ts queueDeliveries); `dispatched_at` stays null
 * until a worker has started its Temporal workflow, so a crash in between loses nothing.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhooks', (t) => {
    t.uuid('id').primary();
    t.text('client_id').notNullable().references('id').inTable('clients');
    t.text('url').notNullable();
    t.specificType('events', 'text[]').notNullable();
    t.text('description');
    // Kept as issued: deliveries are signed with it (HMAC needs the secret itself, not a hash).
    t.text('secret').notNullable();
    t.boolean('active').notNullable().defaultTo(true);
    t.integer('consecutive_failures').notNullable().defaultTo(0);
    // The deployment's webhooks queue, as jobs record theirs: the dispatcher of that deployment's
    // workers starts the deliveries (deployments or test runs sharing a schema stay apart).
    t.text('task_queue').notNullable();
    t.timestamp('disabled_at', { useTz: true });
    t.timestamps(true, true);
    t.index(['client_id', 'created_at'], 'webhooks_client_created_idx');
  });
  // Every event looks up its client's active subscribers.
  await knex.raw('CREATE INDEX webhooks_client_active_idx ON webhooks (client_id) WHERE active');

  await knex.schema.createTable('webhook_deliveries', (t) => {
    t.uuid('id').primary();
    t.uuid('webhook_id').notNullable().references('id').inTable('webhooks').onDelete('CASCADE');
    t.text('client_id').notNullable();
    t.bigInteger('event_id').notNullable();
    t.text('event').notNullable();
    t.text('task_queue').notNullable();
    // The JSON body as first built: every attempt sends the same bytes' content.
    t.jsonb('body').notNullable();
    t.text('status').notNullable().defaultTo('pending');
    t.integer('attempts').notNullable().defaultTo(0);
    t.timestamp('dispatched_at', { useTz: true });
    t.timestamp('delivered_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['webhook_id', 'event_id']);
    t.index(['webhook_id', 'created_at'], 'webhook_deliveries_webhook_created_idx');
  });
  await knex.raw(
    `ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_status_check CHECK (status IN ('pending','delivered','failed','cancelled'))`,
  );
  // The dispatcher's poll: only undispatched rows, oldest first.
  await knex.raw(
    'CREATE INDEX webhook_deliveries_undispatched_idx ON webhook_deliveries (task_queue, created_at) WHERE dispatched_at IS NULL',
  );

  await knex.schema.createTable('webhook_attempts', (t) => {
    t.bigIncrements('id').primary();
    t.uuid('delivery_id').notNullable().references('id').inTable('webhook_deliveries').onDelete('CASCADE');
    t.integer('attempt').notNullable();
    t.integer('status_code');
    t.text('error');
    t.integer('duration_ms').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['delivery_id', 'id'], 'webhook_attempts_delivery_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('webhook_attempts');
  await knex.schema.dropTable('webhook_deliveries');
  await knex.schema.dropTable('webhooks');
}
