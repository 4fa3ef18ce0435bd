import { lookup as dnsLookup, promises as dnsPromises, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, buildConnector, fetch, ProxyAgent, type Dispatcher, type Response } from 'undici';
import type { Config } from './config';

/**
 * Outbound HTTP for URLs that users supply (website crawls, landing pages, provider APIs), with a
 * guard against server-side request forgery: nothing reaches a private, loopback, link-local
 * (cloud metadata) or otherwise non-public address unless the client's allow-list lists it
 * (USER_URL_ALLOW_HOSTS for URLs clients supply, OUTBOUND_ALLOW_HOSTS too for the operator's endpoints).
 *
 * The check runs inside the connection's DNS lookup, on the addresses the socket then connects to,
 * so a name that resolves to a public address when checked and to 10.0.0.1 a moment later (DNS
 * rebinding) cannot slip through. Redirects are followed here, one hop at a time, each through
 * the same guard.
 */

/** What went wrong, so that callers can decide whether a retry can help. */
export type OutboundErrorKind =
  'dns' | 'refused' | 'timeout' | 'tls' | 'blocked' | 'too_large' | 'protocol' | 'network';

/** A failed outbound request; `message` is written for the user (it lands in a job's error_message). */
export class OutboundError extends Error {
  override readonly name: string = 'OutboundError';

  constructor(
    readonly kind: OutboundErrorKind,
    message: string,
    /** The URL being fetched when it failed (the current hop of a redirect chain). */
    readonly url: string,
    options: { cause?: unknown; code?: string } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = options.code;
  }

  /** The underlying Node or undici error code (ENOTFOUND, EAI_AGAIN, UND_ERR_CONNECT_TIMEOUT, ...). */
  readonly code: string | undefined;
}

/**
 * The request would have connected to an address the guard refuses. Never worth retrying.
 * The message (which reaches job errors and webhook delivery logs) names the URL the client gave
 * or was redirected to, never the address its host resolved to nor that address's range: those
 * would map the internal network for anyone who submits internal names. `address` and `reason`
 * stay on the error for the operator's logs.
 */
export class BlockedAddressError extends OutboundError {
  override readonly name: string = 'BlockedAddressError';

  constructor(
    url: string,
    readonly address: string,
    readonly reason: string,
  ) {
    super(
      'blocked',
      `the target${url ? ` of ${url}` : ''} is not allowed (only public internet hosts can be reached)`,
      url,
    );
  }
}

/** The response body is larger than the request's `maxBytes`. */
export class ResponseTooLargeError extends OutboundError {
  override readonly name: string = 'ResponseTooLargeError';

  constructor(
    url: string,
    readonly limit: number,
  ) {
    super('too_large', `response from ${url} is larger than the limit of ${limit} bytes`, url);
  }
}

export interface OutboundOptions {
  /** Hostnames (exact, case-insensitive), IP addresses or CIDRs that may be reached although non-public. */
  allowHosts: string[];
  userAgent: string;
  /** Deadline for a whole fetch: connect, redirects and body. Default 20000. */
  timeoutMs?: number;
  /** Most redirects one fetch follows. Default 10. */
  maxRedirects?: number;
  /** Largest body read, after decompression. Default 5 MiB. */
  maxBytes?: number;
  /**
   * An HTTP(S) proxy every request goes through (PROXY_URL). The proxy connects to the target, so
   * the guard judges the target's addresses itself before each request (and each redirect hop).
   */
  proxyUrl?: string;
  /** Told of every fetch that names its `provider` (metrics: provider calls and errors). */
  onProviderCall?: ProviderCallObserver;
}

/**
 * An answer's headers as a browser may be handed them after this client read the body: without the
 * hop-by-hop and body-framing ones, since the body is already decoded and de-chunked (a route
 * fulfilled in Chromium with the page fetched here: crawlSite's render_js, crawlLanding's capture).
 */
export function decodedBodyHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !FRAMING_HEADERS.has(k)));
}
const FRAMING_HEADERS = new Set([
  'content-encoding',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
]);

/** ok: a 2xx/3xx answer; client_error / server_error: a 4xx (429 is rate_limited) / 5xx answer; failed: no answer (DNS, refused, timeout, guard). */
export type ProviderCallOutcome = 'ok' | 'client_error' | 'rate_limited' | 'server_error' | 'failed';
export type ProviderCallObserver = (provider: string, outcome: ProviderCallOutcome) => void;

