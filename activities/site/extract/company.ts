import type { CheerioAPI } from 'cheerio';
import type { Element } from 'domhandler';
import { absoluteUrl, clean, ldList, ldText, linesOf, pageElements, textOf, typesOf, type JsonLdNode } from './dom';

/** company_info of the crawlSite result (spec §2.8): null where the site does not say. */
export interface CompanyInfo {
  name: string | null;
  description: string | null;
  industry: string | null;
  key_services: string[] | null;
  target_audience: string | null;
  address: string | null;
  logo_url: string | null;
}

export const EMPTY_COMPANY: CompanyInfo = {
  name: null,
  description: null,
  industry: null,
  key_services: null,
  target_audience: null,
  address: null,
  logo_url: null,
};

// schema.org types that describe the business itself (LocalBusiness has hundreds of subtypes; these are their stems).
const ORG_TYPE =
  /(Organization|Organisation|Corporation|LocalBusiness|Business|Store|Shop|Restaurant|Agency|Office|Clinic|Dentist|Physician|Attorney|LegalService|Hotel|School|NGO|Company)$/;
const GENERIC_TYPES = new Set(['Organization', 'Corporation', 'LocalBusiness', 'Company', 'OnlineBusiness', 'NGO']);

export function isOrganization(node: JsonLdNode): boolean {
  return typesOf(node).some((t) => ORG_TYPE.test(t));
}

/** "Street, Postcode City, Region, Country" from a schema.org PostalAddress (or a plain string). */
export function formatAddress(value: unknown): string | undefined {
  if (typeof value === 'string') return clean(value);
  const a = ldList(value)[0];
  if (!a || typeof a !== 'object') return undefined;
  const p = a as Record<string, unknown>;
  const street = ldText(p.streetAddress);
  const cityLine = [ldText(p.postalCode), ldText(p.addressLocality)].filter(Boolean).join(' ');
  const parts = [street, cityLine, ldText(p.addressRegion), ldText(p.addressCountry)].filter((x): x is string =>
    Boolean(x),
  );
  return parts.length ? parts.join(', ') : undefined;
}

/** The ISO country of a JSON-LD address, when it names one as a two-letter code. */
export function addressCountry(ld: JsonLdNode[]): string | undefined {
  for (const node of ld.filter(isOrganization)) {
    const a = ldList(node.address)[0];
    if (a && typeof a === 'object') {
      const c = ldText((a as Record<string, unknown>).addressCountry);
      if (c && /^[A-Za-z]{2}$/.test(c)) return c.toUpperCase();
    }
  }
  return undefined;
}

function humanizeType(type: string): string {
  return type.replace(/([a-z])([A-Z])/g, '$1 $2');
}

function services(node: JsonLdNode): string[] {
  const names: string[] = [];
  for (const offer of ldList(node.makesOffer)) {
    const o = offer as Record<string, unknown>;
    const name = ldText(o?.itemOffered) ?? ldText(o?.name);
    if (name) names.push(name);
  }
  const catalog = node.hasOfferCatalog as Record<string, unknown> | undefined;
  for (const item of ldList(catalog?.itemListElement)) {
    const i = item as Record<string, unknown>;
    const name = ldText(i?.itemOffered) ?? ldText(i?.name);
    if (name) names.push(name);
  }
  for (const s of ldList(node.knowsAbout)) {
    const name = ldText(s);
    if (name) names.push(name);
  }
  return names;
}

const SERVICES_PATH =
  /\/(services?|leistungen|dienstleistungen|solutions|what-we-do|angebot|offerings|products)(\/|$)/i;

/** A page that lists what the company offers: its headings are read as key services. */
export function isServicesPage(url: string): boolean {
  return SERVICES_PATH.test(new URL(url).pathname);
}

/**
 * What one page says about the company. JSON-LD Organization/LocalBusiness first, then meta and
 * OpenGraph, then the page structure (<address>, a logo image in the header, the headings of a
 * services page). The crawl merges pages: the first page to know a field wins.
 */
export function pageCompanyInfo($: CheerioAPI, ld: JsonLdNode[], pageUrl: string): Partial<CompanyInfo> {
  const org = ld.find(isOrganization);
  // The page's elements from its one walk (dom.ts pageElements), not a selector search each.
  const elements = pageElements($);
  const meta = (attr: 'name' | 'property', value: string) =>
    clean(elements.named('meta').find((el) => el.attribs[attr] === value)?.attribs.content);
  const info: Partial<CompanyInfo> = {};

  const orgType = org ? typesOf(org).find((t) => ORG_TYPE.test(t)) : undefined;
  info.name = (org && ldText(org.name)) ?? meta('property', 'og:site_name') ?? meta('name', 'application-name') ?? null;
  info.description =
    (org && ldText(org.description)) ?? meta('name', 'description') ?? meta('property', 'og:description') ?? null;
  info.industry =
    (org && (ldText(org.industry) ?? (orgType && !GENERIC_TYPES.has(orgType) ? humanizeType(orgType) : undefined))) ??
    null;
  const orgServices = org ? services(org) : [];
  if (orgServices.length) info.key_services = [...new Set(orgServices)].slice(0, 20);
  else if (isServicesPage(pageUrl)) {
    const headings = elements.all
      .filter((el) => (el.name === 'h2' || el.name === 'h3') && hasAncestor(el, (a) => SECTIONING.has(a.name)))
      .map((el) => clean($(el).text()))
      .filter((t): t is string => !!t && t.length <= 80);
    if (headings.length) info.key_services = [...new Set(headings)].slice(0, 20);
  }
  const audience = org?.audience as Record<string, unknown> | undefined;
  info.target_audience = (audience && (ldText(audience.audienceType) ?? ldText(audience.name))) ?? null;
  info.address =
    (org && formatAddress(org.address)) ?? clean(linesOf(textOf($, elements.named('address')[0])).join(', ')) ?? null;

  const ldLogo = org ? ldText(org.logo) : undefined;
  // The first of `header img, [class*="logo" i] img, img[class*="logo" i], img[id*="logo" i], img[alt*="logo" i]`.
  const imgLogo = elements
    .named('img')
    .find(
      (img) =>
        LOGO.test(img.attribs.class ?? '') ||
        LOGO.test(img.attribs.id ?? '') ||
        LOGO.test(img.attribs.alt ?? '') ||
        hasAncestor(img, (a) => a.name === 'header' || LOGO.test(a.attribs.class ?? '')),
    )?.attribs.src;
  info.logo_url = absoluteUrl(ldLogo, pageUrl) ?? absoluteUrl(imgLogo, pageUrl) ?? null;

  // Only claim fields that this page actually knows.
  return Object.fromEntries(Object.entries(info).filter(([, v]) => v !== null)) as Partial<CompanyInfo>;
}

/** Merges page findings in crawl order: the first page that knows a field wins. */
export function mergeCompanyInfo(pages: Partial<CompanyInfo>[]): CompanyInfo {
  const out: CompanyInfo = { ...EMPTY_COMPANY };
  for (const page of pages) {
    for (const key of Object.keys(out) as (keyof CompanyInfo)[]) {
      if (out[key] === null && page[key] !== undefined && page[key] !== null)
        (out as unknown as Record<string, unknown>)[key] = page[key];
    }
  }
  return out;
}

const SECTIONING = new Set(['main', 'article', 'body']);
const LOGO = /logo/i;

/** Whether an element above `el` (not `el` itself) is one `test` picks. */
function hasAncestor(el: Element, test: (a: Element) => boolean): boolean {
  for (let a = el.parent; a && a.type !== 'root'; a = a.parent) if (test(a as Element)) return true;
  return false;
}
