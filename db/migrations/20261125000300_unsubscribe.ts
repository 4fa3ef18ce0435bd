import type { Knex } from 'knex';

/**
 * Unsubscribe preferences and their audit log (spec §4.12). A preference is one row per client,
 * recipient (lower-case) and list, where the list `*` stands for "every list" (unsubscribed_all).
 * Each POST of an unsubscribe page writes one audit row in the same transaction as the preference.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('unsubscribe_preferences', (t) => {
    t.text('client_id').notNullable().references('id').inTable('clients');
    t.text('email').notNullable();
    t.text('list').notNullable();
    t.text('status').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['client_id', 'email', 'list']);
  });
  await knex.raw(
    `ALTER TABLE unsubscribe_preferences ADD CONSTRAINT unsubscribe_preferences_status_check CHECK (status IN ('subscribed','unsubscribed'))`,
  );
  // Compared case-insensitively by construction: only lower-case addresses are stored.
  await knex.raw(
    'ALTER TABLE unsubscribe_preferences ADD CONSTRAINT unsubscribe_preferences_email_lower CHECK (email = lower(email))',
  );

  await knex.schema.createTable('unsubscribe_audit', (t) => {
    t.bigIncrements('id').primary();
    t.text('client_id').notNullable().references('id').inTable('clients');
    t.text('email').notNullable();
    // The list of the token; `scope` says whether the recipient left that list or every list.
    t.text('list').notNullable();
    t.text('scope').notNullable();
    // page: the confirmation page's form; one_click: an RFC 8058 List-Unsubscribe-Post request.
    t.text('source').notNullable();
    t.text('ip_address');
    t.text('user_agent');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['client_id', 'email', 'created_at'], 'unsubscribe_audit_recipient_idx');
  });
  await knex.raw(
    `ALTER TABLE unsubscribe_audit ADD CONSTRAINT unsubscribe_audit_scope_check CHECK (scope IN ('list','all') AND source IN ('page','one_click'))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('unsubscribe_audit');
  await knex.schema.dropTable('unsubscribe_preferences');
}
