import { spawn } from 'node:child_process';
import path from 'node:path';
import { CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { Browser, Page } from 'playwright-core';
import sharp from 'sharp';
import { LandingBrowser } from '../../activities/landing/browser';
import { HeldResources } from '../../activities/deps';
import { createLandingActivities } from '../../activities/landing/crawl-landing';
import { captureLanding, LandingCeilingError, type CaptureDeps } from '../../activities/landing/capture';
import { TIMER_WATCH, TIMERS_DUE } from '../../activities/landing/in-page';
import type { ExtractRequest, LlmExtractor } from '../../activities/llm/types';
import { createDb } from '../../db';
import { crawlLandingPayload } from '../../jobs/crawl-landing';
import { launchOptions } from '../../lib/browser';
import { createLogger } from '../../lib/logger';
import { OutboundClient } from '../../lib/outbound';
import { Storage } from '../../lib/storage';
import { createSearchClient } from '../../search/client';
import { testConfig } from '../support/api';
import { failure } from '../support/failure';
import { freePort } from '../support/processes';
import { startLandingPages, type LandingPages } from '../stand-ins/landing-pages';

// The capture itself (real Chromium, real MinIO) with the LLM boundary answered by a fixed extractor:
// what the DOM and computed styles give, what the model adds, and how the two merge. The LLM
// integrations have their own tests (activities/llm).
const UA = 'leadjobs-crawler/1.0 (+https://github.com/leadjobs/leadjobs)';
let pages: LandingPages;
let http: OutboundClient;
let browser: LandingBrowser;
const config = testConfig();
const requests: ExtractRequest<unknown>[] = [];

const modelAnswer = {
  headline: 'Widgets, twice as fast',
  subheadline: null,
  cta_primary: { text: 'Start free trial', url: null, style: null },
  value_propositions: ['Cut assembly time in half'],
  testimonials: [{ quote: 'We ship in half the time.', author: 'Ada Lovelace', title: 'COO, Engines Ltd' }],
  trust_signals: ['Trusted by 2,000 factories'],
  layout_type: 'hero_with_form',
};
const answering: LlmExtractor = {
  extractJson: <T>(request: ExtractRequest<T>) => {
    requests.push(request as ExtractRequest<unknown>);
    return Promise.resolve({
      ok: true as const,
      data: request.schema.parse(modelAnswer),
      integrationId: 1,
      provider: 'openai',
      model: 'gpt-4o-mini',
    });
  },
};

beforeAll(async () => {
  pages = await startLandingPages();
  http = new OutboundClient({ allowHosts: ['127.0.0.1'], userAgent: UA });
  browser = new LandingBrowser(http, config.CHROMIUM_PATH, 60_000);
});
afterAll(async () => {
  await browser.close();
  await http.close();
  await pages.close();
});

function deps(overrides: Partial<CaptureDeps> = {}): CaptureDeps {
  return {
    browser,
    http,
    storage: Storage.fromConfig(config),
    llm: answering,
    userAgent: UA,
    maxResourceBytes: 1 << 22,
    maxBundleBytes: 1 << 24,
    maxConcurrentSubresources: 16,
    maxCaptureBytes: 1 << 26,
    apiBaseUrl: 'http://127.0.0.1:3000',
    ...overrides,
  };
}

test('extract_content: meta, headings, the prominent button, colours, fonts, video, chat and form from the page; the rest from the model', async () => {
  const payload = crawlLandingPayload.parse({
    url: `${pages.baseUrl}/landing`,
    options: { extract_content: true, capture_full_page: false, capture_html_bundle: false },
  });
  const result = await captureLanding(deps(), {
    jobId: 'b1a7e1a4-0000-4000-8000-000000000001',
    clientId: 'cli_capture',
    payload,
    signal: new AbortController().signal,
  });
  expect(result.errors).toEqual([]);
  const x = result.extracted;
  expect(x?.meta).toEqual({
    title: 'Widget Pro | Ship widgets twice as fast',
    description: 'Widget Pro helps teams ship precision widgets twice as fast.',
    og_image: `${pages.baseUrl}/img/og.png`,
  });
  expect(x?.content).toEqual({
    headline: 'Ship widgets twice as fast',
    subheadline: 'The precision widget platform for modern teams',
    cta_primary: {
      text: 'Start free trial',
      url: `${pages.baseUrl}/signup?plan=pro`,
      style: 'background #ff6600, text #ffffff, rounded 6px',
    },
    value_propositions: ['Cut assembly time in half'],
    testimonials: [{ quote: 'We ship in half the time.', author: 'Ada Lovelace', title: 'COO, Engines Ltd' }],
    trust_signals: ['Trusted by 2,000 factories'],
  });
  expect(x?.design).toMatchObject({
    layout_type: 'hero_with_form',
    has_video: true,
    has_chat_widget: true,
    form_fields: ['Full name', 'Work email', 'Company size'],
  });
  expect(x?.design.color_palette).toEqual(expect.arrayContaining(['#ffffff', '#0b3d91', '#ff6600', '#222222']));
  expect(x?.design.font_families.slice(0, 2).sort()).toEqual(['Georgia', 'Trebuchet MS']);
  expect(x?.ai).toEqual({ integration_id: 1, provider: 'openai', model: 'gpt-4o-mini' });
  // The model gets the page's text for this client, not its HTML.
  expect(requests).toHaveLength(1);
  expect(requests[0]).toMatchObject({ clientId: 'cli_capture', purpose: 'crawlLanding' });
  expect(requests[0]?.input).toContain('H1: Ship widgets twice as fast');
  expect(requests[0]?.input).not.toContain('<h1>');
});

test('fold.png is the viewport a visitor sees at the top (100vh hero, fixed header and chat button), though cut from the full-page shot', async () => {
  const url = `${pages.baseUrl}/hero`;
  const payload = crawlLandingPayload.parse({ url });
  const result = await captureLanding(deps(), {
    jobId: 'b1a7e1a4-0000-4000-8000-000000000005',
    clientId: 'cli_capture',
    payload,
    signal: new AbortController().signal,
  });
  expect(result.errors).toEqual([]);
  const [fold, full] = await Promise.all(
    [result.capture.screenshot_fold_url, result.capture.screenshot_full_url].map(async (u) =>
      Buffer.from(await (await fetch(u as string)).arrayBuffer()),
    ),
  );
  // What a visitor's browser shows: the same page in a plain Chromium page of the payload's viewport.
  const { chromium } = await import('playwright-core');
  const visitor = await chromium.launch(launchOptions(config.CHROMIUM_PATH));
  let seen: Buffer;
  try {
    const page = await visitor.newPage({ viewport: payload.options.viewport });
    await page.goto(url);
    seen = await page.screenshot({ type: 'png' });
  } finally {
    await visitor.close();
  }
  const pixels = async (png: Buffer) => {
    const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
    return { width: info.width, height: info.height, data };
  };
  const [f, v, whole] = await Promise.all([pixels(fold as Buffer), pixels(seen), pixels(full as Buffer)]);
  expect({ width: f.width, height: f.height }).toEqual(payload.options.viewport);
  // The page is longer than its viewport, so the fold is not the whole page.
  expect(whole.height).toBeGreaterThan(2 * payload.options.viewport.height);
  expect(f.data.equals(v.data)).toBe(true);
});

test.each(['/late/busy', '/late/timer'])(
  'content a page fetches after its load event (%s: a script busy for 400 ms, a 150 ms timer) is on the page read',
  async (path) => {
    const seen: string[] = [];
    const recording: LlmExtractor = {
      extractJson: (request) => (seen.push(request.input), answering.extractJson(request)),
    };
    const payload = crawlLandingPayload.parse({
      url: `${pages.baseUrl}${path}`,
      options: { extract_content: true, capture_full_page: false },
    });
    const result = await captureLanding(deps({ llm: recording }), {
      jobId: `b1a7e1a4-0000-4000-8000-00000000010${path === '/late/busy' ? 1 : 2}`,
      clientId: 'cli_capture',
      payload,
      signal: new AbortController().signal,
    });
    expect(result.errors).toEqual([]);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toContain('Offer ends Friday');
    expect(seen[0]).not.toContain('Loading...');
  },
);

test('a consent banner a script shows on timers after load (90 ms, then 90 ms more) is dismissed before the page is read', async () => {
  const seen: string[] = [];
  const recording: LlmExtractor = {
    extractJson: (request) => (seen.push(request.input), answering.extractJson(request)),
  };
  const payload = crawlLandingPayload.parse({
    url: `${pages.baseUrl}/late/consent`,
    options: { extract_content: true, capture_full_page: false },
  });
  const result = await captureLanding(deps({ llm: recording }), {
    jobId: 'b1a7e1a4-0000-4000-8000-000000000103',
    clientId: 'cli_capture',
    payload,
    signal: new AbortController().signal,
  });
  expect(result.errors).toEqual([]);
  expect(seen).toHaveLength(1);
  expect(seen[0]).toContain('Spring sale');
  // Clicked (the page says so once its button is), not merely absent because it had not shown yet.
  expect(seen[0]).toContain('Your cookie choice is saved.');
  expect(seen[0]).not.toContain('We use cookies');
});

test('the LLM failing: extracted null, the reason in errors, the files stored', async () => {
  const failing: LlmExtractor = {
    extractJson: () => Promise.resolve({ ok: false, reason: 'every key failed: openai 429' }),
  };
  const payload = crawlLandingPayload.parse({ url: `${pages.baseUrl}/plain`, options: { extract_content: true } });
  const result = await captureLanding(deps({ llm: failing }), {
    jobId: 'b1a7e1a4-0000-4000-8000-000000000002',
    clientId: 'cli_capture',
    payload,
    signal: new AbortController().signal,
  });
  expect(result.extracted).toBeNull();
  expect(result.errors).toEqual([{ stage: 'extraction', error: 'AI extraction: every key failed: openai 429' }]);
  expect(result.capture.screenshot_fold_url).not.toBeNull();
});

test('storage down: every file listed in errors, the capture (chain, extracted data) kept', async () => {
  const down = Storage.fromConfig(testConfig({ MINIO_ENDPOINT: `http://127.0.0.1:${await freePort()}` }));
  const payload = crawlLandingPayload.parse({ url: `${pages.baseUrl}/ad/hop`, options: { extract_content: true } });
  const result = await captureLanding(deps({ storage: down }), {
    jobId: 'b1a7e1a4-0000-4000-8000-000000000003',
    clientId: 'cli_capture',
    payload,
    signal: new AbortController().signal,
  });
  expect(result.capture).toMatchObject({
    screenshot_fold_url: null,
    screenshot_full_url: null,
    html_bundle_url: null,
    final_url: `${pages.baseUrl}/landing?utm_source=ad`,
  });
  expect(result.capture.redirect_chain).toEqual([
    `${pages.baseUrl}/ad/hop`,
    `${pages.baseUrl}/ad/js-hop`,
    `${pages.baseUrl}/landing?utm_source=ad`,
  ]);
  expect(result.errors.map((e) => e.stage)).toEqual(['storage', 'storage', 'storage']);
  expect(result.errors.map((e) => e.error)).toEqual(
    expect.arrayContaining([
      expect.stringMatching(/^storing fold\.png failed: /),
      expect.stringMatching(/^storing full\.png failed: /),
      expect.stringMatching(/^storing page\.html failed: /),
    ]),
  );
  expect(result.extracted?.content.headline).toBe('Ship widgets twice as fast');
});

test("timeout_seconds is the page's: a browser slow to open (a cold launch on a busy machine) does not eat it", async () => {
  const slow = {
    open: async (o: Parameters<LandingBrowser['open']>[0]) => (
      await new Promise((r) => setTimeout(r, 3500)),
      browser.open(o)
    ),
  };
  const payload = crawlLandingPayload.parse({
    url: `${pages.baseUrl}/plain`,
    options: { timeout_seconds: 3, extract_content: false },
  });
  const result = await captureLanding(deps({ browser: slow }), {
    jobId: 'b1a7e1a4-0000-4000-8000-000000000005',
    clientId: 'cli_capture',
    payload,
    signal: new AbortController().signal,
  });
  expect(result.errors).toEqual([]);
  expect(result.capture.final_url).toBe(`${pages.baseUrl}/plain`);
  expect(result.capture.screenshot_fold_url).not.toBeNull();
});

test('a page that never idles, with timeout_seconds past what the ceiling leaves, still keeps what loaded', async () => {
  // Navigation ran to timeout_seconds from its own start, so at timeout_seconds 90 (the maximum) the
  // 90 s ceiling fell first and the job failed with nothing. Here: a 16 s ceiling, timeout_seconds 14.
  // (With 8 s and 10, the 2 s that navigation left of the ceiling did not fit the screenshots on a
  // loaded CI machine, against 22.5 s in production.)
  const payload = crawlLandingPayload.parse({
    url: `${pages.baseUrl}/never-idle`,
    options: { timeout_seconds: 14, extract_content: false },
  });
  const began = Date.now();
  const result = await captureLanding(deps(), {
    jobId: 'b1a7e1a4-0000-4000-8000-000000000006',
    clientId: 'cli_capture',
    payload,
    signal: new AbortController().signal,
    ceilingMs: 16000,
  });
  // The ceiling (spec §8's 90 s, here 16 s), timed from before the call: a limit of the capture, not
  // a timing. Past it the capture would have been stopped (LandingCeilingError) with nothing kept.
  expect(Date.now() - began).toBeLessThan(16000);
  expect(result.errors.map((e) => e.error)).toContain(
    'the page never reached network idle within the timeout; kept what had loaded',
  );
  expect(result.capture.screenshot_fold_url).not.toBeNull();
  expect(result.capture.screenshot_full_url).not.toBeNull();
});

test('a capture that runs into its ceiling says so (a failure a retry would repeat), not an abort', async () => {
  const slow = {
    open: async (o: Parameters<LandingBrowser['open']>[0]) => (
      await new Promise((r) => setTimeout(r, 2500)),
      browser.open(o)
    ),
  };
  const payload = crawlLandingPayload.parse({ url: `${pages.baseUrl}/plain`, options: { extract_content: false } });
  await expect(
    captureLanding(deps({ browser: slow }), {
      jobId: 'b1a7e1a4-0000-4000-8000-000000000007',
      clientId: 'cli_capture',
      payload,
      signal: new AbortController().signal,
      ceilingMs: 1000,
    }),
  ).rejects.toThrow(new LandingCeilingError('the capture took longer than 1 s and was stopped'));
});

test('a page with many requests in flight at once leaves no listener-leak warning in the log', async () => {
  // Every request the page has in flight listens on the session's abort signal; past ten, Node wrote
  // "Possible EventTarget memory leak detected" to the worker's log for an ordinary image gallery.
  // Node's warnings go to the real process, so the capture runs in one of its own.
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'test/support/landing-capture-process.ts', `${pages.baseUrl}/many-slow`],
    {
      cwd: path.join(__dirname, '../..'),
      env: { ...process.env, LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  expect({ code, stdout: stdout.trim() }).toEqual({ code: 0, stdout: '[]' });
  expect(pages.count('/slow/15.png')).toBe(1);
  expect(stderr).not.toContain('MaxListenersExceededWarning');
});

test('the activity heartbeats every second while the page runs, and a cancel ends it (and the page requests) within 3 s', async () => {
  // The browser stays up past the capture (as on a worker with more to do): the page's requests must
  // end with its context, not with the browser.
  const cfg = testConfig({ USER_URL_ALLOW_HOSTS: '127.0.0.1', LANDING_BROWSER_IDLE_MS: '60000' });
  const db = createDb(cfg);
  const search = createSearchClient(cfg);
  const held = new HeldResources();
  try {
    const { crawlLanding } = createLandingActivities({
      config: cfg,
      db,
      storage: Storage.fromConfig(cfg),
      search,
      logger: createLogger('silent'),
      http,
      workerId: 'mock',
      held,
    });
    const env = new MockActivityEnvironment();
    const beats: { step: string; at: number }[] = [];
    env.on('heartbeat', (d: { step: string }) => beats.push({ ...d, at: Date.now() }));
    const running = env.run(crawlLanding, {
      jobId: 'b1a7e1a4-0000-4000-8000-000000000004',
      clientId: 'cli_capture',
      payload: { url: `${pages.baseUrl}/never-idle`, options: { timeout_seconds: 60 } },
    });
    // The first capture launches Chromium, which a busy machine can take seconds over: watch from the
    // moment the capture reaches the page.
    const reachBy = Date.now() + 30000;
    while (!beats.some((b) => b.step === 'navigating') && Date.now() < reachBy)
      await new Promise((r) => setTimeout(r, 50));
    const started = Date.now();
    while (Date.now() - started < 3500) await new Promise((r) => setTimeout(r, 50));
    // Navigating a page that never settles: the one-second heartbeat keeps coming.
    const navigating = beats.filter((b) => b.step === 'navigating');
    expect(navigating.length).toBeGreaterThanOrEqual(3);
    const pingsBefore = pages.count('/ping');
    expect(pingsBefore).toBeGreaterThan(5);
    // The capture is still on the page when the cancel comes (one run in a CI suite ended with the
    // result's save failing instead: the steps say how far the capture got).
    const steps = () => [...new Set(beats.map((b) => b.step))].join(' > ');
    expect(steps()).toBe('starting > opening browser > navigating');
    const cancelledAt = Date.now();
    env.cancel();
    const ended = await failure(running);
    expect(ended instanceof CancelledFailure ? 'cancelled' : `${String(ended)} after ${steps()}`).toBe('cancelled');
    const endedAt = Date.now();
    // The spec's 3 s for a cancel, timed from before it: a limit, not a timing.
    expect(endedAt - cancelledAt).toBeLessThan(3000);
    // The page's polling stopped with its context: no ping the page sent (its `t`) after the capture
    // ended reaches the site. (Counting arrivals instead failed once in a loaded CI run: a ping sent
    // before the end was read by this process's stand-in more than a second later.)
    await new Promise((r) => setTimeout(r, 1500));
    const sentAfter = pages
      .log('/ping')
      .map((p) => Number(p.query.get('t')))
      .filter((t) => t > endedAt);
    expect(sentAfter).toEqual([]);
    expect(pages.log('/ping').every((p) => Number(p.query.get('t')) > 0)).toBe(true);
  } finally {
    await Promise.allSettled([held.close(), db.destroy(), search.close()]);
  }
});

describe('the timer watch the settle waits on (TIMER_WATCH, in a plain Chromium page)', () => {
  let plain: Browser;
  let page: Page;
  beforeAll(async () => {
    const { chromium } = await import('playwright-core');
    plain = await chromium.launch(launchOptions(config.CHROMIUM_PATH));
    const context = await plain.newContext();
    await context.addInitScript({ content: TIMER_WATCH });
    page = await context.newPage();
  });
  afterAll(async () => {
    await plain.close();
  });
  // Runs `setup` in a fresh document, then the settle's wait of `ms`; what the page recorded and how long the wait took.
  const waitAfter = async (setup: string, ms: number) => {
    await page.goto(`${pages.baseUrl}/plain`);
    return page.evaluate<{ log: string[]; waited: number }>(`(async () => {
      const log = [];
      ${setup};
      const w0 = performance.now();
      await ${TIMERS_DUE(ms)};
      return { log, waited: performance.now() - w0 };
    })()`);
  };

  test('a chain of timers within the horizon is waited for to its end, also when the first is overdue on a busy renderer', async () => {
    const chain = 'setTimeout(() => setTimeout((x) => log.push("second " + x), 90, "ran"), 90)';
    expect((await waitAfter(chain, 200)).log).toEqual(['second ran']);
    // The renderer busy for 300 ms: the first timer is overdue, not run, when the wait starts.
    expect(
      (await waitAfter(`${chain}; const t0 = performance.now(); while (performance.now() - t0 < 300) {}`, 200)).log,
    ).toEqual(['second ran']);
  });

  test('a timer beyond the horizon, a cleared one and an interval (once) do not hold the wait longer than they should', async () => {
    const far = await waitAfter('setTimeout(() => log.push("far"), 5000)', 200);
    expect(far.log).toEqual([]);
    // A loaded machine's margin, not a benchmark: the 5-second timer would take 5 s.
    expect(far.waited).toBeLessThan(1000);
    const cleared = await waitAfter(
      'clearTimeout(setTimeout(() => log.push("cleared"), 150)); clearInterval(setInterval(() => log.push("cleared interval"), 50))',
      200,
    );
    expect(cleared.log).toEqual([]);
    const ticking = await waitAfter('setInterval(() => log.push("tick"), 50)', 5000);
    expect(ticking.log.length).toBeGreaterThanOrEqual(1);
    expect(ticking.waited).toBeLessThan(2500);
    // A timer that keeps setting itself again at once: the wait still ends, at most twice its horizon.
    const spinning = await waitAfter('const again = () => setTimeout(again, 0); again()', 200);
    expect(spinning.waited).toBeLessThan(2000);
  });

  test("past 10,000 live timers the watch stops recording: the wait then takes its whole horizon, and the page's timers still run and clear", async () => {
    const flood = `const far = []; for (let i = 0; i < 10001; i++) far.push(setTimeout(() => log.push("far"), 60000));
      clearTimeout(far[0]);
      setTimeout(() => log.push("after the flood"), 50)`;
    const flooded = await waitAfter(flood, 300);
    // Nothing recorded is due: only the overflow makes the wait take its 300 ms (the lower bound is exact).
    expect(flooded.waited).toBeGreaterThanOrEqual(290);
    // A loaded machine's margin, not a benchmark.
    expect(flooded.waited).toBeLessThan(2000);
    expect(flooded.log).toEqual(['after the flood']);
    // The next document starts with a watch of its own.
    const calm = await waitAfter('setTimeout(() => log.push("calm"), 60000)', 300);
    expect(calm.waited).toBeLessThan(200);
  });

  test('the page sees its own timer functions: native to a check, same name, callbacks with their arguments and this', async () => {
    await page.goto(`${pages.baseUrl}/plain`);
    const seen = await page.evaluate<Record<string, unknown>>(`new Promise((resolve) => {
      const native = (f) => Function.prototype.toString.call(f).includes('[native code]');
      const out = { names: [setTimeout.name, setInterval.name, clearTimeout.name], native: [setTimeout, setInterval, clearTimeout, clearInterval].every(native), same: window.setTimeout === setTimeout };
      setTimeout(function (a, b) { resolve({ ...out, args: [a, b], self: this === window }); }, 10, 'a', 2);
    })`);
    expect(seen).toEqual({
      names: ['setTimeout', 'setInterval', 'clearTimeout'],
      native: true,
      same: true,
      args: ['a', 2],
      self: true,
    });
  });
});
