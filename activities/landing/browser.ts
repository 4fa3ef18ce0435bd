import type { Browser, BrowserContext, Route } from 'playwright-core';
import { launchOptions } from '../../lib/browser';
import { OutboundError, type OutboundClient } from '../../lib/outbound';

// Hop-by-hop and body-framing headers: the OutboundClient has already decoded and de-chunked the body.
const DROP_RESPONSE_HEADERS = new Set(['content-encoding', 'content-length', 'transfer-encoding', 'connection', 'keep-alive']);
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const DROP_REQUEST_HEADERS = new Set(['host', 'content-length', 'connection', 'accept-encoding']);

export interface CachedResponse {
  status: number;
  contentType: string;
  body: Buffer;
}

/** What one capture's context saw: its main-frame navigations and the responses the bundle reuses. */
export interface CaptureSession {
  context: BrowserContext;
  /** Every main-frame navigation request, in order: each HTTP hop, meta refresh and script redirect. */
  navigations: string[];
  /** Set when a navigation past `maxRedirects` was refused. */
  redirectLimitHit: string | undefined;
  /** Responses by URL (bodies up to a total budget), so the HTML bundle needs no second fetch. */
  responses: Map<string, CachedResponse>;
  /** Requests the SSRF guard refused. */
  blocked: string[];
  /** Why the main document's request failed, when it did (the guard's message beats net::ERR_*). */
  navigationError: Error | undefined;
  /** URLs whose 30x was handed to Chromium as a redirecting stub page (no content of their own). */
  stubs: Set<string>;
  /** Requests of the page in flight, and when the last one started or ended (ms since epoch). */
  inflight: number;
  lastActivity: number;
  close(): Promise<void>;
}

/**
 * Resolves true once the page has had no request in flight for `quietMs`, false after `timeoutMs`.
 * Every request passes the route, so this is Playwright's "networkidle" with a window of our choosing.
 */
export async function networkQuiet(session: CaptureSession, quietMs: number, timeoutMs: number, signal: AbortSignal): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    signal.throwIfAborted();
    const now = Date.now();
    if (session.inflight === 0 && now - session.lastActivity >= quietMs) return true;
    if (now >= until) return false;
    await new Promise((r) => setTimeout(r, Math.min(25, Math.max(1, until - now))));
  }
}

export interface SessionOptions {
  userAgent: string;
  viewport: { width: number; height: number };
  maxRedirects: number;
  maxResourceBytes: number;
  /** Total bytes of response bodies kept for the bundle. */
  cacheBytes: number;
  signal: AbortSignal;
}

/**
 * The worker's Chromium for landing captures: launched on first use and shared by the captures
 * running at the same time (a launch costs about as much as a capture), closed once no capture has
 * run for LANDING_BROWSER_IDLE_MS, and launched again after a crash. Each capture gets its own
 * context (cookies, cache, pages), always closed when the capture ends, so a renderer never outlives
 * its capture. Chromium reaches nothing itself: every request of the context, each redirect hop
 * included, is fetched by the SSRF-guarded OutboundClient and fulfilled (as activities/site/fetch.ts
 * does), and its own network goes to a proxy address where nothing listens.
 */
export class LandingBrowser {
  private browser: Promise<Browser> | undefined;
  private running = 0;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly outbound: OutboundClient,
    private readonly chromiumPath: string,
    private readonly idleMs: number,
  ) {}

  private launch(): Promise<Browser> {
    if (!this.browser) {
      const base = launchOptions(this.chromiumPath);
      const launching = import('playwright-core').then(({ chromium }) =>
        chromium.launch({ ...base, args: [...(base.args ?? []), '--proxy-bypass-list=<-loopback>'], proxy: { server: 'http://127.0.0.1:9' } }),
      );
      this.browser = launching;
      launching.then(
        (b) => b.on('disconnected', () => {
          if (this.browser === launching) this.browser = undefined;
        }),
        () => {
          if (this.browser === launching) this.browser = undefined;
        },
      );
    }
    return this.browser;
  }

  /** A fresh context for one capture; `close()` on the session must always be called. */
  async open(options: SessionOptions): Promise<CaptureSession> {
    this.running += 1;
    clearTimeout(this.idleTimer);
    let context: BrowserContext | undefined;
    try {
      const browser = await this.launch();
      context = await browser.newContext({
        userAgent: options.userAgent,
        viewport: options.viewport,
        serviceWorkers: 'block',
        acceptDownloads: false,
      });
    } catch (err) {
      this.release();
      throw err;
    }
    const ctx = context;
    let closed = false;
    let cached = 0;
    const session: CaptureSession = {
      context: ctx,
      navigations: [],
      redirectLimitHit: undefined,
      responses: new Map(),
      blocked: [],
      navigationError: undefined,
      stubs: new Set(),
      inflight: 0,
      lastActivity: Date.now(),
      close: async () => {
        if (closed) return;
        closed = true;
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
          await route.abort('blockedbyclient').catch(() => undefined);
          return;
        }
        session.navigations.push(request.url());
      }
      session.inflight += 1;
      session.lastActivity = Date.now();
      try {
        await fetchAndFulfill(route, isMainNavigation);
      } finally {
        session.inflight -= 1;
        session.lastActivity = Date.now();
      }
    };
    const fetchAndFulfill = async (route: Route, isMainNavigation: boolean): Promise<void> => {
      const request = route.request();
      const headers = Object.fromEntries(Object.entries(await request.allHeaders()).filter(([k]) => !DROP_REQUEST_HEADERS.has(k.toLowerCase()) && !k.startsWith(':')));
      try {
        const res = await this.outbound.fetch(request.url(), {
          method: request.method(),
          headers: { ...headers, 'user-agent': options.userAgent },
          body: request.postDataBuffer() ?? undefined,
          // Chromium would follow a fulfilled 30x itself, past this route, straight to the dead proxy:
          // the guard follows a resource's hops, and a page's hops are handed back as navigations (below).
          redirect: isMainNavigation ? 'manual' : 'follow',
          maxBytes: options.maxResourceBytes,
          signal: options.signal,
        });
        const location = REDIRECT_STATUSES.has(res.status) ? res.headers.location : undefined;
        if (isMainNavigation && location) {
          // The hop becomes a navigation of its own, so it comes back through this route (and the guard).
          const next = new URL(location, request.url()).href;
          session.stubs.add(request.url());
          await route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: `<!doctype html><meta name="robots" content="noindex"><script>location.replace(${JSON.stringify(next)})</script>` });
          return;
        }
        if (request.method() === 'GET' && res.status < 300 && cached + res.body.length <= options.cacheBytes) {
          cached += res.body.length;
          session.responses.set(request.url(), { status: res.status, contentType: res.headers['content-type'] ?? '', body: res.body });
        }
        await route.fulfill({ status: res.status, headers: Object.fromEntries(Object.entries(res.headers).filter(([k]) => !DROP_RESPONSE_HEADERS.has(k))), body: res.body });
      } catch (err) {
        const blocked = err instanceof OutboundError && err.kind === 'blocked';
        if (blocked) session.blocked.push(request.url());
        if (isMainNavigation && err instanceof Error) session.navigationError = err;
        await route.abort(blocked ? 'blockedbyclient' : 'failed').catch(() => undefined);
      }
    };
    try {
      await ctx.routeWebSocket(/.*/, (ws) => ws.close({ code: 1008, reason: 'WebSockets are not captured' }));
      await ctx.route('**/*', forward);
    } catch (err) {
      await session.close();
      throw err;
    }
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