export function providerCallOutcome(status: number | undefined): ProviderCallOutcome {
  if (status === undefined) return 'failed';
  if (status === 429) return 'rate_limited';
  if (status >= 500) return 'server_error';
  if (status >= 400) return 'client_error';
  return 'ok';
}

export interface OutboundRequestInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Aborting it (e.g. Temporal's cancellationSignal()) stops the fetch and rejects with its reason. */
  signal?: AbortSignal;
  maxBytes?: number;
  /** 'manual' returns a 3xx response as it is instead of following it. Default 'follow'. */
  redirect?: 'follow' | 'manual';
  /** This fetch's deadline instead of the client's (an LLM answer takes longer than a page). */
  timeoutMs?: number;
  /** The outside provider asked (`sec`, `google_places`, `openai`...): counted by the client's observer. */
  provider?: string;
  /** Most redirects this fetch follows, instead of the client's. */
  maxRedirects?: number;
  /**
   * Told of each redirect before it is followed (with `redirect: 'follow'`), after the guard parsed
   * its target: the one place a caller judges hops (robots.txt and the crawl's site, an import URL's
   * hosts, a share link's target). Throwing refuses the hop: the fetch rejects with that very error.
   * `'stop'` ends the fetch with the 3xx response (its body not read) instead of following it.
   */
  onRedirect?: (hop: RedirectHop) => void | 'stop' | Promise<void | 'stop'>;
}

/** A redirect about to be followed. */
export interface RedirectHop {
  /** The URL that answered with the redirect. */
  from: string;
  /** Where it sends, resolved against `from`. */
  to: string;
  status: number;
  /** 1 for the first redirect of the fetch. */
  hop: number;
}

/** Carries an onRedirect hook's error past the fetch's own error mapping. */
class RedirectHookError {
  constructor(readonly error: unknown) {}
}

export interface OutboundResponse {
  /** The final URL, after redirects. */
  url: string;
  status: number;
  /** Lower-cased names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** Every URL requested, from the initial one to the final one. */
  redirectChain: string[];
  body: Buffer;
  /** The body decoded with the charset of Content-Type (or an HTML meta tag), else UTF-8. */
  text(): string;
  json<T = unknown>(): T;
}

/** The statuses that send a client elsewhere with a Location header. */
export const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);
const DEFAULT_TIMEOUT_MS = 20_000;
const DEFAULT_MAX_REDIRECTS = 10;
const DEFAULT_MAX_BYTES = 5 * 1024 * 1024;

const RANGE_REASONS: Record<string, string> = {
  private: 'private address',
  loopback: 'loopback address',
  linkLocal: 'link-local address',
  uniqueLocal: 'unique local address',
  unspecified: 'unspecified address',
  broadcast: 'broadcast address',
  carrierGradeNat: 'carrier-grade NAT address',
  reserved: 'reserved address',
  multicast: 'multicast address',
};
const NAT64 = ipaddr.parseCIDR('64:ff9b::/96');
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

/**
 * Whether the guard refuses an address on its own (before the allow-list). Only globally routable
 * unicast addresses pass; everything ipaddr.js puts in a special range is refused, with that range
 * as the reason. IPv4-mapped IPv6 (::ffff:10.0.0.1) is judged as the IPv4 address it carries.
 */
export function isBlockedAddress(ip: string): { blocked: boolean; reason?: string } {
  const addr = parseAddress(ip);
  if (!addr) return { blocked: true, reason: 'not an IP address' };
  const range = addr.range();
  if (addr.kind() === 'ipv6') {
    const v6 = addr as ipaddr.IPv6;
    // NAT64 (DNS64 networks) carries the IPv4 destination in the last 32 bits: judge that one.
    if (v6.match(NAT64)) return isBlockedAddress(ipaddr.fromByteArray(v6.toByteArray().slice(12)).toString());
    // Deprecated IPv4-compatible addresses (::10.0.0.1) are "unicast" to ipaddr.js but never public.
    if (range === 'unicast' && v6.match(IPV4_COMPATIBLE))
      return { blocked: true, reason: 'IPv4-compatible IPv6 address' };
  }
  if (range === 'unicast') return { blocked: false };
  return { blocked: true, reason: RANGE_REASONS[range] ?? `special-purpose address (${range})` };
}

/**
 * ipaddr.process(), after writing IPv6 the WHATWG way: ipaddr.js reads the dotted tail of "::10.0.0.1"
 * (IPv4-compatible, which is how inet_ntop prints it) as if it were "::ffff:10.0.0.1" (IPv4-mapped).
 */
