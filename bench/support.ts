import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createApp } from '../api/app';
import { createDb, migrateLatest, type Db } from '../db';
import { ClientRepository } from '../db/repositories/clients';
import { parseConfig, type Config } from '../lib/config';
import { createLogger } from '../lib/logger';
import { Storage } from '../lib/storage';
import { connectTemporalLazy } from '../lib/temporal';
import { createSearchClient } from '../search/client';
import { runWorkers } from '../workers/main';

export const ROOT = path.join(__dirname, '..');

/** The local stack's environment ($STACK_DIR/env, default .stack/env) under whatever the caller set already. */
export function stackEnv(): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  const file = path.join(process.env.STACK_DIR ?? path.join(ROOT, '.stack'), 'env');
  if (existsSync(file)) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const i = line.indexOf('=');
      if (i > 0) env[line.slice(0, i)] = line.slice(i + 1);
    }
  }
  return { ...env, ...process.env };
}

/**
 * A bench run's environment: the local stack's, with a schema, task queues, buckets and indices of
 * the run's own (named after `tag`), warnings only, and the caller's overrides.
 */
export function benchEnv(tag: string, overrides: Record<string, string> = {}): Record<string, string | undefined> {
  return {
    ...stackEnv(),
    DATABASE_SCHEMA: `bench_${tag}`,
    TASK_QUEUE_PREFIX: `bench-${tag}`,
    MINIO_BUCKET_PREFIX: `bench-${tag}`,
    ES_INDEX_PREFIX: `bench-${tag}`,
    LOG_LEVEL: 'warn',
    ...overrides,
  };
}

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
export async function startBenchService(tag: string, name: string, overrides: Record<string, string> = {}): Promise<BenchService> {
  const config = parseConfig(benchEnv(tag, overrides));
  const db = createDb(config);
  await migrateLatest(db, config.DATABASE_SCHEMA);
  const client = await new ClientRepository(db).create(`bench ${name}`);
  const auth = `Bearer ${client.client_id}:${client.api_key}:${client.api_secret}`;
  const deps = { config, db, temporal: connectTemporalLazy(config), search: createSearchClient(config), storage: Storage.fromConfig(config), logger: createLogger('warn') };
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
      const res = await fetch(`${base}${p}`, body === undefined ? { headers: { authorization: auth } } : { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
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

export function args<T extends Record<string, number>>(defaults: T): T {
  const out: Record<string, number> = { ...defaults };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i]?.replace(/^--/, '');
    if (key && key in out) out[key] = Number(argv[++i]);
  }
  return out as T;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, i)] as number;
}

export interface Stats {
  count: number;
  seconds: number;
  per_second: number;
  p50_ms: number;
  p95_ms: number;
  p99_ms: number;
  max_ms: number;
}

export function stats(latencies: number[], seconds: number): Stats {
  const sorted = [...latencies].sort((a, b) => a - b);
  const r = (x: number) => Math.round(x * 100) / 100;
  return {
    count: sorted.length,
    seconds: r(seconds),
    per_second: r(sorted.length / seconds),
    p50_ms: r(percentile(sorted, 50)),
    p95_ms: r(percentile(sorted, 95)),
    p99_ms: r(percentile(sorted, 99)),
    max_ms: r(sorted.at(-1) ?? NaN),
  };
}

/** Runs `total` calls of `fn` from `concurrency` loops; returns each call's latency in ms. */
export async function load(total: number, concurrency: number, fn: (i: number) => Promise<void>): Promise<{ latencies: number[]; seconds: number }> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < total; i = next++) {
        const t = performance.now();
        await fn(i);
        latencies.push(performance.now() - t);
      }
    }),
  );
  return { latencies, seconds: (performance.now() - started) / 1000 };
}

export function writeResult(name: string, result: unknown): string {
  const dir = path.join(ROOT, 'bench/results');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  return file;
}
