import type { OutboundClient, OutboundResponse } from '../../lib/outbound';
import { MapsError, retryAfterHeaderMs } from './errors';

/**
 * OpenStreetMap's Nominatim (../../../shared/providers.md, "Maps listings"): free-text search and
 * lookup by OSM id, with address details and extra tags (phone, website, opening_hours). Keyless;
 * its policy asks for an identifying User-Agent and at most one request per second, which the
 * Nominatim activity queue enforces for all workers together (jobs/crawl-maps.ts).
 */

export const NOMINATIM = 'OpenStreetMap Nominatim';

/** Nominatim caps `limit` at 40; more results are paged with exclude_place_ids. */
export const NOMINATIM_PAGE = 40;

/** One jsonv2 result, the fields crawlMaps reads. */
export interface NominatimPlace {
  place_id: number;
  osm_type?: string;
  osm_id?: number;
  lat?: string;
  lon?: string;
  category?: string;
  type?: string;
  /** Absent in older answers; null for an unnamed object. */
  name?: string | null;
  display_name?: string;
  address?: Record<string, string>;
  extratags?: Record<string, string> | null;
}

export class NominatimClient {
  constructor(private readonly options: { baseUrl: string; userAgent: string; http: OutboundClient }) {}

  async search(
    input: { q: string; limit: number; excludePlaceIds: number[]; language?: string; countryCode?: string },
    signal: AbortSignal,
  ): Promise<NominatimPlace[]> {
    const url = this.url('/search');
    url.searchParams.set('q', input.q);
    url.searchParams.set('limit', String(Math.min(NOMINATIM_PAGE, input.limit)));
    if (input.excludePlaceIds.length > 0) url.searchParams.set('exclude_place_ids', input.excludePlaceIds.join(','));
    if (input.countryCode) url.searchParams.set('countrycodes', input.countryCode.toLowerCase());
    return this.get(url, input.language, signal);
  }

  /** Places by OSM id (N123, W45, R6). */
  async lookup(input: { osmIds: string[]; language?: string }, signal: AbortSignal): Promise<NominatimPlace[]> {
    const url = this.url('/lookup');
    url.searchParams.set('osm_ids', input.osmIds.join(','));
    return this.get(url, input.language, signal);
  }

  private url(path: string): URL {
    const url = new URL(`${this.options.baseUrl.replace(/\/+$/, '')}${path}`);
    url.searchParams.set('format', 'jsonv2');
    url.searchParams.set('addressdetails', '1');
    url.searchParams.set('extratags', '1');
    return url;
  }

  private async get(url: URL, language: string | undefined, signal: AbortSignal): Promise<NominatimPlace[]> {
    const headers: Record<string, string> = { 'user-agent': this.options.userAgent, accept: 'application/json' };
    if (language) headers['accept-language'] = language;
    const res = await this.options.http.fetch(url.href, { headers, signal, provider: 'nominatim' });
    return answer(res);
  }
}

function answer(res: OutboundResponse): NominatimPlace[] {
  if (res.status === 429) {
    return fail(
      new MapsError(
        'ProviderQuotaExceeded',
        `${NOMINATIM} rate limit exceeded (HTTP 429: at most 1 request per second)`,
        true,
        { retryAfterMs: retryAfterHeaderMs(res.headers['retry-after']) ?? 2000 },
      ),
    );
  }
  if (res.status === 403)
    return fail(
      new MapsError(
        'ProviderCredentialsRejected',
        `${NOMINATIM} refused the request (HTTP 403): check OSM_USER_AGENT, its usage policy requires an identifying agent`,
        false,
      ),
    );
  if (res.status >= 500)
    return fail(new MapsError('ProviderUnavailable', `${NOMINATIM} is unavailable: HTTP ${res.status}`, true));
  if (res.status !== 200)
    return fail(new MapsError('ProviderRejected', `${NOMINATIM} refused the request: HTTP ${res.status}`, false));
  let body: unknown;
  try {
    body = res.json();
  } catch (err) {
    throw new MapsError('ProviderUnavailable', `${NOMINATIM} sent an unreadable answer`, true, { cause: err });
  }
  if (!Array.isArray(body))
    throw new MapsError('ProviderUnavailable', `${NOMINATIM} sent an unexpected answer (not a list)`, true);
  return body as NominatimPlace[];
}

function fail(err: MapsError): never {
  throw err;
}
