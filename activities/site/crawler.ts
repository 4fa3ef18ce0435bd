import type { CountryCode } from 'libphonenumber-js';
import { MAX_CRAWL_URL_LENGTH } from '../../jobs/fields';
import { uniqueEmails } from '../../lib/emails';
import { BlockedAddressError, OutboundError } from '../../lib/outbound';
import { uniquePhones, type PhoneRecord } from '../../lib/phones';
import { sleep } from '../../lib/sleep';
import { buildCompendium, type CleanupLevel, type CompendiumPage } from './compendium';
import { isServicesPage, mergeCompanyInfo, type CompanyInfo } from './extract/company';
import { pickSocial, type SocialLinks } from './extract/social';
import { mergeTeam, type TeamMember } from './extract/team';
import { RedirectRefusedError, type FetchedPage, type PageSource, type RedirectCheck } from './fetch';
import { Frontier } from './frontier';
import type { PageFacts } from './page';
import { readOnLoop, type PageReader } from './page-threads';
import { fetchRobots, type RobotsRules } from './robots';
import { sitemapUrls } from './sitemap';
import {
  isContactLike,
  isSameSite,
  looksLikePage,
  normalizeUrl,
  pathFilter,
  siteKey,
  URL_TOO_LONG,
  urlKey,
} from './urls';

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
  /** How a fetched page is read (processPage): the worker's page threads, or by default this event loop. */
  readPage?: PageReader;
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
  /** What each crawled page yielded about people, in page order (crawlPeople cites its sources with it). */
  pagePeople: PagePeople[];
}

/** The team members and social links one page showed. */
export interface PagePeople {
  url: string;
  team: TeamMember[];
  social: string[];
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

/**
 * The politeness gate of one site: at most one request start per `delayMs`. `request` is started
 * in the same turn as its time is taken, and the pause runs from when the previous one actually
 * started (a loop that woke late does not shorten the next pause), on the monotonic clock. Loops
 * that wake together take turns: one goes, the others wait again.
 */
class Gate {
  private last = -Infinity;
  constructor(public delayMs: number) {}

