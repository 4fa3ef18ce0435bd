/**
 * The whole service of a bench run in the bench's own process (bench:engine, bench:maps,
 * bench:campaign). Apart from bench/support.ts so that the benches and stand-in processes that only
 * need its helpers do not load the API and the worker.
 */
import type { AddressInfo } from 'node:net';
import { createApp } from '../api/app';
import { createDb, migrateLatest, type Db } from '../db';
import { ClientRepository } from '../db/repositories/clients';
import { parseConfig, type Config } from '../lib/config';
import { createLogger } from '../lib/logger';
import { Storage } from '../lib/storage';
import { connectTemporalLazy } from '../lib/temporal';
import { createSearchClient } from '../search/client';
import { runWorkers } from '../workers/main';
import { benchEnv } from './support';

/** The whole service of a bench run, in this process: the API on a free port, the production worker set, a client. */
export interface BenchService {
  config: Config;
  db: Db;
  /** The API's base URL and the client's Authorization header. */
  base: string;
  auth: string;
  temporal: ReturnType<typeof connectTemporalLazy>;
  /** A GET (no body) or a JSON POST as the client; the answer's status and JSON body. */
  call(path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }>;
  /** Stops the workers and the API, drops the run's schema and closes every connection. */
  close(): Promise<void>;
}

/** Starts the API and the workers on the local stack with the run's own schema, queues, buckets and indices (benchEnv). */
export async function startBenchService(
  tag: string,
  name: string,
  overrides: Record<string, string> = {},
): Promise<BenchService> {
  const config = parseConfig(benchEnv(tag, overrides));
  const db = createDb(config);
  await migrateLatest(db, config.DATABASE_SCHEMA);
  const client = await new ClientRepository(db).create(`bench ${name}`);
  const auth = `Bearer ${client.client_id}:${client.api_key}:${client.api_secret}`;
  const deps = {
    config,
    db,
    temporal: connectTemporalLazy(config),
    search: createSearchClient(config),
    storage: Storage.fromConfig(config),
    logger: createLogger('warn'),
  };
  const { app, close: closeApp } = createApp(deps);
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const workers = await runWorkers(config, `bench-${name}-${tag}`);
  return {
    config,
    db,
    base,
    auth,
    temporal: deps.temporal,
    call: async (p, body) => {
      const res = await fetch(
        `${base}${p}`,
        body === undefined
          ? { headers: { authorization: auth } }
          : {
              method: 'POST',
              headers: { authorization: auth, 'content-type': 'application/json' },
              body: JSON.stringify(body),
            },
      );
      return { status: res.status, json: (await res.json()) as Record<string, unknown> };
    },
    close: async () => {
      workers.shutdown();
      await workers.run;
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await closeApp();
      await db.raw('drop schema if exists ?? cascade', [config.DATABASE_SCHEMA]);
      await Promise.allSettled([db.destroy(), deps.temporal.connection.close(), deps.search.close()]);
    },
  };
}
