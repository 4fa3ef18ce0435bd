import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { createDb, migrateLatest, type Db } from '../../db';
import { ClientRepository } from '../../db/repositories/clients';
import { parseDbConfig } from '../../lib/config';

// Index migrations of tables a running service writes to (db/migrations/online-index.ts), run as an
// upgrade of a database in use: submissions go on while the index is built, and an upgrade that was
// interrupted halfway through a build finishes when it is run again.
const schema = `migrations_${Date.now().toString(36)}`;
const config = parseDbConfig({ ...process.env, DATABASE_SCHEMA: schema, DATABASE_POOL_MAX: '4' });
const DEDUPE_KEY = '20261126000100_jobs_dedupe_key';
// Applied after it: rolled back first, so that the upgrade is the step from the database before it.
const LATER = [
  '20261126000200_source_pacing',
  '20261127000100_content_site_verification',
  '20261127000200_business_key_indexes',
  '20261127000300_business_name_key_icu',
];
let db: Db;
let clientId: string;

beforeAll(async () => {
  db = createDb(config);
  await migrateLatest(db, schema);
  clientId = (await new ClientRepository(db).create('migrations')).client_id;
}, 60_000);
afterAll(async () => {
  await db.raw('drop schema if exists ?? cascade', [schema]);
  await db.destroy();
});

/** The database as it was before `name`: it and every later migration rolled back. */
async function before(name: string): Promise<void> {
  const applied = new Set(await db('knex_migrations').withSchema(schema).pluck('name'));
  for (const m of [...LATER].reverse().concat(name)) if (applied.has(m)) await db.migrate.down({ name: m });
}

const insertJob = (q: Knex | Knex.Transaction) => {
  const id = randomUUID();
  return q('jobs').insert({
    id,
    client_id: clientId,
    type: 'crawlSite',
    status: 'queued',
    priority: 5,
    payload: {},
    payload_hash: `h-${id}`,
    workflow_id: `job/${id}`,
    task_queue: 'q',
  });
};

async function index(name: string): Promise<{ valid: boolean; definition: string } | undefined> {
  const { rows } = (await db.raw(
    `select i.indisvalid as valid, pg_get_indexdef(i.indexrelid) as definition from pg_index i
     join pg_class c on c.oid = i.indexrelid join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = ? and c.relname = ?`,
    [schema, name],
  )) as { rows: { valid: boolean; definition: string }[] };
  return rows[0];
}

/** Whether a backend builds jobs_dedupe_key_idx and waits for a lock (the build waits for older transactions). */
async function buildWaiting(): Promise<boolean> {
  const { rows } = (await db.raw(
    `select count(*)::int as n from pg_stat_activity
     where datname = current_database() and wait_event_type = 'Lock' and query ilike '%create index%jobs_dedupe_key_idx%'`,
  )) as { rows: { n: number }[] };
  return (rows[0]?.n ?? 0) > 0;
}

test('an index built on a jobs table in use lets submissions go on meanwhile', async () => {
  await before(DEDUPE_KEY);
  await insertJob(db);
  expect(await index('jobs_dedupe_key_idx')).toBeUndefined();
  // A submission in flight when the upgrade starts: the build waits for it to end, whatever the lock mode.
  const inFlight = await db.transaction();
  try {
    await insertJob(inFlight);
    const upgrading = db.migrate.up({ name: DEDUPE_KEY });
    // Awaited below; should an expectation fail first, its outcome is not an unhandled rejection.
    upgrading.catch(() => undefined);
    // The build under way, waiting for the submission in flight (a lock wait either way).
    for (let i = 0; !(await buildWaiting()); i++) {
      if (i === 100) throw new Error('the index build is not waiting for the submission in flight');
      await new Promise((r) => setTimeout(r, 100));
    }
    // A new submission meanwhile. A plain CREATE INDEX queues a SHARE lock behind the one in flight,
    // and every later insert queues behind that: this one would wait until the build was done, which
    // waits for the commit below, and would be cancelled by its lock_timeout. Lock waits count
    // towards lock_timeout, a busy machine's slowness does not: not a timing.
    await expect(
      db.transaction(async (trx) => {
        await trx.raw(`set local lock_timeout = '3s'`);
        await insertJob(trx);
      }),
    ).resolves.toBeUndefined();
    await inFlight.commit();
    await upgrading;
  } finally {
    if (!inFlight.isCompleted()) await inFlight.rollback();
  }
  expect(await index('jobs_dedupe_key_idx')).toMatchObject({
    valid: true,
    definition: expect.stringContaining('payload_hash'),
  });
  // The index it replaces is gone.
  expect(await index('jobs_dedupe_idx')).toBeUndefined();
  expect(await db('jobs').count({ n: '*' }).first()).toEqual({ n: '3' });
});

