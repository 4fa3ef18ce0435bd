import { isContactLike, urlKey } from './urls';

export interface FrontierEntry {
  url: string;
  depth: number;
  contactLike: boolean;
}

/**
 * The crawl frontier: breadth-first by link depth, except that pages likely to hold contacts
 * (contact, about, team, imprint, legal) go first at any depth. Every URL is admitted once, by
 * urlKey, so a page linked as /team, /team/ and /team/index.html is fetched once.
 */
export class Frontier {
  private readonly seen = new Set<string>();
  // Priority -> FIFO queue; priorities are few (two tiers times the depths seen), so a scan finds the lowest.
  private readonly buckets = new Map<number, FrontierEntry[]>();
  private count = 0;

  /** Adds a URL unless it was seen before; returns whether it was added. */
  push(url: string, depth: number): boolean {
    if (!this.markSeen(url)) return false;
    const contactLike = isContactLike(url);
    const priority = (contactLike ? 0 : 1000) + depth;
    let bucket = this.buckets.get(priority);
    if (!bucket) this.buckets.set(priority, (bucket = []));
    bucket.push({ url, depth, contactLike });
    this.count++;
    return true;
  }

  /** Records a URL as handled (a redirect target) without queueing it; false if it was known. */
  markSeen(url: string): boolean {
    const key = urlKey(url);
    if (this.seen.has(key)) return false;
    this.seen.add(key);
    return true;
  }

  has(url: string): boolean {
    return this.seen.has(urlKey(url));
  }

  pop(): FrontierEntry | undefined {
    let best: number | undefined;
    for (const [priority, bucket] of this.buckets) if (bucket.length && (best === undefined || priority < best)) best = priority;
    if (best === undefined) return undefined;
    const bucket = this.buckets.get(best) as FrontierEntry[];
    const entry = bucket.shift();
    if (!bucket.length) this.buckets.delete(best);
    this.count--;
    return entry;
  }

  get size(): number {
    return this.count;
  }
}
