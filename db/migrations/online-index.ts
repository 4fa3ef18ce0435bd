import type { Knex } from 'knex';

/**
 * Index changes on tables a running service keeps writing to (jobs, idap_resources). A plain
 * CREATE INDEX holds a SHARE lock on the table for the whole build, and a plain DROP INDEX an
 * ACCESS EXCLUSIVE one: on a table of millions of rows every submission would wait behind the
 * upgrade. On a table with rows both are done CONCURRENTLY (writes go on; the migration must
 * export `config = { transaction: false }`). On an empty table (a new install, a test's schema)
 * they are done plainly: there is nothing to wait for, while CONCURRENTLY would also wait for every
 * older transaction in the database. Not a migration itself (db/migrations/index.ts lists those).
 */
export async function createIndexOnline(knex: Knex, table: string, name: string, definition: string): Promise<void> {
  if (!(await hasRows(knex, table))) {
    await knex.raw(`CREATE INDEX IF NOT EXISTS ?? ON ?? ${definition}`, [name, table]);
    return;
  }
  // A concurrent build that was interrupted (a failed or killed upgrade) leaves an INVALID index of
  // this name, which IF NOT EXISTS would take for done: it is dropped and built again.
  if (await isInvalid(knex, name)) await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS ??', [name]);
  await knex.raw(`CREATE INDEX CONCURRENTLY IF NOT EXISTS ?? ON ?? ${definition}`, [name, table]);
}

export async function dropIndexOnline(knex: Knex, table: string, name: string): Promise<void> {
  await knex.raw(`DROP INDEX ${(await hasRows(knex, table)) ? 'CONCURRENTLY ' : ''}IF EXISTS ??`, [name]);
}

async function hasRows(knex: Knex, table: string): Promise<boolean> {
  const { rows } = (await knex.raw('SELECT EXISTS (SELECT 1 FROM ??) AS has', [table])) as { rows: { has: boolean }[] };
  return rows[0]?.has === true;
}

/** Whether the schema the migration runs in (the search_path's first) has an INVALID index `name`. */
async function isInvalid(knex: Knex, name: string): Promise<boolean> {
  const { rows } = (await knex.raw(
    `SELECT NOT i.indisvalid AS invalid FROM pg_index i
     JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.relname = ? AND n.nspname = current_schema()`,
    [name],
  )) as { rows: { invalid: boolean }[] };
  return rows[0]?.invalid === true;
}
