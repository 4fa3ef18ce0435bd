import { execFileSync } from 'node:child_process';

/**
 * Chromium processes started by this test process (its descendants: the browser, its zygotes,
 * GPU/utility helpers and renderers), never the other test runs' on the same machine.
 */
export function chromiumProcesses(): { all: number; renderers: number } {
  const rows = execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3] ?? '' }));
  const mine = new Set([process.pid]);
  // Parents come before children in most listings, but not always: repeat until nothing is added.
  for (let grew = true; grew;) {
    grew = false;
    for (const r of rows)
      if (!mine.has(r.pid) && mine.has(r.ppid)) {
        mine.add(r.pid);
        grew = true;
      }
  }
  const chromium = rows.filter((r) => mine.has(r.pid) && /chrom(e|ium)/i.test(r.args.split(' ')[0] ?? ''));
  return { all: chromium.length, renderers: chromium.filter((r) => r.args.includes('--type=renderer')).length };
}
