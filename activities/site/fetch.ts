import type { Browser, BrowserContext, Page, Route } from 'playwright-core';
import { launchOptions } from '../../lib/browser';
import { decodedBodyHeaders, OutboundError, type OutboundClient } from '../../lib/outbound';

/**
 * Where pages come from. Both sources fetch through the SSRF-guarded OutboundClient, so every
 * request, every redirect hop and (with render_js) every request Chromium makes is checked after
 * DNS resolution against USER_URL_ALLOW_HOSTS.
 */
export interface FetchedPage {
  /** The URL asked for. */
  url: string;
  /** After redirects. */
  finalUrl: string;
  status: number;
  /** Every URL requested, from `url` to `finalUrl`. */
  redirectChain: string[];
  contentType: string;
  /** Decoded HTML (charset from Content-Type, BOM or <meta>), or null when the response is no HTML page. */
  html: string | null;
}

export interface FetchedFile {
  status: number;
  body: Buffer;
  text: string;
}

/**
 * Asked before following a redirect to `url`: a reason not to (off-site, disallowed by robots.txt)
 * stops the fetch with a RedirectRefusedError, or undefined to follow it.
 */
export type RedirectCheck = (url: string) => Promise<string | undefined>;

export class RedirectRefusedError extends Error {
  override readonly name = 'RedirectRefusedError';
  constructor(
    readonly from: string,
    readonly to: string,
    readonly reason: string,
  ) {
    super(`redirect from ${from} to ${to} not followed: ${reason}`);
  }
}

export interface PageSource {
  /**
   * A page; rejects with an OutboundError (network, limits), a RedirectRefusedError or the signal's
   * reason. `checkRedirect` runs before each HTTP redirect hop (a script's navigation in the
   * browser is seen afterwards, in the page's final URL).
   */
  fetchPage(url: string, signal: AbortSignal, checkRedirect?: RedirectCheck): Promise<FetchedPage>;
  /** robots.txt and sitemaps: always plain HTTP. */
  fetchFile(url: string, signal: AbortSignal, maxBytes: number): Promise<FetchedFile>;
  close(): Promise<void>;
}

export interface SourceOptions {
  userAgent: string;
  pageTimeoutMs: number;
  maxPageBytes: number;
}

const MAX_REDIRECTS = 10;
const HTML_TYPE = /^(text\/html|application\/xhtml\+xml)\b/i;

/** Whether a response is an HTML page: by Content-Type, or by sniffing when the server sends none. */
export function isHtml(contentType: string, body: Buffer): boolean {
  if (contentType) return HTML_TYPE.test(contentType.trim());
  return /^\s*(<!doctype html|<html|<head|<body)/i.test(body.subarray(0, 512).toString('latin1'));
}

/** `promise`, or the signal's reason as soon as it aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Runs `fn` with `signal` plus a per-page deadline; the deadline surfaces as an OutboundError of kind timeout. */
async function withPageDeadline<T>(
  url: string,
  signal: AbortSignal,
  timeoutMs: number,
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const deadline = AbortSignal.timeout(timeoutMs);
  try {
    return await fn(AbortSignal.any([signal, deadline]));
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    if (deadline.aborted) throw new OutboundError('timeout', `${url} did not answer within ${timeoutMs} ms`, url);
    throw err;
  }
}

/** A page's own response (its body as the OutboundClient gives it: de-chunked and decoded), for a browser to render. */
export interface DocumentResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** Plain HTTP through the OutboundClient (the default: fast, no JavaScript). */
export class HttpPageSource implements PageSource {
  constructor(
    private readonly http: OutboundClient,
    private readonly options: SourceOptions,
  ) {}

  fetchPage(url: string, signal: AbortSignal, checkRedirect?: RedirectCheck): Promise<FetchedPage> {
    return withPageDeadline(
      url,
      signal,
      this.options.pageTimeoutMs,
      async (s) => (await this.fetchDocument(url, s, checkRedirect)).page,
    );
  }

