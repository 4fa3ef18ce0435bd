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
  return parseRobots(url, res.text, userAgent);
}

/**
 * The rules of the robots.txt at `url` for `userAgent`. robots-parser reads the file (groups, agent
 * selection, Crawl-delay, Sitemap, percent-encoding), but its rules are matched here: the library's
 * matcher costs O(pattern x path) for every rule of the group, and a hostile 512 KiB file made it
 * take 18 s per URL.
 */
export function parseRobots(url: string, text: string, userAgent: string): RobotsRules {
  const robots = robotsParser(url, text);
  const delay = robots.getCrawlDelay(userAgent);
  const group = groupOf(robots, userAgent);
  return {
    // robots-parser answers undefined for URLs of another origin; those are judged by their own file.
    allowed: group ? compileGroup(url, group) : (u) => robots.isAllowed(u, userAgent) !== false,
    crawlDelayMs: delay !== undefined && Number.isFinite(delay) ? delay * 1000 : undefined,
    sitemaps: robots.getSitemaps(),
  };
}

interface ParsedRule {
  /** Normalised by robots-parser: percent-encoded, escapes in upper case. */
  pattern: string;
  allow: boolean;
}

/**
 * The rules robots-parser chose for `userAgent` (its group, else `*`'s, else none), read from the
 * instance's `_rules`, since no public method lists them (test/unit/site-robots.test.ts pins that
 * shape). Undefined if the shape is not as expected: the library then matches, slowly but right.
 */
function groupOf(robots: object, userAgent: string): ParsedRule[] | undefined {
  const groups = (robots as { _rules?: unknown })._rules;
  if (typeof groups !== 'object' || groups === null) return undefined;
  // robots-parser's formatUserAgent: the product token in lower case.
  const agent = userAgent.toLowerCase().split('/')[0]?.trim() ?? '';
  const byAgent = groups as Record<string, unknown>;
  const group = byAgent[agent] ?? byAgent['*'] ?? [];
  if (!Array.isArray(group)) return undefined;
  const wellFormed = (r: unknown): r is ParsedRule => typeof r === 'object' && r !== null && typeof (r as ParsedRule).pattern === 'string' && typeof (r as ParsedRule).allow === 'boolean';
  return group.every(wellFormed) ? group : undefined;
}

/**
 * The matcher of one group, compiled once per robots.txt. RFC 9309 §2.2.2 as robots-parser reads it:
 * the longest matching pattern (its length as written, `*` and `$` included) wins, allow on a tie.
 */
function compileGroup(robotsUrl: string, group: ParsedRule[]): (url: string) => boolean {
  // One rule per pattern: a repeated one costs nothing more, and of its lines an allow wins (the tie rule).
  const allowOf = new Map<string, boolean>();
  for (const { pattern, allow } of group) allowOf.set(pattern, allow || (allowOf.get(pattern) ?? false));
  // Longest first, allow first on a tie: the first rule that matches decides.
  const rules = [...allowOf].sort(([a, aAllow], [b, bAllow]) => b.length - a.length || Number(bAllow) - Number(aAllow)).map(([pattern, allow]) => compileRule(pattern, allow));
  const home = parseUrl(robotsUrl);
  return (url) => {
    const target = parseUrl(url);
    // Another origin (or no URL): robots-parser answers undefined, and that file's own rules decide.
    if (!home || !target || target.protocol !== home.protocol || target.hostname !== home.hostname || target.port !== home.port) return true;
    const path = urlEncodeToUpper(target.pathname + target.search);
    const rule = rules.find((r) => matchesPath(r, path));
    return rule ? rule.allow : true;
  };
}

/** As robots-parser's parseUrl: a relative URL lands on a host that no robots.txt is for. */
function parseUrl(url: string): URL | undefined {
  try {
    return new URL(url, 'http://robots-relative.samclarke.com/');
  } catch {
    return undefined;
  }
}

/** As robots-parser's urlEncodeToUpper, which it applies to paths and patterns alike. */
function urlEncodeToUpper(path: string): string {
  return path.replace(/%[0-9a-fA-F]{2}/g, (escape) => escape.toUpperCase());
}

/**
 * A pattern as its literal segments between `*`s: the path starts with `first`, each of `middle`
 * follows the previous one, and with a final `$` the path ends with `end` (after them).
 */
interface CompiledRule {
  allow: boolean;
  /** Characters a matching path has at least: the pattern without its `*`s and final `$`. */
  literal: number;
  first: string;
  middle: Needle[];
  end?: string;
  /** `$` and no `*`: the path is `first`. */
  exact: boolean;
}

/** A segment with its KMP failure table, so that a search is linear in the path whatever the texts. */
interface Needle {
  text: string;
  fail: Int32Array;
}

function needle(text: string): Needle {
  const fail = new Int32Array(text.length);
  for (let i = 1, k = 0; i < text.length; i++) {
    while (k > 0 && text.charCodeAt(i) !== text.charCodeAt(k)) k = fail[k - 1] as number;
    if (text.charCodeAt(i) === text.charCodeAt(k)) k++;
    fail[i] = k;
  }
  return { text, fail };
}

/**
 * Where `n` first occurs in `s` at or after `from`, or -1 (Knuth-Morris-Pratt). Not String#indexOf
 * with the whole needle: V8 does not promise it linear time for needles like `aaaa...b` in `aaaa...`.
 */
function indexOf(s: string, n: Needle, from: number): number {
  const { text, fail } = n;
  const head = text.charAt(0);
  for (let i = from, k = 0; i < s.length; i++) {
    if (k === 0) {
      // On to where the needle could start: a one-character search reads each character once, and fast.
      i = s.indexOf(head, i);
      if (i < 0) return -1;
    }
    const c = s.charCodeAt(i);
    while (k > 0 && c !== text.charCodeAt(k)) k = fail[k - 1] as number;
    if (c === text.charCodeAt(k)) k++;
    if (k === text.length) return i - k + 1;
  }
  return -1;
}

function compileRule(pattern: string, allow: boolean): CompiledRule {
  // robots-parser reads `$` as the end of the path only as the pattern's last character.
  const anchored = pattern.endsWith('$');
  const segments = (anchored ? pattern.slice(0, -1) : pattern).split('*');
  const first = segments.shift() ?? '';
  const literal = first.length + segments.reduce((n, seg) => n + seg.length, 0);
  if (segments.length === 0) return { allow, literal, first, middle: [], exact: anchored };
  const end = anchored ? segments.pop() : undefined;
  return { allow, literal, first, middle: segments.filter((seg) => seg !== '').map(needle), end, exact: false };
}

/**
 * Whether the pattern matches the path, in time linear in both. Each middle segment is taken at its
 * leftmost occurrence: that is right for `*`, since it leaves the most path to the segments after it.
 */
function matchesPath(rule: CompiledRule, path: string): boolean {
  if (rule.literal > path.length || !path.startsWith(rule.first)) return false;
  if (rule.exact) return path.length === rule.first.length;
  let at = rule.first.length;
  for (const seg of rule.middle) {
    const found = indexOf(path, seg, at);
    if (found < 0) return false;
    at = found + seg.text.length;
  }
  return rule.end === undefined || (path.length - rule.end.length >= at && path.endsWith(rule.end));
}