  async start<T>(signal: AbortSignal, request: () => Promise<T>): Promise<T> {
    for (;;) {
      const now = performance.now();
      const due = this.last + this.delayMs;
      if (now >= due) {
        this.last = now;
        return request();
      }
      await sleep(due - now, signal);
    }
  }
}

/** The message a user reads for a failed fetch. */
function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function failureType(err: unknown): string {
  if (err instanceof OutboundError) {
    const types: Record<string, string> = {
      dns: 'DnsFailure',
      refused: 'Unreachable',
      network: 'Unreachable',
      timeout: 'Timeout',
      tls: 'TlsError',
      blocked: 'BlockedAddress',
      too_large: 'PageTooLarge',
      protocol: 'InvalidResponse',
    };
    return types[err.kind] ?? 'Unreachable';
  }
  if (err instanceof RedirectRefusedError) return err.reason === URL_TOO_LONG ? 'UrlTooLong' : 'RobotsDisallowed';
  return 'CrawlFailed';
}

export async function crawl(
  source: PageSource,
  request: CrawlRequest,
  settings: CrawlSettings,
  hooks: CrawlHooks,
): Promise<CrawlOutcome> {
  const cancel = hooks.signal;
  const timeLimit = new AbortController();
  const timer = setTimeout(() => timeLimit.abort(new Error('time limit')), request.timeLimitMs);
  const signal = AbortSignal.any([cancel, timeLimit.signal]);
  try {
    return await new SiteCrawl(source, request, settings, hooks, signal, timeLimit.signal).run();
  } catch (err) {
    if (cancel.aborted) throw cancel.reason;
    if (timeLimit.signal.aborted && !(err instanceof CrawlFailedError)) {
      throw new CrawlFailedError(
        `${request.url} could not be crawled within the time limit of ${Math.round(request.timeLimitMs / 1000)} s`,
        'Timeout',
      );
    }
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/** The start page as fetched, and where it ended up (normalised). */
interface StartPage {
  page: FetchedPage;
  final: string;
}

/**
 * One crawl: its state (the site's hosts, the frontier, robots.txt and politeness gates per site,
 * what was crawled) and its steps, which run() takes in order. `signal` stops everything (cancel
 * or time limit); `timeUp` tells the time limit apart, since its result is what was crawled by then.
 */
class SiteCrawl {
  private readonly start: string;
  /** The siteKeys of the start URL and of where it ended up: every followed URL belongs to one. */
  private readonly siteKeys: Set<string>;
  private readonly wanted: (url: string) => boolean;
  private readonly compendiumLevel: CleanupLevel | null;
  private readonly frontier = new Frontier();
  private readonly gates = new Map<string, Gate>();
  private readonly robotsByOrigin = new Map<string, Promise<RobotsRules>>();
  private readonly errors: CrawlError[] = [];
  private readonly crawled: CrawledPage[] = [];
  private readonly pages: PageEntry[] = [];
  /** The start page's region (guessed from it) is the whole crawl's. */
  private region: CountryCode | undefined;
  /** Pages with content, fetches started, pages fetching or fetched and not read yet (the start page included). */
  private succeeded = 0;
  private attempts = 0;
  private inFlight = 0;
  /** Fetched pages waiting for their turn to be read (at most `concurrency`), and the reads in turn. */
  private unread = 0;
  private reading: Promise<void> = Promise.resolve();
  /** What a read threw, if one did: the crawl fails with it, as with a failed loop. */
  private readFailure: { reason: unknown } | undefined;
  /** Resolves whenever a fetch ends, so that idle loops look at the frontier again. */
  private wake: () => void = () => undefined;
  private changed = new Promise<void>((r) => (this.wake = r));

  constructor(
    private readonly source: PageSource,
    private readonly request: CrawlRequest,
    private readonly settings: CrawlSettings,
    private readonly hooks: CrawlHooks,
    private readonly signal: AbortSignal,
    private readonly timeUp: AbortSignal,
  ) {
    const start = normalizeUrl(request.url);
    if (!start) throw new CrawlFailedError(`${request.url} is not an http(s) URL`, 'InvalidInput');
    this.start = start;
    this.siteKeys = new Set([siteKey(new URL(start).hostname)]);
    this.wanted = pathFilter(request.includePaths, request.excludePaths);
    this.compendiumLevel = request.compendium.enabled ? request.compendium.cleanupLevel : null;
  }

  async run(): Promise<CrawlOutcome> {
    const start = await this.fetchStartPage();
    const startFacts = await this.takeStartPage(start);
    // Sitemaps seed the frontier as if the start page linked them; then the start page's own links.
    await this.seedFromSitemaps(start.final);
    this.followLinks(startFacts, 0);
    const ended = await this.workFrontier();
    return this.finish(start.final, ended);
  }

  // ---- the start page: any failure here fails the crawl --------------------------------------

  private async fetchStartPage(): Promise<StartPage> {
    const { start } = this;
    let page: FetchedPage;
    try {
      const refusal = await this.robotsRefusal(start);
      if (refusal) throw new CrawlFailedError(`${start} may not be crawled: ${refusal}`, 'RobotsDisallowed');
      const gate = await this.gateFor(start);
      page = await gate.start(this.signal, () => {
        this.attempts++;
        return this.source.fetchPage(start, this.signal, this.redirectCheck(true));
      });
    } catch (err) {
      if (this.signal.aborted || err instanceof CrawlFailedError) throw err;
      throw new CrawlFailedError(`${start} could not be crawled: ${describe(err)}`, failureType(err));
    }
    const final = normalizeUrl(page.finalUrl) ?? start;
    this.siteKeys.add(siteKey(new URL(final).hostname));
    if (page.status >= 400)
      throw new CrawlFailedError(`${start} could not be crawled: the site answered HTTP ${page.status}`, 'HttpError');
    if (page.html === null)
      throw new CrawlFailedError(
        `${start} is not an HTML page (Content-Type ${page.contentType || 'missing'})`,
        'NotHtml',
      );
    return { page, final };
  }

  /** The start page is the crawl's first result; its facts give the region of every other page. */
  private async takeStartPage({ page, final }: StartPage): Promise<PageFacts> {
    this.frontier.claim(this.start);
    this.frontier.claim(final);
    const facts = await this.analyse(page, true);
    this.region = facts.region;
    this.succeeded++;
    this.record(page, 0, true, facts);
    this.hooks.onPage?.({ pagesCrawled: this.succeeded, url: final });
    return facts;
  }

  private async seedFromSitemaps(startFinal: string): Promise<void> {
    if (this.timeUp.aborted) return;
    try {
      const origin = new URL(startFinal).origin;
      const declared = this.request.respectRobots ? (await this.readRobots(origin)).sitemaps : [];
      for (const u of await sitemapUrls(this.source, origin, declared, this.signal, this.errors)) {
        const url = normalizeUrl(u);
        if (url && this.follows(url)) this.frontier.push(url, 1);
      }
    } catch (err) {
      if (!this.timeUp.aborted) throw err;
    }
  }

  // ---- the frontier --------------------------------------------------------------------------

  /** `concurrency` loops work the frontier; every one has ended (on abort too), and every fetched page is read, when this resolves. */
  private async workFrontier(): Promise<PromiseSettledResult<void>[]> {
    const aborted = new Promise<void>((r) => this.signal.addEventListener('abort', () => r(), { once: true }));
    const ended = await Promise.allSettled(
      Array.from({ length: this.settings.concurrency }, () => this.worker(aborted)),
    );
    await this.reading;
    return this.readFailure ? [...ended, { status: 'rejected', reason: this.readFailure.reason }] : ended;
  }

  private async worker(aborted: Promise<void>): Promise<void> {
    // Failed and skipped fetches do not use up max_pages, but they are bounded too.
    const maxAttempts = this.request.maxPages * 2 + 10;
    for (;;) {
      if (this.signal.aborted) return;
      if (this.succeeded + this.inFlight >= this.request.maxPages || this.attempts >= maxAttempts) return;
      const next = this.frontier.pop();
      if (!next) {
        if (this.inFlight === 0) return;
        await Promise.race([this.changed, aborted]);
        continue;
      }
      this.inFlight++;
      this.attempts++;
      let handedOn = false;
      try {
        const page = await this.fetchPage(next.url);
        if (page) handedOn = this.readLater(next.url, next.depth, page);
      } finally {
        if (!handedOn) {
          this.inFlight--;
          this.notify();
        }
      }
      // Fetching runs ahead of reading by at most `concurrency` pages.
      while (this.unread >= this.settings.concurrency && !this.signal.aborted)
        await Promise.race([this.changed, aborted]);
    }
  }

  /**
   * A fetched page is read in its turn, and its loop fetches the next one meanwhile: reading (the
   * parse and every extractor, milliseconds of CPU a page) is not on the critical path of any
   * fetch, so `concurrency` requests stay on the wire while pages are read. Pages are read one at a
   * time in the order they arrived, each after a turn of the event loop (answers that came in and
   * requests that are due go first). Its fetch counts as in flight until the page is read.
   */
  private readLater(url: string, depth: number, page: FetchedPage): true {
    this.unread++;
    // A page with content starts being read at once (on a page thread, several at a time); the
    // outcomes are taken in arrival order. One dropped below (a redirect refused) is read for nothing.
    const facts = page.status >= 200 && page.status < 300 && page.html !== null ? this.analyse(page, false) : undefined;
    facts?.catch(() => undefined);
    this.reading = this.reading.then(async () => {
      await new Promise<void>((resolve) => setImmediate(resolve));
      try {
        if (!this.readFailure) await this.handlePage(url, depth, page, facts);
      } catch (reason) {
        this.readFailure = { reason };
      } finally {
        this.unread--;
        this.inFlight--;
        this.notify();
      }
    });
    return true;
  }

  private notify(): void {
    this.wake();
    this.changed = new Promise<void>((r) => (this.wake = r));
  }

  /** A frontier page, within robots.txt and the politeness gate; undefined (and a noted error) when it could not be fetched. */
  private async fetchPage(url: string): Promise<FetchedPage | undefined> {
    try {
      const refusal = await this.robotsRefusal(url);
      if (refusal) {
        this.errors.push({ url, error: `not fetched: ${refusal}` });
        return undefined;
      }
      const gate = await this.gateFor(url);
      return await gate.start(this.signal, () => this.source.fetchPage(url, this.signal, this.redirectCheck(false)));
    } catch (err) {
      if (this.signal.aborted) throw err;
      // A redirect to a page crawled already is no error: that page is in the result once.
      if (!(err instanceof RedirectRefusedError && err.reason === ALREADY_CRAWLED))
        this.errors.push({ url, error: describe(err) });
      return undefined;
    }
  }

  /** A fetched frontier page: where it ended up is checked, then it is read, recorded and its links followed. */
  private async handlePage(
    url: string,
    depth: number,
    page: FetchedPage,
    reading: Promise<PageFacts> | undefined,
  ): Promise<void> {
    const { errors } = this;
    const final = normalizeUrl(page.finalUrl) ?? page.finalUrl;
    if (urlKey(final) !== urlKey(url)) {
      // The browser source follows redirects (and scripts' navigations) itself: where it ended up is checked afterwards.
      const refusal = !isSameSite(final, this.siteKeys)
        ? 'it leads off the site'
        : final.length > MAX_CRAWL_URL_LENGTH
          ? URL_TOO_LONG
          : (this.pathRefusal(final) ?? (await this.robotsRefusal(final).catch((err: unknown) => describe(err))));
      if (refusal) {
        errors.push({ url, error: `redirect to ${final} not used: ${refusal}` });
        return;
      }
      // The redirect's target is taken by this fetch (a queued entry of it is skipped), unless another fetch got there first.
      if (!this.frontier.claim(final)) return;
    }
    if (page.status < 200 || page.status >= 300) {
      this.record(page, depth, false, undefined);
      errors.push({ url, error: `HTTP ${page.status}` });
      return;
    }
    if (page.html === null) {
      errors.push({ url, error: `skipped: not an HTML page (Content-Type ${page.contentType || 'missing'})` });
      return;
    }
    if (this.succeeded >= this.request.maxPages) return;
    let facts: PageFacts;
    try {
      facts = await (reading ?? this.analyse(page, false));
    } catch (err) {
      errors.push({ url, error: `page not readable: ${describe(err)}` });
      return;
    }
    this.succeeded++;
    this.record(page, depth, false, facts);
    this.followLinks(facts, depth);
    this.hooks.onPage?.({ pagesCrawled: this.succeeded, url: final });
  }

  // ---- the end -------------------------------------------------------------------------------

  /** Cancel and failures of the loops end the crawl; the time limit leaves what was crawled by then, with a note. */
  private finish(startFinal: string, ended: PromiseSettledResult<void>[]): CrawlOutcome {
    this.hooks.signal.throwIfAborted();
    const failed = ended.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed && !this.timeUp.aborted) throw failed.reason;
    if (this.timeUp.aborted)
      this.errors.push({
        url: null,
        error: `crawl time limit of ${Math.round(this.request.timeLimitMs / 1000)} s reached after ${this.crawled.length} pages`,
      });
    return assemble(this.request, this.start, startFinal, this.crawled, this.pages, this.errors, this.compendiumLevel);
  }

  // ---- what every step shares ----------------------------------------------------------------

  /** The start page's region applies to every later page; the start page is read without one. */
  private analyse(page: FetchedPage, isStart: boolean): Promise<PageFacts> {
    const final = normalizeUrl(page.finalUrl) ?? page.finalUrl;
    const path = new URL(final).pathname;
    const read = this.settings.readPage ?? readOnLoop;
    return read(
      page.html as string,
      final,
      {
        region: this.region,
        extractTeam: this.request.extractTeam,
        teamPage: /team|about|people|staff|leadership|management|ueber|über|who-we-are|unternehmen/i.test(path),
        companyPage: isStart || isContactLike(final) || isServicesPage(final),
        compendium: this.compendiumLevel,
      },
      // A cancel stops a read; the time limit does not: a page fetched by then is read (milliseconds) and kept.
      this.hooks.signal,
    );
  }

  private record(page: FetchedPage, depth: number, isStart: boolean, facts: PageFacts | undefined): void {
    const final = normalizeUrl(page.finalUrl) ?? page.finalUrl;
    const entry: PageEntry = { url: page.url, final_url: final, status: page.status, title: facts?.title ?? null };
    if (page.redirectChain.length > 1) entry.redirect_chain = page.redirectChain;
    this.pages.push(entry);
    if (facts) this.crawled.push({ entry, facts, depth, contactLike: isContactLike(final), isStart });
  }

  /** Same-site page links into the frontier (unless the page says nofollow). */
  private followLinks(facts: PageFacts, depth: number): void {
    if (!(facts.nofollow && this.request.respectRobots)) {
      for (const link of facts.links) if (this.follows(link)) this.frontier.push(link, depth + 1);
    }
    // The links are in the frontier now; a 1,000-page crawl need not keep them all.
    facts.links = [];
  }

  /** Whether a link or sitemap URL joins the frontier; those left out are skipped without a note, as they are many. */
  private follows(url: string): boolean {
    // The length first: the checks after it cost in proportion to it.
    return (
      url.length <= MAX_CRAWL_URL_LENGTH && isSameSite(url, this.siteKeys) && looksLikePage(url) && this.wanted(url)
    );
  }

  private readRobots(origin: string): Promise<RobotsRules> {
    let rules = this.robotsByOrigin.get(origin);
    if (!rules)
      this.robotsByOrigin.set(origin, (rules = fetchRobots(this.source, origin, this.settings.userAgent, this.signal)));
    return rules;
  }

  /**
   * Why the payload's include_paths / exclude_paths leave a URL out, or undefined. Links are
   * filtered before they enter the frontier; this is for where redirects lead.
   */
  private pathRefusal(url: string): string | undefined {
    const { includePaths, excludePaths } = this.request;
    if (this.wanted(url)) return undefined;
    const glob = excludePaths.find((g) => pathFilter([g], [])(url));
    if (glob !== undefined) return `its path matches exclude_paths "${glob}"`;
    // A path that cannot be decoded matches no glob: only include_paths can leave it out.
    return includePaths.length ? 'its path matches none of include_paths' : undefined;
  }

  /** Why a URL may not be fetched under robots.txt, or undefined. */
  private async robotsRefusal(url: string): Promise<string | undefined> {
    if (!this.request.respectRobots) return undefined;
    const origin = new URL(url).origin;
    const rules = await this.readRobots(origin).catch((err: unknown) => {
      // The guard refused the host itself: say so for the page, not for its robots.txt.
      if (err instanceof BlockedAddressError) throw new BlockedAddressError(url, err.address, err.reason);
      throw err;
    });
    if (rules.disallowAllReason) return rules.disallowAllReason;
    return rules.allowed(url)
      ? undefined
      : `robots.txt of ${origin} disallows it for ${this.settings.userAgent.split('/')[0]}`;
  }

  /** The politeness gate of the URL's site, paced by SITE_DELAY_MS or robots.txt's Crawl-delay (at most 5 s). */
  private async gateFor(url: string): Promise<Gate> {
    const key = siteKey(new URL(url).hostname);
    let gate = this.gates.get(key);
    if (!gate) {
      const crawlDelay = this.request.respectRobots
        ? (await this.readRobots(new URL(url).origin)).crawlDelayMs
        : undefined;
      gate =
        this.gates.get(key) ?? new Gate(Math.max(this.settings.delayMs, Math.min(crawlDelay ?? 0, MAX_CRAWL_DELAY_MS)));
      this.gates.set(key, gate);
    }
    return gate;
  }

  /**
   * Redirects stay on the site, within the URL length, the path filters and robots.txt, and do not
   * fetch a page that is crawled already. The start page may move to another host (it becomes the site)
   * and to any path (it is crawled whatever the filters say).
   */
  private redirectCheck(isStart: boolean): RedirectCheck {
    return async (url) => {
      const normalized = normalizeUrl(url);
      if (!normalized) return undefined; // the client refuses other schemes with its own message
      if (!isStart && !isSameSite(normalized, this.siteKeys)) return 'it leads off the site';
      if (normalized.length > MAX_CRAWL_URL_LENGTH) return URL_TOO_LONG;
      if (this.frontier.taken(normalized)) return ALREADY_CRAWLED;
      return (isStart ? undefined : this.pathRefusal(normalized)) ?? this.robotsRefusal(normalized);
    };
  }
}

/** Start page first, then contact-like pages, then by depth and URL: independent of fetch timing. */
function pageOrder(a: CrawledPage, b: CrawledPage): number {
  return (
    Number(b.isStart) - Number(a.isStart) ||
    Number(b.contactLike) - Number(a.contactLike) ||
    a.depth - b.depth ||
    a.entry.final_url.localeCompare(b.entry.final_url)
  );
}

function assemble(
  request: CrawlRequest,
  start: string,
  startFinal: string,
  crawled: CrawledPage[],
  pages: PageEntry[],
  errors: CrawlError[],
  compendiumLevel: CleanupLevel | null,
): CrawlOutcome {
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
  const pagePeople = ordered.map((p) => ({ url: p.entry.final_url, team: p.facts.team, social: p.facts.social }));
  if (!compendiumLevel) return { data, pagePeople };
  const compendiumPages: CompendiumPage[] = ordered.map((p) => ({
    url: p.entry.final_url,
    title: p.facts.title,
    blocks: p.facts.compendium ?? [],
  }));
  const siteName = data.company_info.name ?? new URL(startFinal).hostname;
  return { data, pagePeople, compendium: buildCompendium(siteName, compendiumPages, compendiumLevel) };
}
