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

export async function fetchRobots(
  source: PageSource,
  origin: string,
  userAgent: string,
  signal: AbortSignal,
): Promise<RobotsRules> {
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
  const wellFormed = (r: unknown): r is ParsedRule =>
    typeof r === 'object' &&
    r !== null &&
    typeof (r as ParsedRule).pattern === 'string' &&
    typeof (r as ParsedRule).allow === 'boolean';
  return group.every(wellFormed) ? group : undefined;
}

/**
 * The matcher of one group, compiled once per robots.txt. RFC 9309 §2.2.2 as robots-parser reads it:
 * the longest matching pattern (its length as written, `*` and `$` included) wins, allow on a tie.
 * A file of many distinct `*` rules made a check scan the path for each segment of each rule (300+ ms
 * per check at 512 KiB), so one scan of the path finds the segments of all rules, and each rule then
 * looks its segments up among their occurrences.
 */
function compileGroup(robotsUrl: string, group: ParsedRule[]): (url: string) => boolean {
  // One rule per pattern: a repeated one costs nothing more, and of its lines an allow wins (the tie rule).
  const allowOf = new Map<string, boolean>();
  for (const { pattern, allow } of group) allowOf.set(pattern, allow || (allowOf.get(pattern) ?? false));
  // One entry per distinct segment, shared by the rules that have it.
  const segments = new Map<string, Segment>();
  // Longest first, allow first on a tie: the first rule that matches decides.
  const rules = [...allowOf]
    .sort(([a, aAllow], [b, bAllow]) => b.length - a.length || Number(bAllow) - Number(aAllow))
    .map(([pattern, allow]) => compileRule(pattern, allow, segments));
  const scan = segmentScanner([...segments.keys()]);
  const home = parseUrl(robotsUrl);
  return (url) => {
    const target = parseUrl(url);
    // Another origin (or no URL): robots-parser answers undefined, and that file's own rules decide.
    if (
      !home ||
      !target ||
      target.protocol !== home.protocol ||
      target.hostname !== home.hostname ||
      target.port !== home.port
    )
      return true;
    const path = urlEncodeToUpper(target.pathname + target.search);
    // Scanned when a rule first needs it: a prefix rule alone, or a failed `first`, needs no scan.
    let found: Occurrences | undefined;
    const occurrences = () => (found ??= scan(path));
    const rule = rules.find((r) => matchesPath(r, path, occurrences));
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
  middle: Segment[];
  end?: string;
  /** `$` and no `*`: the path is `first`. */
  exact: boolean;
}

/** A distinct middle segment of the group: its index in the scanner's list, and its length. */
interface Segment {
  id: number;
  length: number;
}

function compileRule(pattern: string, allow: boolean, segments: Map<string, Segment>): CompiledRule {
  // robots-parser reads `$` as the end of the path only as the pattern's last character.
  const anchored = pattern.endsWith('$');
  const parts = (anchored ? pattern.slice(0, -1) : pattern).split('*');
  const first = parts.shift() ?? '';
  const literal = first.length + parts.reduce((n, part) => n + part.length, 0);
  if (parts.length === 0) return { allow, literal, first, middle: [], exact: anchored };
  const end = anchored ? parts.pop() : undefined;
  const segment = (text: string): Segment => {
    let known = segments.get(text);
    if (!known) segments.set(text, (known = { id: segments.size, length: text.length }));
    return known;
  };
  return { allow, literal, first, middle: parts.filter((part) => part !== '').map(segment), end, exact: false };
}

/**
 * Whether the pattern matches the path. Each middle segment is taken at its leftmost occurrence after
 * the previous one: that is right for `*`, since it leaves the most path to the segments after it.
 * A rule costs its own length (and a binary search per segment), whatever the path's length.
 */
function matchesPath(rule: CompiledRule, path: string, occurrences: () => Occurrences): boolean {
  if (rule.literal > path.length || !path.startsWith(rule.first)) return false;
  if (rule.exact) return path.length === rule.first.length;
  if (rule.end !== undefined && !path.endsWith(rule.end)) return false;
  let at = rule.first.length;
  if (rule.middle.length > 0) {
    const found = occurrences();
    for (const seg of rule.middle) {
      const start = nextStart(found, seg.id, at);
      if (start < 0) return false;
      at = start + seg.length;
    }
  }
  return rule.end === undefined || path.length - rule.end.length >= at;
}

/** Where each segment occurs in one path: segment `id` starts at `starts[from[id]]` to `starts[from[id + 1] - 1]`, ascending. */
interface Occurrences {
  starts: Int32Array;
  from: Int32Array;
}

/** The first start of segment `id` at or after `at`, or -1 (a binary search of its starts). */
function nextStart({ starts, from }: Occurrences, id: number, at: number): number {
  const last = from[id + 1] as number;
  let lo = from[id] as number;
  let hi = last;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((starts[mid] as number) < at) lo = mid + 1;
    else hi = mid;
  }
  return lo < last ? (starts[lo] as number) : -1;
}

