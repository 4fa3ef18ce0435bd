import { randomUUID } from 'node:crypto';
import { createDb, migrateLatest, type Db } from '../../db';
import { parseDbConfig } from '../../lib/config';
import { bearer, ownQueues, startTestApi, type TestApi } from '../support/api';
import { caller, type Caller } from '../support/jobs';

// Every migration rolled back and applied again on a database in use: a schema filled through the
// API (content, IDAP, de-duplication, webhooks, mail templates, locations) plus jobs rows, then, from
// the latest migration to the first, each one down, up and down again, so that each down and each
// up runs on the rows that the migrations before it keep. Applied again from nothing, the schema is
// the one a new install has.
const stamp = Date.now().toString(36);
const used = `migrations_used_${stamp}`;
const fresh = `migrations_fresh_${stamp}`;
const dbFor = (schema: string) =>
  createDb(parseDbConfig({ ...process.env, DATABASE_SCHEMA: schema, DATABASE_POOL_MAX: '4' }));

let db: Db;
let freshDb: Db;
let api: TestApi;
let c: Caller;

beforeAll(async () => {
  db = dbFor(used);
  freshDb = dbFor(fresh);
  await migrateLatest(db, used);
  await migrateLatest(freshDb, fresh);
  api = await startTestApi({
    DATABASE_SCHEMA: used,
    RATE_LIMIT_ENABLED: 'false',
    ...ownQueues('migrations-roundtrip'),
  });
  c = caller(api, bearer(await api.newClient('migrations round trip')));
}, 60_000);
afterAll(async () => {
  await api.close();
  for (const [handle, schema] of [
    [db, used],
    [freshDb, fresh],
  ] as const) {
    await handle.raw('drop schema if exists ?? cascade', [schema]);
    await handle.destroy();
  }
});

const doc = {
  type: 'doc',
  content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Cold leads, warm words.' }] }],
};

/** Rows in most tables, written the way clients write them. */
async function populate(): Promise<void> {
  const ok = async (res: Promise<Response>, what: string) => {
    const r = await res;
    if (r.status >= 300) throw new Error(`${what}: ${r.status} ${await r.text()}`);
    return (await r.json()) as Record<string, unknown>;
  };
  const site = await ok(
    c.post('/api/v1/dashboard/content/sites', { domain: `blog-${stamp}.example.com` }),
    'content site',
  );
  expect(site.id).toEqual(expect.any(String));
  await ok(c.post('/api/v1/dashboard/content/authors', { full_name: 'Ada Lovelace' }), 'author');
  await ok(c.post('/api/v1/dashboard/content/categories', { name: 'Outreach' }), 'category');
  for (const slug of ['cold-leads', 'warm-leads'])
    await ok(
      c.post('/api/v1/dashboard/content/posts', {
        slug,
        title: slug,
        body: doc,
        tags: ['Sales', 'sales ', 'CRM'],
        author_name: 'Ada Lovelace',
      }),
      'post',
    );
  await ok(
    c.post('/api/v1/idap/businesses/import', {
      source: 'crawl_maps',
      records: [
        {
          data: {
            place_id: `ChIJ-${stamp}-1`,
            name: 'Northgate Bakers',
            address: '1 High St',
            website: 'https://northgate.test',
            email: 'info@northgate.test',
            phone: '+441904000001',
          },
        },
        {
          data: {
            place_id: `ChIJ-${stamp}-2`,
            name: 'Shambles Coffee',
            address: '2 Shambles',
            website: 'https://shambles.test',
          },
        },
      ],
    }),
    'IDAP import',
  );
  await ok(
    c.post('/api/v1/dedupe/check-batch', {
      record_type: 'business',
      records: [
        { company_name: 'Acme Bakery', email: 'a@acme.test', city: 'Leeds' },
        { company_name: 'Acme Bakery', email: 'a@acme.test', city: 'Leeds' },
      ],
    }),
    'dedupe',
  );
  await ok(
    c.post('/api/v1/webhooks', { url: 'https://hooks.example.com/leadjobs', events: ['job.completed'] }),
    'webhook',
  );
  await ok(
    c.post('/api/v1/mail/templates', {
      name: 'Welcome',
      template_type: 'full',
      html_source: '<p>Hi {{first_name}}</p>',
      variables: ['first_name'],
    }),
    'mail template',
  );
  const client = (await db('clients').first('id')) as { id: string };
  for (let i = 0; i < 3; i++) {
    const id = randomUUID();
    await db('jobs').insert({
      id,
      client_id: client.id,
      type: 'crawlSite',
      status: i === 0 ? 'queued' : 'completed',
      priority: 5,
      payload: {},
      payload_hash: `h-${i}`,
      workflow_id: `job/${id}`,
      task_queue: 'q',
    });
  }
}

/** The schema's shape: columns, indexes, constraints and triggers, with the schema's name taken out. */
async function shape(handle: Db, schema: string): Promise<string[]> {
  const q = async (sql: string) =>
    ((await handle.raw(sql, [schema])) as { rows: { line: string }[] }).rows.map((r) =>
      r.line.split(`${schema}.`).join(''),
    );
  return [
    ...(await q(
      `select table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '') as line from information_schema.columns where table_schema = ?`,
    )),
    ...(await q(`select tablename || ' ' || indexdef as line from pg_indexes where schemaname = ?`)),
    ...(await q(
      `select c.conrelid::regclass::text || ' ' || c.conname || ' ' || pg_get_constraintdef(c.oid) as line from pg_constraint c join pg_namespace n on n.oid = c.connamespace where n.nspname = ?`,
    )),
    ...(await q(
      `select event_object_table || ' ' || trigger_name || ' ' || event_manipulation || ' ' || action_statement as line from information_schema.triggers where trigger_schema = ?`,
    )),
  ].sort();
}

const applied = async () => (await db('knex_migrations').withSchema(used).orderBy('id').pluck('name')) as string[];

test("every migration goes down, up and down again on a schema with rows, and the schema applied again is a new install's", async () => {
  await populate();
  expect(Number((await db('idap_resources').count('* as n').first())?.n)).toBeGreaterThan(0);
  const names = await applied();
  expect(names.length).toBeGreaterThan(20);
  const failures: string[] = [];
  for (const name of [...names].reverse()) {
    const step = async (what: string, run: () => Promise<unknown>) => {
      try {
        await run();
      } catch (err) {
        failures.push(`${name} ${what}: ${(err as Error).message}`);
        throw err;
      }
    };
    await step('down', () => db.migrate.down());
    await step('up again', () => db.migrate.up());
    expect((await applied()).at(-1)).toBe(name);
    await step('down again', () => db.migrate.down());
  }
  expect(failures).toEqual([]);
  expect(await applied()).toEqual([]);
  await migrateLatest(db, used);
  expect(await applied()).toEqual(names);
  const newInstall = await shape(freshDb, fresh);
  expect(newInstall.length).toBeGreaterThan(300);
  expect(await shape(db, used)).toEqual(newInstall);
}, 180_000);
