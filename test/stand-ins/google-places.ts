import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenLocal } from './listen';

/**
 * A stand-in for the Google Places API (New) on 127.0.0.1 in its real wire format
 * (../../../shared/providers.md, "Maps listings"): POST /v1/places:searchText with the mandatory
 * X-Goog-FieldMask (400 without it; only the masked fields come back; nextPageToken only when the
 * mask asks for it), page tokens, pageSize 1-20 and at most 60 places per query, locationRestriction
 * rectangles; GET /v1/places/{id} (details, reviews when masked); photo media (302 to an image it
 * also serves, or {photoUri} with skipHttpRedirect); google.rpc error envelopes for an invalid key,
 * an unknown place and 429 RESOURCE_EXHAUSTED. Also a share-link host: GET /s/{code} redirects to a
 * google.com/maps/place URL. A test fixture only.
 */

export interface StandInPlace {
  id: string;
  displayName: { text: string; languageCode: string };
  formattedAddress: string;
  addressComponents: { longText: string; shortText: string; types: string[] }[];
  nationalPhoneNumber?: string;
  internationalPhoneNumber?: string;
  websiteUri?: string;
  rating?: number;
  userRatingCount?: number;
  priceLevel?: string;
  businessStatus: string;
  types: string[];
  primaryType: string;
  location: { latitude: number; longitude: number };
  googleMapsUri: string;
  regularOpeningHours?: {
    periods: {
      open: { day: number; hour: number; minute: number };
      close?: { day: number; hour: number; minute: number };
    }[];
    weekdayDescriptions: string[];
  };
  photos: { name: string; widthPx: number; heightPx: number }[];
  accessibilityOptions?: Record<string, boolean>;
  reviews: {
    name: string;
    rating: number;
    text: { text: string; languageCode: string };
    authorAttribution: { displayName: string };
    publishTime: string;
  }[];
  [field: string]: unknown;
}

export interface GooglePlacesStandIn {
  baseUrl: string;
  places: StandInPlace[];
  /** Requests received: method, path (without query), field mask, page size and token. */
  requests: {
    method: string;
    path: string;
    fieldMask: string | undefined;
    body: Record<string, unknown> | null;
    at: number;
  }[];
  /** Answer the next `count` API requests with 429 RESOURCE_EXHAUSTED (RetryInfo `retryDelay` seconds). */
  exhaustQuota(count: number, retryDelaySeconds?: number): void;
  /** Reject every key (as after the key is deleted or restricted in the console) until called with false. */
  revokeKey(revoked: boolean): void;
  /** Delay every API answer (cancel tests). */
  setDelay(ms: number): void;
  /** Share link that redirects to the place URL of `placeId` (without the id in it: the name and coordinates only). */
  shareLink(placeId: string): string;
  close(): Promise<void>;
}

const PRICES = [
  'PRICE_LEVEL_INEXPENSIVE',
  'PRICE_LEVEL_MODERATE',
  'PRICE_LEVEL_EXPENSIVE',
  'PRICE_LEVEL_VERY_EXPENSIVE',
  'PRICE_LEVEL_FREE',
  undefined,
];
const MAX_PER_QUERY = 60;

