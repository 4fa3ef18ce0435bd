import type { Knex } from 'knex';

/**
 * Media (spec §4.8): uploaded files, each an IDAP media resource `idap://media/{id}` served by
 * GET /api/v1/idap/media/{id}, and video imports into PeerTube (spec §2.14). The objects
 * themselves live in MinIO, in the client's bucket; these rows say which client owns which key.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('media_files', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('client_id').notNullable().references('id').inTable('clients').onDelete('CASCADE');
    // image: POST /media/images/upload (format checked, name corrected); file: /media/files/upload (as sent).
    t.text('kind').notNullable();
    t.text('bucket').notNullable();
    t.text('key').notNullable();
    t.bigInteger('size').notNullable();
    t.text('content_type').notNullable();
    t.text('detected_format');
    t.text('original_filename');
    t.text('corrected_filename').notNullable();
    t.boolean('format_corrected').notNullable().defaultTo(false);
    // sha256 of the stored bytes: the proxy's ETag.
    t.text('sha256').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    // One object per key: a second upload of the same name to the same folder gets a suffixed key.
    t.unique(['bucket', 'key'], { indexName: 'media_files_key_uniq' });
    t.index(['client_id', 'created_at']);
  });
  await knex.raw(`ALTER TABLE media_files ADD CONSTRAINT media_files_kind_check CHECK (kind IN ('image', 'file'))`);

  await knex.schema.createTable('media_videos', (t) => {
    t.bigIncrements('id').primary();
    t.text('client_id').notNullable().references('id').inTable('clients').onDelete('CASCADE');
    // PeerTube's ids: the video (the spec's video_id) and its import.
    t.bigInteger('video_id').notNullable();
    t.bigInteger('import_id');
    t.text('uuid').notNullable();
    t.text('short_uuid');
    t.text('target_url').notNullable();
    t.text('title');
    t.text('description');
    t.integer('privacy').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['client_id', 'video_id'], { indexName: 'media_videos_video_uniq' });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('media_videos');
  await knex.schema.dropTable('media_files');
}
