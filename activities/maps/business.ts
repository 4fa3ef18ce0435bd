import { isSupportedCountry, type CountryCode } from 'libphonenumber-js/max';
import type { MapsBusiness } from '../../jobs/crawl-maps';
import { parsePhone } from '../../lib/phones';
import { AMENITY_FIELDS, type GooglePlace } from './google-places';
import type { NominatimPlace } from './nominatim';
import type { OverpassElement } from './overpass';
import { hoursFromOsm, hoursFromPeriods, priceLevel } from './parse';

/**
 * A provider's place as the §2.2 business. image_url, photos and dedupe_unique are filled in later
 * (they need storage and the canonical store); here image_url is null and photos empty.
 */

const region = (code: string | null | undefined): CountryCode | undefined => {
  const c = code?.toUpperCase();
  return c && isSupportedCountry(c) ? c : undefined;
};

function phoneFields(
  raw: string | null,
  country: CountryCode | undefined,
): Pick<MapsBusiness, 'phone' | 'phone_e164' | 'phone_national' | 'phone_type' | 'phone_valid'> {
  if (!raw) return { phone: null, phone_e164: null, phone_national: null, phone_type: null, phone_valid: false };
  const p = parsePhone(raw, country);
  return { phone: p.raw, phone_e164: p.e164, phone_national: p.national, phone_type: p.type, phone_valid: p.valid };
}

const coords = (lat: number | undefined, lng: number | undefined) =>
  lat !== undefined && lng !== undefined && Number.isFinite(lat) && Number.isFinite(lng)
    ? { lat, lng, latitude: lat, longitude: lng }
    : null;

// Google types every listing also carries; they say nothing about the business.
const GENERIC_TYPES = new Set(['point_of_interest', 'establishment']);

/** A Places API (New) Place; `fallbackRegion` (the payload's region) reads phones when the address names no country. */
export function businessFromGoogle(p: GooglePlace, fallbackRegion?: string): MapsBusiness {
  const country = p.addressComponents?.find((c) => c.types?.includes('country'))?.shortText ?? null;
  const name = p.displayName?.text ?? p.formattedAddress ?? p.id;
  const categories = [
    ...new Set([p.primaryType, ...(p.types ?? [])].filter((t): t is string => !!t && !GENERIC_TYPES.has(t))),
  ];
  const accessibility = Object.entries(p.accessibilityOptions ?? {})
    .filter(([, v]) => v === true)
    .map(([k]) => k.replace(/([A-Z])/g, ' $1').toLowerCase());
  const price = priceLevel(p.priceLevel);
  const reviews = p.reviews?.map((r) => ({
    author: r.authorAttribution?.displayName ?? null,
    rating: typeof r.rating === 'number' ? r.rating : null,
    text: r.text?.text ?? r.originalText?.text ?? null,
    published_at: r.publishTime ?? null,
  }));
  return {
    business_name: name,
    name,
    address: p.formattedAddress ?? null,
    ...phoneFields(
      p.internationalPhoneNumber ?? p.nationalPhoneNumber ?? null,
      region(country) ?? region(fallbackRegion),
    ),
    image_url: null,
    website: p.websiteUri ?? null,
    rating: typeof p.rating === 'number' ? p.rating : null,
    review_count: typeof p.userRatingCount === 'number' ? p.userRatingCount : null,
    reviews_count: typeof p.userRatingCount === 'number' ? p.userRatingCount : null,
    hours: hoursFromPeriods(p.regularOpeningHours?.periods),
    categories,
    place_id: p.id,
    maps_place_id: p.id,
    maps_url: p.googleMapsUri ?? null,
    coordinates: coords(p.location?.latitude, p.location?.longitude),
    photos: [],
    ...(price ? { price_level: price } : {}),
    amenities: Object.entries(AMENITY_FIELDS)
      .filter(([field]) => p[field] === true)
      .map(([, label]) => label),
    accessibility: accessibility.length > 0 ? accessibility.join(', ') : null,
    business_status: p.businessStatus ?? null,
    country_code: country?.toUpperCase() ?? null,
    ...(reviews ? { reviews } : {}),
  };
}

