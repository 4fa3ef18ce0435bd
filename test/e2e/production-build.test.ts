/**
 * The production build: what `npm run build` compiles (tsconfig.build.json) runs with plain
 * `node`, without tsx: the API answers and the worker bundles its workflows from the compiled
 * files, and SIGTERM (also after a SIGINT) ends both with exit code 0.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort, waitFor } from '../support/processes';

const root = path.join(__dirname, '../..');
let out: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  out = mkdtempSync(path.join(tmpdir(), 'leadjobs-build-'));
  // node_modules next to dist, as in a deployment (the worker's bundler resolves packages from there).
  symlinkSync(path.join(root, 'node_modules'), path.join(out, 'node_modules'), 'dir');
  // Types are checked by `npm test` before Jest runs; here only the emitted files matter.
  await promisify(execFile)(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', path.join(out, 'dist'), '--noCheck'], { cwd: root });
}, 90000);
afterAll(() => {
  children.forEach((c) => c.kill('SIGKILL'));
  rmSync(out, { recursive: true, force: true });
});

interface Started { child: ChildProcess; output: () => string; exit: Promise<number | null> }

/** Waits for `check`, failing at once with the process's output if it exits first. */
async function ready(proc: Started, check: () => Promise<boolean>, what: string): Promise<void> {
  let done = false;
  await Promise.race([
    waitFor(check, 45000, what).finally(() => { done = true; }),
    proc.exit.then((code) => { if (!done) throw new Error(`${what} exited with ${code}:\n${proc.output()}`); }),
  ]);
}

function start(entry: string, env: Record<string, string>): Started {
  const child = spawn(process.execPath, [path.join(out, 'dist', entry)], {
    cwd: out,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let text = '';
  child.stdout?.on('data', (d: Buffer) => { text += d.toString(); });
  child.stderr?.on('data', (d: Buffer) => { text += d.toString(); });
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => text, exit };
}

describe('compiled production processes', () => {
  test('node dist/api/server.js and node dist/workers/main.js start, answer, and drain on SIGINT + SIGTERM with exit code 0', async () => {
    const port = await freePort();
    const api = start('api/server.js', { PORT: String(port) });
    // Its own queues: this worker must not take tasks of other test files of this run.
    const worker = start('workers/main.js', { TASK_QUEUE_PREFIX: `${process.env.TASK_QUEUE_PREFIX ?? 'leadjobs'}-dist`, WORKER_ID: 'dist-worker' });

    await ready(api, async () => (await fetch(`http://127.0.0.1:${port}/openapi.json`)).ok, 'compiled API');
    const doc = (await (await fetch(`http://127.0.0.1:${port}/openapi.json`)).json()) as { openapi: string };
    expect(doc.openapi).toBe('3.1.0');
    await ready(worker, async () => worker.output().includes('"msg":"worker running"'), 'compiled worker');

    // A process manager's SIGTERM after a Ctrl-C (or a second Ctrl-C) must not cut the drain short.
    for (const { child } of [api, worker]) {
      child.kill('SIGINT');
      child.kill('SIGTERM');
    }
    expect(await api.exit).toBe(0);
    expect(await worker.exit).toBe(0);
    expect(api.output()).toContain('"msg":"api stopped"');
    expect(worker.output()).toContain('"msg":"worker stopped"');
  }, 90000);
});
