import type { CountryCode } from 'libphonenumber-js';
import { uniqueEmails } from '../../lib/emails';
import { BlockedAddressError, OutboundError } from '../../lib/outbound';
import { uniquePhones, type PhoneRecord } from '../../lib/phones';
import { buildCompendium, type CleanupLevel, type CompendiumPage } from './compendium';
import { isServicesPage, mergeCompanyInfo, type CompanyInfo } from './extract/company';
import { pickSocial, type SocialLinks } from './extract/social';
import { mergeTeam, type TeamMember } from './extract/team';
import { RedirectRefusedError, type FetchedPage, type PageSource } from './fetch';
import { Frontier } from './frontier';
import { processPage, type PageFacts } from './page';
import { fetchRobots, type RobotsRules } from './robots';
import { sitemapUrls } from './sitemap';
import { isContactLike, isSameSite, looksLikePage, normalizeUrl, pathFilter, siteKey, urlKey } from './urls';

/**
 * The crawl itself, free of Temporal (the activity in crawl.ts wraps it; bench/site.ts runs it
 * bare): robots.txt, the start page, sitemap seeds, then a breadth-first frontier worked by
 * `concurrency` loops that share one politeness gate per site. Every page is parsed once and
 * all extractors run on that document; the results are merged in a fixed page order, so the same
 * site gives the same result however the fetches interleave.
 */
export interface CrawlRequest {
  url: string;
  maxPages: number;
  extractTeam: boolean;
  compendium: { enabled: boolean; cleanupLevel: CleanupLevel };
  includePaths: string[];
  excludePaths: string[];
  respectRobots: boolean;
  /** Whole-crawl limit: what is crawled by then is the result. */
  timeLimitMs: number;
}

export interface CrawlSettings {
  userAgent: string;
  concurrency: number;
  delayMs: number;
}

export interface CrawlHooks {
  /** Cancellation: the crawl stops and rejects with the signal's reason. */
  signal: AbortSignal;
  /** After each page (the activity heartbeats here). */
  onPage?: (progress: { pagesCrawled: number; url: string }) => void;
}

export interface PageEntry {
  url: string;
  final_url: string;
  status: number;
  title: string | null;
  /** Present when the page was reached through redirects: every URL requested, first to last. */
  redirect_chain?: string[];
}

export interface CrawlError {
  url: string | null;
  error: string;
}

/** The result data of spec §2.3, without the compendium object (the activity stores the document). */
export type CrawlData = {
  url: string;
  final_url: string;
  pages_crawled: number;
  emails: string[];
  phones: PhoneRecord[];
  social_media: SocialLinks;
  company_info: CompanyInfo;
  team_members: TeamMember[];
  pages: PageEntry[];
  errors: CrawlError[];
} & SocialLinks;

export interface CrawlOutcome {
  data: CrawlData;
  /** The Markdown compendium, when it was asked for. */
  compendium?: string;
}

/** A crawl that cannot produce a result (the start page is unreachable or forbidden). */
export class CrawlFailedError extends Error {
  override readonly name = 'CrawlFailedError';
  constructor(
    message: string,
    /** Stable type, used as the Temporal failure type. */
    readonly type: string,
  ) {
    super(message);
  }
}

const MAX_CRAWL_DELAY_MS = 5000;
const ALREADY_CRAWLED = 'its target is crawled already';

interface CrawledPage {
  entry: PageEntry;
  facts: PageFacts;
  depth: number;
  contactLike: boolean;
  isStart: boolean;
}

/** The politeness gate of one site: at most one request start per `delayMs`. */
class Gate {
  private next = 0;
  constructor(public delayMs: number) {}

