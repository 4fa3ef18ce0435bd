/**
 * The floor bench/submit measures the API against: the least a durable submission can do over HTTP.
 * A node:http server (no framework) that reads the JSON body, inserts one row in a transaction
 * (BEGIN and the INSERT in one round trip, as the API's first), starts the workflow with the bare
 * arm's options, commits (a second round trip, as the API's) and answers 201 with the id. No
 * authentication, validation, cache lookup, capacity check, event, webhook or NOTIFY: what is left
 * is the HTTP request, the committed row and the workflow start, which any implementation of the
 * spec's submit pays. Its ratio to the bare arm is the lowest the API's could be on this machine.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { Client, Connection } from '@temporalio/client';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { escapeIdentifier, escapeLiteral, Pool } from 'pg';
import { priorityKeyFor } from '../jobs';
import { runJobInput } from '../jobs/run-input';
import { loadConfig } from '../lib/config';
import { temporalConnectionOptions } from '../lib/temporal';
import { runJob } from '../workflows';

async function main(): Promise<void> {
  const config = loadConfig();
  const table = `${escapeIdentifier(config.DATABASE_SCHEMA)}.floor_jobs`;
  const pool = new Pool({ connectionString: config.DATABASE_URL, max: 20 });
  await pool.query(
    `CREATE TABLE IF NOT EXISTS ${table} (id uuid PRIMARY KEY, payload jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`,
  );
  const connection = await Connection.connect(temporalConnectionOptions(config));
  const client = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
  const keys = {
    client: defineSearchAttributeKey('ClientId', SearchAttributeType.KEYWORD),
    type: defineSearchAttributeKey('JobType', SearchAttributeType.KEYWORD),
    job: defineSearchAttributeKey('JobId', SearchAttributeType.KEYWORD),
  };
  const taskQueue = `${config.TASK_QUEUE_PREFIX}-floor`;

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const id = randomUUID();
        const conn = await pool.connect().catch((err: unknown) => err as Error);
        if (conn instanceof Error) {
          res.writeHead(503, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ success: false, error: String(conn) }));
          return;
        }
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { payload: unknown; priority?: number };
          await conn.query(
            `BEGIN; INSERT INTO ${table} (id, payload) VALUES ('${id}', ${escapeLiteral(JSON.stringify(body.payload))})`,
          );
          await client.workflow.start(runJob, {
            taskQueue,
            workflowId: `floor/${id}`,
            args: [runJobInput({ id, client_id: 'cli_floor', type: 'crawlSite', payload: {} }, config)],
            typedSearchAttributes: [
              { key: keys.client, value: 'cli_floor' },
              { key: keys.type, value: 'crawlSite' },
              { key: keys.job, value: id },
            ],
            staticSummary: 'crawlSite for cli_floor (priority 5)',
            memo: { clientId: 'cli_floor', type: 'crawlSite', priority: 5 },
            priority: { priorityKey: priorityKeyFor(body.priority ?? 5) },
          });
          await conn.query('COMMIT');
          res.writeHead(201, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({ success: true, data: { job_id: id, workflow_id: `floor/${id}`, status: 'queued' } }),
          );
        } catch (err) {
          await conn.query('ROLLBACK').catch(() => undefined);
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ success: false, error: String(err) }));
        } finally {
          conn.release();
        }
      })();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(config.PORT, config.HOST, resolve));
  process.once('SIGTERM', () => {
    server.close();
    void Promise.all([pool.end(), connection.close()]).then(() => process.exit(0));
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
