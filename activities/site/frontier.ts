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
  /** Per urlKey: waiting in a bucket, or taken (fetched, being fetched, or reached by a redirect). */
  private readonly state = new Map<string, 'queued' | 'taken'>();
  // Priority -> FIFO queue; priorities are few (two tiers times the depths seen), so a scan finds the lowest.
  private readonly buckets = new Map<number, FrontierEntry[]>();

  /** Adds a URL unless it was seen before; returns whether it was added. */
  push(url: string, depth: number): boolean {
    const key = urlKey(url);
    if (this.state.has(key)) return false;
    this.state.set(key, 'queued');
    const contactLike = isContactLike(url);
    const priority = (contactLike ? 0 : 1000) + depth;
    let bucket = this.buckets.get(priority);
    if (!bucket) this.buckets.set(priority, (bucket = []));
    bucket.push({ url, depth, contactLike });
    return true;
  }

  /**
   * Takes a URL for fetching outside the queue order (the start page, a redirect's target). False
   * if it was taken already; a queued entry is taken and will be skipped by pop().
   */
  claim(url: string): boolean {
    const key = urlKey(url);
    if (this.state.get(key) === 'taken') return false;
    this.state.set(key, 'taken');
    return true;
  }

  /** Whether a URL was taken already (fetched or being fetched). */
  taken(url: string): boolean {
    return this.state.get(urlKey(url)) === 'taken';
  }

  /** The next URL to fetch, taken; undefined when nothing waits. */
  pop(): FrontierEntry | undefined {
    for (;;) {
      let best: number | undefined;
      for (const priority of this.buckets.keys()) if (best === undefined || priority < best) best = priority;
      if (best === undefined) return undefined;
      const bucket = this.buckets.get(best) as FrontierEntry[];
      const entry = bucket.shift() as FrontierEntry;
      if (!bucket.length) this.buckets.delete(best);
      if (this.claim(entry.url)) return entry;
    }
  }
}
