import type { OutboundClient, OutboundResponse } from '../../lib/outbound';
import { MapsError, notFound, retryAfterHeaderMs } from './errors';
import type { GooglePeriod } from './parse';

/**
 * Google Places API (New) (../../../shared/providers.md, "Maps listings"): text search with a
 * field mask and page tokens, place details, photo media. Every request goes through the
 * SSRF-guarded client with the job's cancellation signal. No retries here: a quota answer becomes
 * a MapsError with the provider's delay, and Temporal retries the activity after it.
 */

export const PROVIDER = 'Google Places API';

/** A Place as the API returns it, the fields crawlMaps asks for. */
export interface GooglePlace {
  id: string;
  displayName?: { text?: string };
  formattedAddress?: string;
  addressComponents?: { shortText?: string; types?: string[] }[];
  nationalPhoneNumber?: string;
  internationalPhoneNumber?: string;
  websiteUri?: string;
  rating?: number;
  userRatingCount?: number;
  priceLevel?: string;
  businessStatus?: string;
  types?: string[];
  primaryType?: string;
  location?: { latitude?: number; longitude?: number };
  googleMapsUri?: string;
  regularOpeningHours?: { periods?: GooglePeriod[]; weekdayDescriptions?: string[] };
  photos?: { name: string; widthPx?: number; heightPx?: number }[];
  accessibilityOptions?: Record<string, boolean>;
  viewport?: { low: { latitude: number; longitude: number }; high: { latitude: number; longitude: number } };
  reviews?: {
    rating?: number;
    text?: { text?: string };
    originalText?: { text?: string };
    authorAttribution?: { displayName?: string };
    publishTime?: string;
  }[];
  [amenity: string]: unknown;
}

/** Boolean Place fields that are amenities, named as the result lists them. */
export const AMENITY_FIELDS: Record<string, string> = {
  takeout: 'takeout',
  delivery: 'delivery',
  dineIn: 'dine_in',
  curbsidePickup: 'curbside_pickup',
  reservable: 'reservable',
  outdoorSeating: 'outdoor_seating',
  liveMusic: 'live_music',
  servesBreakfast: 'serves_breakfast',
  servesLunch: 'serves_lunch',
  servesDinner: 'serves_dinner',
  servesCoffee: 'serves_coffee',
  servesVegetarianFood: 'serves_vegetarian_food',
  goodForChildren: 'good_for_children',
  goodForGroups: 'good_for_groups',
  allowsDogs: 'allows_dogs',
  restroom: 'restroom',
};

const PLACE_FIELDS = [
  'id',
  'displayName',
  'formattedAddress',
  'addressComponents',
  'nationalPhoneNumber',
  'internationalPhoneNumber',
  'websiteUri',
  'rating',
  'userRatingCount',
  'priceLevel',
  'businessStatus',
  'types',
  'primaryType',
  'location',
  'googleMapsUri',
  'regularOpeningHours',
  'photos',
  'accessibilityOptions',
  'viewport',
  ...Object.keys(AMENITY_FIELDS),
];

/** The field mask of a text search: every place field, and nextPageToken (only returned when asked for). */
export const SEARCH_FIELD_MASK = [...PLACE_FIELDS.map((f) => `places.${f}`), 'nextPageToken'].join(',');
export const detailsFieldMask = (reviews: boolean) => [...PLACE_FIELDS, ...(reviews ? ['reviews'] : [])].join(',');

export interface TextSearch {
  textQuery: string;
  pageSize: number;
  pageToken?: string;
  languageCode?: string;
  regionCode?: string;
  locationBias?: { circle: { center: { latitude: number; longitude: number }; radius: number } };
  locationRestriction?: {
    rectangle: { low: { latitude: number; longitude: number }; high: { latitude: number; longitude: number } };
  };
}

export class GooglePlacesClient {
  constructor(private readonly options: { baseUrl: string; apiKey: string; http: OutboundClient }) {}

