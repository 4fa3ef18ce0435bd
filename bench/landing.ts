/**
 * bench/landing: 20 landing-page captures of a stand-in page (test/stand-ins/landing-pages.ts
 * /landing: consent banner, lazy images, a stylesheet, a form) by the crawlLanding capture itself
 * (activities/landing/capture.ts: Chromium through the SSRF guard, popups, scrolling, fold and full
 * screenshots, HTML bundle, three objects stored in MinIO), next to a bare Playwright loop in the
 * same run: one browser, a new page per round, goto + screenshot. Prints p50/p95 per capture, the
 * throughput of both and their ratio (target: captures >= 0.7x the bare loop), and the peak
 * resident memory of the capture's Chromium processes (sampled every 100 ms); writes JSON to
 * bench/results/.
 *   npm run bench:landing -- [--captures 20] [--concurrency 1] [--page 0]
 * `--page 1` captures /plain (a minimal page) instead of /landing.
 */
import { execFileSync } from 'node:child_process';
import { LandingBrowser } from '../activities/landing/browser';
import { captureLanding, type CaptureDeps } from '../activities/landing/capture';
import type { LlmExtractor } from '../activities/llm/types';
import { crawlLandingPayload } from '../jobs/crawl-landing';
import { launchOptions } from '../lib/browser';
import { parseConfig } from '../lib/config';
import { OutboundClient } from '../lib/outbound';
import { Storage } from '../lib/storage';
import { startLandingPages } from '../test/stand-ins/landing-pages';
import { args, load, stackEnv, stats, writeResult } from './support';

/** Resident memory (MiB) of this process's Chromium descendants. */
function chromiumRssMiB(): number {
  const rows = execFileSync('ps', ['-eo', 'pid=,ppid=,rss=,comm='], { encoding: 'utf8' })
    .split('\n')
    .map((l) => /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), rss: Number(m[3]), comm: m[4] ?? '' }));
  const mine = new Set([process.pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const r of rows) if (!mine.has(r.pid) && mine.has(r.ppid)) {
      mine.add(r.pid);
      grew = true;
    }
  }
  return Math.round(rows.filter((r) => mine.has(r.pid) && /chrom/i.test(r.comm)).reduce((sum, r) => sum + r.rss, 0) / 1024);
}

function sampleMemory(): { stop(): number } {
  let peak = 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, chromiumRssMiB());
  }, 100);
  return {
    stop: () => {
      clearInterval(timer);
      return peak;
    },
  };
}

async function main(): Promise<void> {
  const opts = args({ captures: 20, concurrency: 1, page: 0 });
  const tag = `l${Date.now().toString(36)}`;
  const config = parseConfig({ ...stackEnv(), MINIO_BUCKET_PREFIX: `bench-${tag}`, LOG_LEVEL: 'warn', OUTBOUND_ALLOW_HOSTS: '127.0.0.1' });
  const pages = await startLandingPages();
  const url = `${pages.baseUrl}${opts.page === 1 ? '/plain' : '/landing'}`;
  const http = OutboundClient.fromConfig(config);
  const noLlm: LlmExtractor = { extractJson: () => Promise.resolve({ ok: false, reason: 'not used' }) };
  const browser = new LandingBrowser(http, config.CHROMIUM_PATH, 60_000);
  const deps: CaptureDeps = { browser, http, storage: Storage.fromConfig(config), llm: noLlm, userAgent: config.SITE_USER_AGENT, maxResourceBytes: config.LANDING_MAX_RESOURCE_BYTES, maxBundleBytes: config.LANDING_MAX_BUNDLE_BYTES };
  const payload = crawlLandingPayload.parse({ url });
  const { chromium } = await import('playwright-core');
  try {
    // Warm-up: the browser launch and the bucket creation are no capture's time.
    await captureLanding(deps, { jobId: `${tag}-warm`, clientId: 'cli_bench', payload, signal: new AbortController().signal });
    let memory = sampleMemory();
    const captures = await load(opts.captures, opts.concurrency, async (i) => {
      const r = await captureLanding(deps, { jobId: `${tag}-${i}`, clientId: 'cli_bench', payload, signal: new AbortController().signal });
      if (!r.capture.screenshot_fold_url || !r.capture.html_bundle_url || r.errors.length) throw new Error(`capture ${i} degraded: ${JSON.stringify(r.errors)}`);
    });
    const capturePeak = memory.stop();
    await browser.close();

    const bare = await chromium.launch(launchOptions(config.CHROMIUM_PATH));
    const bareLoop = async () => {
      const page = await bare.newPage({ viewport: { width: 1366, height: 768 } });
      await page.goto(url);
      await page.screenshot({ type: 'png' });
      await page.close();
    };
    await bareLoop();
    memory = sampleMemory();
    const plain = await load(opts.captures, opts.concurrency, bareLoop);
    const barePeak = memory.stop();
    await bare.close();

    const c = stats(captures.latencies, captures.seconds);
    const b = stats(plain.latencies, plain.seconds);
    const ratio = Math.round((c.per_second / b.per_second) * 100) / 100;
    const result = {
      bench: 'landing',
      page: url.replace(pages.baseUrl, ''),
      captures: opts.captures,
      concurrency: opts.concurrency,
      capture_ms: c,
      bare_goto_screenshot_ms: b,
      throughput_ratio: ratio,
      target_ratio: 0.7,
      meets_target: ratio >= 0.7,
      peak_chromium_rss_mib: { capture: capturePeak, bare: barePeak },
    };
    process.stdout.write(`crawlLanding capture of ${result.page}, ${opts.captures} captures, concurrency ${opts.concurrency}\n`);
    process.stdout.write(`  capture: p50 ${c.p50_ms} ms, p95 ${c.p95_ms} ms, ${c.per_second}/s, peak Chromium RSS ${capturePeak} MiB\n`);
    process.stdout.write(`  bare goto + screenshot: p50 ${b.p50_ms} ms, p95 ${b.p95_ms} ms, ${b.per_second}/s, peak Chromium RSS ${barePeak} MiB\n`);
    process.stdout.write(`  throughput ratio ${ratio} (target >= 0.7: ${result.meets_target ? 'met' : 'NOT met'})\n`);
    process.stdout.write(`  written to ${writeResult('landing', result)}\n`);
  } finally {
    await browser.close();
    await http.close();
    await pages.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:landing failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
