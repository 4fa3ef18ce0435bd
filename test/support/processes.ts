import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/**
 * A real worker in one Node process of its own, polling the queues of `types` (tsx as a loader, not
 * the tsx CLI, which would put the worker in a child process that SIGKILL of the parent leaves
 * running). Resolves once it says ready; the caller kills it (and keeps it to kill in afterAll).
 */
export async function spawnWorkerProcess(
  identity: string,
  types: readonly string[],
  env: Record<string, string>,
): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/worker-process.ts', identity, ...types], {
    cwd: path.join(__dirname, '../..'),
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout?.on('data', (d: Buffer) => {
        if (d.toString().includes('ready')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`worker process ${identity} exited with ${code}`)));
    });
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return child;
}

export async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${what} not ready within ${timeoutMs} ms`);
}

export interface ScratchMinio {
  endpoint: string;
  accessKey: string;
  secretKey: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** A second, throwaway MinIO server (the binary dev/stack built) that a test may stop at will. */
export async function startScratchMinio(): Promise<ScratchMinio> {
  const bin = process.env.MINIO_BIN;
  if (!bin) throw new Error('MINIO_BIN is not set (npm test sets it from .stack/env)');
  const port = await freePort();
  const consolePort = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'minio-scratch-'));
  const accessKey = 'scratchadmin';
  const secretKey = 'scratch-secret-key';
  const child = spawn(
    bin,
    ['server', dir, '--address', `127.0.0.1:${port}`, '--console-address', `127.0.0.1:${consolePort}`, '--quiet'],
    {
      env: { ...process.env, MINIO_ROOT_USER: accessKey, MINIO_ROOT_PASSWORD: secretKey },
      stdio: 'ignore',
    },
  );
  const endpoint = `http://127.0.0.1:${port}`;
  await waitFor(async () => (await fetch(`${endpoint}/minio/health/ready`)).ok, 30000, 'scratch minio');
  let stopped = false;
  return {
    endpoint,
    accessKey,
    secretKey,
    process: child,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
