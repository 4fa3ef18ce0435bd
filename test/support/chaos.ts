import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runWorkflowBundleFile } from './workflow-bundle';

/**
 * Helpers of the crash and outage tests (test/chaos/): the size knob, the real API and worker
 * entrypoints as child processes (so that SIGKILL ends them as a crash would), and the figures.
 *
 * CHAOS=1 (read only here, a test knob, not service config) runs the full sizes
 * (`npm run test:chaos`); without it `npm test` runs smaller but real versions.
 */
export const FULL = process.env.CHAOS === '1';

export const size = <T>(normal: T, full: T): T => (FULL ? full : normal);

const root = path.join(__dirname, '../..');

export interface ServiceProcess {
  child: ChildProcess;
  /** Resolves with the exit code or signal once the process has ended. */
  exited: Promise<string>;
  /** Sends `signal` and waits for the process to end. */
  kill(signal: NodeJS.Signals): Promise<string>;
  /** Its error-level log lines (pino level 50 and up), the last 20: what a 500 was. */
  errorLogs: string[];
}

/** A started process that has not yet said `marker` on stdout (a pino `msg`, or a line of its own). */
interface Spawned {
  process: ServiceProcess;
  waitFor(marker: string, timeoutMs?: number): Promise<void>;
}

/**
 * `node --import tsx <entry>` (tsx as a loader, not the tsx CLI, whose own child would outlive a
 * SIGKILL of its parent) with `env` on top of this process's environment (LOG_LEVEL=info, so that
 * pino's JSON lines on stdout say when it is ready).
 */
function spawnService(entry: string, env: Record<string, string>, args: string[] = []): Spawned {
  const child = spawn(process.execPath, ['--import', 'tsx', entry, ...args], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? String(code))),
  );
  let stderr = '';
  let stdout = '';
  const waiting = new Set<() => void>();
  child.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const errorLogs: string[] = [];
  let partial = '';
  // Read stdout for the whole life of the process: a full pipe would block it.
  child.stdout?.on('data', (d: Buffer) => {
    const text = d.toString();
    stdout = (stdout + text).slice(-4000);
    const lines = (partial + text).split('\n');
    partial = (lines.pop() ?? '').slice(-20_000);
    for (const line of lines) {
      if (!/^\{"level":(5|6)\d/.test(line)) continue;
      errorLogs.push(line.slice(0, 3000));
      if (errorLogs.length > 20) errorLogs.shift();
    }
    waiting.forEach((check) => check());
  });
  const processHandle: ServiceProcess = {
    child,
    exited,
    errorLogs,
    kill: async (signal) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
  return {
    process: processHandle,
    // Generous: starting a process loads the whole project through tsx, a minute on a busy 2-core machine.
    waitFor: (marker, timeoutMs = 180_000) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!stdout.includes(marker)) return;
          stdout = '';
          done();
          resolve();
        };
        const timer = setTimeout(() => {
          done();
          child.kill('SIGKILL');
          reject(new Error(`${entry} did not say ${marker} within ${timeoutMs} ms: ${stderr}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          waiting.delete(check);
        };
        waiting.add(check);
        void exited.then((how) => {
          if (!waiting.has(check)) return;
          done();
          reject(new Error(`${entry} exited (${how}) before it said ${marker}: ${stderr}`));
        });
        check();
      }),
  };
}

/**
 * The production worker (runWorkers of workers/main.ts: every job type's queues and the
 * rate-limited ones) in a process of its own (test/support/worker-main.ts), with the workflow code
 * bundled once for the run (test/support/workflow-bundle.ts).
 */
export async function startWorkerProcess(identity: string, env: Record<string, string>): Promise<ServiceProcess> {
  return (await standbyWorkerProcess(identity, env)).start();
}

/**
 * A worker process loaded but not yet connected, as a supervisor keeps one warm: `start()` makes it
 * run and resolves once it polls. A crash test restarts a killed worker in seconds this way,
 * where loading the project takes a minute on a busy machine.
 */
export async function standbyWorkerProcess(
  identity: string,
  env: Record<string, string>,
): Promise<{ process: ServiceProcess; start(): Promise<ServiceProcess> }> {
  const spawned = spawnService('test/support/worker-main.ts', { ...env, WORKER_ID: identity }, [
    await runWorkflowBundleFile(),
    '--standby',
  ]);
  await spawned.waitFor('standby\n', 300_000);
  return {
    process: spawned.process,
    start: async () => {
      spawned.process.child.stdin?.write('start\n');
      await spawned.waitFor('"msg":"worker running"', 30_000);
      return spawned.process;
    },
  };
}

/** The production API (api/server.ts) on `port`. */
export async function startApiProcess(port: number, env: Record<string, string>): Promise<ServiceProcess> {
  const spawned = spawnService('api/server.ts', { ...env, HOST: '127.0.0.1', PORT: String(port) });
  await spawned.waitFor('"msg":"api listening"');
  return spawned.process;
}

/** Nearest-rank percentile of `values` (ms). */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
}

/** Prints the figures as one table and writes them to bench/results/<name>.json. */
export function reportFigures(
  name: string,
  rows: Record<string, unknown>[],
  extra: Record<string, unknown> = {},
): void {
  console.log(`${name}${FULL ? ' (CHAOS=1, full size)' : ' (default size)'}`);
  console.table(rows);
  const dir = path.join(root, 'bench/results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, `${name}.json`),
    `${JSON.stringify({ at: new Date().toISOString(), full_size: FULL, rows, ...extra }, null, 2)}\n`,
  );
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
