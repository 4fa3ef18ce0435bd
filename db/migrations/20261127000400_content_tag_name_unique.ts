import type { Knex } from 'knex';

/**
 * A tag is identified by its name, in any case ('News' and 'news' are one tag), not by its slug
 * ('C#' and 'C++' both slugify to 'c' and are two tags): db/repositories/content.ts finds a post's
 * tags by lower(name), which this index serves, and it keeps posts written at once with the same
 * new tag from making two. The slug stays unique too (content_tags_client_id_slug_unique).
 *
 * Tags that differ only in case could exist already (created or renamed with a slug of their own):
 * the oldest keeps its name, each other one is renamed to "name (slug)", so every tag, its slug and
 * its posts stay as they were. content_tags is small (a client's tags): a plain index build.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    UPDATE content_tags t SET name = t.name || ' (' || t.slug || ')'
    WHERE EXISTS (
      SELECT 1 FROM content_tags o
      WHERE o.client_id = t.client_id AND lower(o.name) = lower(t.name) AND (o.created_at, o.id) < (t.created_at, t.id)
    )`);
  await knex.raw(`CREATE UNIQUE INDEX content_tags_client_name_uniq ON content_tags (client_id, lower(name))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP INDEX IF EXISTS content_tags_client_name_uniq`);
}
