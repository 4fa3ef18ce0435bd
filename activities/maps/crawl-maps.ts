import { ApplicationFailure, Context } from '@temporalio/activity';
import { DedupeRepository } from '../../db/repositories/dedupe';
import { JobResultStore } from '../../db/repositories/job-results';
import { jobOfActivity } from '../../db/repositories/jobs';
import { CanonicalRecordModel } from '../../db/models/canonical-record';
import {
  crawlMapsPayload,
  urlProvider,
  type CrawlMapsPayload,
  type CrawlMapsResult,
  type MapsBusiness,
  type MapsProvider,
} from '../../jobs/crawl-maps';
import { HEARTBEAT_INTERVAL } from '../../jobs/limits';
import { hostImage } from '../../lib/hosted-image';
import { BlockedAddressError, OutboundError } from '../../lib/outbound';
import { endpointHttp, parsePayload, type ActivityDeps, type JobActivityOutput } from '../deps';
import { businessFromGoogle, businessFromNominatim, nominatimFromOverpass } from './business';
import { MapsError, notFound } from './errors';
import { GooglePlacesClient, type GooglePlace, type TextSearch } from './google-places';
import { NominatimClient, type NominatimPlace } from './nominatim';
import { osmCategory, OverpassClient, overpassQuery } from './overpass';
import { pacedGlobally } from '../pacing';
import { parsePlaceRef, splitQuery, type PlaceRef } from './parse';

/** What the workflow does for a job (workflows/maps.ts): Google in one activity, OSM as rate-limited requests. */
export type MapsPlan =
  | { provider: 'google_places' }
  | { provider: 'osm'; kind: 'search'; q: string; maxResults: number; language?: string; countryCode?: string }
  | { provider: 'osm'; kind: 'overpass'; ql: string; tag: [string, string] }
  | { provider: 'osm'; kind: 'lookup'; osmIds: string[]; language?: string };

/** Google pages hold at most 20 places. */
const GOOGLE_PAGE = 20;
/** A text search answers at most 60 places (3 pages of 20), however many match. */
const MAX_PER_QUERY = 60;
/** Tiles searched at most for one job: 85 = the area, its quarters and theirs (1 + 4 + 16 + 64). */
const MAX_TILES = 85;
/** Provider photos listed per business (each costs a request for its key-free address). */
const PHOTOS_PER_BUSINESS = 3;
/** Requests in flight for one job's details and photos. */
const PER_JOB_CONCURRENCY = 4;
/** Nominatim's policy (and Overpass's fair use): at most 1 request per second; the margin covers the jitter between our start and its arrival. */
const NOMINATIM_INTERVAL_MS = 1100;
/** Redirects followed from a share link to its place URL (maps.app.goo.gl takes one or two). */
const MAX_LINK_HOPS = 5;

/**
 * The provider of a job: the payload's, else the one its url is for (an openstreetmap.org URL is
 * OSM's, a place id or Google URL Google's), else google_places when GOOGLE_PLACES_API_KEY is
 * configured, else osm. Decided here, in the worker, because the key is the worker's secret (the API need not
 * hold it); the result's `provider` says which one answered.
 */
export function resolveProvider(payload: CrawlMapsPayload, googleKey: string | undefined): MapsProvider {
  return payload.provider ?? urlProvider(payload.url) ?? (googleKey ? 'google_places' : 'osm');
}

