import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
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

/**
 * A bench's helper process (`node [nodeArgs] --import tsx script [args]`, from the repository root),
 * killed when the bench exits, however it exits: a bench that fails must not leave a server
 * holding its port and keeping it alive. Benches end a failed run with process.exit(1).
 */
export function serveScript(
  script: string,
  options: {
    args?: string[];
    nodeArgs?: string[];
    env?: Record<string, string | undefined>;
    stdio?: StdioOptions;
  } = {},
): ChildProcess {
  const child = spawn(
    process.execPath,
    [...(options.nodeArgs ?? []), '--import', 'tsx', script, ...(options.args ?? [])],
    {
      cwd: ROOT,
      env: (options.env ?? process.env) as NodeJS.ProcessEnv,
      stdio: options.stdio ?? ['ignore', 'inherit', 'inherit'],
    },
  );
  const kill = () => child.kill('SIGTERM');
  process.once('exit', kill);
  child.once('exit', () => process.removeListener('exit', kill));
  return child;
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
export async function load(
  total: number,
  concurrency: number,
  fn: (i: number) => Promise<void>,
): Promise<{ latencies: number[]; seconds: number }> {
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

/**
 * `--temporal dev|cluster`: the Temporal a bench runs on, the dev server of dev/stack (default) or
 * the cluster of dev/cluster (`npm run cluster -- up temporal` first), with the environment that
 * points the service at it and which processes are its server's (for CPU figures).
 */
export function temporalTarget(): {
  name: 'dev' | 'cluster';
  env: Record<string, string>;
  isServer: CpuGroup['match'];
} {
  const argv = process.argv.slice(2);
  const value = argv[argv.indexOf('--temporal') + 1];
  if (argv.includes('--temporal') && value !== 'dev' && value !== 'cluster')
    throw new Error(`--temporal takes dev or cluster, not ${String(value)}`);
  if (value === 'cluster')
    return {
      name: 'cluster',
      env: { TEMPORAL_ADDRESS: '127.0.0.1:7333' },
      isServer: (p) => p.cmdline.includes('temporal-server'),
    };
  return { name: 'dev', env: {}, isServer: (p) => p.cmdline.includes('temporal') && p.cmdline.includes('start-dev') };
}

/** The processes whose CPU a bench attributes: a name and how to pick them from /proc. */
export interface CpuGroup {
  name: string;
  match: (p: { pid: number; comm: string; cmdline: string }) => boolean;
}

/**
 * CPU seconds (user + system) used so far by each group's processes, their ended children's
 * included (Linux /proc; empty elsewhere). With the children's share a group's figure only grows: a
 * Postgres backend that ends between two readings (a pool closing an idle connection) moves its CPU
 * into the postmaster's, where it used to vanish and make a round's Postgres CPU negative.
 */
export function cpuSeconds(groups: CpuGroup[]): Record<string, number> {
  const out: Record<string, number> = Object.fromEntries(groups.map((g) => [g.name, 0]));
  for (const pid of procPids()) {
    try {
      const stat = procStat(pid);
      if (!stat) continue;
      const { comm, fields } = stat;
      // Fields 14-17 of stat (utime, stime, cutime, cstime), counted after the comm: indexes 11-14.
      const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const group = groups.find((g) => g.match({ pid: Number(pid), comm, cmdline }));
      if (group) out[group.name] = (out[group.name] ?? 0) + ticks / 100;
    } catch {
      // The process ended while being read.
    }
  }
  return out;
}

/** The process ids in /proc (none where there is no /proc). */
export function procPids(): string[] {
  try {
    return readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return [];
  }
}

/**
 * A process's /proc/<pid>/stat: its name, and the fields after the name from the state (stat's 3rd
 * field) on, so that stat's field n is `fields[n - 3]`. Undefined once the process has ended.
 */
export function procStat(pid: string): { comm: string; fields: string[] } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    return { comm: stat.slice(stat.indexOf('(') + 1, close), fields: stat.slice(close + 2).split(' ') };
  } catch {
    return undefined;
  }
}

/** The difference of two cpuSeconds readings, rounded to 10 ms. */
export function cpuSince(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  return Object.fromEntries(
    Object.keys(after).map((k) => [k, Math.round(((after[k] ?? 0) - (before[k] ?? 0)) * 100) / 100]),
  );
}