/** `count` bakeries in Leeds, ids ChIJstandinLeeds0001..., each with two photos and two reviews. */
export function leedsBakeries(count: number, baseUrl = 'https://maps.google.com'): StandInPlace[] {
  return Array.from({ length: count }, (_, k) => {
    const i = k + 1;
    const n = String(i).padStart(4, '0');
    const id = `ChIJstandinLeeds${n}`;
    // Drama-range Leeds numbers (0113 496 0xxx) are valid fixed lines to libphonenumber; place 3 has a mobile, place 4 an impossible number.
    const national = i === 3 ? '07911 123456' : i === 4 ? '0113 12' : `0113 496 ${String(i).padStart(4, '0')}`;
    const international =
      i === 3 ? '+44 7911 123456' : i === 4 ? undefined : `+44 113 496 ${String(i).padStart(4, '0')}`;
    return {
      id,
      displayName: { text: `Leeds Bakery ${i}`, languageCode: 'en' },
      formattedAddress: `${i} Briggate, Leeds LS1 6HD, UK`,
      addressComponents: [
        { longText: String(i), shortText: String(i), types: ['street_number'] },
        { longText: 'Leeds', shortText: 'Leeds', types: ['postal_town'] },
        { longText: 'United Kingdom', shortText: 'GB', types: ['country', 'political'] },
      ],
      nationalPhoneNumber: national,
      ...(international ? { internationalPhoneNumber: international } : {}),
      websiteUri: `https://www.leedsbakery${i}.co.uk/`,
      rating: Math.round((3.5 + (i % 15) / 10) * 10) / 10,
      userRatingCount: 100 + i,
      ...(PRICES[k % PRICES.length] ? { priceLevel: PRICES[k % PRICES.length] } : {}),
      businessStatus: 'OPERATIONAL',
      types: ['bakery', 'cafe', 'food', 'point_of_interest', 'establishment'],
      primaryType: 'bakery',
      location: { latitude: 53.79 + k * 0.002, longitude: -1.55 + k * 0.002 },
      googleMapsUri: `${baseUrl}/?cid=${1000 + i}`,
      regularOpeningHours: {
        periods: [1, 2, 3, 4, 5]
          .map((day) => ({ open: { day, hour: 7, minute: 0 }, close: { day, hour: 17, minute: 30 } }))
          .concat([
            { open: { day: 6, hour: 8, minute: 0 }, close: { day: 6, hour: 12, minute: 0 } },
            { open: { day: 6, hour: 13, minute: 0 }, close: { day: 6, hour: 16, minute: 0 } },
          ]),
        weekdayDescriptions: ['Monday: 7:00 AM – 5:30 PM', 'Sunday: Closed'],
      },
      photos: [1, 2].map((p) => ({ name: `places/${id}/photos/AZLphoto${n}x${p}`, widthPx: 1600, heightPx: 1200 })),
      accessibilityOptions: { wheelchairAccessibleEntrance: true, wheelchairAccessibleParking: i % 2 === 0 },
      takeout: true,
      dineIn: i % 2 === 1,
      servesCoffee: true,
      reviews: [1, 2].map((r) => ({
        name: `places/${id}/reviews/R${r}`,
        rating: 6 - r,
        text: { text: `Review ${r} of bakery ${i}`, languageCode: 'en' },
        authorAttribution: { displayName: `Reviewer ${r}` },
        publishTime: `2026-0${r}-15T10:00:00Z`,
      })),
    };
  });
}

/**
 * A chain: two juice bars in Leeds with one website and one phone number, two listings of one
 * business to a de-duplication (type juice_shop: no other query of the tests matches them).
 */
export function leedsJuiceChain(): StandInPlace[] {
  return [1, 2].map((i) => ({
    id: `ChIJstandinJuice000${i}`,
    displayName: { text: `Leeds Juice Bar ${i}`, languageCode: 'en' },
    formattedAddress: `${i} Boar Lane, Leeds LS1 5DA, UK`,
    addressComponents: [{ longText: 'United Kingdom', shortText: 'GB', types: ['country', 'political'] }],
    internationalPhoneNumber: '+44 113 496 0999',
    websiteUri: 'https://www.leedsjuice.co.uk/',
    businessStatus: 'OPERATIONAL',
    types: ['juice_shop', 'point_of_interest', 'establishment'],
    primaryType: 'juice_shop',
    location: { latitude: 53.795 + i * 0.001, longitude: -1.545 },
    googleMapsUri: `https://maps.google.com/?cid=juice${i}`,
    photos: [],
    reviews: [],
  }));
}

/** Leeds as a locality whose viewport is the area a tiled search splits. */
export const LEEDS_VIEWPORT = { low: { latitude: 53.7, longitude: -1.8 }, high: { latitude: 53.9, longitude: -1.3 } };
export function leedsLocality(): StandInPlace {
  return {
    id: 'ChIJmb1k2ko9eUgRqdLTpJ1lcBc',
    displayName: { text: 'Leeds', languageCode: 'en' },
    formattedAddress: 'Leeds, UK',
    addressComponents: [{ longText: 'United Kingdom', shortText: 'GB', types: ['country', 'political'] }],
    businessStatus: 'OPERATIONAL',
    types: ['locality', 'political'],
    primaryType: 'locality',
    location: { latitude: 53.8008, longitude: -1.5491 },
    googleMapsUri: 'https://maps.google.com/?cid=1',
    photos: [],
    reviews: [],
    viewport: LEEDS_VIEWPORT,
  };
}

