import { setMaxListeners } from 'node:events';
import type { Browser, BrowserContext, Page, Route } from 'playwright-core';
import { launchOptions } from '../../lib/browser';
import {
  decodedBodyHeaders,
  OutboundError,
  ResponseTooLargeError,
  type OutboundClient,
  REDIRECT_STATUSES,
} from '../../lib/outbound';
import { TIMER_WATCH } from './in-page';

const DROP_REQUEST_HEADERS = new Set(['host', 'content-length', 'connection', 'accept-encoding']);

export interface CachedResponse {
  status: number;
  contentType: string;
  body: Buffer;
}

/** What one capture's context saw: its main-frame navigations and the responses the bundle reuses. */
export interface CaptureSession {
  context: BrowserContext;
  /** The capture's page (the context's only one, at about:blank until the capture navigates). */
  page: Page;
  /** Every main-frame navigation request, in order: each HTTP hop, meta refresh and script redirect. */
  navigations: string[];
  /** Set when a navigation past `maxRedirects` was refused. */
  redirectLimitHit: string | undefined;
  /** Responses by URL (bodies up to a total budget), so the HTML bundle needs no second fetch. */
  responses: Map<string, CachedResponse>;
  /** Requests the SSRF guard refused. */
  blocked: string[];
  /** The first request refused because the capture had read LANDING_MAX_CAPTURE_BYTES (`captureBytes`) in all. */
  byteLimitHit: string | undefined;
  /** What the capture may still read over the network (of `captureBytes`), and the count of what it read. */
  bytesLeft(): number;
  spend(bytes: number): void;
  /** Why the main document's request failed, when it did (the guard's message beats net::ERR_*). */
  navigationError: Error | undefined;
  /** URLs whose 30x was handed to Chromium as a redirecting stub page (no content of their own). */
  stubs: Set<string>;
  /** Requests of the page in flight, and when the last one started or ended (ms since epoch). */
  inflight: number;
  lastActivity: number;
  /** Resolves at the next request start or end (a main-frame navigation included). */
  activity(): Promise<void>;
  /**
   * Makes the next capture's context and page ready in the background. A capture calls it once its
   * page has settled, so that the new renderer's start does not delay the settle's read of the page:
   * it overlaps the scroll and the wait for lazy content, and the next capture finds its page open
   * (about 200 ms saved per capture).
   */
  prepareNext(): void;
  close(): Promise<void>;
}

/**
 * Resolves true once the page has had no request in flight for `quietMs`, false after `timeoutMs`.
 * Every request passes the route, so this is Playwright's "networkidle" with a window of our choosing.
 * It wakes when the last request ends and when the quiet time is up, not on a polling tick.
 */
export async function networkQuiet(
  session: CaptureSession,
  quietMs: number,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    signal.throwIfAborted();
    const now = Date.now();
    if (session.inflight === 0 && now - session.lastActivity >= quietMs) return true;
    if (now >= until) return false;
    // A request starting meanwhile only moves the quiet time on: the check after the sleep sees it.
    const quietAt = session.inflight === 0 ? session.lastActivity + quietMs : until;
    await wakeAt(Math.min(quietAt, until), session.inflight === 0 ? undefined : session.activity(), signal);
  }
}

/** Sleeps until `at` (ms since epoch), or until `event` resolves or `signal` aborts, whichever comes first. */
export function wakeAt(at: number, event: Promise<void> | undefined, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, at - Date.now()));
    signal.addEventListener('abort', done, { once: true });
    void event?.then(done);
  });
}

export interface SessionOptions {
  userAgent: string;
  viewport: { width: number; height: number };
  maxRedirects: number;
  maxResourceBytes: number;
  /** Total bytes of response bodies kept for the bundle. */
  cacheBytes: number;
  /** Sub-resource requests fetched at once; the others wait (LANDING_MAX_CONCURRENT_SUBRESOURCES). */
  maxConcurrent: number;
  /** Bytes the capture reads over the network in all (LANDING_MAX_CAPTURE_BYTES); past them requests fail. */
  captureBytes: number;
  signal: AbortSignal;
}

/**
 * A context made ready ahead of its capture: its routes are set and its page is open at about:blank
 * (its renderer started). Until `bind` hands it a capture's handler its route refuses every request
 * (there are none: nothing has been loaded in it).
 */
