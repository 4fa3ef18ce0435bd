import knexFactory from 'knex';
import type { DbConfig } from '../lib/config';
import { migrationSource } from './migrations';
import { seedLocations } from './seeds/locations';
import type { Db } from './types';

export type { Db };

/**
 * One pool per process. Every connection's search_path is the configured schema, so the same
 * queries serve production (`public`) and test runs (a schema of their own).
 */
export function createDb(config: DbConfig): Db {
  const schema = config.DATABASE_SCHEMA;
  return knexFactory({
    client: 'pg',
    connection: config.DATABASE_URL,
    // A request waiting for a connection answers 503 (lib/outages.ts) after 10 s, not knex's 60.
    acquireConnectionTimeout: 10_000,
    pool: {
      min: 0,
      max: config.DATABASE_POOL_MAX,
      afterCreate(
        conn: { query: (sql: string, cb: (err: Error | null) => void) => void },
        done: (err: Error | null, c: unknown) => void,
      ) {
        conn.query(`SET search_path TO "${schema}", public`, (err) => done(err, conn));
      },
    },
    migrations: { migrationSource, schemaName: schema, tableName: 'knex_migrations' },
  });
}

/**
 * Creates the schema if needed, applies every migration not yet applied, then loads reference
 * data that is missing or out of date (the cities of db/seeds/locations.ts).
 */
export async function migrateLatest(db: Db, schema: string): Promise<string[]> {
  await db.raw('CREATE SCHEMA IF NOT EXISTS ??', [schema]);
  const [, applied] = (await db.migrate.latest()) as [number, string[]];
  await seedLocations(db);
  return applied;
}

/** Postgres' unique_violation: mapped to 409 by the API's error middleware. */
export function isUniqueViolation(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  // Objection wraps the driver's error (db-errors UniqueViolationError) and keeps it as nativeError.
  const e = err as { code?: string; nativeError?: { code?: string } };
  return e.code === '23505' || e.nativeError?.code === '23505';
}

/** Readiness: the database answers a query (the API's health check and the worker's outage wait). */
export async function pingDatabase(db: Db): Promise<void> {
  await db.raw('select 1');
}
