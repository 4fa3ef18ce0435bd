import { ApplicationFailure, Context } from '@temporalio/activity';
import { JobResultStore } from '../../db/repositories/job-results';
import { crawlSitePayload, type CrawlSitePayload } from '../../jobs/crawl-site';
import { HEARTBEAT_INTERVAL } from '../../jobs/limits';
import { parsePayload, type ActivityDeps, type JobActivityInput, type JobActivityOutput } from '../deps';
import { createLlmExtractor } from '../llm';
import { fillCompanyInfo, type AiCompanyOutcome } from './ai-company';
import { contentHash, estimateTokens, type CleanupLevel, type CompendiumObject } from './compendium';
import { crawl, CrawlFailedError, type CrawlData, type CrawlRequest, type PagePeople } from './crawler';
import { BrowserPageSource, HttpPageSource, type PageSource } from './fetch';
import { pageReaderOf } from './page-threads';

/**
 * The activity runs under a 5-minute startToClose (spec §8: site stage 5 min per business). The
 * crawl stops at 4.5 minutes at the latest, so that the compendium upload and the result save fit.
 */
export const CRAWL_TIME_LIMIT_MS = 270_000;

export function crawlRequest(payload: CrawlSitePayload): CrawlRequest {
  return {
    url: payload.url,
    maxPages: payload.max_pages,
    extractTeam: payload.extract_team,
    compendium: { enabled: payload.compendium.enabled, cleanupLevel: payload.compendium.cleanup_level },
    includePaths: payload.include_paths,
    excludePaths: payload.exclude_paths,
    respectRobots: payload.respect_robots,
    timeLimitMs: Math.min(payload.timeout_seconds * 1000, CRAWL_TIME_LIMIT_MS),
  };
}

export type SiteResultData = CrawlData & { compendium?: CompendiumObject };

/**
 * One crawl with the worker's settings, heartbeating every page and every half second, with the
 * compendium (when asked for) stored in the client's media bucket under its content hash. Shared by
 * the crawlSite job and the pipeline's site stage. Throws CrawlFailedError when the start page cannot
 * be crawled, and the signal's reason on a cancel (every fetch and render is aborted at once).
 */
export async function crawlAndStoreCompendium(
  deps: ActivityDeps,
  clientId: string,
  request: CrawlRequest,
  options: { renderJs: boolean },
): Promise<SiteResultData> {
  return (await crawlSiteData(deps, clientId, request, { ...options, storeCompendium: true })).data;
}

/**
 * crawlAndStoreCompendium that also hands back the compendium's Markdown (for the AI extraction);
 * with `storeCompendium: false` it is built (when the request asks for it) but not stored.
 */
export async function crawlSiteData(
  deps: ActivityDeps,
  clientId: string,
  request: CrawlRequest,
  options: { renderJs: boolean; storeCompendium: boolean },
): Promise<{ data: SiteResultData; markdown?: string; pagePeople: PagePeople[] }> {
  const { config } = deps;
  const ctx = Context.current();
  const pageOptions = {
    userAgent: config.SITE_USER_AGENT,
    pageTimeoutMs: config.SITE_PAGE_TIMEOUT_MS,
    maxPageBytes: config.SITE_MAX_PAGE_BYTES,
  };
  const source: PageSource = options.renderJs
    ? new BrowserPageSource(deps.http, config.CHROMIUM_PATH, pageOptions)
    : new HttpPageSource(deps.http, pageOptions);
  let progress = { pagesCrawled: 0, url: request.url };
  const beat = setInterval(() => ctx.heartbeat(progress), HEARTBEAT_INTERVAL.ms);
  try {
    ctx.heartbeat(progress);
    const outcome = await crawl(
      source,
      request,
      {
        userAgent: config.SITE_USER_AGENT,
        concurrency: config.SITE_CONCURRENCY_PER_HOST,
        delayMs: config.SITE_DELAY_MS,
        readPage: pageReaderOf(deps),
      },
      {
        signal: ctx.cancellationSignal,
        onPage: (p) => {
          progress = p;
          ctx.heartbeat(p);
        },
      },
    );
    const data: SiteResultData = { ...outcome.data };
    if (outcome.compendium !== undefined && options.storeCompendium) {
      data.compendium = await storeCompendium(
        deps,
        clientId,
        outcome.compendium,
        outcome.data.final_url,
        request.compendium.cleanupLevel,
      );
    }
    return { data, markdown: outcome.compendium, pagePeople: outcome.pagePeople };
  } finally {
    clearInterval(beat);
    await source.close();
  }
}

