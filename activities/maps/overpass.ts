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
}

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
  return CATEGORIES[w] ?? CATEGORIES[w.replace(/ies$/, 'y')] ?? CATEGORIES[w.replace(/s$/, '')] ?? CATEGORIES[w.replace(/es$/, '')];
}

/** The Overpass QL of "every <key>=<value> in the area named <area>", at most `limit` objects. */
export function overpassQuery(tag: [string, string], area: string, limit: number): string {
  const q = (s: string) => JSON.stringify(s);
  return `[out:json][timeout:25];area["name"=${q(area)}]->.a;nwr[${q(tag[0])}=${q(tag[1])}](area.a);out center tags ${limit};`;
}

export class OverpassClient {
  constructor(private readonly options: { baseUrl: string; userAgent: string; http: OutboundClient }) {}

  async query(ql: string, signal: AbortSignal): Promise<OverpassElement[]> {
    const res = await this.options.http.fetch(`${this.options.baseUrl.replace(/\/+$/, '')}/api/interpreter`, {
      method: 'POST',
      headers: { 'user-agent': this.options.userAgent, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ data: ql }).toString(),
      signal,
      provider: 'overpass',
    });
    // Overpass answers "too busy" with 429, or 504 when its queue is full: both pass.
    if (res.status === 429 || res.status === 504) {
      throw new MapsError('ProviderQuotaExceeded', `${OVERPASS} is busy (HTTP ${res.status}): rate limit or server load`, true, { retryAfterMs: retryAfterHeaderMs(res.headers['retry-after']) ?? 5000 });
    }
    if (res.status >= 500) throw new MapsError('ProviderUnavailable', `${OVERPASS} is unavailable: HTTP ${res.status}`, true);
    if (res.status !== 200) throw new MapsError('ProviderRejected', `${OVERPASS} refused the query: HTTP ${res.status}`, false);
    try {
      return res.json<{ elements?: OverpassElement[] }>().elements ?? [];
    } catch (err) {
      throw new MapsError('ProviderUnavailable', `${OVERPASS} sent an unreadable answer`, true, { cause: err });
    }
  }
}
