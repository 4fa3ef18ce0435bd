import type { Page } from 'playwright-core';
import { z } from 'zod';
import {
  captureViewPath,
  type CrawlLandingPayload,
  type CrawlLandingResult,
  type LandingError,
} from '../../jobs/crawl-landing';
import type { OutboundClient } from '../../lib/outbound';
import type { Storage } from '../../lib/storage';
import { withTimeout } from '../../lib/timeout';
import type { LlmExtractor } from '../llm/types';
import { networkQuiet, wakeAt, type CachedResponse, type CaptureSession, type LandingBrowser } from './browser';
import { BundleTooLargeError } from './bundle';
import { bundleOffLoop, plainSnapshotOffLoop } from './bundle-worker';
import { foldOf } from './fold';
import {
  ACCEPT_TEXTS,
  CONSENT_SELECTORS,
  DISMISS_CONSENT,
  HOP_HINTS,
  MAIN_THREAD_IDLE,
  READ_PAGE,
  SCROLL_FOR_LAZY,
  SNAPSHOT_HTML,
  TIMERS_DUE,
  type PageReading,
} from './in-page';

/** Spec §8 / issue 13: no capture drives Chromium longer than this, whatever the payload says. */
export const CAPTURE_CEILING_MS = 90_000;
// Navigation ends by this share of the ceiling (counted from the capture's start) whatever
// timeout_seconds says, so that the steps after it (scroll, lazy wait, screenshots, bundle: about
// 1-5 s, at most some 20) still fit: a page that never idles at timeout_seconds 90 keeps what loaded.
const NAVIGATION_SHARE = 0.75;
const SCROLL_LIMIT_MS = 8000;
// The page has settled once no request has run for NETWORK_QUIET_MS, then the page's timers due
// within TIMER_HORIZON_MS have fired (TIMER_WATCH: a fetch or a hop on a short timer after load is
// waited for, however short the quiet time), then its main thread is idle (a script that runs longer
// makes its requests before its thread is idle), and no request or navigation started meanwhile.
// Playwright's networkidle waits 500 ms with no look at the page's scripts; a fixed quiet time here
// (200 ms until 2026-11-27) cost every capture its length. Meta refreshes and script redirects that
// come later are waited for when the page shows one coming (HOP_HINTS).
const NETWORK_QUIET_MS = 50;
const TIMER_HORIZON_MS = 200;
// A page whose main thread is never idle (a busy animation loop) settles after this long.
const IDLE_WAIT_MS = 1000;
// A meta refresh longer than this is a page that reloads itself, not a redirect.
const META_REFRESH_MAX_S = 5;
/** How long an interstitial's script may take to start its navigation (its timer delayed by a busy renderer). */
const SCRIPT_REDIRECT_WAIT_MS = 3000;
const MAX_SCROLL_STEPS = 40;
// After the scroll, the requests it started have finished and none has started for this long (a
// loader's follow-up request, an image of a section fetched on scroll); waited for at most LAZY_WAIT_MS.
const LAZY_QUIET_MS = 100;
const LAZY_WAIT_MS = 3000;
// The longest wait for a clicked consent banner to go (a fade-out); one that is removed or hidden at once costs a frame.
const CONSENT_SETTLE_MS = 120;
// A single screenshot, bundle or DOM read of a page gone wrong must not eat the whole budget.
const STEP_TIMEOUT_MS = 15_000;

export interface CaptureDeps {
  browser: Pick<LandingBrowser, 'open'>;
  http: OutboundClient;
  storage: Storage;
  llm: LlmExtractor;
  userAgent: string;
  maxResourceBytes: number;
  maxBundleBytes: number;
  /** LANDING_MAX_CONCURRENT_SUBRESOURCES: a capture's sub-resource reads at once. */
  maxConcurrentSubresources: number;
  /** LANDING_MAX_CAPTURE_BYTES: what one capture reads over the network in all. */
  maxCaptureBytes: number;
  /** Where html_bundle_url points: the API's public address (PUBLIC_BASE_URL, else its HOST:PORT). */
  apiBaseUrl: string;
}

export interface CaptureInput {
  jobId: string;
  clientId: string;
  payload: CrawlLandingPayload;
  signal: AbortSignal;
  /** Called at each step, for heartbeats. */
  onStep?: (step: string) => void;
  /** The whole capture's limit; CAPTURE_CEILING_MS unless a test needs a short one. */
  ceilingMs?: number;
}

