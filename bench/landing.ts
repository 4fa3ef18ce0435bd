/**
 * bench/landing: landing-page captures of a stand-in page (test/stand-ins/landing-pages.ts /landing:
 * consent banner, lazy images, a stylesheet, a form) by the crawlLanding capture itself
 * (activities/landing/capture.ts: Chromium through the SSRF guard, popups, scrolling, fold and full
 * screenshots, HTML bundle, three objects stored in MinIO), next to bare Playwright loops in the same
 * run on the same page and viewport: one browser, a new page per round, `goto` + a full-page PNG
 * screenshot (the arm that carries issue 13's target: captures >= 0.7x its throughput), and
 * `goto` + a viewport PNG screenshot (shown too), and `goto` until Playwright's `networkidle` (500 ms
 * without a request, as a capture settles, with 300 ms) + a full-page PNG screenshot (shown too: the
 * bare loop that waits for the page as the capture does). The arms alternate in blocks of `--block` rounds, so
 * a change of load on the shared machine falls on all of them. Prints p50/p95 and throughput per arm,
 * the ratios, each capture step's p50, and the peak resident memory of each browser's Chromium
 * processes (sampled every 100 ms); writes JSON to bench/results/.
 *   npm run bench:landing -- [--captures 20] [--concurrency 1] [--block 5] [--page 0]
 * `--page 1` captures /plain (a minimal page) instead of /landing.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import type { Browser } from 'playwright-core';
import { LandingBrowser } from '../activities/landing/browser';
import { captureLanding, type CaptureDeps } from '../activities/landing/capture';
import type { LlmExtractor } from '../activities/llm/types';
import { crawlLandingPayload } from '../jobs/crawl-landing';
import { launchOptions } from '../lib/browser';
import { parseConfig } from '../lib/config';
import { OutboundClient } from '../lib/outbound';
import { Storage } from '../lib/storage';
import { startLandingPages } from '../test/stand-ins/landing-pages';
import {
  args,
  cpuSeconds,
  cpuSince,
  load,
  percentile,
  procPids,
  procStat,
  stackEnv,
  stats,
  writeResult,
  type CpuGroup,
  type Stats,
} from './support';

// The size of a memory page, the unit of the resident size in /proc/<pid>/stat.
const PAGE_BYTES = Number(execFileSync('getconf', ['PAGESIZE'], { encoding: 'utf8' }).trim()) || 4096;

interface Proc {
  pid: number;
  ppid: number;
  rss: number;
  comm: string;
}

/**
 * Every process with its parent, resident memory (KiB) and name, from one read of /proc/<pid>/stat
 * each. Not `ps`: the sampler runs every 100 ms, and a fork of ps each time cost about 150 ms of CPU
 * per round, counted against whichever arm was running.
 */
function processes(): Proc[] {
  return procPids().flatMap((pid) => {
    const stat = procStat(pid);
    // ppid is stat's 4th field, rss (in pages) its 24th.
    return stat
      ? [
          {
            pid: Number(pid),
            ppid: Number(stat.fields[1]),
            rss: (Number(stat.fields[21]) * PAGE_BYTES) / 1024,
            comm: stat.comm,
          },
        ]
      : [];
  });
}

/** The Chromium browsers this process launched (its direct Chromium children). */
function chromiumRoots(): Set<number> {
  return new Set(
    processes()
      .filter((p) => p.ppid === process.pid && /chrom/i.test(p.comm))
      .map((p) => p.pid),
  );
}

/** Resident memory (MiB) of the Chromium processes under `roots` (the browsers and their renderers, GPU and utility processes). */
function chromiumRssMiB(roots: Set<number>): number {
  const rows = processes();
  const tree = new Set(roots);
  for (let grew = true; grew;) {
    grew = false;
    for (const r of rows)
      if (!tree.has(r.pid) && tree.has(r.ppid)) {
        tree.add(r.pid);
        grew = true;
      }
  }
  return Math.round(
    rows.filter((r) => tree.has(r.pid) && /chrom/i.test(r.comm)).reduce((sum, r) => sum + r.rss, 0) / 1024,
  );
}

/** Samples each browser's memory every 100 ms; `stop()` gives each one's peak. */
function sampleMemory(browsers: Record<string, Set<number>>): { stop(): Record<string, number> } {
  const peak: Record<string, number> = Object.fromEntries(Object.keys(browsers).map((k) => [k, 0]));
  const timer = setInterval(() => {
    for (const [name, roots] of Object.entries(browsers)) peak[name] = Math.max(peak[name] ?? 0, chromiumRssMiB(roots));
  }, 100);
  return {
    stop: () => {
      clearInterval(timer);
      return peak;
    },
  };
}