/** `count` florists on a grid over the Leeds viewport (15 columns), without photos: for tiled searches. */
export function leedsFlorists(count: number): StandInPlace[] {
  const rows = Math.ceil(count / 15);
  return Array.from({ length: count }, (_, k) => {
    const row = Math.floor(k / 15);
    const col = k % 15;
    const n = String(k + 1).padStart(4, '0');
    return {
      id: `ChIJstandinFlorist${n}`,
      displayName: { text: `Leeds Florist ${k + 1}`, languageCode: 'en' },
      formattedAddress: `${k + 1} Kirkgate, Leeds LS2 7DJ, UK`,
      addressComponents: [{ longText: 'United Kingdom', shortText: 'GB', types: ['country', 'political'] }],
      internationalPhoneNumber: `+44 113 496 ${String(2000 + k).padStart(4, '0')}`,
      businessStatus: 'OPERATIONAL',
      types: ['florist', 'store', 'point_of_interest', 'establishment'],
      primaryType: 'florist',
      location: {
        latitude:
          LEEDS_VIEWPORT.low.latitude +
          ((row + 0.5) * (LEEDS_VIEWPORT.high.latitude - LEEDS_VIEWPORT.low.latitude)) / rows,
        longitude:
          LEEDS_VIEWPORT.low.longitude +
          ((col + 0.5) * (LEEDS_VIEWPORT.high.longitude - LEEDS_VIEWPORT.low.longitude)) / 15,
      },
      googleMapsUri: `https://maps.google.com/?cid=${5000 + k}`,
      photos: [],
      reviews: [],
    };
  });
}

/**
 * `count` places of `type` in `city` (for campaigns: the city is in formattedAddress and the
 * postal_town component), ids ChIJstandin<City><n>, without photos or website.
 */
export function cityPlaces(city: string, type: string, count: number): StandInPlace[] {
  const key = city.replace(/[^A-Za-z]/g, '');
  return Array.from({ length: count }, (_, k) => ({
    id: `ChIJstandin${key}${type}${String(k + 1).padStart(4, '0')}`,
    displayName: { text: `${city} ${type} ${k + 1}`, languageCode: 'en' },
    formattedAddress: `${k + 1} High Street, ${city}, UK`,
    addressComponents: [
      { longText: city, shortText: city, types: ['postal_town'] },
      { longText: 'United Kingdom', shortText: 'GB', types: ['country', 'political'] },
    ],
    internationalPhoneNumber: `+44 113 496 ${String(3000 + k).padStart(4, '0')}`,
    businessStatus: 'OPERATIONAL',
    types: [type, 'point_of_interest', 'establishment'],
    primaryType: type,
    location: { latitude: 53 + k * 0.001, longitude: -2 + k * 0.001 },
    googleMapsUri: `https://maps.google.com/?cid=${key}${k + 1}`,
    photos: [],
    reviews: [],
  }));
}

/** A tiny valid image per photo name (the bytes differ, so their content hashes do). */
export function imageBytes(photo: string): Buffer {
  // A 1x1 GIF followed by the photo name in a comment extension is still a valid GIF.
  const head = Buffer.from('47494638396101000100800000ffffff00000021fe', 'hex');
  const comment = Buffer.from(photo.slice(0, 250));
  return Buffer.concat([
    head,
    Buffer.from([comment.length]),
    comment,
    Buffer.from('0021f90401000000002c00000000010001000002024401003b', 'hex'),
  ]);
}

function envelope(
  res: ServerResponse,
  code: number,
  status: string,
  message: string,
  details: Record<string, unknown>[] = [],
): void {
  res.writeHead(code, { 'content-type': 'application/json; charset=UTF-8' });
  res.end(JSON.stringify({ error: { code, message, status, ...(details.length ? { details } : {}) } }));
}