/** What the LLM adds to the DOM's reading (spec §2.5 `content`, and the layout). */
const llmContent = z.object({
  headline: z.string().nullable(),
  subheadline: z.string().nullable(),
  cta_primary: z
    .object({ text: z.string().nullable(), url: z.string().nullable(), style: z.string().nullable() })
    .nullable(),
  value_propositions: z.array(z.string()),
  testimonials: z.array(z.object({ quote: z.string(), author: z.string().nullable(), title: z.string().nullable() })),
  trust_signals: z.array(z.string()),
  layout_type: z.string().nullable(),
});

const INSTRUCTIONS = `You read the visible text of a marketing landing page and describe its content as JSON.
headline and subheadline: the main heading and the line under it, as written. cta_primary: the main call to action.
value_propositions: the page's benefit statements, short, as written. testimonials: customer quotes with author and their title or company.
trust_signals: logos, ratings, certifications, guarantees, customer counts, press mentions. layout_type: one of
single_column, hero_with_form, long_form_sales, multi_section, product_page, lead_magnet, video_sales_letter, other.
Use null or [] for what the page does not have; never invent.`;

class Deadline {
  constructor(private readonly at: number) {}
  left(): number {
    return Math.max(0, this.at - Date.now());
  }
}

/**
 * One landing-page capture (spec §2.5, §7 rule 5): navigation with every hop recorded, consent
 * popups dismissed, lazy content scrolled in, fold and full-page screenshots, a self-contained HTML
 * bundle, the files stored under landings/{job_id}/ in the client's media bucket, and (when asked)
 * the page's content read from the DOM plus the client's LLM. Every degradation is an entry in
 * `errors`; only a page that cannot be loaded at all, or a cancel, rejects. The context is always
 * closed. Idempotent: a retry overwrites the same three objects.
 */
export async function captureLanding(deps: CaptureDeps, input: CaptureInput): Promise<CrawlLandingResult> {
  const ceilingMs = input.ceilingMs ?? CAPTURE_CEILING_MS;
  const ceiling = AbortSignal.timeout(ceilingMs);
  try {
    return await capture(deps, input, ceiling, ceilingMs);
  } catch (e) {
    // Whatever the ceiling cut short (a pending Playwright call rejects as the context closes): one
    // error that says so, which a retry would only repeat. A cancel stays a cancel.
    if (ceiling.aborted && !input.signal.aborted)
      throw new LandingCeilingError(`the capture took longer than ${ceilingMs / 1000} s and was stopped`);
    throw e;
  }
}

