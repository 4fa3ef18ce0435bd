import robotsParser from 'robots-parser';
import type { PageSource } from './fetch';

/**
 * robots.txt per origin (RFC 9309), read once per crawl and matched against the declared
 * SITE_USER_AGENT (its product token, e.g. `leadjobs-crawler`, or the `*` group):
 *   2xx          the rules apply;
 *   4xx          no rules: everything is allowed (the RFC's "unavailable");
 *   5xx          everything is disallowed (the RFC's "unreachable": the site may be overloaded).
 * A network failure (DNS, refused, TLS, timeout, blocked) is thrown: the page fetch would fail the same way.
 */
export interface RobotsRules {
  allowed(url: string): boolean;
  /** Crawl-delay for our agent, in ms. */
  crawlDelayMs: number | undefined;
  sitemaps: string[];
  /** Why everything is disallowed (5xx), for the job's error message. */
  disallowAllReason?: string;
}

const ALLOW_ALL: RobotsRules = { allowed: () => true, crawlDelayMs: undefined, sitemaps: [] };
// RFC 9309 §2.5: parse at least 500 KiB; larger files are cut there.
const MAX_ROBOTS_BYTES = 512 * 1024;

export async function fetchRobots(source: PageSource, origin: string, userAgent: string, signal: AbortSignal): Promise<RobotsRules> {
  const url = `${origin}/robots.txt`;
  const res = await source.fetchFile(url, signal, MAX_ROBOTS_BYTES);
  if (res.status >= 500) {
    const reason = `robots.txt of ${origin} answered HTTP ${res.status}; RFC 9309 treats an unreachable robots.txt as disallowing everything`;
    return { allowed: () => false, crawlDelayMs: undefined, sitemaps: [], disallowAllReason: reason };
  }
  if (res.status < 200 || res.status >= 300) return ALLOW_ALL;
  const robots = robotsParser(url, res.text);
  const delay = robots.getCrawlDelay(userAgent);
  return {
    // robots-parser answers undefined for URLs of another origin; those are judged by their own file.
    allowed: (u) => robots.isAllowed(u, userAgent) !== false,
    crawlDelayMs: delay !== undefined && Number.isFinite(delay) ? delay * 1000 : undefined,
    sitemaps: robots.getSitemaps(),
  };
}