/** Only the fields a mask names: `*`, `places.*`, or each `places.<field>` / `<field>`. */
function masked(place: StandInPlace, fields: string[], prefix: string): Record<string, unknown> {
  if (fields.includes('*') || fields.includes(`${prefix}*`)) return place;
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    if (!f.startsWith(prefix)) continue;
    const key = f.slice(prefix.length);
    if (key in place) out[key] = place[key];
  }
  return out;
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown> | null> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
  } catch {
    return null;
  }
}

const inRect = (
  p: StandInPlace,
  r: { low: { latitude: number; longitude: number }; high: { latitude: number; longitude: number } },
) =>
  p.location.latitude >= r.low.latitude &&
  p.location.latitude <= r.high.latitude &&
  p.location.longitude >= r.low.longitude &&
  p.location.longitude <= r.high.longitude;

/**
 * `byCity`: a text query "<what> in <City>, ..." matches only places whose formattedAddress names
 * that city, as the real service answers a search in one city with places there.
 */
export async function startGooglePlacesStandIn(options: {
  apiKey: string;
  places?: StandInPlace[];
  byCity?: boolean;
}): Promise<GooglePlacesStandIn> {
  const places = options.places ?? [leedsLocality(), ...leedsBakeries(25), ...leedsFlorists(150), ...leedsJuiceChain()];
  const requests: GooglePlacesStandIn['requests'] = [];
  let exhausted = 0;
  let retryDelay = 1;
  let delayMs = 0;
  let revoked = false;
  let base = '';

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const path = url.pathname;
    if (path.startsWith('/images/')) {
      res.writeHead(200, { 'content-type': 'image/gif' });
      res.end(imageBytes(decodeURIComponent(path.slice('/images/'.length))));
      return;
    }
    if (path.startsWith('/s/')) {
      const place = places.find((p) => p.id === path.slice(3));
      if (!place) return void res.writeHead(404).end();
      const { latitude, longitude } = place.location;
      res.writeHead(302, {
        location: `https://www.google.com/maps/place/${encodeURIComponent(place.displayName.text).replace(/%20/g, '+')}/@${latitude},${longitude},17z/data=!3m1!4b1!4m6!3m5!1s0x48795c1e:0x${place.id.slice(-4)}!8m2!3d${latitude}!4d${longitude}`,
      });
      res.end();
      return;
    }
    const body = req.method === 'POST' ? await readJson(req) : null;
    const fieldMask = req.headers['x-goog-fieldmask'] as string | undefined;
    requests.push({ method: req.method ?? 'GET', path, fieldMask, body, at: Date.now() });
    // A delayed answer ends early when its connection closes (the caller aborted, or close()), so no timer outlives the test.
    if (delayMs > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delayMs);
        req.socket.once('close', () => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    const key = (req.headers['x-goog-api-key'] as string | undefined) ?? url.searchParams.get('key');
    // As the live API answers (a recording: test/fixtures/recorded/SOURCES.md, "Google Places API (New)").
    if (key !== options.apiKey || revoked) {
      return envelope(res, 400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', [
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: 'API_KEY_INVALID',
          domain: 'googleapis.com',
          metadata: { service: 'places.googleapis.com' },
        },
        {
          '@type': 'type.googleapis.com/google.rpc.LocalizedMessage',
          locale: 'en-US',
          message: 'API key not valid. Please pass a valid API key.',
        },
      ]);
    }
    if (exhausted > 0) {
      exhausted--;
      return envelope(
        res,
        429,
        'RESOURCE_EXHAUSTED',
        "Quota exceeded for quota metric 'SearchTextRequest' and limit 'SearchTextRequest per minute' of service 'places.googleapis.com'.",
        [
          {
            '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
            reason: 'RATE_LIMIT_EXCEEDED',
            domain: 'googleapis.com',
          },
          { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${retryDelay}s` },
        ],
      );
    }
    const photo = /^\/v1\/(places\/[^/]+\/photos\/[^/]+)\/media$/.exec(path);
    if (photo && req.method === 'GET') {
      const photoUri = `${base}/images/${encodeURIComponent((photo[1] as string).split('/').pop() as string)}`;
      if (!places.some((p) => p.photos.some((ph) => ph.name === photo[1])))
        return envelope(res, 404, 'NOT_FOUND', 'Photo not found.');
      if (url.searchParams.get('skipHttpRedirect') === 'true') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ name: `${photo[1]}/media`, photoUri }));
      } else {
        res.writeHead(302, { location: photoUri }).end();
      }
      return;
    }
    if (!fieldMask) {
      return envelope(
        res,
        400,
        'INVALID_ARGUMENT',
        'FieldMask is a required parameter. See how to provide it at https://developers.google.com/maps/documentation/places/web-service/choose-fields',
      );
    }
    const fields = fieldMask.split(',').map((f) => f.trim());
    if (path === '/v1/places:searchText' && req.method === 'POST') {
      if (!body || typeof body.textQuery !== 'string')
        return envelope(res, 400, 'INVALID_ARGUMENT', 'Invalid JSON payload: textQuery is required.');
      const pageSize = body.pageSize === undefined ? 20 : Number(body.pageSize);
      if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 20)
        return envelope(res, 400, 'INVALID_ARGUMENT', 'pageSize must be between 1 and 20.');
      const q = body.textQuery.toLowerCase();
      const what = q.split(/\s+in\s+/)[0] ?? q;
      const city = options.byCity
        ? (q
            .split(/\s+in\s+/)[1]
            ?.split(',')[0]
            ?.trim() ?? '')
        : '';
      const rect = (body.locationRestriction as { rectangle?: Parameters<typeof inRect>[1] } | undefined)?.rectangle;
      const matching = places
        .filter((p) => p.displayName.text.toLowerCase().includes(q) || p.types.includes(what) || p.primaryType === what)
        .filter((p) => !rect || inRect(p, rect))
        .filter((p) => !city || p.formattedAddress.toLowerCase().includes(`, ${city},`))
        .slice(0, MAX_PER_QUERY);
      let offset = 0;
      if (typeof body.pageToken === 'string' && body.pageToken) {
        const token = JSON.parse(Buffer.from(body.pageToken, 'base64url').toString('utf8')) as {
          offset: number;
          q: string;
          pageSize: number;
        };
        if (token.q !== body.textQuery || token.pageSize !== pageSize)
          return envelope(
            res,
            400,
            'INVALID_ARGUMENT',
            'Request parameters must match the request that returned the page token.',
          );
        offset = token.offset;
      }
      const page = matching.slice(offset, offset + pageSize);
      const next =
        offset + pageSize < matching.length
          ? Buffer.from(JSON.stringify({ offset: offset + pageSize, q: body.textQuery, pageSize })).toString(
              'base64url',
            )
          : undefined;
      res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
      res.end(
        JSON.stringify({
          ...(page.length ? { places: page.map((p) => masked(p, fields, 'places.')) } : {}),
          ...(next && fields.includes('nextPageToken') ? { nextPageToken: next } : {}),
        }),
      );
      return;
    }
    const details = /^\/v1\/places\/([^/:]+)$/.exec(path);
    if (details && req.method === 'GET') {
      const id = decodeURIComponent(details[1] as string);
      if (!/^[A-Za-z0-9_-]{10,}$/.test(id))
        return envelope(res, 400, 'INVALID_ARGUMENT', `Not a valid Place ID: ${id}`);
      const place = places.find((p) => p.id === id);
      if (!place) return envelope(res, 404, 'NOT_FOUND', `Place '${id}' not found.`);
      res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
      res.end(JSON.stringify(masked(place, fields, '')));
      return;
    }
    envelope(res, 404, 'NOT_FOUND', `Method not found: ${path}`);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => envelope(res, 500, 'INTERNAL', String(err)));
  });
  const { baseUrl, close } = await listenLocal(server);
  base = baseUrl;
  return {
    baseUrl,
    places,
    requests,
    exhaustQuota: (count, seconds = 1) => {
      exhausted = count;
      retryDelay = seconds;
    },
    revokeKey: (value) => {
      revoked = value;
    },
    setDelay: (ms) => {
      delayMs = ms;
    },
    shareLink: (placeId) => `${baseUrl}/s/${placeId}`,
    close,
  };
}