async function capture(
  deps: CaptureDeps,
  input: CaptureInput,
  ceiling: AbortSignal,
  ceilingMs: number,
): Promise<CrawlLandingResult> {
  const started = Date.now();
  const { payload } = input;
  const opts = payload.options;
  const errors: LandingError[] = [];
  const err = (stage: LandingError['stage'], error: string) => errors.push({ stage, error });
  const signal = AbortSignal.any([input.signal, ceiling]);
  const step = (s: string) => {
    signal.throwIfAborted();
    input.onStep?.(s);
  };
  step('opening browser');
  const session = await untilAborted(
    deps.browser.open({
      userAgent: deps.userAgent,
      viewport: opts.viewport,
      maxRedirects: opts.max_redirects,
      maxResourceBytes: deps.maxResourceBytes,
      cacheBytes: deps.maxBundleBytes,
      maxConcurrent: deps.maxConcurrentSubresources,
      captureBytes: deps.maxCaptureBytes,
      signal,
    }),
    signal,
  );
  let reading: PageReading | null = null;
  let finalUrl = payload.url;
  let crashed = false;
  // Each file goes up as soon as it is ready, while the capture goes on; a failure is kept per file
  // and listed in the files' order at the end. The keys are the job's, so a retry overwrites them.
  const storageErrors = new Map<string, string>();
  const store = async (
    file: string,
    body: Buffer | string | null,
    type: string,
    headers?: Record<string, string>,
  ): Promise<string | null> => {
    // Nothing goes up once the capture is stopped: a cancel's bundle, cut short, still resolves.
    if (body === null || signal.aborted) return null;
    try {
      return (await deps.storage.put(input.clientId, `landings/${input.jobId}/${file}`, body, type, headers)).url;
    } catch (e) {
      storageErrors.set(file, `storing ${file} failed: ${message(e)}`);
      return null;
    }
  };
  let foldStored: Promise<string | null> = Promise.resolve(null);
  let fullStored: Promise<string | null> = Promise.resolve(null);
  let htmlStored: Promise<string | null> = Promise.resolve(null);
  let stored: [string | null, string | null, string | null, CrawlLandingResult['extracted']];
  try {
    try {
      const { page } = session;
      // Recorded when it happens, at whatever step: a renderer can die after navigation too (a script
      // that runs away late, or on the screenshot's end of animations).
      page.on('crash', () => {
        if (!crashed) err('navigation', 'the page crashed the browser renderer; kept what had loaded');
        crashed = true;
      });
      // Closing the context rejects whatever Playwright call is pending: that is how a cancel stops the capture at once.
      const stop = () => void session.close();
      signal.addEventListener('abort', stop, { once: true });
      try {
        step('navigating');
        // timeout_seconds is the page's time: it starts at the navigation, so a browser slow to launch
        // (a cold start on a busy worker) does not eat it. The ceiling bounds the whole capture, and
        // navigation gives way early enough for the rest to fit under it (NAVIGATION_SHARE).
        const pageDeadline = Math.min(Date.now() + opts.timeout_seconds * 1000, started + ceilingMs * NAVIGATION_SHARE);
        const settled = await navigate(page, session, payload.url, new Deadline(pageDeadline), signal, err);
        signal.throwIfAborted();
        finalUrl = page.url() === 'about:blank' ? finalUrl : page.url();
        // Not before: the new renderer's start would hold up the settle's read of this page.
        session.prepareNext();

        if (opts.dismiss_popups && !crashed) {
          step('dismissing popups');
          await dismissPopups(page).then(
            () => undefined,
            (e: unknown) => err('popups', `popup dismissal failed: ${message(e)}`),
          );
        }
        let scrolled = 0;
        if (opts.scroll_for_lazy_load && !crashed) {
          step('scrolling');
          scrolled = await scrollForLazyContent(page).catch((e: unknown) => {
            err('scroll', `scrolling for lazy content failed: ${message(e)}`);
            return 0;
          });
        }
        signal.throwIfAborted();
        const shootFold = async () => {
          step('screenshot fold');
          const fold = await page
            .screenshot({ type: 'png', timeout: STEP_TIMEOUT_MS, animations: 'disabled' })
            .catch((e: unknown) => {
              err('screenshot_fold', `fold screenshot failed: ${message(e)}`);
              return null;
            });
          foldStored = store('fold.png', fold, 'image/png');
        };
        // With the full page asked for too, the fold is cut from its screenshot (fold.ts): one
        // screenshot for both files. Without it, the fold is shot now, while what the scroll started
        // loads below it (lazy content only ever loads below the top of the page, which the scroll has
        // come back to).
        const foldFromFull = opts.capture_screenshot && opts.capture_full_page;
        if (opts.capture_screenshot && !foldFromFull) await shootFold();
        // Then the requests the scroll, the consent click or a late script started finish (images,
        // sections fetched on scroll) before the page is read, bundled and shot whole. A page that never
        // went quiet is not waited for again unless the scroll started something.
        if (!crashed && (settled || scrolled > 0)) {
          step('waiting for lazy content');
          await networkQuiet(session, LAZY_QUIET_MS, LAZY_WAIT_MS, signal);
        }

        // Nothing from here on changes the page: its reading and its HTML are taken first, and the bundle
        // is built from that HTML (in Node) while Chromium takes the screenshots.
        if (payload.options.extract_content) {
          step('reading the page');
          reading = await withTimeout(
            page.evaluate<PageReading>(`${READ_PAGE}()`),
            STEP_TIMEOUT_MS,
            'reading the page',
          ).catch((e: unknown) => {
            err('extraction', `reading the page failed: ${message(e)}`);
            return null;
          });
        }
        if (opts.capture_html_bundle) {
          step('bundling html');
          const rendered = await withTimeout(
            page.evaluate<string>(`${SNAPSHOT_HTML}()`),
            STEP_TIMEOUT_MS,
            'reading the HTML',
          ).catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))));
          // The media origin never renders it (issue 38 item 5): the bucket's copy is a download, and
          // html_bundle_url is the API's sandboxed rendering of it (api/routes/captures.ts).
          htmlStored = buildBundle(rendered, session, deps, finalUrl, signal, err)
            .then((html) =>
              store('page.html', html, 'text/html; charset=utf-8', {
                'Content-Disposition': 'attachment; filename="page.html"',
              }),
            )
            .then((url) => (url ? `${deps.apiBaseUrl}${captureViewPath(input.clientId, input.jobId)}` : null));
          // Awaited below; on a cancel nobody awaits it.
          htmlStored.catch(() => undefined);
        }
        if (opts.capture_full_page) {
          step('screenshot full page');
          const full = await page
            .screenshot({ type: 'png', fullPage: true, timeout: STEP_TIMEOUT_MS, animations: 'disabled' })
            .catch((e: unknown) => {
              err('screenshot_full', `full-page screenshot failed: ${message(e)}`);
              return null;
            });
          fullStored = store('full.png', full, 'image/png');
          if (foldFromFull && full) {
            foldStored = foldOf(full, opts.viewport).then(
              (fold) => store('fold.png', fold, 'image/png'),
              (e: unknown) => {
                err('screenshot_fold', `fold screenshot failed: cutting it from the full page: ${message(e)}`);
                return null;
              },
            );
          } else if (foldFromFull) {
            // The full page failed: the fold on its own, as far as the page still allows.
            await shootFold();
          }
        }
      } finally {
        signal.removeEventListener('abort', stop);
      }
    } finally {
      await session.close();
    }
    signal.throwIfAborted();

    step('storing files');
    const extracting =
      opts.extract_content && reading ? extract(deps.llm, input.clientId, reading, signal, err) : Promise.resolve(null);
    stored = await Promise.all([foldStored, fullStored, htmlStored, extracting]);
    // A cancel while the last files went up (the bundle's fetches end with it, and resolve).
    signal.throwIfAborted();
  } catch (e) {
    // Stopped (a cancel, the ceiling): the job's partial results are discarded (spec §3), its files too.
    if (signal.aborted) await discardFiles(deps, input, [foldStored, fullStored, htmlStored]);
    throw e;
  }
  const [foldUrl, fullUrl, htmlUrl, extracted] = stored;
  if (session.byteLimitHit) {
    err(
      'navigation',
      `the page asked for more than LANDING_MAX_CAPTURE_BYTES (${deps.maxCaptureBytes} bytes) in all; later resources were not loaded (from ${session.byteLimitHit})`,
    );
  }
  for (const file of FILES) {
    const failed = storageErrors.get(file);
    if (failed) err('storage', failed);
  }

  return {
    capture: {
      initial_url: payload.url,
      final_url: finalUrl,
      redirect_chain: redirectChain(session.navigations, finalUrl),
      screenshot_fold_url: foldUrl,
      screenshot_full_url: fullUrl,
      html_bundle_url: htmlUrl,
      captured_at: new Date(started).toISOString(),
    },
    ad_id: payload.ad_id ?? null,
    extracted,
    errors,
    duration_ms: Date.now() - started,
  };
}