interface Prepared {
  /** The user agent and viewport it was made with. */
  key: string;
  browser: Browser;
  context: BrowserContext;
  page: Page;
  bind(handler: (route: Route) => Promise<void>): void;
}

interface Spare {
  key: string;
  browser: Browser;
  ready: Promise<Prepared>;
}

const spareKey = (userAgent: string, viewport: { width: number; height: number }) =>
  `${viewport.width}x${viewport.height} ${userAgent}`;

/**
 * The worker's Chromium for landing captures: launched on first use and shared by the captures
 * running at the same time (a launch costs about as much as a capture), closed once no capture has
 * run for LANDING_BROWSER_IDLE_MS, and launched again after a crash. Each capture gets its own
 * context (cookies, cache, storage, pages), always closed when the capture ends, so a renderer never
 * outlives its capture and no job sees another's cookies, storage or consent answers (jobs of
 * different clients share the worker, so a context is never reused). What a context costs to set up
 * (the context, its routes and its page) is paid ahead: while a capture scrolls and waits for lazy content,
 * the next one is made ready in the background (one spare with its page at about:blank, never used
 * before it is handed out, for the user agent and viewport last asked for; closed with the browser).
 * Chromium reaches nothing itself: every request of the context, each redirect hop included, is
 * fetched by the SSRF-guarded OutboundClient and fulfilled (as activities/site/fetch.ts does), and
 * its own network goes to a proxy address where nothing listens.
 */
export class LandingBrowser {
  private browser: Promise<Browser> | undefined;
  private running = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private spare: Spare | undefined;

  constructor(
    private readonly outbound: OutboundClient,
    private readonly chromiumPath: string,
    private readonly idleMs: number,
  ) {}

  private launch(): Promise<Browser> {
    if (!this.browser) {
      const base = launchOptions(this.chromiumPath);
      const launching = import('playwright-core').then(({ chromium }) =>
        chromium.launch({
          ...base,
          args: [...(base.args ?? []), '--proxy-bypass-list=<-loopback>'],
          proxy: { server: 'http://127.0.0.1:9' },
        }),
      );
      this.browser = launching;
      launching.then(
        (b) =>
          b.on('disconnected', () => {
            if (this.browser === launching) this.browser = undefined;
          }),
        () => {
          if (this.browser === launching) this.browser = undefined;
        },
      );
    }
    return this.browser;
  }

  /** A new context with its routes set; closed again if that fails. */
  private async prepare(
    browser: Browser,
    userAgent: string,
    viewport: { width: number; height: number },
  ): Promise<Prepared> {
    const context = await browser.newContext({ userAgent, viewport, serviceWorkers: 'block', acceptDownloads: false });
    let handler: ((route: Route) => Promise<void>) | undefined;
    try {
      // Before any script of the page: the settle waits for the page's timers about to fire (capture.ts).
      await context.addInitScript({ content: TIMER_WATCH });
      await context.routeWebSocket(/.*/, (ws) => ws.close({ code: 1008, reason: 'WebSockets are not captured' }));
      await context.route('**/*', (route) => (handler ? handler(route) : route.abort('blockedbyclient')));
      const page = await context.newPage();
      return {
        key: spareKey(userAgent, viewport),
        browser,
        context,
        page,
        bind: (h) => {
          handler = h;
        },
      };
    } catch (err) {
      await context.close().catch(() => undefined);
      throw err;
    }
  }

  /** The spare context when it suits (same browser, user agent and viewport); undefined otherwise. */
  private async takeSpare(browser: Browser, key: string): Promise<Prepared | undefined> {
    const spare = this.spare;
    if (!spare || spare.browser !== browser || spare.key !== key) return undefined;
    this.spare = undefined;
    const prepared = await spare.ready.catch(() => undefined);
    if (prepared && browser.isConnected() && !prepared.page.isClosed()) return prepared;
    await prepared?.context.close().catch(() => undefined);
    return undefined;
  }