function parseAddress(ip: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const kind = isIP(ip);
  if (kind === 0) return undefined;
  // The zone (fe80::1%eth0) names an interface, not part of the address; URL would reject it.
  return ipaddr.process(kind === 6 ? new URL(`http://[${ip.replace(/%.*$/, '')}]/`).hostname.slice(1, -1) : ip);
}

/** An allow-list (USER_URL_ALLOW_HOSTS, OUTBOUND_ALLOW_HOSTS) parsed: hostnames, IP addresses and CIDRs. */
export class AllowList {
  private readonly hostnames = new Set<string>();
  private readonly ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][] = [];

  /** Throws on an entry that looks like a CIDR but is not one, so bad config fails at start. */
  constructor(entries: string[]) {
    for (const raw of entries) {
      const entry = raw.trim().replace(/^\[(.*)\]$/, '$1');
      if (!entry) continue;
      if (entry.includes('/')) {
        if (!ipaddr.isValidCIDR(entry))
          throw new Error(`allow-list (USER_URL_ALLOW_HOSTS, OUTBOUND_ALLOW_HOSTS): invalid CIDR "${raw}"`);
        const [addr, bits] = ipaddr.parseCIDR(entry);
        this.ranges.push(
          addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96
            ? [(addr as ipaddr.IPv6).toIPv4Address(), bits - 96]
            : [addr, bits],
        );
      } else if (isIP(entry)) {
        const addr = parseAddress(entry) as ipaddr.IPv4 | ipaddr.IPv6;
        this.ranges.push([addr, addr.kind() === 'ipv4' ? 32 : 128]);
      } else {
        this.hostnames.add(normalizeHostname(entry));
      }
    }
  }

  /** True if the hostname is listed, or the address falls in a listed IP or CIDR. */
  allows(hostname: string, address: string): boolean {
    if (this.hostnames.has(normalizeHostname(hostname))) return true;
    const addr = parseAddress(address);
    if (!addr) return false;
    return this.ranges.some(([net, bits]) => net.kind() === addr.kind() && addr.match(net, bits));
  }

  /** Why the SSRF rules refuse `address` (what `hostname` resolved to), or undefined when it may be used. */
  refusal(hostname: string, address: string): string | undefined {
    const verdict = isBlockedAddress(address);
    if (!verdict.blocked || this.allows(hostname, address)) return undefined;
    return verdict.reason ?? 'blocked';
  }
}

/** The agent the service declares when a provider asks for none in particular. */
export const DEFAULT_USER_AGENT = 'leadjobs/1.0 (+https://github.com/leadjobs/leadjobs)';

/** An HTTP client with the SSRF guard. Make one per process and close it on shutdown. */
export class OutboundClient {
  private readonly allowList: AllowList;
  private readonly agent: Dispatcher;
  private readonly proxied: boolean;
  private readonly userAgent: string;
  private readonly timeoutMs: number;
  private readonly maxRedirects: number;
  private readonly maxBytes: number;
  private readonly onProviderCall: ProviderCallObserver | undefined;

  constructor(options: OutboundOptions) {
    this.onProviderCall = options.onProviderCall;
    this.allowList = new AllowList(options.allowHosts);
    this.userAgent = options.userAgent;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;

    this.proxied = options.proxyUrl !== undefined;
    if (options.proxyUrl !== undefined) {
      // The proxy is the operator's choice (it may sit on a private address); the targets are judged in fetch().
      this.agent = new ProxyAgent({ uri: options.proxyUrl, connectTimeout: this.timeoutMs });
      return;
    }
    const connectThroughGuard = buildConnector({ lookup: this.guardedLookup, timeout: this.timeoutMs });
    this.agent = new Agent({
      connect: (opts, callback) => {
        // Node's net.connect skips lookup() for IP literals, so those are judged here, before any socket.
        if (isIP(opts.hostname)) {
          const refusal = this.allowList.refusal(opts.hostname, opts.hostname);
          if (refusal) return callback(new BlockedAddressError('', opts.hostname, refusal), null);
        }
        connectThroughGuard(opts, callback);
      },
    });
  }