  /** The page and its final response, redirects followed hop by hop (each checked before it is requested); no deadline of its own. */
  async fetchDocument(
    url: string,
    s: AbortSignal,
    checkRedirect?: RedirectCheck,
  ): Promise<{ page: FetchedPage; response: DocumentResponse }> {
    const res = await this.http.fetch(url, {
      signal: s,
      maxBytes: this.options.maxPageBytes,
      maxRedirects: MAX_REDIRECTS,
      headers: { 'user-agent': this.options.userAgent, accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.5' },
      // Each hop's target is checked (the crawl's site, robots.txt) before it is requested.
      onRedirect: async ({ from, to }) => {
        const refusal = await checkRedirect?.(to);
        if (refusal) throw new RedirectRefusedError(from, to, refusal);
      },
    });
    const contentType = res.headers['content-type'] ?? '';
    const page = {
      url,
      finalUrl: res.url,
      status: res.status,
      redirectChain: res.redirectChain,
      contentType,
      html: isHtml(contentType, res.body) ? res.text() : null,
    };
    return { page, response: { status: res.status, headers: res.headers, body: res.body } };
  }

  fetchFile(url: string, signal: AbortSignal, maxBytes: number): Promise<FetchedFile> {
    return withPageDeadline(url, signal, this.options.pageTimeoutMs, async (s) => {
      const res = await this.http.fetch(url, {
        signal: s,
        maxBytes,
        headers: { 'user-agent': this.options.userAgent },
      });
      return { status: res.status, body: res.body, text: res.text() };
    });
  }

  async close(): Promise<void> {
    // The OutboundClient belongs to the worker; nothing of ours to close.
  }
}

const DROP_REQUEST_HEADERS = new Set(['host', 'content-length', 'connection', 'accept-encoding']);

/**
 * Pages rendered by Debian's Chromium (render_js). Chromium itself reaches nothing: every request
 * of every page (documents, scripts, XHR, images) is intercepted with context.route and fetched by
 * the OutboundClient, then fulfilled; WebSockets are closed and service workers blocked, since route
 * cannot see them. As a second fence Chromium's own network goes to a proxy address where nothing
 * listens (loopback included), so anything that slipped past the router (a preconnect, a future
 * request kind) cannot connect either.
 *
 * Redirects: Chromium follows a fulfilled 30x itself, past the route, to that dead proxy. So a
 * page's document is fetched first over HTTP, its redirects followed and checked hop by hop as the
 * plain source does, and Chromium is sent to the final URL, whose response it gets from that fetch;
 * a resource's redirects are followed by the guard.
 */
export class BrowserPageSource implements PageSource {
  private browser: Promise<Browser> | undefined;
  private context: Promise<BrowserContext> | undefined;
  private readonly http: HttpPageSource;
  /** Per page: the signal its requests run under, and why its navigation was refused (the guard's message beats net::ERR_*). */
  private readonly signals = new WeakMap<Page, AbortSignal>();
  /** Per page: its document, fetched already, for its first navigation to that URL. */
  private readonly documents = new WeakMap<Page, { url: string; response: DocumentResponse }>();
  private readonly navigationErrors = new WeakMap<Page, Error>();
  /** Requests Chromium asked for that the guard refused. */
  readonly blocked: string[] = [];

  constructor(
    private readonly outbound: OutboundClient,
    private readonly chromiumPath: string,
    private readonly options: SourceOptions,
  ) {
    this.http = new HttpPageSource(outbound, options);
  }

  private getContext(): Promise<BrowserContext> {
    const base = launchOptions(this.chromiumPath);
    // Loaded on first use: Playwright is large, and most crawls never render.
    this.browser ??= import('playwright-core').then(({ chromium }) =>
      chromium.launch({
        ...base,
        args: [...(base.args ?? []), '--proxy-bypass-list=<-loopback>'],
        proxy: { server: 'http://127.0.0.1:9' },
      }),
    );
    this.context ??= this.browser.then(async (browser) => {
      const context = await browser.newContext({
        userAgent: this.options.userAgent,
        serviceWorkers: 'block',
        acceptDownloads: false,
      });
      await context.routeWebSocket(/.*/, (ws) => ws.close({ code: 1008, reason: 'WebSockets are not crawled' }));
      await context.route('**/*', (route) => this.forward(route));
      return context;
    });
    return this.context;
  }

