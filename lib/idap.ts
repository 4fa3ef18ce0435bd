import type { DedupeRecord, RecordType } from './dedupe';
import { hasControlCharacter, NO_CONTROL_CHARACTERS } from './emails';
import { domainOf, normalizeEmail, normalizeProflinkUrl, normalizeText, toE164 } from './normalize';

/** IDAP resource types served by the resource API (spec §2.9, §4.5). */
export const RESOURCE_TYPES = [
  'businesses',
  'domains',
  'contacts',
  'emails',
  'phones',
  'company_registry',
  'proflink_profiles',
  'pins',
] as const;
export type ResourceType = (typeof RESOURCE_TYPES)[number];

/** Media resources exist under the idap:// scheme but are served by the media proxy, not by these endpoints. */
export const MEDIA_TYPES = ['media', 'images', 'videos', 'screenshots'] as const;
export type MediaType = (typeof MEDIA_TYPES)[number];
export const MEDIA_PROXY_PATH = '/api/v1/idap/media/{media_id}';

/** Flag values (spec §2.9). `rejected` resources are hidden from lists unless asked for. */
export const FLAGS = ['new', 'qualified', 'contacted', 'rejected', 'converted', 'priority', 'do_not_contact'] as const;
export type Flag = (typeof FLAGS)[number];

/** Where a resource came from (spec §4.5 `source`); `import` is the bulk import endpoint. */
export const SOURCES = [
  'crawl_maps',
  'crawl_site',
  'crawl_verify',
  'crawl_maps_enrich',
  'crawl_people',
  'crawl_landing',
  'crawl_company_data',
  'import',
] as const;
export type Source = (typeof SOURCES)[number];

export const idapRef = (type: string, id: string) => `idap://${type}/${id}`;

export type KeyResult = { key: string } | { error: string; field: string };

const str = (v: unknown): string | null =>
  typeof v === 'string' && v.trim() !== '' ? v : typeof v === 'number' ? String(v) : null;

/**
 * The natural key that identifies a resource of `type` within a client, derived from its data:
 * the same business, domain, e-mail... always gets the same key, so upserts are idempotent.
 * Domains are registrable domains (lib/normalize.ts domainOf): www.acme.co.uk and shop.acme.co.uk
 * are one company, `domain:acme.co.uk`.
 *
 * | type | data keys (first present wins) | key |
 * |---|---|---|
 * | businesses | place_id / maps_place_id, else website / domain, else name (+ address) | `place:<id>`, `domain:<domain>`, `name:<name>|<address>` |
 * | domains | domain / website | the registrable domain, lower-case, punycode |
 * | contacts | email, else proflink_url, else full_name + company_domain / company_name | `email:…`, `proflink:…`, `name:…|…` |
 * | emails | address / email | lower-cased address |
 * | phones | number / phone (+ country for national numbers) | E.164 |
 * | company_registry | registry + registry_id | `<registry>:<ID>` |
 * | proflink_profiles | url / profile_url | normalised profile URL |
 * | pins | pin_data_set_id + pin_name | `<data set>:<pin name>` |
 */
export function naturalKeyOf(type: ResourceType, data: Record<string, unknown>): KeyResult {
  switch (type) {
    case 'businesses': {
      const place = str(data.place_id) ?? str(data.maps_place_id);
      if (place) return { key: `place:${place.trim()}` };
      const domain = domainOf(str(data.website) ?? str(data.domain));
      if (domain) return { key: `domain:${domain}` };
      const name = normalizeText(str(data.name));
      if (name) return { key: `name:${name}|${normalizeText(str(data.address)) ?? ''}` };
      return { field: 'place_id', error: 'a business needs place_id, website or name' };
    }
    case 'domains': {
      const domain = domainOf(str(data.domain) ?? str(data.website));
      return domain ? { key: domain } : { field: 'domain', error: 'a domain needs domain (a host name or URL)' };
    }
    case 'contacts': {
      const email = normalizeEmail(str(data.email));
      if (email) return { key: `email:${email}` };
      const proflink = normalizeProflinkUrl(str(data.proflink_url));
      if (proflink) return { key: `proflink:${proflink}` };
      const name = normalizeText(str(data.full_name));
      const company = domainOf(str(data.company_domain)) ?? normalizeText(str(data.company_name));
      if (name && company) return { key: `name:${name}|${company}` };
      return {
        field: 'email',
        error: 'a contact needs email, proflink_url, or full_name with company_domain or company_name',
      };
    }
    case 'emails': {
      const email = normalizeEmail(str(data.address) ?? str(data.email));
      if (email && hasControlCharacter(email)) return { field: 'address', error: NO_CONTROL_CHARACTERS };
      return email?.includes('@')
        ? { key: email }
        : { field: 'address', error: 'an email needs address (an e-mail address)' };
    }
    case 'phones': {
      const e164 = toE164(str(data.number) ?? str(data.phone), str(data.country) ?? undefined);
      return e164
        ? { key: e164 }
        : { field: 'number', error: 'a phone needs number in international form (+44...) or with country' };
    }
    case 'company_registry': {
      const registry = normalizeText(str(data.registry));
      const id = str(data.registry_id)?.replace(/\s+/g, '').toUpperCase();
      return registry && id
        ? { key: `${registry}:${id}` }
        : { field: 'registry_id', error: 'a registry record needs registry and registry_id' };
    }
    case 'proflink_profiles': {
      const url = normalizeProflinkUrl(str(data.url) ?? str(data.profile_url));
      return url ? { key: url } : { field: 'url', error: 'a profile needs url' };
    }
    case 'pins': {
      const set = str(data.pin_data_set_id)?.trim();
      const name = str(data.pin_name)?.trim();
      return set && name
        ? { key: `${set}:${name}` }
        : { field: 'pin_name', error: 'a pin needs pin_data_set_id and pin_name' };
    }
  }
}

/** The resource type a canonical record of de-duplication (spec §2.7) stands for. */
const RECORD_RESOURCE: Record<RecordType, ResourceType> = {
  business: 'businesses',
  contact: 'contacts',
  email: 'emails',
  profile: 'proflink_profiles',
};

/**
 * The IDAP resource a canonical record stands for (issue 41: resources follow a merge): its type and
 * the natural key its fields give, as an import of the same fields would key it; null when they give none.
 */
export function resourceKeyOfRecord(
  recordType: RecordType,
  r: DedupeRecord,
): { type: ResourceType; key: string } | null {
  const type = RECORD_RESOURCE[recordType];
  const data: Record<string, unknown> =
    type === 'businesses'
      ? { place_id: r.maps_place_id, website: r.website ?? r.company_domain, name: r.company_name, address: r.address }
      : type === 'proflink_profiles'
        ? { url: r.proflink_url }
        : { ...r, address: r.email };
  const found = naturalKeyOf(type, data);
  return 'key' in found ? { type, key: found.key } : null;
}