test('an upgrade interrupted during a build finishes when it is run again', async () => {
  await before(DEDUPE_KEY);
  await insertJob(db);
  await insertJob(db);
  // What an interrupted concurrent build leaves: an INVALID index of the name (here a unique build
  // that failed on the two jobs' equal type).
  await expect(db.raw('create unique index concurrently jobs_dedupe_key_idx on jobs (type)')).rejects.toThrow(
    /could not create unique index/,
  );
  expect(await index('jobs_dedupe_key_idx')).toMatchObject({ valid: false });
  await db.migrate.up({ name: DEDUPE_KEY });
  expect(await index('jobs_dedupe_key_idx')).toMatchObject({
    valid: true,
    definition: expect.stringContaining('payload_hash'),
  });
  expect(await index('jobs_dedupe_idx')).toBeUndefined();
});

test('rolled back and applied again on a table with rows, the indexes are as a new install has them', async () => {
  await before(DEDUPE_KEY);
  expect(await index('jobs_dedupe_idx')).toMatchObject({ valid: true });
  expect(await index('jobs_dedupe_key_idx')).toBeUndefined();
  await db.migrate.latest();
  expect(await index('jobs_dedupe_key_idx')).toMatchObject({ valid: true });
  expect(await index('jobs_dedupe_idx')).toBeUndefined();
  expect(await db('knex_migrations').withSchema(schema).pluck('name')).toEqual(
    expect.arrayContaining([DEDUPE_KEY, ...LATER]),
  );
});

test("content site verification: sites already serving stay verified on upgrade; a rollback keeps, of a domain's registrations, the verified one", async () => {
  const VERIFICATION = '20261127000100_content_site_verification';
  const site = (domain: string, client = clientId) => ({ id: randomUUID(), client_id: client, domain });
  await db.migrate.down({ name: VERIFICATION });
  const serving = site(`serving-${randomUUID().slice(0, 8)}.example.com`);
  await db('content_sites').insert(serving);
  await db.migrate.up({ name: VERIFICATION });
  const upgraded = await db('content_sites').where({ id: serving.id }).first();
  expect(upgraded).toMatchObject({
    verification_token: expect.stringMatching(/^[0-9a-f]{32}$/),
    verified_at: upgraded.created_at,
  });

  // Two clients register one domain; the second verifies it. Rolled back: one site per domain again, the verified one.
  const other = (await new ClientRepository(db).create('migrations-other')).client_id;
  const domain = `shared-${randomUUID().slice(0, 8)}.example.com`;
  const first = { ...site(domain), verification_token: 'a'.repeat(32) };
  const second = { ...site(domain, other), verification_token: 'b'.repeat(32), verified_at: new Date() };
  await db('content_sites').insert(first);
  await db('content_sites').insert(second);
  await db.migrate.down({ name: VERIFICATION });
  expect(await db('content_sites').where({ domain }).pluck('id')).toEqual([second.id]);
  expect(await db('content_sites').where({ id: serving.id }).pluck('id')).toEqual([serving.id]);
  await db.migrate.latest();
});
