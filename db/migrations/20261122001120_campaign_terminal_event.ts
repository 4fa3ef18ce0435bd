import type { Knex } from 'knex';

/**
 * campaigns.terminal_event_id: the `campaign.terminal` event once appended. finishCampaign checks it
 * (with the row locked) so that a retried finish appends the event once, without scanning events.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('campaigns', (t) => {
    t.bigInteger('terminal_event_id');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('campaigns', (t) => {
    t.dropColumn('terminal_event_id');
  });
}