/** The navigations, repeats of one URL in a row dropped (a reload is no hop), ending at the page shown. */
function redirectChain(navigations: string[], finalUrl: string): string[] {
  const chain: string[] = [];
  for (const url of navigations) if (chain[chain.length - 1] !== url) chain.push(url);
  const last = chain.lastIndexOf(finalUrl);
  return last >= 0 ? chain.slice(0, last + 1) : chain;
}

/**
 * goto, then waits for network idle and for any meta refresh or script redirect, until the
 * payload's timeout: a page that never finishes keeps what it loaded. Resolves whether the page
 * settled (loaded, then quiet with no hop to come); rejects only when nothing could be loaded at all.
 */
async function navigate(
  page: Page,
  session: CaptureSession,
  url: string,
  deadline: Deadline,
  signal: AbortSignal,
  err: (stage: LandingError['stage'], e: string) => void,
): Promise<boolean> {
  let navigations = 0;
  page.on('framenavigated', (frame) => {
    if (frame === page.mainFrame()) navigations += 1;
  });
  let loaded = true;
  try {
    await page.goto(url, { waitUntil: 'load', timeout: Math.max(1, deadline.left()) });
  } catch (e) {
    loaded = false;
    if (session.navigations.length === 0 || (page.url() === 'about:blank' && !session.redirectLimitHit)) {
      throw new LandingLoadError(
        session.navigationError ? session.navigationError.message : `could not load ${url}: ${firstLine(e)}`,
      );
    }
    if (!session.redirectLimitHit)
      err('navigation', `the page did not finish loading within the timeout; kept what had loaded (${firstLine(e)})`);
  }
  // Settle: network idle (no request for NETWORK_QUIET_MS), then the page's timers due within
  // TIMER_HORIZON_MS and its main thread idle, with no main-frame navigation since the last load. A
  // script still running when the network went quiet makes its requests before its thread is idle; a
  // meta refresh or a script redirect that has not started by then is waited for when the page shows
  // one coming (hopStarted); each hop starts the wait again. At least one check, even when loading
  // used up the time: a page still busy then has not settled.
  let settled = false;
  while (loaded) {
    const seen = navigations;
    const requested = session.navigations.length;
    const idle = await networkQuiet(session, NETWORK_QUIET_MS, deadline.left(), signal);
    if (!idle) {
      if (page.isClosed()) return false;
      err('navigation', 'the page never reached network idle within the timeout; kept what had loaded');
      break;
    }
    // Settled when no hop started: none committed, none pending, none requested meanwhile (a hop that
    // commits while the hints are read destroys their document: the loop goes on to its page). And
    // no request started meanwhile: on a busy machine a request the page made before its load event
    // can reach the route only after the quiet time seemed over; the hints' round trip to the page
    // brings it in, and the loop waits for quiet again (a /hold that never answers, a late poll).
    const quietSince = session.lastActivity;
    if (
      navigations === seen &&
      !(await hopStarted(page, session, deadline, signal)) &&
      navigations === seen &&
      session.navigations.length === requested &&
      session.inflight === 0 &&
      session.lastActivity === quietSince
    ) {
      settled = true;
      break;
    }
    if (deadline.left() <= 0) break;
    await page.waitForLoadState('load', { timeout: Math.max(1, deadline.left()) }).catch(() => undefined);
  }
  // A hop that failed (refused by the guard, unreachable): the chain ends at Chromium's error page or a
  // redirect stub, neither of which is the landing page, so the landing page could not be loaded.
  if (session.navigationError && !page.isClosed()) {
    const shown = page.url();
    if (session.stubs.has(shown) || shown === 'about:blank' || shown.startsWith('chrome-error:'))
      throw new LandingLoadError(session.navigationError.message);
    err('navigation', `a redirect was not followed: ${session.navigationError.message}`);
  }
  if (session.redirectLimitHit) {
    const stopped = `more than the allowed redirects (max_redirects); stopped before ${session.redirectLimitHit}`;
    // Stopped on a page of its own (a meta refresh or script hop): that page is kept. Stopped inside
    // an HTTP redirect chain: what shows is a redirect stub, not a page, so there is nothing to capture.
    const shown = page.isClosed() ? 'about:blank' : page.url();
    if (session.stubs.has(shown) || shown === 'about:blank' || shown.startsWith('chrome-error:'))
      throw new LandingLoadError(stopped);
    err('navigation', stopped);
  }
  return settled;
}