/** The Markdown compendium in the client's media bucket; its key is its content hash, so a retry stores the same object. */
async function storeCompendium(
  deps: ActivityDeps,
  clientId: string,
  markdown: string,
  finalUrl: string,
  cleanupLevel: CleanupLevel,
): Promise<CompendiumObject> {
  const hash = contentHash(markdown);
  const host = new URL(finalUrl).hostname.replace(/[^a-z0-9.-]/gi, '-');
  const filename = `${host}-compendium.md`;
  const stored = await deps.storage.put(
    clientId,
    `compendium/${hash}/${filename}`,
    markdown,
    'text/markdown; charset=utf-8',
  );
  return {
    available: true,
    chars: markdown.length,
    cleanup_level: cleanupLevel,
    storage_location: `s3://${stored.bucket}/${stored.key}`,
    download_url: stored.url,
    filename,
    size_bytes: stored.size,
    content_hash: stored.contentHash,
    estimated_tokens: estimateTokens(markdown.length),
  };
}

/** Heartbeats every half second while `fn` runs (an LLM answer can take most of a minute). */
async function withHeartbeat<T>(fn: () => Promise<T>): Promise<T> {
  const ctx = Context.current();
  ctx.heartbeat({ step: 'ai_extraction' });
  const beat = setInterval(() => ctx.heartbeat({ step: 'ai_extraction' }), HEARTBEAT_INTERVAL.ms);
  try {
    return await fn();
  } finally {
    clearInterval(beat);
  }
}

export function createSiteActivities(deps: ActivityDeps) {
  const extractor = createLlmExtractor(deps);
  /**
   * crawlSite job: crawls the site of `payload.url`, stores the result (and the compendium in the
   * client's media bucket), returns the number of pages crawled. Heartbeats every page and every
   * second; a cancel aborts every fetch and render at once. Idempotent: a retry stores the same
   * result row and the same compendium object (its key is its content hash). A start page that
   * cannot be crawled is a non-retryable failure whose message becomes the job's error_message.
   */
  async function crawlSite(input: JobActivityInput): Promise<JobActivityOutput> {
    const payload = parsePayload(crawlSitePayload, input.payload);
    const request = crawlRequest(payload);
    if (payload.ai_extraction) {
      // The model reads the compendium (built even when not asked to be stored), and its call needs room in the 5 minutes.
      request.compendium = {
        enabled: true,
        cleanupLevel: payload.compendium.enabled ? payload.compendium.cleanup_level : 'fit',
      };
      request.timeLimitMs = Math.min(request.timeLimitMs, CRAWL_TIME_LIMIT_MS - deps.config.LLM_TIMEOUT_MS);
      // LLM_TIMEOUT_MS is at most 2 minutes (lib/config.ts), so the crawl keeps at least 2.5 of its 4.5.
    }
    const { data, markdown } = await crawlSiteData(deps, input.clientId, request, {
      renderJs: payload.render_js,
      storeCompendium: payload.compendium.enabled,
    }).catch((err: unknown) => {
      if (err instanceof CrawlFailedError) throw ApplicationFailure.nonRetryable(err.message, err.type);
      throw err;
    });
    const result: SiteResultData & { ai_extraction?: AiCompanyOutcome['ai'] } = data;
    if (payload.ai_extraction) {
      const filled = await withHeartbeat(() =>
        fillCompanyInfo(
          extractor,
          input.clientId,
          markdown ?? '',
          data.company_info,
          Context.current().cancellationSignal,
          deps.config.LLM_TIMEOUT_MS,
        ),
      );
      result.company_info = filled.companyInfo;
      if (filled.ai) result.ai_extraction = filled.ai;
      if (filled.error) result.errors = [...result.errors, { url: null, error: filled.error }];
    }
    await new JobResultStore(deps.db, deps.storage).save(input.jobId, result);
    return { resultsCount: data.pages_crawled };
  }

  return { crawlSite };
}
