import type { Knex } from 'knex';

/**
 * Mail (spec §2.13/§4.10): mailboxes with their SMTP/IMAP settings (passwords sealed, lib/cipher.ts),
 * messages (inbound and outbound, unique per mailbox by Message-ID, with a generated full-text
 * vector for websearch_to_tsquery + ts_rank) and templates.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('mail_mailboxes', (t) => {
    t.increments('id').primary();
    t.text('client_id').notNullable().references('id').inTable('clients');
    t.text('address').notNullable();
    t.text('display_name');
    t.text('smtp_host').notNullable();
    t.integer('smtp_port').notNullable();
    t.boolean('smtp_secure').notNullable();
    t.text('smtp_username').notNullable();
    t.text('smtp_password_sealed').notNullable();
    t.text('imap_host');
    t.integer('imap_port');
    t.boolean('imap_secure');
    t.text('imap_username');
    t.text('imap_password_sealed');
    // IMAP sync position: the INBOX's UIDVALIDITY and the highest UID stored under it.
    t.bigInteger('imap_uidvalidity');
    t.bigInteger('imap_last_uid').notNullable().defaultTo(0);
    t.timestamp('last_synced_at', { useTz: true });
    t.text('last_sync_error');
    t.timestamps(true, true);
  });
  await knex.raw('CREATE UNIQUE INDEX mail_mailboxes_address_idx ON mail_mailboxes (client_id, lower(address))');

  await knex.schema.createTable('mail_templates', (t) => {
    t.increments('id').primary();
    t.text('client_id').notNullable().references('id').inTable('clients');
    t.text('name').notNullable();
    t.text('description');
    t.text('template_type').notNullable();
    t.text('html_source').notNullable();
    t.specificType('variables', 'text[]').notNullable().defaultTo('{}');
    t.boolean('is_active').notNullable().defaultTo(true);
    t.timestamps(true, true);
    t.index(['client_id', 'template_type'], 'mail_templates_client_type_idx');
  });
  await knex.raw(
    `ALTER TABLE mail_templates ADD CONSTRAINT mail_templates_type_check CHECK (template_type IN ('signature','header','layout','full'))`,
  );

  await knex.schema.createTable('mail_messages', (t) => {
    t.increments('id').primary();
    t.text('client_id').notNullable().references('id').inTable('clients');
    t.integer('mailbox_id').notNullable().references('id').inTable('mail_mailboxes').onDelete('CASCADE');
    t.text('message_id').notNullable();
    t.text('in_reply_to');
    t.specificType('references', 'text[]').notNullable().defaultTo('{}');
    t.text('thread_id').notNullable();
    t.text('direction').notNullable();
    t.text('from_address').notNullable();
    t.jsonb('to_addresses').notNullable().defaultTo('[]');
    t.jsonb('cc_addresses');
    t.text('subject').notNullable().defaultTo('');
    t.text('body_text').notNullable().defaultTo('');
    t.text('body_html');
    t.timestamp('date', { useTz: true }).notNullable();
    t.text('folder').notNullable();
    t.boolean('is_read').notNullable().defaultTo(false);
    t.boolean('is_starred').notNullable().defaultTo(false);
    t.specificType('labels', 'text[]').notNullable().defaultTo('{}');
    // Snooze (spec §3): the folder to return to and when; the timer is the mail-snooze workflow.
    t.timestamp('snoozed_until', { useTz: true });
    t.text('snooze_original_folder');
    // Outbound only: the unsubscribe list it was sent for, the template, and the delivery state.
    t.text('list');
    t.integer('template_id').references('id').inTable('mail_templates');
    t.text('send_status');
    t.text('send_error');
    // Per recipient: {"<address>": {"accepted_at": ..., "response": ...}} once the SMTP server took it (a retry skips those).
    t.jsonb('delivery').notNullable().defaultTo('{}');
    t.timestamp('sent_at', { useTz: true });
    t.timestamps(true, true);
  });
  await knex.raw(
    `ALTER TABLE mail_messages ADD CONSTRAINT mail_messages_direction_check CHECK (direction IN ('inbound','outbound'))`,
  );
  await knex.raw(
    `ALTER TABLE mail_messages ADD CONSTRAINT mail_messages_send_status_check CHECK (send_status IS NULL OR send_status IN ('queued','sent','failed'))`,
  );
  // Idempotent import and sync: one copy of a Message-ID per mailbox.
  await knex.raw('CREATE UNIQUE INDEX mail_messages_message_id_idx ON mail_messages (mailbox_id, message_id)');
  await knex.raw('CREATE INDEX mail_messages_thread_idx ON mail_messages (client_id, thread_id, date)');
  await knex.raw('CREATE INDEX mail_messages_list_idx ON mail_messages (mailbox_id, folder, date DESC)');
  // The subject weighs more than the body; 'english' stems, so "invoices" finds "invoice".
  await knex.raw(`ALTER TABLE mail_messages ADD COLUMN search tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english', coalesce(subject, '')), 'A') || setweight(to_tsvector('english', coalesce(body_text, '')), 'B')
  ) STORED`);
  await knex.raw('CREATE INDEX mail_messages_search_idx ON mail_messages USING gin (search)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('mail_messages');
  await knex.schema.dropTable('mail_templates');
  await knex.schema.dropTable('mail_mailboxes');
}