  /**
   * Fetches a URL through the guard and reads the whole body (up to maxBytes). Follows redirects
   * itself (each hop checked again; 303, and 301/302 after POST, become GET; credentials are not
   * carried to another origin). Rejects with an OutboundError, or with the reason of `init.signal`
   * when that aborts. HTTP error statuses (404, 500) are responses, not errors.
   */
  async fetch(url: string, init: OutboundRequestInit = {}): Promise<OutboundResponse> {
    if (init.provider === undefined || !this.onProviderCall) return this.fetchGuarded(url, init);
    const { provider } = init;
    try {
      const res = await this.fetchGuarded(url, init);
      this.onProviderCall(provider, providerCallOutcome(res.status));
      return res;
    } catch (err) {
      // A caller's cancel is not the provider's failure.
      if (!init.signal?.aborted) this.onProviderCall(provider, 'failed');
      throw err;
    }
  }

  private async fetchGuarded(url: string, init: OutboundRequestInit): Promise<OutboundResponse> {
    const { signal } = init;
    signal?.throwIfAborted();
    const maxBytes = init.maxBytes ?? this.maxBytes;
    const redirectChain: string[] = [];
    let current = parseTarget(url);
    let method = (init.method ?? 'GET').toUpperCase();
    let body = init.body;
    let headers: Record<string, string> = { 'user-agent': this.userAgent };
    for (const [name, value] of Object.entries(init.headers ?? {})) headers[name.toLowerCase()] = value;

    // One controller for the whole fetch, aborted by the deadline or by the caller's signal.
    const controller = new AbortController();
    const timedOut = new Error('timed out');
    const timeoutMs = init.timeoutMs ?? this.timeoutMs;
    const timer = setTimeout(() => controller.abort(timedOut), timeoutMs);
    const onAbort = () => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      for (;;) {
        redirectChain.push(current.href);
        this.checkLiteral(current);
        if (this.proxied) await this.checkResolved(current);
        const res = await this.send(current, {
          method,
          headers,
          body,
          redirect: 'manual',
          signal: controller.signal,
          dispatcher: this.agent,
        });
        const location = res.headers.get('location');
        if (init.redirect === 'manual' || !REDIRECT_STATUSES.has(res.status) || location === null) {
          return new BufferedResponse(
            current.href,
            res.status,
            headerRecord(res),
            redirectChain,
            await readBody(res, current.href, maxBytes),
          );
        }
        await res.body?.cancel();
        const maxRedirects = init.maxRedirects ?? this.maxRedirects;
        if (redirectChain.length > maxRedirects) {
          throw new OutboundError(
            'protocol',
            `too many redirects (more than ${maxRedirects}) starting at ${url}`,
            current.href,
          );
        }
        const next = parseTarget(location, current);
        if (init.onRedirect) {
          let decision: void | 'stop';
          try {
            decision = await init.onRedirect({
              from: current.href,
              to: next.href,
              status: res.status,
              hop: redirectChain.length,
            });
          } catch (err) {
            throw new RedirectHookError(err);
          }
          if (decision === 'stop')
            return new BufferedResponse(current.href, res.status, headerRecord(res), redirectChain, Buffer.alloc(0));
        }
        if (res.status === 303 ? method !== 'HEAD' : (res.status === 301 || res.status === 302) && method === 'POST') {
          method = 'GET';
          body = undefined;
          headers = omit(headers, [
            'content-type',
            'content-length',
            'content-encoding',
            'content-language',
            'content-location',
          ]);
        }
        if (next.origin !== current.origin) headers = omit(headers, ['authorization', 'cookie', 'proxy-authorization']);
        current = next;
      }
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      if (err instanceof RedirectHookError) throw err.error;
      if (controller.signal.reason === timedOut) {
        throw new OutboundError('timeout', `request to ${current.href} timed out after ${timeoutMs} ms`, current.href, {
          cause: err,
        });
      }
      throw toOutboundError(err, current);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * One request. A GET or HEAD whose pooled keep-alive connection the server closed just as it was
   * reused ("other side closed" before any answer) is sent once more, on a new connection, as
   * browsers do: the server never saw it. Other methods are not repeated (the server may have acted).
   */
  private async send(url: URL, init: Parameters<typeof fetch>[1] & { method: string }): Promise<Response> {
    try {
      return await fetch(url, init);
    } catch (err) {
      if ((init.method !== 'GET' && init.method !== 'HEAD') || init.signal?.aborted || !closedBeforeAnswer(err))
        throw err;
      return fetch(url, init);
    }
  }

  /**
   * The process's client for URLs that clients supply (crawls, captures, webhooks, imports):
   * USER_URL_ALLOW_HOSTS as its allow-list, never OUTBOUND_ALLOW_HOSTS.
   */
  static fromConfig(
    config: Pick<Config, 'USER_URL_ALLOW_HOSTS'>,
    options: Partial<OutboundOptions> = {},
  ): OutboundClient {
    return new OutboundClient({ allowHosts: config.USER_URL_ALLOW_HOSTS, userAgent: DEFAULT_USER_AGENT, ...options });
  }

  /**
   * The process's client for the operator's endpoints (provider base URLs, LLM base URLs):
   * OUTBOUND_ALLOW_HOSTS and USER_URL_ALLOW_HOSTS (what every client may reach, these may too).
   */
  static forEndpoints(
    config: Pick<Config, 'OUTBOUND_ALLOW_HOSTS' | 'USER_URL_ALLOW_HOSTS'>,
    options: Partial<OutboundOptions> = {},
  ): OutboundClient {
    return new OutboundClient({
      allowHosts: [...config.OUTBOUND_ALLOW_HOSTS, ...config.USER_URL_ALLOW_HOSTS],
      userAgent: DEFAULT_USER_AGENT,
      ...options,
    });
  }

  /** Closes pooled connections; waits for requests still running. */
  async close(): Promise<void> {
    await this.agent.close();
  }

  /** Fails fast, with the URL in the message, for a literal IP host the guard refuses. */
  private checkLiteral(url: URL): void {
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    if (!isIP(host)) return;
    const refusal = this.allowList.refusal(host, host);
    if (refusal) throw new BlockedAddressError(url.href, host, refusal);
  }

  /**
   * Through a proxy the socket goes to the proxy, so a target's name is resolved here and refused
   * when any of its addresses is (the proxy could pick that one). A name that changes its answer
   * between this lookup and the proxy's own (DNS rebinding) is the proxy's to guard against.
   */
  private async checkResolved(url: URL): Promise<void> {
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    if (isIP(host)) return;
    const addresses = await dnsPromises.lookup(host, { all: true });
    for (const a of addresses) {
      const refusal = this.allowList.refusal(host, a.address);
      if (refusal) throw new BlockedAddressError(url.href, a.address, refusal);
    }
  }

  /**
   * dns.lookup that hands the socket only the addresses the guard accepts. A name with both public
   * and refused addresses keeps the public ones; a name with only refused ones fails the connection.
   */
  private readonly guardedLookup: LookupFunction = (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '');
      const accepted = addresses.filter((a) => this.allowList.refusal(hostname, a.address) === undefined);
      const first = accepted[0];
      if (!first) {
        const refused = addresses[0]?.address ?? hostname;
        return callback(
          new BlockedAddressError('', refused, this.allowList.refusal(hostname, refused) ?? 'no address'),
          '',
        );
      }
      if (options.all) callback(null, accepted);
      else callback(null, first.address, first.family);
    });
  };
}

