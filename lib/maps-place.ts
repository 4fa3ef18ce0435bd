/**
 * What a crawlMaps `url` names. Pure: the API validates payloads with it (jobs/crawl-maps.ts), so
 * that a value the worker could not use is a 422 at submission, and the worker reads them with it
 * (activities/maps/parse.ts re-exports it).
 */

export type PlaceRef =
  | { kind: 'google_place_id'; placeId: string }
  | {
      kind: 'google_place_url';
      url: string;
      name: string | null;
      lat: number | null;
      lng: number | null;
      placeId: string | null;
    }
  | { kind: 'link'; url: string }
  | { kind: 'osm'; osmType: 'N' | 'W' | 'R'; osmId: string }
  | { kind: 'invalid'; reason: string };

const PLACE_ID = /^[A-Za-z0-9_-]{16,}$/;

/** The code of a Google Maps share link (maps.app.goo.gl/{code}, the older goo.gl/maps/{code}); null for any other URL. */
function shareLinkCode(host: string, path: string): string | null {
  if (host === 'maps.app.goo.gl') return path.slice(1);
  if (host === 'goo.gl' && path.startsWith('/maps/')) return path.slice('/maps/'.length);
  return null;
}

/**
 * Reads a place reference: a bare place id, a google.com/maps/place URL (name, coordinates and,
 * when present, `query_place_id` or `place_id:` in the URL), an openstreetmap.org node/way/relation
 * URL, or a Google Maps share link as a link to follow (it redirects to a place URL). Any other URL
 * is invalid: the worker fetches only share links, never an arbitrary address on a user's behalf.
 */
export function parsePlaceRef(input: string): PlaceRef {
  const text = input.trim();
  if (PLACE_ID.test(text)) return { kind: 'google_place_id', placeId: text };
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return { kind: 'invalid', reason: 'not a URL or place id' };
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    return { kind: 'invalid', reason: `not an http(s) URL (${u.protocol})` };
  const host = u.hostname.toLowerCase().replace(/^www\./, '');
  if (host === 'openstreetmap.org') {
    const m = /^\/(node|way|relation)\/(\d+)/.exec(u.pathname);
    if (!m) return { kind: 'invalid', reason: 'not an OpenStreetMap node, way or relation URL' };
    return { kind: 'osm', osmType: (m[1] as string)[0]?.toUpperCase() as 'N' | 'W' | 'R', osmId: m[2] as string };
  }
  if (/^(maps\.)?google\.[a-z.]+$/.test(host)) {
    const queryPlaceId =
      u.searchParams.get('query_place_id') ??
      /place_id:([A-Za-z0-9_-]+)/.exec(u.searchParams.get('q') ?? '')?.[1] ??
      null;
    const m = /\/maps\/place\/([^/]+)/.exec(u.pathname);
    if (!m && !queryPlaceId) {
      // The maps_url of a Google result has this form; Places API (New) looks places up by place id only.
      if (u.searchParams.has('cid')) {
        return {
          kind: 'invalid',
          reason:
            'a maps.google.com/?cid= link cannot be looked up with the Places API: send the place id (maps_place_id in the results) instead',
        };
      }
      return { kind: 'invalid', reason: 'not a google.com/maps/place URL' };
    }
    const name = m ? decodeURIComponent((m[1] as string).replace(/\+/g, ' ')) : null;
    // The place's own coordinates are in the data segment (!3d<lat>!4d<lng>); the @lat,lng is the viewport.
    const data =
      /!3d(-?\d+(?:\.\d+)?)!4d(-?\d+(?:\.\d+)?)/.exec(u.pathname) ??
      /@(-?\d+(?:\.\d+)?),(-?\d+(?:\.\d+)?)/.exec(u.pathname);
    return {
      kind: 'google_place_url',
      url: u.href,
      name,
      lat: data ? Number(data[1]) : null,
      lng: data ? Number(data[2]) : null,
      placeId: queryPlaceId,
    };
  }
  const code = shareLinkCode(host, u.pathname);
  if (code === '') return { kind: 'invalid', reason: 'a share link without its code' };
  if (code !== null) return { kind: 'link', url: u.href };
  return { kind: 'invalid', reason: 'not a Google Maps or OpenStreetMap place URL, nor a maps.app.goo.gl share link' };
}