/** OSM tags that are amenities when "yes" (the result names them as the tags do). */
const OSM_AMENITIES = [
  'takeaway',
  'delivery',
  'outdoor_seating',
  'indoor_seating',
  'internet_access',
  'drive_through',
  'toilets',
  'air_conditioning',
  'reservation',
];

const OSM_TYPES: Record<string, string> = {
  N: 'node',
  W: 'way',
  R: 'relation',
  node: 'node',
  way: 'way',
  relation: 'relation',
};

/** The stable id of an OSM object (Nominatim's own place_id changes between its imports). */
export function osmPlaceId(p: NominatimPlace): string {
  return `osm:${OSM_TYPES[p.osm_type ?? ''] ?? p.osm_type ?? 'place'}/${p.osm_id ?? p.place_id}`;
}

/**
 * A result's name; without one (answers of 2021 have no `name`, an unnamed object's is null),
 * display_name's first part, except for an unnamed house, whose display_name starts with its number
 * ("10, Downing Street, ..."): it is called by its address, "10 Downing Street".
 */
function nominatimName(p: NominatimPlace): string {
  const named = p.name?.trim();
  if (named) return named;
  const first = p.display_name?.split(',')[0]?.trim();
  const { house_number: house, road } = p.address ?? {};
  if (first && first === house && road) return `${house} ${road}`;
  return first || osmPlaceId(p);
}

/** A Nominatim jsonv2 result with its extra tags. */
export function businessFromNominatim(p: NominatimPlace, fallbackRegion?: string): MapsBusiness {
  const tags = p.extratags ?? {};
  const country = p.address?.country_code?.toUpperCase() ?? null;
  const name = nominatimName(p);
  const id = osmPlaceId(p);
  const lat = p.lat !== undefined ? Number(p.lat) : undefined;
  const lng = p.lon !== undefined ? Number(p.lon) : undefined;
  const wheelchair = tags.wheelchair;
  const osmType = OSM_TYPES[p.osm_type ?? ''];
  return {
    business_name: name,
    name,
    address: p.display_name ?? null,
    ...phoneFields(tags.phone ?? tags['contact:phone'] ?? null, region(country) ?? region(fallbackRegion)),
    image_url: null,
    website: tags.website ?? tags['contact:website'] ?? null,
    // OSM has no ratings or reviews.
    rating: null,
    review_count: null,
    reviews_count: null,
    hours: hoursFromOsm(tags.opening_hours),
    categories: [...new Set([p.type, p.category, tags.cuisine].filter((t): t is string => !!t && t !== 'yes'))],
    place_id: id,
    maps_place_id: id,
    maps_url: osmType && p.osm_id !== undefined ? `https://www.openstreetmap.org/${osmType}/${p.osm_id}` : null,
    coordinates: coords(lat, lng),
    photos: [],
    amenities: OSM_AMENITIES.filter((k) => tags[k] !== undefined && tags[k] !== 'no'),
    accessibility: wheelchair ? `wheelchair: ${wheelchair}` : null,
    business_status: null,
    country_code: country,
  };
}

/**
 * An Overpass element as the Nominatim result it amounts to (name, address from addr:*, tags as
 * extratags), so both OSM sources map to businesses one way.
 */
export function nominatimFromOverpass(e: OverpassElement, tag: [string, string]): NominatimPlace {
  const t = e.tags ?? {};
  const lat = e.lat ?? e.center?.lat;
  const lon = e.lon ?? e.center?.lon;
  const street = [t['addr:housenumber'], t['addr:street']].filter(Boolean).join(' ');
  const address = [t.name, street, t['addr:city'], t['addr:postcode'], t['addr:country']].filter(Boolean).join(', ');
  return {
    place_id: e.id,
    osm_type: e.type,
    osm_id: e.id,
    lat: lat === undefined ? undefined : String(lat),
    lon: lon === undefined ? undefined : String(lon),
    category: tag[0],
    type: tag[1],
    name: t.name,
    display_name: address || undefined,
    // An element without addr:country is in the country its neighbours in the same area name.
    address: t['addr:country']
      ? { country_code: t['addr:country'].toLowerCase() }
      : e.areaCountry
        ? { country_code: e.areaCountry.toLowerCase() }
        : {},
    extratags: t,
  };
}
