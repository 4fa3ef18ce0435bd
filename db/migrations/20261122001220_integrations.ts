import type { Knex } from 'knex';

/**
 * LLM provider integrations (spec §2.12/§4.9) and their usage log. Credentials are stored only
 * sealed (AES-256-GCM, lib/llm/cipher.ts) with a keyed fingerprint for the duplicate check; the
 * request counters and their windows live on the row, so one UPDATE both checks and counts a call
 * for every worker at once.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('llm_integrations', (t) => {
    t.increments('id').primary();
    t.text('client_id').notNullable().references('id').inTable('clients');
    t.text('provider_name').notNullable();
    t.text('key_label');
    t.text('credentials_sealed').notNullable();
    t.text('credential_fingerprint').notNullable();
    t.jsonb('key_preview').notNullable();
    t.text('model').notNullable();
    // USD per million tokens; null: the price table's (lib/llm/prices.ts, LLM_PRICES).
    t.decimal('price_input', 12, 6);
    t.decimal('price_output', 12, 6);
    t.boolean('is_active').notNullable().defaultTo(true);
    t.boolean('is_primary').notNullable().defaultTo(false);
    t.integer('priority').notNullable().defaultTo(0);
    t.integer('daily_limit');
    t.integer('daily_count').notNullable().defaultTo(0);
    t.date('daily_window');
    t.integer('minute_limit');
    t.integer('minute_count').notNullable().defaultTo(0);
    t.timestamp('minute_window', { useTz: true });
    t.text('health_status').notNullable().defaultTo('healthy');
    t.integer('consecutive_failures').notNullable().defaultTo(0);
    // Circuit breaker: an unhealthy key is skipped until then; the first call after it re-tests the key.
    t.timestamp('retry_at', { useTz: true });
    // After a 429: skipped until then (Retry-After), without counting as a failure.
    t.timestamp('rate_limited_until', { useTz: true });
    t.text('last_error');
    t.timestamp('last_used_at', { useTz: true });
    t.decimal('spend_limit_amount', 14, 4);
    t.text('spend_limit_period').notNullable().defaultTo('monthly');
    t.text('spend_limit_action').notNullable().defaultTo('warn');
    t.boolean('spend_limit_exceeded').notNullable().defaultTo(false);
    t.timestamps(true, true);
  });
  await knex.raw(
    `ALTER TABLE llm_integrations ADD CONSTRAINT llm_integrations_health_check CHECK (health_status IN ('healthy','unhealthy'))`,
  );
  await knex.raw(
    `ALTER TABLE llm_integrations ADD CONSTRAINT llm_integrations_spend_check CHECK (spend_limit_period IN ('daily','monthly') AND spend_limit_action IN ('warn','block'))`,
  );
  // The same credential twice for one provider of one client is a 409.
  await knex.raw(
    'CREATE UNIQUE INDEX llm_integrations_credential_idx ON llm_integrations (client_id, provider_name, credential_fingerprint)',
  );
  await knex.raw(
    'CREATE INDEX llm_integrations_selection_idx ON llm_integrations (client_id, is_primary DESC, priority DESC, id) WHERE is_active',
  );

  await knex.schema.createTable('llm_usage', (t) => {
    t.bigIncrements('id').primary();
    t.integer('integration_id').notNullable().references('id').inTable('llm_integrations').onDelete('CASCADE');
    t.text('client_id').notNullable();
    t.text('purpose').notNullable();
    t.text('model').notNullable();
    t.integer('input_tokens').notNullable();
    t.integer('output_tokens').notNullable();
    t.decimal('cost_usd', 14, 8).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['integration_id', 'created_at'], 'llm_usage_integration_created_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('llm_usage');
  await knex.schema.dropTable('llm_integrations');
}