  /** Makes the next capture's context ready in the background (replacing a spare that no longer suits). */
  private refill(browser: Browser, userAgent: string, viewport: { width: number; height: number }): void {
    const key = spareKey(userAgent, viewport);
    const old = this.spare;
    if (old && old.browser === browser && old.key === key && browser.isConnected()) return;
    if (old) void old.ready.then((p) => p.context.close()).catch(() => undefined);
    const spare: Spare = { key, browser, ready: this.prepare(browser, userAgent, viewport) };
    this.spare = spare;
    spare.ready.catch(() => {
      if (this.spare === spare) this.spare = undefined;
    });
  }

  /** A fresh context for one capture; `close()` on the session must always be called. */
  async open(options: SessionOptions): Promise<CaptureSession> {
    this.running += 1;
    clearTimeout(this.idleTimer);
    let prepared: Prepared;
    let page: Page;
    try {
      const browser = await this.launch();
      prepared =
        (await this.takeSpare(browser, spareKey(options.userAgent, options.viewport))) ??
        (await this.prepare(browser, options.userAgent, options.viewport));
      page = prepared.page;
    } catch (err) {
      this.release();
      throw err;
    }
    const ctx = prepared.context;
    let closed = false;
    // Closing the session hangs up the page's requests still being fetched (a stream, a long poll):
    // closing the context only stops Chromium waiting for them.
    const hangUp = new AbortController();
    const fetchSignal = AbortSignal.any([options.signal, hangUp.signal]);
    // Each request the page has in flight listens on it until answered (a gallery has dozens at once).
    setMaxListeners(0, fetchSignal);
    let cached = 0;
    let read = 0;
    // Sub-resource fetches running, and those waiting for one of them to end (issue 38 item 10: a page
    // of 40 large images had them all read at once, each buffered up to LANDING_MAX_RESOURCE_BYTES).
    let fetching = 0;
    const queue: (() => void)[] = [];
    const slot = async (): Promise<void> => {
      while (fetching >= options.maxConcurrent && !fetchSignal.aborted)
        await new Promise<void>((resolve) => queue.push(resolve));
      fetching += 1;
    };
    const freeSlot = () => {
      fetching -= 1;
      queue.shift()?.();
    };
    // A closed session lets the waiting ones go: each fails at once on the aborted signal.
    fetchSignal.addEventListener('abort', () => queue.splice(0).forEach((go) => go()), { once: true });
    let activity: { promise: Promise<void>; resolve: () => void } | undefined;
    const active = () => {
      session.lastActivity = Date.now();
      activity?.resolve();
      activity = undefined;
    };
    const session: CaptureSession = {
      context: ctx,
      page,
      navigations: [],
      redirectLimitHit: undefined,
      responses: new Map(),
      blocked: [],
      byteLimitHit: undefined,
      bytesLeft: () => options.captureBytes - read,
      spend: (bytes) => {
        read += bytes;
      },
      navigationError: undefined,
      stubs: new Set(),
      inflight: 0,
      lastActivity: Date.now(),
      activity: () => {
        if (!activity) {
          let resolve!: () => void;
          const promise = new Promise<void>((r) => {
            resolve = r;
          });
          activity = { promise, resolve };
        }
        return activity.promise;
      },
      prepareNext: () => {
        if (!closed && prepared.browser.isConnected() && this.browser)
          this.refill(prepared.browser, options.userAgent, options.viewport);
      },
      close: async () => {
        if (closed) return;
        closed = true;
        hangUp.abort();
        await ctx.close().catch(() => undefined);
        this.release();
      },
    };
    const forward = async (route: Route): Promise<void> => {
      const request = route.request();
      const isMainNavigation = request.isNavigationRequest() && isMainFrame(route);
      if (isMainNavigation) {
        // The first navigation is the landing URL itself; each later one is a hop (30x, meta refresh, script).
        if (session.navigations.length > options.maxRedirects) {
          session.redirectLimitHit ??= request.url();
          active();
          // From a page of its own (a meta refresh, a script hop): 204 No Content, so that the browser
          // stays on that page (a refused request would replace it with Chromium's error page, which
          // would then be captured). From a redirect stub there is no page to keep: refused, and the
          // capture fails (capture.ts navigate). A stub's own hop runs before its load event, which a
          // 204 would leave pending.
          const from = request.frame().url();
          if (session.stubs.has(from)) await route.abort('blockedbyclient').catch(() => undefined);
          else await route.fulfill({ status: 204, body: '' }).catch(() => undefined);
          return;
        }
        session.navigations.push(request.url());
      }
      session.inflight += 1;
      active();
      // The page's own document does not wait behind its sub-resources.
      if (!isMainNavigation) await slot();
      try {
        await fetchAndFulfill(route, isMainNavigation);
      } finally {
        if (!isMainNavigation) freeSlot();
        session.inflight -= 1;
        active();
      }
    };
    const fetchAndFulfill = async (route: Route, isMainNavigation: boolean): Promise<void> => {
      const request = route.request();
      const left = session.bytesLeft();
      if (left <= 0) {
        session.byteLimitHit ??= request.url();
        await route.abort('failed').catch(() => undefined);
        return;
      }
      const headers = Object.fromEntries(
        Object.entries(await request.allHeaders()).filter(
          ([k]) => !DROP_REQUEST_HEADERS.has(k.toLowerCase()) && !k.startsWith(':'),
        ),
      );
      // What is left of the capture's bytes bounds this read too (several running at once may each
      // read up to it: the overshoot is at most maxConcurrent - 1 times what was left).
      const maxBytes = Math.min(options.maxResourceBytes, left);
      try {
        const res = await this.outbound.fetch(request.url(), {
          method: request.method(),
          headers: { ...headers, 'user-agent': options.userAgent },
          body: request.postDataBuffer() ?? undefined,
          // Chromium would follow a fulfilled 30x itself, past this route, straight to the dead proxy:
          // the guard follows a resource's hops, and a page's hops are handed back as navigations (below).
          redirect: isMainNavigation ? 'manual' : 'follow',
          maxBytes,
          signal: fetchSignal,
        });
        read += res.body.length;
        const location = REDIRECT_STATUSES.has(res.status) ? res.headers.location : undefined;
        if (isMainNavigation && location) {
          // The hop becomes a navigation of its own, so it comes back through this route (and the guard).
          const next = new URL(location, request.url()).href;
          session.stubs.add(request.url());
          await route.fulfill({
            status: 200,
            contentType: 'text/html; charset=utf-8',
            body: `<!doctype html><meta name="robots" content="noindex"><script>location.replace(${JSON.stringify(next)})</script>`,
          });
          return;
        }
        if (request.method() === 'GET' && res.status < 300 && cached + res.body.length <= options.cacheBytes) {
          cached += res.body.length;
          session.responses.set(request.url(), {
            status: res.status,
            contentType: res.headers['content-type'] ?? '',
            body: res.body,
          });
        }
        await route.fulfill({
          status: res.status,
          headers: decodedBodyHeaders(res.headers),
          body: res.body,
        });
      } catch (err) {
        // Cut off at what was left of the capture's bytes, not at the resource limit: the capture's limit.
        if (err instanceof ResponseTooLargeError && maxBytes < options.maxResourceBytes) {
          read = options.captureBytes;
          session.byteLimitHit ??= request.url();
        }
        const blocked = err instanceof OutboundError && err.kind === 'blocked';
        if (blocked) session.blocked.push(request.url());
        if (isMainNavigation && err instanceof Error) session.navigationError = err;
        await route.abort(blocked ? 'blockedbyclient' : 'failed').catch(() => undefined);
      }
    };
    prepared.bind(forward);
    return session;
  }

  private release(): void {
    this.running -= 1;
    if (this.running > 0) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => void this.closeIfIdle(), this.idleMs);
    // An idle browser must not keep a worker (or a test) alive; close() is the orderly way out.
    this.idleTimer.unref();
  }

  private async closeIfIdle(): Promise<void> {
    if (this.running > 0) return;
    await this.close();
  }

  /** Closes Chromium now (worker shutdown); a later capture launches it again. */
  async close(): Promise<void> {
    clearTimeout(this.idleTimer);
    const browser = this.browser;
    this.browser = undefined;
    // The spare context goes with its browser.
    this.spare = undefined;
    if (browser) await (await browser.catch(() => undefined))?.close().catch(() => undefined);
  }
}

function isMainFrame(route: Route): boolean {
  try {
    const frame = route.request().frame();
    return frame.parentFrame() === null;
  } catch {
    // Requests of web workers have no frame.
    return false;
  }
}