export function createMapsActivities(deps: ActivityDeps) {
  const { config } = deps;
  const results = new JobResultStore(deps.db, deps.storage);
  const dedupe = new DedupeRepository(deps.db);
  let google: GooglePlacesClient | undefined;
  let overpassClient: OverpassClient | undefined;
  const overpass = (): OverpassClient =>
    (overpassClient ??= new OverpassClient({
      baseUrl: config.OVERPASS_BASE_URL,
      userAgent: config.OSM_USER_AGENT,
      http: endpointHttp(deps),
    }));
  let nominatimClient: NominatimClient | undefined;
  const nominatim = (): NominatimClient =>
    (nominatimClient ??= new NominatimClient({
      baseUrl: config.NOMINATIM_BASE_URL,
      userAgent: config.OSM_USER_AGENT,
      http: endpointHttp(deps),
    }));

  const googleClient = (): GooglePlacesClient => {
    if (!config.GOOGLE_PLACES_API_KEY) {
      throw ApplicationFailure.nonRetryable(
        'the google_places provider is not configured: set GOOGLE_PLACES_API_KEY (or ask for provider osm)',
        'ProviderNotConfigured',
      );
    }
    return (google ??= new GooglePlacesClient({
      baseUrl: config.GOOGLE_PLACES_BASE_URL,
      apiKey: config.GOOGLE_PLACES_API_KEY,
      http: endpointHttp(deps),
    }));
  };

  /**
   * Reads a place URL. A Google Maps share link (maps.app.goo.gl, goo.gl/maps: the only links the
   * payload accepts) is followed hop by hop through the SSRF guard until a redirect names a place
   * URL, which is read from the Location header without fetching google.com itself.
   */
  async function placeRef(url: string, signal: AbortSignal): Promise<PlaceRef> {
    const ref = parsePlaceRef(url);
    if (ref.kind !== 'link') return ref;
    let target: PlaceRef = ref;
    let hops = 0;
    const res = await deps.http.fetch(ref.url, {
      signal,
      maxBytes: 512 * 1024,
      // Share links hop through goo.gl and google.com until one names the place: stop there (google.com is not fetched), or when the hops run out.
      onRedirect: ({ to, hop }) => {
        target = parsePlaceRef(to);
        hops = hop;
        return target.kind !== 'link' || hop === MAX_LINK_HOPS ? 'stop' : undefined;
      },
    });
    if (target.kind !== 'link') return target;
    if (hops === MAX_LINK_HOPS)
      return { kind: 'invalid', reason: `${url} did not lead to a place within ${MAX_LINK_HOPS} redirects` };
    return { kind: 'invalid', reason: `${url} led to ${res.url} (HTTP ${res.status}), not a place` };
  }

  /** Image bytes into the client's media bucket under their content hash; the source URL when that fails. */
  async function storePhoto(clientId: string, source: string, signal: AbortSignal): Promise<string> {
    try {
      return (await hostImage(deps, clientId, source, 'maps/photos', signal))?.url ?? source;
    } catch (err) {
      if (signal.aborted) throw err;
      deps.logger.warn({ err, source }, 'maps photo not stored; keeping its source URL');
      return source;
    }
  }

  /**
   * Photos, de-duplication and the stored result, for either provider. Idempotent: photos are keyed
   * by content hash, a retry overwrites the result row, and a listing whose canonical record this job
   * added itself still counts as first seen (the record's source_worker names the job, its place id the listing).
   */
  async function finish(
    input: {
      jobId: string;
      payload: CrawlMapsPayload;
      provider: MapsProvider;
      query: string;
      businesses: MapsBusiness[];
      photoSources: string[][];
      tilesSearched?: number;
    },
    signal: AbortSignal,
  ): Promise<JobActivityOutput> {
    const ctx = Context.current();
    const job = await jobOfActivity(deps.db, input.jobId);
    if (!job) throw ApplicationFailure.nonRetryable(`job ${input.jobId} does not exist`, 'InvalidInput');
    await pool(input.businesses, PER_JOB_CONCURRENCY, async (b, i) => {
      const sources = input.photoSources[i] ?? [];
      b.photos = sources;
      b.image_url = sources[0] ? await storePhoto(job.client_id, sources[0], signal) : null;
      ctx.heartbeat({ photos: i });
    });
    let businesses = input.businesses;
    if (input.payload.dedupe_enabled && config.DEDUPE_ENABLED) {
      const sourceWorker = `crawlMaps/${input.jobId}`;
      const checked = await dedupe.check({
        clientId: job.client_id,
        recordType: 'business',
        records: businesses.map((b) => ({
          maps_place_id: b.place_id,
          company_name: b.business_name,
          website: b.website,
          phone: b.phone_e164 ?? b.phone,
          country: b.country_code,
          // The address is for fuzzy matching to compare; without it the records (and their exact_hash) are as before.
          ...(input.payload.dedupe_fuzzy ? { address: b.address } : {}),
        })),
        addToCanonical: true,
        campaignId: job.campaign_id,
        threshold: 0.5,
        sourceWorker,
        fuzzy: input.payload.dedupe_fuzzy,
      });
      // A retry of this activity meets the records its first attempt added: a listing that matches
      // the record it made itself (this job's, with its place id) is still first seen. A listing
      // matching another listing of the same result (a chain's branches: one website, one phone)
      // is a duplicate, whichever attempt this is.
      const matched = checked.flatMap((c) => (c.isDuplicate ? [c.matchedId] : []));
      const ownPlace = new Map(
        matched.length === 0
          ? []
          : (
              await CanonicalRecordModel.forClient<CanonicalRecordModel>(deps.db, job.client_id)
                .whereIn('id', matched)
                .where('source_worker', sourceWorker)
                .select('id', 'maps_place_id')
            ).map((r) => [Number(r.id), r.maps_place_id]),
      );
      businesses.forEach((b, i) => {
        const c = checked[i];
        b.dedupe_unique =
          !c || !c.isDuplicate || (ownPlace.has(c.matchedId) && ownPlace.get(c.matchedId) === b.place_id);
      });
      if (input.payload.dedupe_unique_only) businesses = businesses.filter((b) => b.dedupe_unique);
    } else if (input.payload.dedupe_enabled) {
      // De-duplication is off on this service (DEDUPE_ENABLED): spec §2.2 has dedupe_unique whenever
      // the payload's dedupe_enabled is on, and the dedupe API calls every record unique when off.
      for (const b of businesses) b.dedupe_unique = true;
    }
    const data: CrawlMapsResult = {
      businesses,
      results_count: businesses.length,
      provider: input.provider,
      query: input.query,
      ...(input.tilesSearched !== undefined ? { tiles_searched: input.tilesSearched } : {}),
    };
    await results.save(input.jobId, data);
    return { resultsCount: businesses.length };
  }

  return {
    /** The job's plan from its payload (parsed with the catalog schema). Reads nothing outside; invalid input fails for good. */
    async planMaps(input: { payload: Record<string, unknown> }): Promise<MapsPlan> {
      const payload = parsePayload(crawlMapsPayload, input.payload);
      const provider = resolveProvider(payload, config.GOOGLE_PLACES_API_KEY);
      if (provider === 'google_places') return { provider };
      if (payload.url !== undefined) {
        const ref = parsePlaceRef(payload.url);
        if (ref.kind !== 'osm')
          throw ApplicationFailure.nonRetryable(
            `provider osm needs an openstreetmap.org node, way or relation URL, not ${payload.url}`,
            'InvalidInput',
          );
        return { provider, kind: 'lookup', osmIds: [`${ref.osmType}${ref.osmId}`], language: payload.language };
      }
      const q = payload.search_query as string;
      // "bakery in Leeds": a category in a named area is Overpass's question (every such object, not
      // the best text matches); anything else is a Nominatim text search.
      const { what, where } = splitQuery(q);
      const tag = where ? osmCategory(what) : undefined;
      if (tag && where) return { provider, kind: 'overpass', ql: overpassQuery(tag, where, payload.max_results), tag };
      return {
        provider,
        kind: 'search',
        q,
        maxResults: payload.max_results,
        language: payload.language,
        countryCode: payload.region,
      };
    },

    /**
     * crawlMaps with Google Places (New): a place (id, place URL or share link) or a text search paged
     * 20 at a time up to max_results, details for reviews, photos, dedupe, the stored result. One
     * activity on the job's queue; heartbeats every half second and every request; a cancel aborts the
     * request in flight. Quota answers are retried after the provider's delay (ApplicationFailure
     * nextRetryDelay); a rejected key and an unknown place fail at once.
     */
    async crawlMapsGoogle(input: { jobId: string; payload: Record<string, unknown> }): Promise<JobActivityOutput> {
      const payload = parsePayload(crawlMapsPayload, input.payload);
      const client = googleClient();
      return withHeartbeat(async (signal, beat) => {
        const opts = { languageCode: payload.language, regionCode: payload.region };
        let places: GooglePlace[];
        let query: string;
        let tilesSearched: number | undefined;
        if (payload.url !== undefined) {
          query = payload.url;
          const ref = await placeRef(payload.url, signal);
          beat({ resolved: ref.kind });
          places = [await googlePlace(client, ref, payload, signal)];
        } else {
          query = payload.search_query as string;
          const found = await searchGoogle(
            client,
            { textQuery: query, ...opts },
            payload.max_results,
            payload.bounds,
            signal,
            beat,
          );
          places = found.places;
          tilesSearched = found.tilesSearched;
          if (payload.extract_reviews) {
            places = await pool(places, PER_JOB_CONCURRENCY, async (p) => {
              const detailed = await client.details(p.id, { reviews: true, ...opts }, signal);
              beat({ details: p.id });
              return { ...p, reviews: detailed.reviews ?? [] };
            });
          }
        }
        const businesses = places.map((p) => businessFromGoogle(p, payload.region));
        const photoSources = await pool(places, PER_JOB_CONCURRENCY, async (p) => {
          const uris: string[] = [];
          for (const photo of (p.photos ?? []).slice(0, PHOTOS_PER_BUSINESS)) {
            try {
              uris.push(await client.photoUri(photo.name, signal));
            } catch (err) {
              // A photo the provider cannot find is left out; quota, a rejected key or a cancel stop the job.
              if (signal.aborted || !(err instanceof MapsError) || err.type !== 'ProviderRejected') throw err;
            }
            beat({ photo: photo.name });
          }
          return uris;
        });
        return finish(
          { jobId: input.jobId, payload, provider: 'google_places', query, businesses, photoSources, tilesSearched },
          signal,
        );
      });
    },

    /** One Nominatim search (one request, on the Nominatim queue: its rate limit is per request). */
    searchNominatim: (input: {
      q: string;
      limit: number;
      excludePlaceIds: number[];
      language?: string;
      countryCode?: string;
    }): Promise<NominatimPlace[]> =>
      withHeartbeat((signal) =>
        pacedGlobally(deps.db, 'nominatim', { gapMs: NOMINATIM_INTERVAL_MS }, signal, () =>
          nominatim().search(input, signal),
        ),
      ),

    /** One Overpass query (one request, on the Overpass queue), its elements as Nominatim-shaped places. */
    queryOverpass: (input: { ql: string; tag: [string, string] }): Promise<NominatimPlace[]> =>
      withHeartbeat(async (signal) => {
        const elements = await pacedGlobally(deps.db, 'overpass', { gapMs: NOMINATIM_INTERVAL_MS }, signal, () =>
          overpass().query(input.ql, signal),
        );
        return elements.map((e) => nominatimFromOverpass(e, input.tag));
      }),

    /** One Nominatim lookup by OSM id (one request, on the Nominatim queue). An empty answer is "business not found". */
    lookupNominatim: (input: { osmIds: string[]; language?: string }): Promise<NominatimPlace[]> =>
      withHeartbeat(async (signal) => {
        const found = await pacedGlobally(deps.db, 'nominatim', { gapMs: NOMINATIM_INTERVAL_MS }, signal, () =>
          nominatim().lookup(input, signal),
        );
        if (found.length === 0) throw notFound(input.osmIds.join(', '));
        return found;
      }),

    /** The OSM places of a job as its result: businesses, photos (OSM `image` tags), dedupe, stored. */
    async saveOsmMaps(input: {
      jobId: string;
      payload: Record<string, unknown>;
      places: NominatimPlace[];
    }): Promise<JobActivityOutput> {
      const payload = parsePayload(crawlMapsPayload, input.payload);
      return withHeartbeat(async (signal) => {
        const seen = new Set<string>();
        const businesses: MapsBusiness[] = [];
        const photoSources: string[][] = [];
        for (const p of input.places) {
          const b = businessFromNominatim(p, payload.region);
          if (seen.has(b.place_id) || businesses.length >= payload.max_results) continue;
          seen.add(b.place_id);
          businesses.push(b);
          const image = p.extratags?.image;
          photoSources.push(image && /^https?:\/\//i.test(image) ? [image] : []);
        }
        return finish(
          {
            jobId: input.jobId,
            payload,
            provider: 'osm',
            query: payload.url ?? payload.search_query ?? '',
            businesses,
            photoSources,
          },
          signal,
        );
      });
    },
  };
}

export type MapsActivities = ReturnType<typeof createMapsActivities>;

type Rect = { low: { latitude: number; longitude: number }; high: { latitude: number; longitude: number } };

/**
 * A text search up to `max` places. One query answers at most 60 (3 pages of 20); when it comes
 * back full and more are wanted, the area (`bounds`, else the viewport of the query's location,
 * "bakery in Leeds" -> Leeds) is searched in locationRestriction rectangles, a tile that comes back
 * full split in four, merged by place id until `max` or the area is exhausted.
 */
async function searchGoogle(
  client: GooglePlacesClient,
  base: Omit<TextSearch, 'pageSize' | 'pageToken'>,
  max: number,
  bounds: Rect | undefined,
  signal: AbortSignal,
  beat: (details?: unknown) => void,
): Promise<{ places: GooglePlace[]; tilesSearched?: number }> {
  const byId = new Map<string, GooglePlace>();
  // A page token is only valid with the parameters of the first request: the page size stays.
  const pageSize = Math.min(GOOGLE_PAGE, max);
  const query = async (body: Omit<TextSearch, 'pageSize' | 'pageToken'>, size: number): Promise<number> => {
    let answered = 0;
    let pageToken: string | undefined;
    do {
      const page = await client.searchText({ ...body, pageSize: size, pageToken }, signal);
      answered += page.places.length;
      for (const p of page.places) if (!byId.has(p.id) && byId.size < max) byId.set(p.id, p);
      beat({ places: byId.size });
      pageToken = page.places.length > 0 ? page.nextPageToken : undefined;
    } while (pageToken && byId.size < max);
    return answered;
  };
  const first = await query(base, pageSize);
  if (byId.size >= max || first < MAX_PER_QUERY) return { places: [...byId.values()] };

  const where = splitQuery(base.textQuery).where;
  const area =
    bounds ??
    (where
      ? (
          await client.searchText(
            { textQuery: where, pageSize: 1, languageCode: base.languageCode, regionCode: base.regionCode },
            signal,
          )
        ).places[0]?.viewport
      : undefined);
  if (!area) return { places: [...byId.values()] };
  const tiles: Rect[] = [area];
  let tilesSearched = 0;
  while (tiles.length > 0 && byId.size < max && tilesSearched < MAX_TILES) {
    const tile = tiles.shift() as Rect;
    tilesSearched++;
    const answered = await query({ ...base, locationRestriction: { rectangle: tile } }, GOOGLE_PAGE);
    if (answered >= MAX_PER_QUERY) tiles.push(...quarters(tile));
  }
  return { places: [...byId.values()], tilesSearched };
}

function quarters(r: Rect): Rect[] {
  const midLat = (r.low.latitude + r.high.latitude) / 2;
  const midLng = (r.low.longitude + r.high.longitude) / 2;
  return [
    { low: r.low, high: { latitude: midLat, longitude: midLng } },
    { low: { latitude: r.low.latitude, longitude: midLng }, high: { latitude: midLat, longitude: r.high.longitude } },
    { low: { latitude: midLat, longitude: r.low.longitude }, high: { latitude: r.high.latitude, longitude: midLng } },
    { low: { latitude: midLat, longitude: midLng }, high: r.high },
  ];
}

/** The Google place a `url` names: by id, by the id in a place URL, or by the name and coordinates of one. */
async function googlePlace(
  client: GooglePlacesClient,
  ref: PlaceRef,
  payload: CrawlMapsPayload,
  signal: AbortSignal,
): Promise<GooglePlace> {
  const opts = { reviews: payload.extract_reviews, languageCode: payload.language, regionCode: payload.region };
  if (ref.kind === 'google_place_id') return client.details(ref.placeId, opts, signal);
  if (ref.kind === 'google_place_url') {
    if (ref.placeId) return client.details(ref.placeId, opts, signal);
    if (!ref.name) throw notFound(ref.url);
    const near =
      ref.lat !== null && ref.lng !== null
        ? { locationBias: { circle: { center: { latitude: ref.lat, longitude: ref.lng }, radius: 200 } } }
        : {};
    const page = await client.searchText(
      { textQuery: ref.name, pageSize: 1, languageCode: payload.language, regionCode: payload.region, ...near },
      signal,
    );
    const first = page.places[0];
    if (!first) throw notFound(ref.name);
    return client.details(first.id, opts, signal);
  }
  if (ref.kind === 'osm')
    throw ApplicationFailure.nonRetryable('an openstreetmap.org URL needs provider osm', 'InvalidInput');
  throw ApplicationFailure.nonRetryable(
    `invalid maps URL or place id: ${ref.kind === 'invalid' ? ref.reason : payload.url}`,
    'InvalidInput',
  );
}

/** Runs `work` with the activity's cancellation signal, heartbeating every half second, and types its failure. */
async function withHeartbeat<T>(
  work: (signal: AbortSignal, beat: (details?: unknown) => void) => Promise<T>,
): Promise<T> {
  const ctx = Context.current();
  let last: unknown;
  const beat = (details?: unknown) => {
    last = details;
    ctx.heartbeat(details);
  };
  beat();
  const timer = setInterval(() => ctx.heartbeat(last), HEARTBEAT_INTERVAL.ms);
  try {
    return await work(ctx.cancellationSignal, beat);
  } catch (err) {
    throw toFailure(err);
  } finally {
    clearInterval(timer);
  }
}

function toFailure(err: unknown): unknown {
  if (err instanceof MapsError) {
    return ApplicationFailure.create({
      message: err.message,
      type: err.type,
      nonRetryable: !err.retryable,
      nextRetryDelay: err.retryAfterMs,
    });
  }
  // A provider base URL (or share link) that resolves to a private address is refused for good.
  if (err instanceof BlockedAddressError) return ApplicationFailure.nonRetryable(err.message, 'OutboundBlocked');
  if (err instanceof OutboundError)
    return ApplicationFailure.retryable(`maps provider request failed: ${err.message}`, 'ProviderUnavailable');
  return err;
}

/** Maps items with at most `limit` calls in flight, keeping their order. */
async function pool<T, R>(items: T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const run = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, run));
  return out;
}
