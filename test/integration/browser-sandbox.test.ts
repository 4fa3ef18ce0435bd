import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createServer } from 'node:http';
import { BrowserPageSource } from '../../activities/site/fetch';
import { OutboundClient } from '../../lib/outbound';
import { testConfig } from '../support/api';
import { listenLocal } from '../stand-ins/listen';

// Issue 38 item 2: the worker renders pages any client chooses; Chromium must run with its sandbox
// and not as root, and the browser's processes must not carry the worker's secrets. The worker's
// own page source (render_js) launches Chromium as it does in production (CHROMIUM_PATH from
// .stack/env: dev/chromium-sandboxed); while the page is loading, the processes under this test
// process are read from /proc.

interface ChromiumProcess {
  pid: number;
  type: string;
  cmdline: string;
  uids: string[];
  seccomp: string;
  userNamespace: string;
  environ: string;
}

function chromiumDescendants(): ChromiumProcess[] {
  const parent = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // Gone since the listing.
    }
  }
  const mine = new Set([process.pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, ppid] of parent)
      if (!mine.has(pid) && mine.has(ppid)) {
        mine.add(pid);
        grew = true;
      }
  }
  const found: ChromiumProcess[] = [];
  for (const pid of mine) {
    if (pid === process.pid) continue;
    try {
      // Chromium rewrites its own title: NUL-separated or one space-separated string.
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
      if (!/chrom(e|ium)/.test(cmdline.split(' ')[0] ?? '')) continue;
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      found.push({
        pid,
        type: /--type=(\S+)/.exec(cmdline)?.[1] ?? 'browser',
        cmdline,
        uids: (/^Uid:\s+(.*)$/m.exec(status)?.[1] ?? '').trim().split(/\s+/),
        seccomp: /^Seccomp:\s+(\d+)/m.exec(status)?.[1] ?? '',
        userNamespace: readlinkSync(`/proc/${pid}/ns/user`),
        environ: readFileSync(`/proc/${pid}/environ`, 'utf8'),
      });
    } catch {
      // Exited meanwhile.
    }
  }
  return found;
}

test("Chromium renders without --no-sandbox, as the unprivileged browser user, sandboxed, without the worker's environment", async () => {
  const config = testConfig();
  let seen: ChromiumProcess[] = [];
  // The page asks for /probe while it renders: the renderer is alive when the processes are read.
  const web = await listenLocal(
    createServer((req, res) => {
      if (req.url === '/probe') {
        seen = chromiumDescendants();
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
        return;
      }
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(
          '<!doctype html><title>sandbox</title><script>fetch("/probe").then((r) => r.text()).then((t) => { document.title = t; });</script>',
        );
    }),
  );
  const outbound = new OutboundClient({ allowHosts: ['127.0.0.1'], userAgent: 'test' });
  const source = new BrowserPageSource(outbound, config.CHROMIUM_PATH, {
    userAgent: 'test',
    pageTimeoutMs: 20_000,
    maxPageBytes: 100_000,
  });
  try {
    const page = await source.fetchPage(`${web.baseUrl}/`, new AbortController().signal);
    expect(page.html).toContain('<title>ok</title>');
  } finally {
    await Promise.all([source.close().then(() => outbound.close()), web.close()]);
  }

  const renderers = seen.filter((p) => p.type === 'renderer');
  expect(renderers.length).toBeGreaterThan(0);
  expect(seen.filter((p) => p.type === 'browser')).toHaveLength(1);
  // Playwright adds --no-sandbox unless told otherwise; no process of the browser has it.
  expect(seen.filter((p) => /(^| )--no-sandbox( |$)/.test(p.cmdline)).map((p) => p.type)).toEqual([]);
  // As root (here and in CI) the browser runs as dev/stack's unprivileged user; otherwise as this user.
  const browserUid =
    process.getuid?.() === 0
      ? execFileSync('id', ['-u', 'leadjobs-browser'], { encoding: 'utf8' }).trim()
      : String(process.getuid?.());
  expect(browserUid).not.toBe('0');
  for (const p of seen)
    expect({ type: p.type, uids: p.uids }).toEqual({
      type: p.type,
      uids: [browserUid, browserUid, browserUid, browserUid],
    });
  // The sandbox itself: every renderer under a seccomp-bpf filter (mode 2) in a user namespace of its own.
  const ours = readlinkSync('/proc/self/ns/user');
  for (const r of renderers)
    expect({ pid: r.pid, seccomp: r.seccomp, ownNamespace: r.userNamespace !== ours }).toEqual({
      pid: r.pid,
      seccomp: '2',
      ownNamespace: true,
    });
  // None of the worker's secrets in any browser process's environment.
  for (const p of seen)
    expect({
      type: p.type,
      secrets: ['DATABASE_URL', 'MINIO_SECRET_KEY', 'INTEGRATIONS_ENCRYPTION_KEY'].filter((k) =>
        p.environ.includes(`${k}=`),
      ),
    }).toEqual({ type: p.type, secrets: [] });
});