interface Arm {
  name: string;
  run: (i: number) => Promise<void>;
  latencies: number[];
  seconds: number;
  done: number;
  /** CPU ms used during the arm's blocks: by the whole machine (every process), and by this Node process. */
  cpu: { machine: number; node: number };
  /** CPU ms used during the arm's blocks by each group of processes (PROCESS_GROUPS). */
  byProcess: Record<string, number>;
}

/**
 * Where a round's CPU goes: Chromium's processes by their --type (a renderer's CPU stays counted once
 * it has ended: the zygote that forked it reaps it, and cpuSeconds adds reaped children's CPU), this
 * Node process (the bench and the capture's route, fetches and storage calls) and MinIO. Only one arm
 * runs at a time, so each group's CPU during an arm's blocks is that arm's.
 */
const PROCESS_GROUPS: CpuGroup[] = [
  { name: 'node', match: (p) => p.pid === process.pid },
  { name: 'renderer', match: (p) => /--type=(renderer|zygote)/.test(p.cmdline) },
  { name: 'gpu', match: (p) => p.cmdline.includes('--type=gpu-process') },
  { name: 'utility', match: (p) => p.cmdline.includes('--type=utility') },
  { name: 'browser', match: (p) => /chrom/i.test(p.comm) && !p.cmdline.includes('--type=') },
  { name: 'minio', match: (p) => p.comm === 'minio' },
];

/** CPU ms the machine has spent so far, all cores and processes (Linux /proc/stat: user, nice, system, irq, softirq, steal). */
function machineCpuMs(): number {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]?.trim().split(/\s+/).slice(1).map(Number) ?? [];
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
    // In clock ticks of USER_HZ, which is 100 on Linux whatever the kernel's own tick rate.
    return ((user + nice + system + irq + softirq + steal) * 1000) / 100;
  } catch {
    return 0;
  }
}

/**
 * Runs every arm `total` times in alternating blocks of `block` rounds (each block at `concurrency`),
 * so that a change in the shared machine's load falls on all arms alike. Each arm's throughput is its
 * rounds over the time its own blocks took.
 */
async function interleaved(arms: Arm[], total: number, concurrency: number, block: number): Promise<void> {
  while (arms.some((a) => a.done < total)) {
    for (const arm of arms) {
      const n = Math.min(block, total - arm.done);
      if (n <= 0) continue;
      const offset = arm.done;
      const groups = cpuSeconds(PROCESS_GROUPS);
      const machine = machineCpuMs();
      const node = process.cpuUsage();
      const r = await load(n, concurrency, (i) => arm.run(offset + i));
      const used = process.cpuUsage(node);
      arm.cpu.machine += machineCpuMs() - machine;
      for (const [k, v] of Object.entries(cpuSince(groups, cpuSeconds(PROCESS_GROUPS))))
        arm.byProcess[k] = (arm.byProcess[k] ?? 0) + v * 1000;
      arm.cpu.node += (used.user + used.system) / 1000;
      arm.latencies.push(...r.latencies);
      arm.seconds += r.seconds;
      arm.done += n;
    }
  }
}