  async wait(signal: AbortSignal): Promise<void> {
    const now = Date.now();
    const at = Math.max(now, this.next);
    this.next = at + this.delayMs;
    if (at > now) await sleep(at - now, signal);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** The message a user reads for a failed fetch. */
function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function failureType(err: unknown): string {
  if (err instanceof OutboundError) {
    const types: Record<string, string> = { dns: 'DnsFailure', refused: 'Unreachable', network: 'Unreachable', timeout: 'Timeout', tls: 'TlsError', blocked: 'BlockedAddress', too_large: 'PageTooLarge', protocol: 'InvalidResponse' };
    return types[err.kind] ?? 'Unreachable';
  }
  if (err instanceof RedirectRefusedError) return 'RobotsDisallowed';
  return 'CrawlFailed';
}

export async function crawl(source: PageSource, request: CrawlRequest, settings: CrawlSettings, hooks: CrawlHooks): Promise<CrawlOutcome> {
  const cancel = hooks.signal;
  const timeLimit = new AbortController();
  const timer = setTimeout(() => timeLimit.abort(new Error('time limit')), request.timeLimitMs);
  const signal = AbortSignal.any([cancel, timeLimit.signal]);
  try {
    return await run(source, request, settings, hooks, signal, timeLimit.signal);
  } catch (err) {
    if (cancel.aborted) throw cancel.reason;
    if (timeLimit.signal.aborted && !(err instanceof CrawlFailedError)) {
      throw new CrawlFailedError(`${request.url} could not be crawled within the time limit of ${Math.round(request.timeLimitMs / 1000)} s`, 'Timeout');
    }
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

async function run(source: PageSource, request: CrawlRequest, settings: CrawlSettings, hooks: CrawlHooks, signal: AbortSignal, timeUp: AbortSignal): Promise<CrawlOutcome> {
  const start = normalizeUrl(request.url);
  if (!start) throw new CrawlFailedError(`${request.url} is not an http(s) URL`, 'InvalidInput');
  const siteKeys = new Set([siteKey(new URL(start).hostname)]);
  const errors: CrawlError[] = [];
  const frontier = new Frontier();
  const wanted = pathFilter(request.includePaths, request.excludePaths);
  const gates = new Map<string, Gate>();
  const robotsByOrigin = new Map<string, Promise<RobotsRules>>();
  const compendiumLevel = request.compendium.enabled ? request.compendium.cleanupLevel : null;

  const robotsFor = (origin: string): Promise<RobotsRules> => {
    let rules = robotsByOrigin.get(origin);
    if (!rules) robotsByOrigin.set(origin, (rules = fetchRobots(source, origin, settings.userAgent, signal)));
    return rules;
  };
  /** Why a URL may not be fetched under robots.txt, or undefined. */
  const robotsRefusal = async (url: string): Promise<string | undefined> => {
    if (!request.respectRobots) return undefined;
    const origin = new URL(url).origin;
    const rules = await robotsFor(origin).catch((err: unknown) => {
      // The guard refused the host itself: say so for the page, not for its robots.txt.
      if (err instanceof BlockedAddressError) throw new BlockedAddressError(url, err.address, err.reason);
      throw err;
    });
    if (rules.disallowAllReason) return rules.disallowAllReason;
    return rules.allowed(url) ? undefined : `robots.txt of ${origin} disallows it for ${settings.userAgent.split('/')[0]}`;
  };
  const gateFor = async (url: string): Promise<Gate> => {
    const key = siteKey(new URL(url).hostname);
    let gate = gates.get(key);
    if (!gate) {
      const crawlDelay = request.respectRobots ? (await robotsFor(new URL(url).origin)).crawlDelayMs : undefined;
      gate = gates.get(key) ?? new Gate(Math.max(settings.delayMs, Math.min(crawlDelay ?? 0, MAX_CRAWL_DELAY_MS)));
      gates.set(key, gate);
    }
    return gate;
  };
  /**
   * Redirects stay on the site and within robots.txt (the start page may move to another host: it
   * becomes the site), and do not fetch a page that is crawled already.
   */
  const redirectCheck = (allowOffSite: boolean) => async (url: string) => {
    const normalized = normalizeUrl(url);
    if (!normalized) return undefined; // the client refuses other schemes with its own message
    if (!allowOffSite && !isSameSite(normalized, siteKeys)) return 'it leads off the site';
    if (frontier.taken(normalized)) return ALREADY_CRAWLED;
    return robotsRefusal(normalized);
  };

  // ---- the start page: any failure here fails the crawl --------------------------------------
  let startPage: FetchedPage;
  try {
    const refusal = await robotsRefusal(start);
    if (refusal) throw new CrawlFailedError(`${start} may not be crawled: ${refusal}`, 'RobotsDisallowed');
    await (await gateFor(start)).wait(signal);
    startPage = await source.fetchPage(start, signal, redirectCheck(true));
  } catch (err) {
    if (signal.aborted || err instanceof CrawlFailedError) throw err;
    throw new CrawlFailedError(`${start} could not be crawled: ${describe(err)}`, failureType(err));
  }
  const startFinal = normalizeUrl(startPage.finalUrl) ?? start;
  siteKeys.add(siteKey(new URL(startFinal).hostname));
  if (startPage.status >= 400) throw new CrawlFailedError(`${start} could not be crawled: the site answered HTTP ${startPage.status}`, 'HttpError');
  if (startPage.html === null) throw new CrawlFailedError(`${start} is not an HTML page (Content-Type ${startPage.contentType || 'missing'})`, 'NotHtml');

  const crawled: CrawledPage[] = [];
  const pages: PageEntry[] = [];
  const record = (page: FetchedPage, depth: number, isStart: boolean, facts: PageFacts | undefined) => {
    const final = normalizeUrl(page.finalUrl) ?? page.finalUrl;
    const entry: PageEntry = { url: page.url, final_url: final, status: page.status, title: facts?.title ?? null };
    if (page.redirectChain.length > 1) entry.redirect_chain = page.redirectChain;
    pages.push(entry);
    if (facts) crawled.push({ entry, facts, depth, contactLike: isContactLike(final), isStart });
  };
  const enqueueLinks = (facts: PageFacts, depth: number) => {
    if (facts.nofollow && request.respectRobots) return;
    for (const link of facts.links) if (isSameSite(link, siteKeys) && looksLikePage(link) && wanted(link)) frontier.push(link, depth + 1);
  };
  /** The start page's region (guessed from it) is the whole crawl's. */
  const analyse = (page: FetchedPage, isStart: boolean, region: CountryCode | undefined): PageFacts => {
    const final = normalizeUrl(page.finalUrl) ?? page.finalUrl;
    const path = new URL(final).pathname;
    return processPage(page.html as string, final, {
      region,
      extractTeam: request.extractTeam,
      teamPage: /team|about|people|staff|leadership|management|ueber|über|who-we-are|unternehmen/i.test(path),
      companyPage: isStart || isContactLike(final) || isServicesPage(final),
      compendium: compendiumLevel,
    });
  };

  frontier.claim(start);
  frontier.claim(startFinal);
  const startFacts = analyse(startPage, true, undefined);
  const region = startFacts.region;
  record(startPage, 0, true, startFacts);
  hooks.onPage?.({ pagesCrawled: 1, url: startFinal });

  // Sitemaps seed the frontier as if the start page linked them; then the start page's own links.
  if (!timeUp.aborted) {
    try {
      const origin = new URL(startFinal).origin;
      const declared = request.respectRobots ? (await robotsFor(origin)).sitemaps : [];
      for (const u of await sitemapUrls(source, origin, declared, signal, errors)) {
        const url = normalizeUrl(u);
        if (url && isSameSite(url, siteKeys) && looksLikePage(url) && wanted(url)) frontier.push(url, 1);
      }
    } catch (err) {
      if (!timeUp.aborted) throw err;
    }
  }
  enqueueLinks(startFacts, 0);
  startFacts.links = [];

  // ---- the frontier --------------------------------------------------------------------------
  let succeeded = 1;
  let attempts = 1;
  let inFlight = 0;
  // Failed and skipped fetches do not use up max_pages, but they are bounded too.
  const maxAttempts = request.maxPages * 2 + 10;
  const aborted = new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));
  let wake: () => void = () => undefined;
  let changed = new Promise<void>((r) => (wake = r));
  const notify = () => {
    wake();
    changed = new Promise<void>((r) => (wake = r));
  };

  const worker = async () => {
    for (;;) {
      if (signal.aborted) return;
      if (succeeded + inFlight >= request.maxPages || attempts >= maxAttempts) return;
      const next = frontier.pop();
      if (!next) {
        if (inFlight === 0) return;
        await Promise.race([changed, aborted]);
        continue;
      }
      inFlight++;
      attempts++;
      try {
        await crawlOne(next.url, next.depth);
      } finally {
        inFlight--;
        notify();
      }
    }
  };

  const crawlOne = async (url: string, depth: number) => {
    let page: FetchedPage;
    try {
      const refusal = await robotsRefusal(url);
      if (refusal) {
        errors.push({ url, error: `not fetched: ${refusal}` });
        return;
      }
      await (await gateFor(url)).wait(signal);
      page = await source.fetchPage(url, signal, redirectCheck(false));
    } catch (err) {
      if (signal.aborted) throw err;
      // A redirect to a page crawled already is no error: that page is in the result once.
      if (!(err instanceof RedirectRefusedError && err.reason === ALREADY_CRAWLED)) errors.push({ url, error: describe(err) });
      return;
    }
    const final = normalizeUrl(page.finalUrl) ?? page.finalUrl;
    if (urlKey(final) !== urlKey(url)) {
      // The browser source follows redirects itself: where it ended up is checked afterwards.
      const refusal = isSameSite(final, siteKeys) ? await robotsRefusal(final).catch((err: unknown) => describe(err)) : 'it leads off the site';
      if (refusal) {
        errors.push({ url, error: `redirect to ${final} not used: ${refusal}` });
        return;
      }
      // The redirect's target is taken by this fetch (a queued entry of it is skipped), unless another fetch got there first.
      if (!frontier.claim(final)) return;
    }
    if (page.status < 200 || page.status >= 300) {
      record(page, depth, false, undefined);
      errors.push({ url, error: `HTTP ${page.status}` });
      return;
    }
    if (page.html === null) {
      errors.push({ url, error: `skipped: not an HTML page (Content-Type ${page.contentType || 'missing'})` });
      return;
    }
    if (succeeded >= request.maxPages) return;
    let facts: PageFacts;
    try {
      facts = analyse(page, false, region);
    } catch (err) {
      errors.push({ url, error: `page not readable: ${describe(err)}` });
      return;
    }
    succeeded++;
    record(page, depth, false, facts);
    enqueueLinks(facts, depth);
    // The links are in the frontier now; a 1,000-page crawl need not keep them all.
    facts.links = [];
    hooks.onPage?.({ pagesCrawled: succeeded, url: final });
  };

  // Every loop ends (on abort too) before the result is put together, so none adds to it afterwards.
  const ended = await Promise.allSettled(Array.from({ length: settings.concurrency }, worker));
  hooks.signal.throwIfAborted();
  const failed = ended.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed && !timeUp.aborted) throw failed.reason;
  if (timeUp.aborted) errors.push({ url: null, error: `crawl time limit of ${Math.round(request.timeLimitMs / 1000)} s reached after ${crawled.length} pages` });

  return assemble(request, start, startFinal, crawled, pages, errors, compendiumLevel);
}

/** Start page first, then contact-like pages, then by depth and URL: independent of fetch timing. */
function pageOrder(a: CrawledPage, b: CrawledPage): number {
  return Number(b.isStart) - Number(a.isStart) || Number(b.contactLike) - Number(a.contactLike) || a.depth - b.depth || a.entry.final_url.localeCompare(b.entry.final_url);
}

function assemble(request: CrawlRequest, start: string, startFinal: string, crawled: CrawledPage[], pages: PageEntry[], errors: CrawlError[], compendiumLevel: CleanupLevel | null): CrawlOutcome {
  const ordered = [...crawled].sort(pageOrder);
  const social = pickSocial(ordered.flatMap((p) => p.facts.social));
  const data: CrawlData = {
    url: request.url,
    final_url: startFinal,
    pages_crawled: ordered.length,
    emails: uniqueEmails(ordered.flatMap((p) => p.facts.emails)),
    phones: uniquePhones(ordered.flatMap((p) => p.facts.phones)),
    ...social,
    social_media: { ...social },
    company_info: mergeCompanyInfo(ordered.map((p) => p.facts.company)),
    team_members: request.extractTeam ? mergeTeam(ordered.map((p) => p.facts.team)) : [],
    pages: [...pages].sort((a, b) => (a.url === start ? -1 : b.url === start ? 1 : a.url.localeCompare(b.url))),
    errors,
  };
  if (!compendiumLevel) return { data };
  const compendiumPages: CompendiumPage[] = ordered.map((p) => ({ url: p.entry.final_url, title: p.facts.title, blocks: p.facts.compendium ?? [] }));
  const siteName = data.company_info.name ?? new URL(startFinal).hostname;
  return { data, compendium: buildCompendium(siteName, compendiumPages, compendiumLevel) };
}
