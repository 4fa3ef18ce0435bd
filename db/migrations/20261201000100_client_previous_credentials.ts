import type { Knex } from 'knex';

/**
 * Credential rotation (`client:rotate`): the key and secret a rotation replaced stay valid until
 * `previous_valid_until`, so a client can roll its deployments over to the new pair without an
 * outage. One previous pair only: rotating again replaces it (and ends its grace at once).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('clients', (t) => {
    t.text('previous_key_hash');
    t.text('previous_secret_hash');
    t.timestamp('previous_valid_until', { useTz: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('clients', (t) => {
    t.dropColumn('previous_key_hash');
    t.dropColumn('previous_secret_hash');
    t.dropColumn('previous_valid_until');
  });
}
