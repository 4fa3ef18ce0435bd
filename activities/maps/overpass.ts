import type { OutboundClient } from '../../lib/outbound';
import { MapsError, retryAfterHeaderMs } from './errors';

/**
 * OpenStreetMap's Overpass API (../../../shared/providers.md, "Maps listings"): every object with a
 * category tag (shop=bakery) inside a named area, with its tags and centre. Keyless; like Nominatim
 * one request per second for all workers together (the Overpass queue and pacing, jobs/crawl-maps.ts).
 */

export const OVERPASS = 'OpenStreetMap Overpass API';

export interface OverpassElement {
  type: 'node' | 'way' | 'relation';
  id: number;
  lat?: number;
  lon?: number;
  center?: { lat: number; lon: number };
  tags?: Record<string, string>;
  /**
   * Not Overpass's: the country most elements of the same answer name in addr:country, for the
   * elements that name none (their national-format phones are read with it).
   */
  areaCountry?: string;
}

/** Server-side time limits ([timeout:]) of one query's tries: a query that ran out of time is asked again with more. */
export const OVERPASS_TIMEOUTS_S = [25, 60, 120] as const;
/** Pause before the second and third try (Overpass's own advice for a busy or timed-out query: back off). */
const RETRY_BACKOFF_MS = [2000, 5000];

/** Words of a search ("bakeries", "cafe") -> the OSM tag that marks such places. */
const CATEGORIES: Record<string, [string, string]> = {
  bakery: ['shop', 'bakery'],
  butcher: ['shop', 'butcher'],
  florist: ['shop', 'florist'],
  hairdresser: ['shop', 'hairdresser'],
  supermarket: ['shop', 'supermarket'],
  bookshop: ['shop', 'books'],
  cafe: ['amenity', 'cafe'],
  coffee: ['amenity', 'cafe'],
  restaurant: ['amenity', 'restaurant'],
  pub: ['amenity', 'pub'],
  bar: ['amenity', 'bar'],
  pharmacy: ['amenity', 'pharmacy'],
  dentist: ['amenity', 'dentist'],
  doctor: ['amenity', 'doctors'],
  hotel: ['tourism', 'hotel'],
  gym: ['leisure', 'fitness_centre'],
};

/** The OSM tag of a category word, singular or plural ("bakeries" -> shop=bakery); undefined when not a known category. */
export function osmCategory(what: string): [string, string] | undefined {
  const w = what.trim().toLowerCase();
  // "bakeries" -> bakery, "cafes" -> cafe, "pharmacies" -> pharmacy, "hotels" -> hotel.
  return (
    CATEGORIES[w] ??
    CATEGORIES[w.replace(/ies$/, 'y')] ??
    CATEGORIES[w.replace(/s$/, '')] ??
    CATEGORIES[w.replace(/es$/, '')]
  );
}

/** The Overpass QL of "every <key>=<value> in the area named <area>", at most `limit` objects. */
export function overpassQuery(tag: [string, string], area: string, limit: number): string {
  const q = (s: string) => JSON.stringify(s);
  return `[out:json][timeout:${OVERPASS_TIMEOUTS_S[0]}];area["name"=${q(area)}]->.a;nwr[${q(tag[0])}=${q(tag[1])}](area.a);out center tags ${limit};`;
}

/** The query with its server-side time limit set to `seconds`. */
export function withQueryTimeout(ql: string, seconds: number): string {
  return /\[timeout:\d+\]/.test(ql)
    ? ql.replace(/\[timeout:\d+\]/, `[timeout:${seconds}]`)
    : `[timeout:${seconds}]${ql}`;
}

/**
 * Overpass reports a query that ran out of time or memory with HTTP 200, no elements and a
 * `remark` ("runtime error: Query timed out in "query" at line 4 after 2 seconds.", "runtime
 * error: Query run out of memory using about 2048 MB of RAM."): that is a failure, not an empty
 * area. Other remarks ("runtime remark: ...") are notes beside a complete answer.
 */
