import { randomUUID } from 'node:crypto';
import { createDb, migrateLatest, type Db } from '../../db';
import { inline } from '../../db/batched';
import { ClientRepository } from '../../db/repositories/clients';
import { JobRepository, type NewJob } from '../../db/repositories/jobs';
import { parseDbConfig } from '../../lib/config';

// The submission's de-duplication lookup (db/repositories/jobs.ts) must cost the same for a client
// with thousands of jobs in the window as for one with none. It once scanned all of a client's jobs
// of the last 24 hours on every submission: the planner, knowing nothing of a client newer than the
// table's statistics, took any index that starts with client_id, and the same lookup ran three times.
// One pooled connection, so the statement the test explains is the one submissions prepared.
const schema = `submit_lookup_${Date.now().toString(36)}`;
const config = parseDbConfig({ ...process.env, DATABASE_SCHEMA: schema, DATABASE_POOL_MAX: '1' });
const JOBS = 3000;
let db: Db;
let repo: JobRepository;

beforeAll(async () => {
  db = createDb(config);
  await migrateLatest(db, schema);
  // Statistics are only what the test gathers: no autovacuum analyze halfway.
  await db.raw('alter table jobs set (autovacuum_enabled = false)');
  repo = new JobRepository(db, schema);
}, 60_000);
afterAll(async () => {
  await db.raw('drop schema if exists ?? cascade', [schema]);
  await db.destroy();
});

const job = (clientId: string, i: number): NewJob => {
  const id = randomUUID();
  return {
    id,
    clientId,
    type: 'crawlSite',
    priority: 5,
    payload: { url: `https://site${i}.test/` },
    payloadHash: `hash-${i}-${id}`,
    campaignId: null,
    workflowId: `job/${id}`,
    taskQueue: 'q',
  };
};

/** Inserts `n` queued jobs of the client in one statement (as if submitted over the last hours). */
async function backfill(clientId: string, n: number): Promise<void> {
  await db.raw(
    `insert into jobs (id, client_id, type, status, priority, payload, payload_hash, workflow_id, task_queue, created_at)
     select gen_random_uuid(), ?, 'crawlSite', 'queued', 5, '{}'::jsonb, 'old-' || g, 'job/old-' || g, 'q', now() - (g || ' seconds')::interval
     from generate_series(1, ?) g`,
    [clientId, n],
  );
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

/** The rows every scan of `jobs` in the plan read: returned plus filtered out, over all its loops. */
function jobsRowsRead(node: PlanNode): number {
  const own =
    node['Relation Name'] === 'jobs' && /Scan/.test(node['Node Type'])
      ? ((node['Actual Rows'] ?? 0) +
          (node['Rows Removed by Filter'] ?? 0) +
          (node['Rows Removed by Index Recheck'] ?? 0)) *
        (node['Actual Loops'] ?? 1)
      : 0;
  return own + (node.Plans ?? []).reduce((sum, child) => sum + jobsRowsRead(child), 0);
}

test(`a submission of a client with ${JOBS} jobs in the window reads a handful of job rows, not all of them`, async () => {
  const clients = new ClientRepository(db);
  // The table's statistics know an older client only.
  const old = await clients.create('older client');
  await backfill(old.client_id, JOBS);
  await db.raw('analyze jobs');
  // A client newer than the statistics, with as many jobs of its own.
  const busy = await clients.create('busy new client');
  await backfill(busy.client_id, JOBS);
  // Past the five custom plans after which Postgres may keep a generic one for the connection.
  const submitted = Array.from({ length: 8 }, (_, i) => job(busy.client_id, i));
  for (const j of submitted)
    expect((await repo.submit(j, { dedupeWindowMs: 86_400_000 }, async () => undefined)).kind).toBe('created');

  // The submission's own prepared statement on the same connection, explained and rolled back.
  const next = job(busy.client_id, 99);
  let plan: PlanNode | undefined;
  const rollBack = new Error('roll back the explained insert');
  await db
    .transaction(async (trx) => {
      // EXPLAIN EXECUTE takes no bind parameters: the values go in as literals.
      const { rows } = (await trx.raw(
        inline(
          `explain (analyze, format json) execute leadjobs_submit_job(null, 'q', $1, 'crawlSite', $2, now() - interval '1 day', $3, $1, 'crawlSite', 5, '{}', $2, null, $4, 'q', $3)`,
          [busy.client_id, next.payloadHash, next.id, next.workflowId],
        ),
      )) as { rows: { 'QUERY PLAN': { Plan: PlanNode }[] }[] };
      plan = rows[0]?.['QUERY PLAN'][0]?.Plan;
      throw rollBack;
    })
    .catch((err: unknown) => {
      if (err !== rollBack) throw err;
    });
  expect(plan).toBeDefined();
  expect(jobsRowsRead(plan as PlanNode)).toBeLessThanOrEqual(2);
  // And the same payload again within the window still finds its job.
  const first = submitted[0] as NewJob;
  const again = await repo.submit(
    { ...job(busy.client_id, 0), payloadHash: first.payloadHash },
    { dedupeWindowMs: 86_400_000 },
    async () => undefined,
  );
  expect(again).toMatchObject({ kind: 'cached', job: { id: first.id } });
}, 60_000);