/**
 * A hop that starts after the quiet time: a meta refresh fires after load on Chromium's own timer,
 * and a script hop (`setTimeout(() => location.replace(...))`) on the renderer's, both of which a
 * busy machine can push past it. When the page has a meta refresh of up to META_REFRESH_MAX_S, wait
 * for its navigation to start; on a page that looks like an interstitial, up to SCRIPT_REDIRECT_WAIT_MS.
 */
async function hopStarted(
  page: Page,
  session: CaptureSession,
  deadline: Deadline,
  signal: AbortSignal,
): Promise<boolean> {
  const hints = await page
    .evaluate<{ refresh: number | null; scriptHop: boolean }>(
      `${TIMERS_DUE(TIMER_HORIZON_MS)}.then(() => ${MAIN_THREAD_IDLE(IDLE_WAIT_MS)}).then(() => ${HOP_HINTS})`,
    )
    .catch(() => ({ refresh: null, scriptHop: false }));
  if (
    hints.refresh !== null &&
    hints.refresh <= META_REFRESH_MAX_S &&
    (await navigationWithin(session, Math.min(deadline.left(), hints.refresh * 1000 + 2000), signal))
  )
    return true;
  return hints.scriptHop && navigationWithin(session, Math.min(deadline.left(), SCRIPT_REDIRECT_WAIT_MS), signal);
}