/**
 * An Aho-Corasick automaton of the segments `texts`: one pass over a path finds every occurrence of
 * every segment, in time linear in the path and the occurrences found (at most about 2M for 512 KiB
 * of segments against 2,048 characters), and not in the number of segments. A path is ASCII (the URL
 * parser percent-encodes the rest), so a segment with another character never occurs: it gets no node.
 */
function segmentScanner(texts: string[]): (path: string) => Occurrences {
  const size = 1 + texts.reduce((n, text) => n + text.length, 0);
  // Node 0 is the root, and 0 also means none: the root is no node's child, and no segment.
  // The root's children are in a table, since a path spends most of its characters there; the
  // others in a list (at most 128 of them).
  const root = new Int32Array(128);
  const firstChild = new Int32Array(size);
  const sibling = new Int32Array(size);
  const label = new Uint8Array(size);
  const depth = new Int32Array(size);
  /** The segment that the node spells, or -1. */
  const ends = new Int32Array(size).fill(-1);
  /** The longest proper suffix of the node that is a node. */
  const fail = new Int32Array(size);
  /** The longest proper suffix of the node that is a segment. */
  const out = new Int32Array(size);
  /** The longest segment that is a suffix of the node (the node itself, or `out`). */
  const hit = new Int32Array(size);
  const step = (node: number, c: number): number => {
    if (c >= 128) return 0;
    if (node === 0) return root[c] as number;
    for (let k = firstChild[node] as number; k !== 0; k = sibling[k] as number) if (label[k] === c) return k;
    return 0;
  };
  // Built a level at a time, so that a node's suffix links (to shallower nodes) can be set when it is made.
  let nodes = 1;
  const tip = new Int32Array(texts.length);
  let live = texts.flatMap((text, id) => (/^\p{ASCII}+$/u.test(text) ? [id] : []));
  for (let d = 0; live.length > 0; d++) {
    const longer: number[] = [];
    for (const id of live) {
      const text = texts[id] as string;
      const parent = tip[id] as number;
      const c = text.charCodeAt(d);
      let node = step(parent, c);
      if (node === 0) {
        node = nodes++;
        label[node] = c;
        depth[node] = d + 1;
        if (parent === 0) root[c] = node;
        else [sibling[node], firstChild[parent]] = [firstChild[parent] as number, node];
        let suffix = 0;
        for (let f = parent; f !== 0 && suffix === 0;) {
          f = fail[f] as number;
          suffix = step(f, c);
        }
        fail[node] = suffix;
        out[node] = hit[suffix] as number;
        hit[node] = out[node] as number;
      }
      tip[id] = node;
      if (d + 1 === text.length) [ends[node], hit[node]] = [id, node];
      else longer.push(id);
    }
    live = longer;
  }
  // The scans' buffers, reused: a check is synchronous, and done with its occurrences before the next one.
  const count = new Int32Array(texts.length + 1);
  const cursor = new Int32Array(texts.length);
  let hitAt = new Int32Array(0);
  let hitNode = new Int32Array(0);
  let starts = new Int32Array(0);
  return (path) => {
    if (hitAt.length < path.length) [hitAt, hitNode] = [new Int32Array(path.length), new Int32Array(path.length)];
    // Where segments end, with the automaton's node there, and how often each segment occurs (in count[id + 1]).
    let hits = 0;
    let total = 0;
    count.fill(0);
    for (let i = 0, node = 0; i < path.length; i++) {
      const c = path.charCodeAt(i);
      let next = step(node, c);
      while (next === 0 && node !== 0) {
        node = fail[node] as number;
        next = step(node, c);
      }
      node = next;
      if (hit[node] === 0) continue;
      [hitAt[hits], hitNode[hits]] = [i, node];
      hits++;
      for (let o = hit[node] as number; o !== 0; o = out[o] as number) {
        const id = ends[o] as number;
        count[id + 1] = (count[id + 1] as number) + 1;
        total++;
      }
    }
    // Then each segment's starts in a block of one array, in the order of the path.
    for (let id = 0; id < texts.length; id++) count[id + 1] = (count[id + 1] as number) + (count[id] as number);
    if (starts.length < total) starts = new Int32Array(total);
    cursor.set(count.subarray(0, texts.length));
    for (let h = 0; h < hits; h++) {
      const end = (hitAt[h] as number) + 1;
      for (let o = hit[hitNode[h] as number] as number; o !== 0; o = out[o] as number) {
        const id = ends[o] as number;
        starts[cursor[id] as number] = end - (depth[o] as number);
        cursor[id] = (cursor[id] as number) + 1;
      }
    }
    return { starts, from: count };
  };
}