class BufferedResponse implements OutboundResponse {
  constructor(
    readonly url: string,
    readonly status: number,
    readonly headers: Record<string, string>,
    readonly redirectChain: string[],
    readonly body: Buffer,
  ) {}

  text(): string {
    return decode(this.body, this.headers['content-type']);
  }

  json<T = unknown>(): T {
    return JSON.parse(this.text()) as T;
  }
}

/** Parses a URL (relative to `base` for a Location header) and accepts only http and https. */
function parseTarget(raw: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    throw new OutboundError(
      'protocol',
      base ? `invalid redirect location "${raw}" from ${base.href}` : `invalid URL "${raw}"`,
      base?.href ?? raw,
    );
  }
  const where = base ? ` (redirect from ${base.href})` : '';
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new OutboundError(
      'protocol',
      `unsupported URL scheme "${url.protocol}" in ${url.protocol}//${url.host}${url.pathname}${where}; only http and https are fetched`,
      base?.href ?? raw,
    );
  }
  if (url.username || url.password) {
    // Never echo the credentials into an error message.
    throw new OutboundError(
      'protocol',
      `URL ${url.protocol}//${url.host}${url.pathname} contains credentials, which are not supported${where}`,
      base?.href ?? `${url.origin}${url.pathname}`,
    );
  }
  return url;
}

/** Reads the body, refusing early on a Content-Length over the limit and counting streamed bytes. */
async function readBody(res: Response, url: string, maxBytes: number): Promise<Buffer> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > maxBytes) {
    await res.body?.cancel();
    throw new ResponseTooLargeError(url, maxBytes);
  }
  if (!res.body) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let total = 0;
  // Leaving the loop by throwing cancels the stream, which closes the connection.
  for await (const chunk of res.body) {
    total += chunk.byteLength;
    if (total > maxBytes) throw new ResponseTooLargeError(url, maxBytes);
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks, total);
}

