import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { workflowBundle } from '../../workers/worker';

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
}

/**
 * `node --import tsx <entry>` (tsx as a loader, not the tsx CLI, whose own child would outlive a
 * SIGKILL of its parent) with `env` on top of this process's environment; resolves once the
 * process logs `readyMessage` (pino's JSON lines on stdout; LOG_LEVEL=info for that).
 */
export async function startServiceProcess(entry: string, env: Record<string, string>, readyMessage: string, args: string[] = [], timeoutMs = 180_000): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', entry, ...args], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<string>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? String(code))));
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => { stderr = (stderr + d.toString()).slice(-4000); });
  await new Promise<void>((resolve, reject) => {
    let buffered = '';
    let ready = false;
    // Generous: a worker bundles the workflow code at start, which takes a minute on a busy 2-core machine.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${entry} did not log "${readyMessage}" within ${timeoutMs} ms: ${stderr}`));
    }, timeoutMs);
    // Keep reading stdout for the whole life of the process: a full pipe would block it.
    child.stdout?.on('data', (d: Buffer) => {
      if (ready) return;
      buffered += d.toString();
      if (buffered.includes(`"msg":"${readyMessage}"`)) {
        clearTimeout(timer);
        ready = true;
        resolve();
      } else {
        buffered = buffered.slice(-2000);
      }
    });
    void exited.then((how) => {
      clearTimeout(timer);
      reject(new Error(`${entry} exited (${how}) before it was ready: ${stderr}`));
    });
  });
  return {
    child,
    exited,
    kill: async (signal) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

let bundleFile: Promise<string> | undefined;

/** The workflow code bundled once per test file, in a temp file for the worker processes. */
function bundledWorkflows(): Promise<string> {
  return (bundleFile ??= workflowBundle().then((bundle) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'lj-bundle-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'workflows.json');
    writeFileSync(file, JSON.stringify(bundle));
    return file;
  }));
}

/**
 * The production worker (runWorkers of workers/main.ts: every job type's queues and the
 * rate-limited ones) in a process of its own, with the workflow code bundled once by this test
 * file (test/support/worker-main.ts), so that a restart after a kill takes seconds.
 */
export async function startWorkerProcess(identity: string, env: Record<string, string>): Promise<ServiceProcess> {
  return startServiceProcess('test/support/worker-main.ts', { ...env, WORKER_ID: identity }, 'worker running', [await bundledWorkflows()]);
}

/** The production API (api/server.ts) on `port`. */
export function startApiProcess(port: number, env: Record<string, string>): Promise<ServiceProcess> {
  return startServiceProcess('api/server.ts', { ...env, HOST: '127.0.0.1', PORT: String(port) }, 'api listening');
}

/** Nearest-rank percentile of `values` (ms). */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
}

/** Prints the figures as one table and writes them to bench/results/<name>.json. */
export function reportFigures(name: string, rows: Record<string, unknown>[], extra: Record<string, unknown> = {}): void {
  console.log(`${name}${FULL ? ' (CHAOS=1, full size)' : ' (default size)'}`);
  console.table(rows);
  const dir = path.join(root, 'bench/results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, `${name}.json`), `${JSON.stringify({ at: new Date().toISOString(), full_size: FULL, rows, ...extra }, null, 2)}\n`);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
