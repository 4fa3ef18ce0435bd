import type { Knex } from 'knex';

/**
 * Short-lived event-stream tickets (POST /api/v1/events/tickets): what an EventSource puts in
 * `?token=` instead of the client's long-lived credential, which proxy and access logs keep. Only
 * the SHA-256 of a ticket is stored; redeeming deletes the row, so a ticket opens one stream, on
 * whichever API process it reaches.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('stream_tickets', (t) => {
    t.text('ticket_hash').primary();
    t.text('client_id').notNullable().references('id').inTable('clients').onDelete('CASCADE');
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.index(['expires_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('stream_tickets');
}