function headerRecord(res: Response): Record<string, string> {
  const out: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    out[name] = name in out ? `${out[name]}, ${value}` : value;
  });
  return out;
}

/** Decodes with the charset a BOM, Content-Type or HTML meta tag names; WHATWG labels via TextDecoder. */
function decode(body: Buffer, contentType = ''): string {
  let label = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1];
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) label = 'utf-8';
  else if (body[0] === 0xff && body[1] === 0xfe) label = 'utf-16le';
  else if (body[0] === 0xfe && body[1] === 0xff) label = 'utf-16be';
  // Many pages name their charset only in <meta>, within the first 1024 bytes (HTML's prescan).
  else if (!label && /html/i.test(contentType))
    label = /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(body.subarray(0, 1024).toString('latin1'))?.[1];
  try {
    return new TextDecoder(label ?? 'utf-8').decode(body);
  } catch {
    // An unknown label: read it as UTF-8 rather than fail the whole fetch.
    return new TextDecoder('utf-8').decode(body);
  }
}

/** Hostnames compare case-insensitively and without the root's trailing dot ("localhost." is "localhost"). */
function normalizeHostname(hostname: string): string {
  return hostname.toLowerCase().replace(/\.+$/, '');
}

function omit(headers: Record<string, string>, names: string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !names.includes(name)));
}

/** undici's error for a connection the server closed (or reset) before its answer began. */
function closedBeforeAnswer(err: unknown): boolean {
  const cause = err instanceof TypeError ? err.cause : err;
  const code = (cause as { code?: unknown } | undefined)?.code;
  return code === 'UND_ERR_SOCKET' || code === 'ECONNRESET';
}

const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME', 'ENODATA', 'ESERVFAIL']);
const TIMEOUT_CODES = new Set([
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);
const TLS_CODE =
  /^(CERT_|ERR_TLS_|ERR_SSL_|ERR_OSSL_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED|SELF_SIGNED_CERT|HOSTNAME_MISMATCH)/;
const PROTOCOL_CODE = /^(HPE_|UND_ERR_RES_|UND_ERR_INFO|Z_)/;

/** Maps an error from undici's fetch (usually TypeError('fetch failed') with a Node cause) to an OutboundError. */
function toOutboundError(err: unknown, url: URL): OutboundError {
  let cause = err instanceof TypeError && err.cause !== undefined ? err.cause : err;
  // Happy eyeballs (several addresses tried) reports an AggregateError of the per-address errors.
  if (cause instanceof AggregateError && cause.errors[0] !== undefined) cause = cause.errors[0];
  if (cause instanceof BlockedAddressError && !cause.url)
    return new BlockedAddressError(url.href, cause.address, cause.reason);
  if (cause instanceof OutboundError) return cause;
  const code = typeof (cause as { code?: unknown })?.code === 'string' ? (cause as { code: string }).code : undefined;
  const detail = cause instanceof Error ? cause.message : String(cause);
  const hostPort = `${url.hostname}:${url.port || (url.protocol === 'https:' ? '443' : '80')}`;
  const opts = { cause, code };
  if (code && DNS_CODES.has(code))
    return new OutboundError('dns', `DNS lookup failed for ${url.hostname} (${code})`, url.href, opts);
  if (code === 'ECONNREFUSED') return new OutboundError('refused', `connection refused by ${hostPort}`, url.href, opts);
  if (code && TIMEOUT_CODES.has(code))
    return new OutboundError('timeout', `request to ${url.href} timed out (${detail})`, url.href, opts);
  if (code && (TLS_CODE.test(code) || (code === 'EPROTO' && url.protocol === 'https:'))) {
    // OpenSSL's message is a long internal string; its `reason` is the readable part.
    const reason = (cause as { reason?: unknown }).reason;
    return new OutboundError(
      'tls',
      `TLS error: ${typeof reason === 'string' ? reason : detail} (${code}) for ${url.href}`,
      url.href,
      opts,
    );
  }
  if (code && PROTOCOL_CODE.test(code))
    return new OutboundError('protocol', `invalid HTTP response from ${url.href}: ${detail}`, url.href, opts);
  return new OutboundError(
    'network',
    `network error for ${url.href}: ${detail}${code ? ` (${code})` : ''}`,
    url.href,
    opts,
  );
}