/** Whether a main-frame navigation starts (or the redirect limit is hit) within `ms`; wakes on the route's activity. */
async function navigationWithin(session: CaptureSession, ms: number, signal: AbortSignal): Promise<boolean> {
  const before = session.navigations.length;
  const until = Date.now() + ms;
  while (session.navigations.length === before && !session.redirectLimitHit && Date.now() < until) {
    signal.throwIfAborted();
    await wakeAt(until, session.activity(), signal);
  }
  signal.throwIfAborted();
  return session.navigations.length > before;
}

/** Time for all of an HTML bundle's own fetches together (resources the page did not load itself). */
const BUNDLE_FETCH_BUDGET_MS = 5000;

/** Files whose upload may still be under way when a capture stops are waited for this long at most. */
const DISCARD_WAIT_MS = 1500;
const FILES = ['fold.png', 'full.png', 'page.html'];

/**
 * A stopped capture's files removed from the client's bucket: once the uploads already under way
 * have ended (a few hundred KB each to the object store; bounded so that a cancel ends in time), each
 * of the job's keys is removed (a missing one is no error). A failure is left for the retention to
 * clear: the job's files are not referenced by any result.
 */
async function discardFiles(deps: CaptureDeps, input: CaptureInput, uploads: Promise<unknown>[]): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.allSettled(uploads),
    new Promise<void>((r) => {
      timer = setTimeout(r, DISCARD_WAIT_MS);
    }),
  ]);
  clearTimeout(timer);
  const bucket = deps.storage.bucketFor(input.clientId);
  await Promise.allSettled(FILES.map((file) => deps.storage.remove(bucket, `landings/${input.jobId}/${file}`)));
}

export class LandingLoadError extends Error {
  override readonly name = 'LandingLoadError';
}

/** The capture ran into CAPTURE_CEILING_MS (not a cancel). */
export class LandingCeilingError extends Error {
  override readonly name = 'LandingCeilingError';
}

async function dismissPopups(page: Page): Promise<void> {
  // After a click the script waits for the banner to go (its close animation and any layout shift), up to CONSENT_SETTLE_MS.
  const script = `${DISMISS_CONSENT}(${JSON.stringify({ selectors: CONSENT_SELECTORS, texts: ACCEPT_TEXTS, settleMs: CONSENT_SETTLE_MS })})`;
  const clicked = await withTimeout(page.evaluate<string | null>(script), STEP_TIMEOUT_MS, 'popup dismissal');
  // Consent managers also live in iframes (Sourcepoint, TrustArc's second layer).
  if (!clicked) {
    for (const frame of page.frames().slice(1)) {
      const inFrame = await withTimeout(frame.evaluate<string | null>(script), 3000, 'popup dismissal').catch(
        () => null,
      );
      if (inFrame) break;
    }
  }
}

/** Scrolls the page through and back to the top in one call (SCROLL_FOR_LAZY); returns the steps (0: the page fits its viewport). */
async function scrollForLazyContent(page: Page): Promise<number> {
  return withTimeout(
    page.evaluate<number>(
      `${SCROLL_FOR_LAZY}(${JSON.stringify({ maxSteps: MAX_SCROLL_STEPS, limitMs: SCROLL_LIMIT_MS })})`,
    ),
    SCROLL_LIMIT_MS + 3000,
    'scrolling',
  );
}

/**
 * The bundle from the rendered HTML (SNAPSHOT_HTML), or, when that could not be read (a crashed
 * renderer), a plain snapshot of the page's HTML as the server sent it.
 */