async function main(): Promise<void> {
  const opts = args({ captures: 20, concurrency: 1, page: 0, block: 5 });
  const tag = `l${Date.now().toString(36)}`;
  const config = parseConfig({
    ...stackEnv(),
    MINIO_BUCKET_PREFIX: `bench-${tag}`,
    LOG_LEVEL: 'warn',
    USER_URL_ALLOW_HOSTS: '127.0.0.1',
  });
  const pages = await startLandingPages();
  const url = `${pages.baseUrl}${opts.page === 1 ? '/plain' : '/landing'}`;
  const http = OutboundClient.fromConfig(config);
  const noLlm: LlmExtractor = { extractJson: () => Promise.resolve({ ok: false, reason: 'not used' }) };
  const browser = new LandingBrowser(http, config.CHROMIUM_PATH, 60_000);
  const deps: CaptureDeps = {
    browser,
    http,
    storage: Storage.fromConfig(config),
    llm: noLlm,
    userAgent: config.SITE_USER_AGENT,
    maxResourceBytes: config.LANDING_MAX_RESOURCE_BYTES,
    maxBundleBytes: config.LANDING_MAX_BUNDLE_BYTES,
    maxConcurrentSubresources: config.LANDING_MAX_CONCURRENT_SUBRESOURCES,
    maxCaptureBytes: config.LANDING_MAX_CAPTURE_BYTES,
    apiBaseUrl: `http://${config.HOST}:${config.PORT}`,
  };
  const payload = crawlLandingPayload.parse({ url });
  const { chromium } = await import('playwright-core');
  let bare: Browser | undefined;
  try {
    // Where a capture spends its time: each step's duration (from its onStep to the next one, the last to the end).
    const steps = new Map<string, number[]>();
    const capture = async (i: number) => {
      let current: { step: string; at: number } | undefined;
      const mark = (step: string) => {
        const now = performance.now();
        if (current) steps.set(current.step, [...(steps.get(current.step) ?? []), now - current.at]);
        current = { step, at: now };
      };
      const r = await captureLanding(deps, {
        jobId: `${tag}-${i}`,
        clientId: 'cli_bench',
        payload,
        signal: new AbortController().signal,
        onStep: mark,
      });
      mark('');
      if (
        !r.capture.screenshot_fold_url ||
        !r.capture.screenshot_full_url ||
        !r.capture.html_bundle_url ||
        r.errors.length
      )
        throw new Error(`capture ${i} degraded: ${JSON.stringify(r.errors)}`);
    };
    // Warm-up: the browser launch and the bucket creation are no capture's time.
    await capture(-1);
    steps.clear();
    const captureRoots = chromiumRoots();

    // The bare arms: their own browser, a new page per round (a context of its own, as each capture
    // has), the same page and viewport, `goto` + one PNG screenshot. The full-page arm (a capture's
    // heaviest shot is its full page) carries the target; the viewport-only arm (what this bench
    // compared with before 2026-11-25) and the one that waits for networkidle, as a capture waits for
    // the page to settle, are shown too.
    const bareBrowser = await chromium.launch(launchOptions(config.CHROMIUM_PATH));
    bare = bareBrowser;
    const bareRoots = new Set([...chromiumRoots()].filter((pid) => !captureRoots.has(pid)));
    // The full-page arm's steps too, to set next to the capture's.
    const bareSteps = {
      new_page: [] as number[],
      goto: [] as number[],
      screenshot: [] as number[],
      close: [] as number[],
    };
    const bareLoop =
      (fullPage: boolean, waitUntil: 'load' | 'networkidle' = 'load') =>
      async () => {
        const timed = async <T>(key: keyof typeof bareSteps, fn: () => Promise<T>): Promise<T> => {
          const t0 = performance.now();
          const out = await fn();
          if (fullPage && waitUntil === 'load') bareSteps[key].push(performance.now() - t0);
          return out;
        };
        const page = await timed('new_page', () => bareBrowser.newPage({ viewport: payload.options.viewport }));
        await timed('goto', () => page.goto(url, { waitUntil }));
        await timed('screenshot', () => page.screenshot({ type: 'png', fullPage }));
        await timed('close', () => page.close());
      };
    await bareLoop(true)();
    for (const ms of Object.values(bareSteps)) ms.length = 0;

    const arm = (name: string, run: (i: number) => Promise<void>): Arm => ({
      name,
      run,
      latencies: [],
      seconds: 0,
      done: 0,
      cpu: { machine: 0, node: 0 },
      byProcess: {},
    });
    const arms = [
      arm('capture', capture),
      arm('bare_full', bareLoop(true)),
      arm('bare_viewport', bareLoop(false)),
      arm('bare_settled', bareLoop(true, 'networkidle')),
    ];
    const memory = sampleMemory({ capture: captureRoots, bare: bareRoots });
    await interleaved(arms, opts.captures, opts.concurrency, opts.block);
    const peak = memory.stop();

    const [c, b, v, n] = arms.map((a) => stats(a.latencies, a.seconds)) as [Stats, Stats, Stats, Stats];
    // From each arm's own rounds and time (per_second is rounded to 2 decimals, too coarse on a slow machine).
    const throughput = (a: Arm) => a.done / a.seconds;
    const [capArm, fullArm, viewArm, settledArm] = arms as [Arm, Arm, Arm, Arm];
    const ratio = Math.round((throughput(capArm) / throughput(fullArm)) * 100) / 100;
    const ratioViewport = Math.round((throughput(capArm) / throughput(viewArm)) * 100) / 100;
    const ratioSettled = Math.round((throughput(capArm) / throughput(settledArm)) * 100) / 100;
    const p50 = (ms: number[]) =>
      Math.round(
        percentile(
          [...ms].sort((x, y) => x - y),
          50,
        ),
      );
    const stepMs = Object.fromEntries([...steps].map(([step, ms]) => [step, p50(ms)]));
    const bareStepMs = Object.fromEntries(Object.entries(bareSteps).map(([step, ms]) => [step, p50(ms)]));
    const result = {
      bench: 'landing',
      page: url.replace(pages.baseUrl, ''),
      captures: opts.captures,
      concurrency: opts.concurrency,
      block: opts.block,
      load_average: loadavg().map((l) => Math.round(l * 100) / 100),
      capture_ms: c,
      capture_step_p50_ms: stepMs,
      bare_goto_full_page_screenshot_ms: b,
      bare_full_page_step_p50_ms: bareStepMs,
      bare_goto_viewport_screenshot_ms: v,
      bare_goto_networkidle_full_page_screenshot_ms: n,
      throughput_ratio: ratio,
      throughput_ratio_vs_viewport_screenshot: ratioViewport,
      throughput_ratio_vs_networkidle_full_page: ratioSettled,
      target_ratio: 0.7,
      meets_target: ratio >= 0.7,
      peak_chromium_rss_mib: peak,
      // On a machine the loop saturates, throughput follows this: what each round costs the cores.
      cpu_ms_per_round: Object.fromEntries(
        arms.map((a) => [
          a.name,
          { machine: Math.round(a.cpu.machine / a.done), node: Math.round(a.cpu.node / a.done) },
        ]),
      ),
      cpu_ms_per_round_by_process: Object.fromEntries(
        arms.map((a) => [
          a.name,
          Object.fromEntries(Object.entries(a.byProcess).map(([k, v]) => [k, Math.round(v / a.done)])),
        ]),
      ),
    };
    const out = (line: string) => process.stdout.write(`${line}\n`);
    out(
      `crawlLanding capture of ${result.page}: ${opts.captures} rounds per arm in blocks of ${opts.block}, concurrency ${opts.concurrency}, load average ${result.load_average.join(' ')}`,
    );
    out(`  capture: p50 ${c.p50_ms} ms, p95 ${c.p95_ms} ms, ${c.per_second}/s, peak Chromium RSS ${peak.capture} MiB`);
    out(
      `    steps (p50 ms): ${Object.entries(stepMs)
        .map(([k, ms]) => `${k} ${ms}`)
        .join(', ')}`,
    );
    out(
      `  bare goto + full-page screenshot: p50 ${b.p50_ms} ms, p95 ${b.p95_ms} ms, ${b.per_second}/s, peak Chromium RSS ${peak.bare} MiB (all bare arms)`,
    );
    out(
      `    steps (p50 ms): ${Object.entries(bareStepMs)
        .map(([k, ms]) => `${k.replace('_', ' ')} ${ms}`)
        .join(', ')}`,
    );
    out(`  bare goto + viewport screenshot: p50 ${v.p50_ms} ms, p95 ${v.p95_ms} ms, ${v.per_second}/s`);
    out(`  bare goto (networkidle) + full-page screenshot: p50 ${n.p50_ms} ms, p95 ${n.p95_ms} ms, ${n.per_second}/s`);
    out(
      `  CPU ms per round (whole machine / this Node process): ${arms.map((a) => `${a.name} ${result.cpu_ms_per_round[a.name]?.machine} / ${result.cpu_ms_per_round[a.name]?.node}`).join(', ')}`,
    );
    for (const a of arms)
      out(
        `    ${a.name} by process: ${Object.entries(result.cpu_ms_per_round_by_process[a.name] ?? {})
          .map(([k, ms]) => `${k} ${ms}`)
          .join(', ')}`,
      );
    out(
      `  throughput ratio ${ratio} of the full-page loop (target >= 0.7: ${result.meets_target ? 'met' : 'NOT met'}); ${ratioViewport} of the viewport loop; ${ratioSettled} of the networkidle loop`,
    );
    out(`  written to ${writeResult('landing', result)}`);
  } finally {
    await bare?.close();
    await browser.close();
    await http.close();
    await pages.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:landing failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
