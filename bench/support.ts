import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

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
