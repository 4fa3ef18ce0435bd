/**
 * The production build: what `npm run build` compiles (tsconfig.build.json) runs with plain
 * `node`, without tsx: the API answers and the worker bundles its workflows from the compiled
 * files and runs jobs, SIGTERM (also after a SIGINT) ends both with exit code 0, and a worker told
 * to stop with an activity in flight lets it finish (drains) before it exits.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createDb, type Db } from '../../db';
import { ClientRepository } from '../../db/repositories/clients';
import { bearer, testConfig } from '../support/api';
import { freePort, waitFor } from '../support/processes';
import { startWebsite, type Website } from '../stand-ins/website';

const root = path.join(__dirname, '../..');
let out: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  out = mkdtempSync(path.join(tmpdir(), 'leadjobs-build-'));
  // node_modules next to dist, as in a deployment (the worker's bundler resolves packages from there).
  symlinkSync(path.join(root, 'node_modules'), path.join(out, 'node_modules'), 'dir');
  // Types are checked by `npm test` before Jest runs; here only the emitted files matter.
  await promisify(execFile)(
    process.execPath,
    [
      require.resolve('typescript/bin/tsc'),
      '-p',
      'tsconfig.build.json',
      '--outDir',
      path.join(out, 'dist'),
      '--noCheck',
    ],
    { cwd: root },
  );
}, 90000);
afterAll(() => {
  children.forEach((c) => c.kill('SIGKILL'));
  rmSync(out, { recursive: true, force: true });
});

interface Started {
  child: ChildProcess;
  output: () => string;
  exit: Promise<number | null>;
}

/** Waits for `check`, failing at once with the process's output if it exits first. */
async function ready(proc: Started, check: () => Promise<boolean>, what: string): Promise<void> {
  let done = false;
  await Promise.race([
    waitFor(check, 45000, what).finally(() => {
      done = true;
    }),
    proc.exit.then((code) => {
      if (!done) throw new Error(`${what} exited with ${code}:\n${proc.output()}`);
    }),
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
  child.stdout?.on('data', (d: Buffer) => {
    text += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    text += d.toString();
  });
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => text, exit };
}

// Its own queues: these processes must not take tasks of other test files of this run.
const queues = { TASK_QUEUE_PREFIX: `${process.env.TASK_QUEUE_PREFIX ?? 'leadjobs'}-dist` };
// The stand-in sites are on 127.0.0.1, as a customer's site on the internet would be.
const workerEnv = (id: string) => ({ ...queues, WORKER_ID: id, USER_URL_ALLOW_HOSTS: '127.0.0.1', SITE_DELAY_MS: '0' });

describe('compiled production processes', () => {
  let db: Db;
  let site: Website;
  let slow: Website;
  beforeAll(async () => {
    db = createDb(testConfig());
    site = await startWebsite();
    // One page that takes 4 s to answer: the activity is in flight when the worker is told to stop.
    slow = await startWebsite({ mode: 'slow', pageDelayMs: 4000 });
  });
  afterAll(async () => {
    await Promise.all([site.close(), slow.close()]);
    await db.destroy();
  });

  test('node dist/api/server.js and node dist/workers/main.js start and run a crawlSite job; SIGINT + SIGTERM drain the worker with a crawl in flight (its result kept, the page not fetched again) and end both with exit code 0', async () => {
    const port = await freePort();
    const api = start('api/server.js', { ...queues, PORT: String(port), RATE_LIMIT_ENABLED: 'false' });
    const worker = start('workers/main.js', workerEnv('dist-worker'));

    await ready(api, async () => (await fetch(`http://127.0.0.1:${port}/openapi.json`)).ok, 'compiled API');
    const doc = (await (await fetch(`http://127.0.0.1:${port}/openapi.json`)).json()) as { openapi: string };
    expect(doc.openapi).toBe('3.1.0');
    await ready(worker, async () => worker.output().includes('"msg":"worker running"'), 'compiled worker');

    const auth = bearer(await new ClientRepository(db).create('production build'));
    const call = (path: string, body?: unknown) =>
      fetch(
        `http://127.0.0.1:${port}${path}`,
        body === undefined
          ? { headers: { authorization: auth } }
          : {
              method: 'POST',
              headers: { authorization: auth, 'content-type': 'application/json' },
              body: JSON.stringify(body),
            },
      );
    const submit = async (payload: Record<string, unknown>) => {
      const res = await call('/api/v1/jobs/crawlSite/submit', { payload });
      expect(res.status).toBe(201);
      return ((await res.json()) as { job_id: string }).job_id;
    };
    const finished = async (jobId: string) => {
      let status = '';
      await waitFor(
        async () => {
          status = ((await (await call(`/api/v1/jobs/${jobId}/status`)).json()) as { status: string }).status;
          return ['completed', 'failed', 'cancelled'].includes(status);
        },
        60000,
        `job ${jobId} to finish`,
      );
      return {
        status,
        results: (await (await call(`/api/v1/jobs/${jobId}/results`)).json()) as {
          data: { pages_crawled: number; emails?: unknown[] };
        },
      };
    };

    const first = await finished(await submit({ url: `${site.baseUrl}/`, max_pages: 3 }));
    expect(first).toMatchObject({ status: 'completed', results: { data: { pages_crawled: 3 } } });

    const inFlight = await submit({ url: `${slow.baseUrl}/p/0`, max_pages: 1 });
    await waitFor(async () => slow.count('/p/0') === 1, 30000, 'the slow page to be requested');
    // A process manager's SIGTERM after a Ctrl-C (or a second Ctrl-C) must not cut the drain short.
    for (const { child } of [api, worker]) {
      child.kill('SIGINT');
      child.kill('SIGTERM');
    }
    expect(await api.exit).toBe(0);
    expect(await worker.exit).toBe(0);
    expect(api.output()).toContain('"msg":"api stopped"');
    expect(worker.output()).toContain('"msg":"worker stopped"');

    // The crawl finished before the worker left: the next worker completes the job from its
    // recorded result. A worker that cancelled it instead would leave the activity to be run again.
    const port2 = await freePort();
    const api2 = start('api/server.js', { ...queues, PORT: String(port2), RATE_LIMIT_ENABLED: 'false' });
    const worker2 = start('workers/main.js', workerEnv('dist-worker-2'));
    await ready(api2, async () => (await fetch(`http://127.0.0.1:${port2}/openapi.json`)).ok, 'second compiled API');
    const call2 = (path: string) => fetch(`http://127.0.0.1:${port2}${path}`, { headers: { authorization: auth } });
    let status = '';
    await waitFor(
      async () => {
        status = ((await (await call2(`/api/v1/jobs/${inFlight}/status`)).json()) as { status: string }).status;
        return ['completed', 'failed', 'cancelled'].includes(status);
      },
      60000,
      'the drained job to finish',
    );
    expect(status).toBe('completed');
    const results = (await (await call2(`/api/v1/jobs/${inFlight}/results`)).json()) as {
      data: { pages_crawled: number };
    };
    expect(results.data.pages_crawled).toBe(1);
    expect(slow.count('/p/0')).toBe(1);
    for (const { child } of [api2, worker2]) child.kill('SIGTERM');
    expect(await api2.exit).toBe(0);
    expect(await worker2.exit).toBe(0);
  }, 180000);
});
