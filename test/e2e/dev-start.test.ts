/**
 * `npm start` (dev/start) under a process manager: a SIGTERM sent to the script alone, not to its
 * process group, stops the API and the worker it started, and no process of it is left behind.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { freePort, waitFor } from '../support/processes';

const root = path.join(__dirname, '../..');

/** Every process below `pid` (from /proc), with its command line. */
function descendants(pid: number): { pid: number; cmd: string }[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the command name, which may hold spaces and parentheses: state, ppid, ...
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
    } catch {
      // The process ended while we read.
    }
  }
  const found: { pid: number; cmd: string }[] = [];
  const visit = (p: number) => {
    for (const child of parents.get(p) ?? []) {
      let cmd = '';
      try {
        cmd = readFileSync(`/proc/${child}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
      } catch {
        /* ended */
      }
      found.push({ pid: child, cmd });
      visit(child);
    }
  };
  visit(pid);
  return found;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('dev/start', () => {
  test('SIGTERM to the dev/start process alone stops the API and the worker: nothing is left running', async () => {
    const port = await freePort();
    const start = spawn('bash', ['dev/start'], {
      cwd: root,
      // Its own queues: this worker must not take tasks of other test files of this run.
      env: {
        ...process.env,
        PORT: String(port),
        TASK_QUEUE_PREFIX: `${process.env.TASK_QUEUE_PREFIX ?? 'leadjobs'}-devstart`,
        LOG_LEVEL: 'info',
      },
      // A process group of its own, as under a process manager; the signal below goes to the script's pid only.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    start.stdout.on('data', (d: Buffer) => {
      output += d.toString();
    });
    start.stderr.on('data', (d: Buffer) => {
      output += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => start.once('exit', (code) => resolve(code)));
    let children: { pid: number; cmd: string }[] = [];
    try {
      await waitFor(
        async () => output.includes('leadjobs is running') && output.includes('"msg":"worker running"'),
        90000,
        'dev/start',
      );
      children = descendants(start.pid as number);
      expect(children.map((c) => c.cmd)).toEqual(
        expect.arrayContaining([expect.stringContaining('api/server.ts'), expect.stringContaining('workers/main.ts')]),
      );

      process.kill(start.pid as number, 'SIGTERM');
      expect(await exited).toBe(0);
      expect(output).toContain('"msg":"api stopped"');
      expect(output).toContain('"msg":"worker stopped"');
      await waitFor(async () => children.every((c) => !alive(c.pid)), 10000, 'children gone').catch(() => undefined);
      expect(children.filter((c) => alive(c.pid)).map((c) => c.cmd)).toEqual([]);
      await expect(fetch(`http://127.0.0.1:${port}/openapi.json`)).rejects.toThrow();
    } finally {
      // Whatever happened above, leave nothing running (the group holds the script and its children).
      for (const c of children.filter((c) => alive(c.pid))) process.kill(c.pid, 'SIGKILL');
      if (alive(start.pid as number)) process.kill(-(start.pid as number), 'SIGKILL');
    }
  }, 150000);
});