  /** One page of a text search (pageSize 1-20). */
  async searchText(body: TextSearch, signal: AbortSignal): Promise<{ places: GooglePlace[]; nextPageToken?: string }> {
    const res = await this.options.http.fetch(`${this.base()}/v1/places:searchText`, {
      method: 'POST',
      headers: { ...this.auth(), 'x-goog-fieldmask': SEARCH_FIELD_MASK, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal,
      provider: 'google_places',
    });
    const json = this.answer<{ places?: GooglePlace[]; nextPageToken?: string }>(res, null);
    return { places: json.places ?? [], nextPageToken: json.nextPageToken || undefined };
  }

  /** One place by id; an unknown or malformed id is "business not found". */
  async details(
    placeId: string,
    options: { reviews: boolean; languageCode?: string; regionCode?: string },
    signal: AbortSignal,
  ): Promise<GooglePlace> {
    const url = new URL(`${this.base()}/v1/places/${encodeURIComponent(placeId)}`);
    if (options.languageCode) url.searchParams.set('languageCode', options.languageCode);
    if (options.regionCode) url.searchParams.set('regionCode', options.regionCode);
    const res = await this.options.http.fetch(url.href, {
      headers: { ...this.auth(), 'x-goog-fieldmask': detailsFieldMask(options.reviews) },
      signal,
      provider: 'google_places',
    });
    return this.answer<GooglePlace>(res, placeId);
  }

  /**
   * The key-free address of a photo (`skipHttpRedirect=true` answers with its photoUri instead of
   * redirecting), so that neither the result nor a fallback image_url ever carries the API key.
   */
  async photoUri(photoName: string, signal: AbortSignal, maxWidthPx = 800): Promise<string> {
    const url = new URL(`${this.base()}/v1/${photoName}/media`);
    url.searchParams.set('maxWidthPx', String(maxWidthPx));
    url.searchParams.set('skipHttpRedirect', 'true');
    const res = await this.options.http.fetch(url.href, { headers: this.auth(), signal, provider: 'google_places' });
    const json = this.answer<{ photoUri?: string }>(res, null);
    if (!json.photoUri)
      throw new MapsError('ProviderUnavailable', `${PROVIDER} answered a photo request without photoUri`, true);
    return json.photoUri;
  }

  private base(): string {
    return this.options.baseUrl.replace(/\/+$/, '');
  }

  // The key travels as a header, never in a URL that could end up in a log or a result.
  private auth(): Record<string, string> {
    return { 'x-goog-api-key': this.options.apiKey };
  }

  /** The JSON of a 2xx answer, or the google.rpc error envelope as a typed MapsError. */
  private answer<T>(res: OutboundResponse, placeId: string | null): T {
    if (res.status >= 200 && res.status < 300) {
      try {
        return res.json<T>();
      } catch (err) {
        throw new MapsError('ProviderUnavailable', `${PROVIDER} sent an unreadable answer (HTTP ${res.status})`, true, {
          cause: err,
        });
      }
    }
    throw googleError(res, placeId);
  }
}

interface RpcError {
  error?: {
    code?: number;
    message?: string;
    status?: string;
    details?: { '@type'?: string; reason?: string; retryDelay?: string }[];
  };
}

/** A non-2xx answer in the google.rpc envelope as the failure a user reads. */
export function googleError(res: OutboundResponse, placeId: string | null): MapsError {
  let body: RpcError = {};
  try {
    body = res.json<RpcError>();
  } catch {
    // A proxy's HTML error page: only the status tells.
  }
  const status = body.error?.status ?? '';
  const message = body.error?.message ?? `HTTP ${res.status}`;
  const details = body.error?.details ?? [];
  const reason = details.find((d) => d.reason)?.reason ?? '';
  if (
    reason === 'API_KEY_INVALID' ||
    reason === 'API_KEY_SERVICE_BLOCKED' ||
    status === 'PERMISSION_DENIED' ||
    status === 'UNAUTHENTICATED' ||
    res.status === 401 ||
    res.status === 403
  ) {
    return new MapsError(
      'ProviderCredentialsRejected',
      `${PROVIDER} rejected the key (${reason || status || `HTTP ${res.status}`}): check GOOGLE_PLACES_API_KEY`,
      false,
    );
  }
  if (res.status === 429 || status === 'RESOURCE_EXHAUSTED') {
    const retryDelay = details.find((d) => d.retryDelay)?.retryDelay;
    const fromBody =
      retryDelay && /^\d+(\.\d+)?s$/.test(retryDelay)
        ? Math.max(1000, Number(retryDelay.slice(0, -1)) * 1000)
        : undefined;
    return new MapsError('ProviderQuotaExceeded', `${PROVIDER} quota exceeded (RESOURCE_EXHAUSTED): ${message}`, true, {
      retryAfterMs: fromBody ?? retryAfterHeaderMs(res.headers['retry-after']) ?? 30_000,
    });
  }
  if (
    placeId !== null &&
    (res.status === 404 || status === 'NOT_FOUND' || (res.status === 400 && status === 'INVALID_ARGUMENT'))
  )
    return notFound(placeId);
  if (res.status >= 500)
    return new MapsError('ProviderUnavailable', `${PROVIDER} is unavailable: HTTP ${res.status}`, true);
  return new MapsError(
    'ProviderRejected',
    `${PROVIDER} refused the request (${status || `HTTP ${res.status}`}): ${message}`,
    false,
  );
}