async function buildBundle(
  rendered: string | Error,
  session: CaptureSession,
  deps: CaptureDeps,
  finalUrl: string,
  signal: AbortSignal,
  err: (stage: LandingError['stage'], e: string) => void,
): Promise<string | null> {
  try {
    if (rendered instanceof Error) throw rendered;
    // What the page did not get (most of it comes from the session's cache) is fetched again within
    // one budget for the whole bundle: a resource that never answers is left as a link, not waited
    // for once more per resource.
    const budget = AbortSignal.any([signal, AbortSignal.timeout(BUNDLE_FETCH_BUDGET_MS)]);
    // These reads count against the capture's LANDING_MAX_CAPTURE_BYTES too.
    const load = async (url: string): Promise<CachedResponse | null> => {
      const left = session.bytesLeft();
      if (left <= 0) {
        session.byteLimitHit ??= url;
        return null;
      }
      const res = await deps.http
        .fetch(url, {
          signal: budget,
          maxBytes: Math.min(deps.maxResourceBytes, left),
          headers: { 'user-agent': deps.userAgent },
        })
        .catch(() => null);
      if (res) session.spend(res.body.length);
      return res ? { status: res.status, contentType: res.headers['content-type'] ?? '', body: res.body } : null;
    };
    const bundle = await bundleOffLoop(rendered, finalUrl, session.responses, load, deps.maxBundleBytes, signal);
    if (bundle.missing.length)
      err(
        'html_bundle',
        `html bundle: ${bundle.missing.length} resource(s) left as links: ${bundle.missing.slice(0, 5).join(', ')}`,
      );
    return bundle.html;
  } catch (e) {
    signal.throwIfAborted();
    // Nothing of a page over the limit is stored (its plain snapshot would be as large).
    if (e instanceof BundleTooLargeError) {
      err('html_bundle', `html bundle not stored: ${e.message}`);
      return null;
    }
    // The page's own HTML as the server sent it, when the rendered one is not readable (a crashed renderer).
    const source = typeof rendered === 'string' ? rendered : lastDocument(session, finalUrl);
    const plain =
      source && Buffer.byteLength(source) <= deps.maxBundleBytes ? await plainSnapshotOffLoop(source, signal) : null;
    const stored = plain && Buffer.byteLength(plain) <= deps.maxBundleBytes ? plain : null;
    err(
      'html_bundle',
      `html bundle failed (${message(e)}); ${stored ? 'stored a plain HTML snapshot' : source ? `no HTML stored: the page is larger than LANDING_MAX_BUNDLE_BYTES (${deps.maxBundleBytes} bytes)` : 'no HTML to store'}`,
    );
    return stored;
  }
}

function lastDocument(session: CaptureSession, finalUrl: string): string | null {
  for (const url of [finalUrl, ...[...session.navigations].reverse()]) {
    const res = session.responses.get(url);
    if (res && /html/i.test(res.contentType)) return res.body.toString('utf8');
  }
  return null;
}

async function extract(
  llm: LlmExtractor,
  clientId: string,
  r: PageReading,
  signal: AbortSignal,
  err: (stage: LandingError['stage'], e: string) => void,
): Promise<CrawlLandingResult['extracted']> {
  const input = [
    `Title: ${r.title ?? ''}`,
    `Description: ${r.description ?? ''}`,
    `H1: ${r.h1.join(' | ')}`,
    `H2: ${r.h2.join(' | ')}`,
    `Most prominent button: ${r.cta?.text ?? ''}`,
    `Form fields: ${r.form_fields.join(', ')}`,
    '',
    r.text,
  ].join('\n');
  let outcome;
  try {
    outcome = await llm.extractJson({
      clientId,
      purpose: 'crawlLanding',
      instructions: INSTRUCTIONS,
      input,
      schema: llmContent,
      signal,
    });
  } catch (e) {
    signal.throwIfAborted();
    outcome = { ok: false as const, reason: message(e) };
  }
  if (!outcome.ok) {
    err('extraction', `AI extraction: ${outcome.reason}`);
    return null;
  }
  const ai = outcome.data;
  // The DOM is authoritative where it can answer; the model fills in the rest.
  return {
    meta: { title: r.title, description: r.description, og_image: r.og_image },
    content: {
      headline: r.h1[0] ?? ai.headline,
      subheadline: r.h2[0] ?? ai.subheadline,
      cta_primary:
        r.cta ??
        (ai.cta_primary
          ? { text: ai.cta_primary.text ?? '', url: ai.cta_primary.url, style: ai.cta_primary.style }
          : null),
      value_propositions: ai.value_propositions,
      testimonials: ai.testimonials,
      trust_signals: ai.trust_signals,
    },
    design: {
      layout_type: ai.layout_type,
      color_palette: r.color_palette,
      font_families: r.font_families,
      has_video: r.has_video,
      has_chat_widget: r.has_chat_widget,
      form_fields: r.form_fields,
    },
    ai: { integration_id: outcome.integrationId, provider: outcome.provider, model: outcome.model },
  };
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      reject(signal.reason);
      // The session opened after a cancel is closed all the same.
      void promise.then((s) => (s as { close?: () => Promise<void> }).close?.()).catch(() => undefined);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

const firstLine = (e: unknown) => message(e).split('\n')[0] ?? '';
function message(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split('\n')[0] ?? '';
}