  /** Fetches one of Chromium's requests through the guard and hands the response back. */
  private async forward(route: Route): Promise<void> {
    const request = route.request();
    // Requests of web workers have no frame; they run under no page's signal.
    let page: Page | undefined;
    try {
      page = request.frame().page();
    } catch {
      page = undefined;
    }
    const navigation = page !== undefined && request.isNavigationRequest() && request.frame() === page.mainFrame();
    const document = navigation ? this.documents.get(page as Page) : undefined;
    if (document && document.url === new URL(request.url()).href) {
      this.documents.delete(page as Page);
      await route
        .fulfill({
          status: document.response.status,
          headers: decodedBodyHeaders(document.response.headers),
          body: document.response.body,
        })
        .catch(() => undefined);
      return;
    }
    const headers = Object.fromEntries(
      Object.entries(await request.allHeaders()).filter(
        ([k]) => !DROP_REQUEST_HEADERS.has(k.toLowerCase()) && !k.startsWith(':'),
      ),
    );
    try {
      const res = await this.outbound.fetch(request.url(), {
        method: request.method(),
        headers: { ...headers, 'user-agent': this.options.userAgent },
        body: request.postDataBuffer() ?? undefined,
        // A resource's hops are followed (and checked) by the guard. A later navigation's 30x (a
        // script's) would take Chromium past this route: its page fails, seen as a navigation error.
        redirect: request.isNavigationRequest() ? 'manual' : 'follow',
        maxBytes: this.options.maxPageBytes,
        signal: page && this.signals.get(page),
      });
      await route.fulfill({ status: res.status, headers: decodedBodyHeaders(res.headers), body: res.body });
    } catch (err) {
      const blocked = err instanceof OutboundError && err.kind === 'blocked';
      if (blocked) this.blocked.push(request.url());
      if (page && navigation && err instanceof Error) this.navigationErrors.set(page, err);
      await route.abort(blocked ? 'blockedbyclient' : 'failed').catch(() => undefined);
    }
  }

  async fetchPage(url: string, signal: AbortSignal, checkRedirect?: RedirectCheck): Promise<FetchedPage> {
    // Starting Chromium is the crawl's cost, not the page's: it happens outside the page deadline.
    const context = await untilAborted(this.getContext(), signal);
    return withPageDeadline(url, signal, this.options.pageTimeoutMs, async (s) => {
      // The document first, over HTTP: its redirects are followed and checked here (see above).
      const fetched = await this.http.fetchDocument(url, s, checkRedirect);
      // Nothing to render: an error page's status or a file is the answer as it is.
      if (fetched.page.html === null) return fetched.page;
      const page = await context.newPage();
      this.signals.set(page, s);
      this.documents.set(page, { url: new URL(fetched.page.finalUrl).href, response: fetched.response });
      // Closing the page rejects a pending goto: that is how a cancel or the deadline stops a render.
      const stop = () => void page.close().catch(() => undefined);
      s.addEventListener('abort', stop, { once: true });
      try {
        let response;
        try {
          response = await page.goto(fetched.page.finalUrl, { waitUntil: 'load', timeout: this.options.pageTimeoutMs });
        } catch (err) {
          s.throwIfAborted();
          throw (
            this.navigationErrors.get(page) ??
            new OutboundError(
              'network',
              `could not render ${url}: ${((err as Error).message ?? String(err)).split('\n')[0]}`,
              url,
            )
          );
        }
        if (!response) throw new OutboundError('protocol', `no response for ${url}`, url);
        // Script-built pages fetch their content after load; wait briefly for the network to settle,
        // leaving the rest of the page's time for reading the result.
        await page
          .waitForLoadState('networkidle', { timeout: Math.min(3000, Math.floor(this.options.pageTimeoutMs / 3)) })
          .catch(() => undefined);
        s.throwIfAborted();
        const contentType = fetched.page.contentType;
        const html = await page.content();
        return {
          url,
          finalUrl: page.url(),
          status: response.status(),
          redirectChain: fetched.page.redirectChain,
          contentType,
          html,
        };
      } finally {
        s.removeEventListener('abort', stop);
        await page.close().catch(() => undefined);
      }
    });
  }

  fetchFile(url: string, signal: AbortSignal, maxBytes: number): Promise<FetchedFile> {
    return this.http.fetchFile(url, signal, maxBytes);
  }

  async close(): Promise<void> {
    const browser = this.browser;
    this.browser = undefined;
    this.context = undefined;
    if (browser) await (await browser.catch(() => undefined))?.close().catch(() => undefined);
  }
}
