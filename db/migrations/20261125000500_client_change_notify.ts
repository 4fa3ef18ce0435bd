import type { Knex } from 'knex';

/**
 * Every change to a client row (deactivation, a new key or secret, removal) is announced on the
 * `<schema>_clients` channel with the client's id, by whatever made it (the operator CLI, SQL by
 * hand). The API's credential cache (db/client-cache.ts) drops the entry when it hears it, so a
 * deactivated client or a replaced secret is refused on every API process within moments. Postgres
 * delivers the notification at commit, never for a rolled-back change.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create function notify_client_change() returns trigger language plpgsql as $$
    begin
      perform pg_notify(tg_table_schema || '_clients', old.id);
      return null;
    end $$`);
  await knex.raw(
    'create trigger clients_notify_change after update or delete on clients for each row execute function notify_client_change()',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists clients_notify_change on clients');
  await knex.raw('drop function if exists notify_client_change()');
}
