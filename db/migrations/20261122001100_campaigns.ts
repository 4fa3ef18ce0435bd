import type { Knex } from 'knex';

/**
 * Campaigns (multi-location crawlMaps runs) and the maps -> site -> verify pipeline's state.
 *
 * - campaigns: one row per campaign; the `campaign/<id>` workflow drives it, this row is what the API reads.
 * - campaign_locations: one row per (search term, city) pair, in sequence order. `claim_key` makes
 *   the workflow's claim of the next locations idempotent: a retried claim returns the same rows.
 * - job_workflows: one row per crawlMaps job submitted with `workflow.enabled` (standalone or in a
 *   campaign), written when its pipeline starts; the stage counts come from workflow_businesses.
 * - workflow_businesses: one row per business (place) of such a job with its stage results, upserted
 *   by (job_id, place_id), so a retried stage changes nothing.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('campaigns', (t) => {
    t.uuid('id').primary();
    t.text('client_id').notNullable().references('id').inTable('clients');
    t.text('name').notNullable();
    t.specificType('search_terms', 'text[]').notNullable();
    t.integer('max_results_per_location').notNullable();
    // The pipeline options every location's job gets (null: maps only).
    t.jsonb('workflow');
    t.smallint('priority').notNullable();
    t.integer('concurrency').notNullable();
    t.boolean('auto_submit').notNullable();
    // With auto_submit false: locations up to this sequence_order may be submitted (POST /next moves it).
    t.integer('released_through').notNullable().defaultTo(0);
    t.text('status').notNullable().defaultTo('running');
    t.integer('locations_total').notNullable();
    t.text('workflow_id').notNullable();
    t.text('task_queue').notNullable();
    t.text('error_message');
    t.timestamp('completed_at', { useTz: true });
    t.timestamps(true, true);
    t.index(['client_id', 'created_at'], 'campaigns_client_created_idx');
  });
  await knex.raw(
    `ALTER TABLE campaigns ADD CONSTRAINT campaigns_status_check CHECK (status IN ('running','completed','cancelled','failed'))`,
  );

  await knex.schema.createTable('campaign_locations', (t) => {
    t.bigIncrements('id').primary();
    t.uuid('campaign_id').notNullable().references('id').inTable('campaigns').onDelete('CASCADE');
    t.text('client_id').notNullable();
    // The city (locations.id, the GeoNames id): spec §2.8 location_id.
    t.integer('location_id').notNullable();
    t.text('search_term').notNullable();
    t.text('search_string').notNullable();
    t.text('display_name').notNullable();
    t.integer('sequence_order').notNullable();
    t.text('status').notNullable().defaultTo('pending');
    t.uuid('job_id');
    t.text('claim_key');
    t.integer('results_count');
    t.text('error_message');
    t.timestamp('submitted_at', { useTz: true });
    t.timestamp('completed_at', { useTz: true });
    t.unique(['campaign_id', 'sequence_order']);
    t.index(['campaign_id', 'status', 'sequence_order'], 'campaign_locations_status_idx');
    t.index(['job_id'], 'campaign_locations_job_idx');
    t.index(['campaign_id', 'claim_key'], 'campaign_locations_claim_idx');
  });
  await knex.raw(
    `ALTER TABLE campaign_locations ADD CONSTRAINT campaign_locations_status_check CHECK (status IN ('pending','submitted','completed','failed','skipped'))`,
  );

  await knex.schema.createTable('job_workflows', (t) => {
    t.uuid('job_id').primary().references('id').inTable('jobs').onDelete('CASCADE');
    t.text('client_id').notNullable();
    // Text, as jobs.campaign_id.
    t.text('campaign_id');
    t.text('status').notNullable().defaultTo('processing');
    // The parsed `workflow` options of the job's payload (site and verify settings).
    t.jsonb('options').notNullable();
    // The pipeline's limits as the worker had them (WORKFLOW_*_TIMEOUT_SECONDS), in ms.
    t.jsonb('limits').notNullable();
    t.boolean('site_timed_out').notNullable().defaultTo(false);
    t.boolean('verify_timed_out').notNullable().defaultTo(false);
    t.text('error_message');
    t.timestamp('started_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('deadline_at', { useTz: true }).notNullable();
    t.timestamp('completed_at', { useTz: true });
    t.index(['campaign_id'], 'job_workflows_campaign_idx');
  });
  await knex.raw(
    `ALTER TABLE job_workflows ADD CONSTRAINT job_workflows_status_check CHECK (status IN ('processing','completed','completed_with_errors','failed','partial'))`,
  );

  await knex.schema.createTable('workflow_businesses', (t) => {
    t.uuid('job_id').notNullable().references('job_id').inTable('job_workflows').onDelete('CASCADE');
    t.text('place_id').notNullable();
    t.text('client_id').notNullable();
    t.text('campaign_id');
    // Order in the maps result.
    t.integer('position').notNullable();
    // business_name, business_address, business_phone, business_rating, business_website (spec §2.8).
    t.jsonb('business').notNullable();
    // The site the business's website is on: its origin (scheme, host, port); null without a website.
    t.text('site_origin');
    t.boolean('domain_filtered').notNullable().defaultTo(false);
    t.text('filter_reason');
    // pending | processing | completed | failed | timed_out | skipped
    t.text('site_status').notNullable().defaultTo('pending');
    // pages_crawled, emails_found, phones_found, social_media, company_info, team_members, compendium.
    t.jsonb('site');
    t.text('site_error');
    t.text('verify_status').notNullable().defaultTo('pending');
    t.jsonb('emails_verified');
    t.integer('valid_emails_count').notNullable().defaultTo(0);
    t.text('verify_error');
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['job_id', 'place_id']);
    t.index(['campaign_id', 'job_id', 'position'], 'workflow_businesses_campaign_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('workflow_businesses');
  await knex.schema.dropTable('job_workflows');
  await knex.schema.dropTable('campaign_locations');
  await knex.schema.dropTable('campaigns');
}
