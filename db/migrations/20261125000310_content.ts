import type { Knex } from 'knex';

/**
 * Blog content (spec §2.11, §4.11): the client's sites (a site's domain answers the public
 * endpoints' X-Content-Domain), authors, categories, tags and posts. Slugs are unique per client.
 * A post keeps its rich-text document (`body`, ProseMirror/TipTap JSON) and the sanitised HTML
 * rendered from it when it was written (`body_html`), so public reads do no rendering.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('content_sites', (t) => {
    t.uuid('id').primary();
    t.text('client_id').notNullable().references('id').inTable('clients');
    // Lower-case host name; one client per domain, since the domain alone picks the client.
    t.text('domain').notNullable().unique();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['client_id'], 'content_sites_client_idx');
  });

  await knex.schema.createTable('content_authors', (t) => {
    t.uuid('id').primary();
    t.text('client_id').notNullable().references('id').inTable('clients');
    t.text('full_name').notNullable();
    t.text('slug').notNullable();
    t.text('avatar_url');
    t.text('bio');
    t.text('email');
    t.text('role').notNullable().defaultTo('contributor');
    // Non-null marks an AI author (e.g. the model family that writes as it).
    t.text('agent_type');
    t.text('country');
    t.text('city');
    t.boolean('is_active').notNullable().defaultTo(true);
    t.timestamps(true, true);
    t.unique(['client_id', 'slug']);
  });

  await knex.schema.createTable('content_categories', (t) => {
    t.uuid('id').primary();
    t.text('client_id').notNullable().references('id').inTable('clients');
    t.text('name').notNullable();
    t.text('slug').notNullable();
    t.text('description');
    t.timestamps(true, true);
    t.unique(['client_id', 'slug']);
  });

  await knex.schema.createTable('content_tags', (t) => {
    t.uuid('id').primary();
    t.text('client_id').notNullable().references('id').inTable('clients');
    t.text('name').notNullable();
    t.text('slug').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['client_id', 'slug']);
  });

  await knex.schema.createTable('content_posts', (t) => {
    t.uuid('id').primary();
    t.text('client_id').notNullable().references('id').inTable('clients');
    t.text('slug').notNullable();
    t.text('title').notNullable();
    t.jsonb('body').notNullable();
    t.text('body_html').notNullable();
    t.text('excerpt');
    t.text('tldr_summary');
    t.text('cover_image_url');
    t.text('featured_image_alt');
    t.text('status').notNullable().defaultTo('draft');
    t.timestamp('published_at', { useTz: true });
    t.uuid('author_id').references('id').inTable('content_authors').onDelete('SET NULL');
    t.integer('reading_time').notNullable();
    t.bigInteger('view_count').notNullable().defaultTo(0);
    t.boolean('is_featured').notNullable().defaultTo(false);
    t.text('seo_title');
    t.text('seo_description');
    t.text('og_image_url');
    t.timestamps(true, true);
    t.unique(['client_id', 'slug']);
  });
  await knex.raw(
    `ALTER TABLE content_posts ADD CONSTRAINT content_posts_status_check CHECK (status IN ('draft','published'))`,
  );
  // The public list: a client's published posts, newest first.
  await knex.raw(
    `CREATE INDEX content_posts_published_idx ON content_posts (client_id, published_at DESC) WHERE status = 'published'`,
  );

  await knex.schema.createTable('content_post_tags', (t) => {
    t.uuid('post_id').notNullable().references('id').inTable('content_posts').onDelete('CASCADE');
    t.uuid('tag_id').notNullable().references('id').inTable('content_tags').onDelete('CASCADE');
    t.primary(['post_id', 'tag_id']);
    t.index(['tag_id'], 'content_post_tags_tag_idx');
  });
  await knex.schema.createTable('content_post_categories', (t) => {
    t.uuid('post_id').notNullable().references('id').inTable('content_posts').onDelete('CASCADE');
    t.uuid('category_id').notNullable().references('id').inTable('content_categories').onDelete('CASCADE');
    t.primary(['post_id', 'category_id']);
    t.index(['category_id'], 'content_post_categories_category_idx');
  });
  // Related posts chosen by the editor, in their order (the public read adds posts sharing tags or categories).
  await knex.schema.createTable('content_post_related', (t) => {
    t.uuid('post_id').notNullable().references('id').inTable('content_posts').onDelete('CASCADE');
    t.uuid('related_post_id').notNullable().references('id').inTable('content_posts').onDelete('CASCADE');
    t.integer('position').notNullable();
    t.primary(['post_id', 'related_post_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'content_post_related',
    'content_post_categories',
    'content_post_tags',
    'content_posts',
    'content_tags',
    'content_categories',
    'content_authors',
    'content_sites',
  ]) {
    await knex.schema.dropTable(table);
  }
}
