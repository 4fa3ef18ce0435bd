import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { naturalKeyOf, type ResourceType, type Source } from '../../lib/idap';
import { domainOf } from '../../lib/normalize';

/**
 * How a job's result becomes IDAP resources (spec §2.9, §4.5): nodes (resources, identified by
 * their natural keys, so re-projecting the same result changes nothing) and edges between them.
 * Pure: the projectJobResult activity writes the plan.
 */
export interface ProjectionNode {
  type: ResourceType;
  data: Record<string, unknown>;
}

export interface Projection {
  source: Source;
  nodes: ProjectionNode[];
  /** Pairs of indexes into `nodes`. */
  edges: [number, number][];
  /** Indexes of the business nodes (queued for the lead index). */
  businesses: number[];
}

const SOURCE_BY_TYPE: Record<string, Source> = {
  crawlMaps: 'crawl_maps',
  crawlSite: 'crawl_site',
  crawlVerify: 'crawl_verify',
  crawlPeople: 'crawl_people',
  crawlLanding: 'crawl_landing',
  crawlCompanyData: 'crawl_company_data',
};

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

class Builder {
  readonly nodes: ProjectionNode[] = [];
  readonly edges: [number, number][] = [];
  readonly businesses: number[] = [];
  private readonly byKey = new Map<string, number>();

  /** Adds a node unless its natural key cannot be derived; returns its index (or undefined). */
  add(type: ResourceType, data: Obj): number | undefined {
    const key = naturalKeyOf(type, data);
    if ('error' in key) return undefined;
    const id = `${type}/${key.key}`;
    const existing = this.byKey.get(id);
    if (existing !== undefined) {
      const node = this.nodes[existing] as ProjectionNode;
      node.data = { ...data, ...node.data };
      return existing;
    }
    this.nodes.push({ type, data });
    this.byKey.set(id, this.nodes.length - 1);
    if (type === 'businesses') this.businesses.push(this.nodes.length - 1);
    return this.nodes.length - 1;
  }

  relate(a: number | undefined, b: number | undefined): void {
    if (a !== undefined && b !== undefined && a !== b) this.edges.push([a, b]);
  }

  build(source: Source): Projection {
    return { source, nodes: this.nodes, edges: this.edges, businesses: this.businesses };
  }
}

/** The projection of a job type's result; an empty one for types (or results) that hold no resources. */
export function projectResult(type: string, result: unknown, job: { jobId: string }): Projection {
  const source = SOURCE_BY_TYPE[type] ?? 'import';
  if (!isObj(result)) return new Builder().build(source);
  if (type === 'crawlSite') return projectSite(result, job).build(source);
  if (type === 'crawlCompanyData') return projectCompanyData(result).build(source);
  return new Builder().build(source);
}

/**
 * crawlSite (§2.3): the site's business (keyed by its domain), the domain, every e-mail and phone,
 * the team as contacts, and the company's LinkedIn page as a proflink profile; all related to the
 * business, e-mails also to the domain.
 */
function projectSite(r: Obj, job: { jobId: string }): Builder {
  const b = new Builder();
  const website = str(r.final_url) ?? str(r.url);
  const domain = domainOf(website);
  if (!website || !domain) return b;
  const info = isObj(r.company_info) ? r.company_info : {};
  const phones = list(r.phones).filter(isObj);
  const emails = list(r.emails).map(str).filter((e): e is string => !!e && e.includes('@'));
  const firstPhone = phones.map((p) => str(p.e164)).find((p) => !!p) ?? null;
  const compendium = isObj(r.compendium) && r.compendium.available !== false ? r.compendium : undefined;
  const country = countryOf(firstPhone, domain);

  const business = b.add('businesses', {
    website: origin(website),
    domain,
    name: str(info.name) ?? domain,
    description: str(info.description),
    category: str(info.industry),
    address: str(info.address),
    logo_url: str(info.logo_url),
    email: emails[0] ?? null,
    phone: firstPhone,
    country,
    social_media: isObj(r.social_media) ? r.social_media : null,
    compendium_location: compendium ? str(compendium.storage_location) : null,
    compendium_url: compendium ? str(compendium.download_url) : null,
    // The lead index reads the compendium from this job's stored result, never from compendium_location.
    compendium_job_id: compendium ? job.jobId : null,
    job_id: job.jobId,
    job_type: 'crawlSite',
  });
  const domainNode = b.add('domains', { domain, website: origin(website) });
  b.relate(business, domainNode);
  for (const address of emails) {
    const e = b.add('emails', { address, domain: address.split('@')[1] ?? null, verified: false, verification_status: null });
    b.relate(business, e);
    if (domainOf(address.split('@')[1]) === domain) b.relate(domainNode, e);
  }
  for (const p of phones) {
    const number = str(p.e164);
    if (!number || p.valid === false) continue;
    b.relate(business, b.add('phones', { number, type: str(p.type), national: str(p.national), raw: str(p.raw) }));
  }
  const companyName = str(info.name);
  for (const m of list(r.team_members).filter(isObj)) {
    const contact = b.add('contacts', {
      full_name: str(m.name),
      position: str(m.position),
      email: str(m.email),
      proflink_url: str(m.proflink_url),
      photo_url: str(m.photo_url),
      company_domain: domain,
      company_name: companyName,
    });
    b.relate(business, contact);
    const proflink = str(m.proflink_url);
    if (proflink) b.relate(contact, b.add('proflink_profiles', { url: proflink, kind: 'person', full_name: str(m.name) }));
  }
  const companyProflink = str(r.proflink);
  if (companyProflink) b.relate(business, b.add('proflink_profiles', { url: companyProflink, kind: 'company', name: companyName }));
  return b;
}

/** crawlCompanyData (§2.4): each company record as a company_registry resource. */
function projectCompanyData(r: Obj): Builder {
  const b = new Builder();
  const records = [...list(r.results), ...(isObj(r.data) && str(r.data.source_id) ? [r.data] : [])].filter(isObj);
  for (const rec of records) {
    const { metadata: _metadata, ...fields } = rec;
    b.add('company_registry', { ...fields, registry: str(rec.source), registry_id: str(rec.source_id) });
  }
  return b;
}

function origin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

/** The lead's country: the region of its first phone number, else a country-code TLD. */
function countryOf(e164: string | null, domain: string): string | null {
  const region = e164 ? parsePhoneNumberFromString(e164)?.country : undefined;
  if (region) return region;
  const tld = domain.split('.').pop()?.toUpperCase() ?? '';
  if (tld === 'UK') return 'GB';
  return /^[A-Z]{2}$/.test(tld) && !['IO', 'AI', 'CO', 'ME', 'TV', 'CC', 'FM', 'LY'].includes(tld) ? tld : null;
}