export function remarkFailure(remark: unknown): MapsError | undefined {
  if (typeof remark !== 'string' || !/runtime error/i.test(remark)) return undefined;
  const kind = /out of memory/i.test(remark) ? 'ran out of memory' : /timed out/i.test(remark) ? 'timed out' : 'failed';
  return new MapsError(
    'ProviderTimeout',
    `${OVERPASS} ${kind} on the query (${remark.trim()}); the area may be too large for one query`,
    false,
  );
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });

export class OverpassClient {
  constructor(
    private readonly options: {
      baseUrl: string;
      userAgent: string;
      http: OutboundClient;
      backoffMs?: readonly number[];
    },
  ) {}

  /**
   * The query's elements. A query Overpass stopped for time or memory is tried again after a pause
   * with a longer [timeout:] (OVERPASS_TIMEOUTS_S); after the last try it fails for good saying so
   * (ProviderTimeout, not retryable: Temporal's retries would ask the same question again).
   * Busy answers (429, 504) stay retryable with the provider's delay.
   */
  async query(ql: string, signal: AbortSignal): Promise<OverpassElement[]> {
    const backoff = this.options.backoffMs ?? RETRY_BACKOFF_MS;
    for (let i = 0; ; i++) {
      const seconds = OVERPASS_TIMEOUTS_S[i] as number;
      const body = await this.once(withQueryTimeout(ql, seconds), seconds, signal);
      const failed = remarkFailure(body.remark);
      if (!failed) return withAreaCountry(Array.isArray(body.elements) ? body.elements : []);
      if (i === OVERPASS_TIMEOUTS_S.length - 1) throw failed;
      await sleep(backoff[i] ?? 5000, signal);
    }
  }

  private async once(
    ql: string,
    seconds: number,
    signal: AbortSignal,
  ): Promise<{ elements?: OverpassElement[]; remark?: unknown }> {
    const res = await this.options.http.fetch(`${this.options.baseUrl.replace(/\/+$/, '')}/api/interpreter`, {
      method: 'POST',
      headers: { 'user-agent': this.options.userAgent, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ data: ql }).toString(),
      signal,
      // The server may take its whole [timeout:] before it answers; then the transfer.
      timeoutMs: (seconds + 15) * 1000,
      provider: 'overpass',
    });
    // Overpass answers "too busy" with a 429 HTML page, or 504 when its queue is full: both pass.
    if (res.status === 429 || res.status === 504) {
      throw new MapsError(
        'ProviderQuotaExceeded',
        `${OVERPASS} is busy (HTTP ${res.status}): rate limit or server load`,
        true,
        { retryAfterMs: retryAfterHeaderMs(res.headers['retry-after']) ?? 5000 },
      );
    }
    if (res.status >= 500)
      throw new MapsError('ProviderUnavailable', `${OVERPASS} is unavailable: HTTP ${res.status}`, true);
    if (res.status !== 200)
      throw new MapsError('ProviderRejected', `${OVERPASS} refused the query: HTTP ${res.status}`, false);
    let body: unknown;
    try {
      body = res.json();
    } catch (err) {
      throw new MapsError('ProviderUnavailable', `${OVERPASS} sent an unreadable answer`, true, { cause: err });
    }
    if (!body || typeof body !== 'object')
      throw new MapsError('ProviderUnavailable', `${OVERPASS} sent an unexpected answer (not an object)`, true);
    return body as { elements?: OverpassElement[]; remark?: unknown };
  }
}

/** Elements that are objects with a type and id (one malformed element is left out), marked with the answer's most named addr:country. */
function withAreaCountry(raw: unknown[]): OverpassElement[] {
  const elements = raw.filter(
    (e): e is OverpassElement =>
      !!e &&
      typeof e === 'object' &&
      typeof (e as OverpassElement).id === 'number' &&
      typeof (e as OverpassElement).type === 'string',
  );
  const counts = new Map<string, number>();
  for (const e of elements) {
    const c = e.tags?.['addr:country']?.trim().toUpperCase();
    if (c && /^[A-Z]{2}$/.test(c)) counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  const top = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
  return top ? elements.map((e) => (e.tags?.['addr:country'] ? e : { ...e, areaCountry: top })) : elements;
}
