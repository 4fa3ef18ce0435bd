import type { CountryCode } from 'libphonenumber-js';
import { uniqueEmails } from '../../lib/emails';
import { guessRegion, parsePhone, type PhoneRecord } from '../../lib/phones';
import { pageMarkdown, type CleanupLevel } from './compendium';
import { addressCountry, isOrganization, pageCompanyInfo, type CompanyInfo } from './extract/company';
import { pageEmails, pagePhones } from './extract/contacts';
import { clean, jsonLdNodes, ldList, loadHtml, pageElements, textOf, visibleText } from './extract/dom';
import { pageSocialLinks } from './extract/social';
import { ldTeamMembers, structuredTeamMembers, type TeamMember } from './extract/team';
import { normalizeUrl } from './urls';

/** What one crawled page yields. The crawl merges these in a fixed page order. */
export interface PageFacts {
  title: string | null;
  /** Absolute, normalised http(s) links (every host; the crawl keeps its own site's). */
  links: string[];
  /** `<meta name="robots" content="nofollow">`: do not follow this page's links. */
  nofollow: boolean;
  emails: string[];
  phones: PhoneRecord[];
  /** Candidate social links in preference order. */
  social: string[];
  company: Partial<CompanyInfo>;
  team: TeamMember[];
  /** Markdown blocks, when the compendium is wanted. */
  compendium?: string[];
  /** The region phone numbers were read in. */
  region: CountryCode | undefined;
}

export interface PageOptions {
  /** Region for national phone formats; when undefined it is guessed from this page (the start page). */
  region?: CountryCode;
  extractTeam: boolean;
  /** A page whose path says team/about/people: its structure is searched for people cards. */
  teamPage: boolean;
  /**
   * A page likely to describe the company (the start page, contact/about/legal, services): its meta
   * tags and structure are read for company_info. Other pages only contribute JSON-LD Organization data.
   */
  companyPage: boolean;
  compendium: CleanupLevel | null;
}

/** Parses the page once and runs every extractor on the same document. */
export function processPage(html: string, pageUrl: string, options: PageOptions): PageFacts {
  const $ = loadHtml(html);
  const elements = pageElements($);
  const baseHref = elements.named('base').find((el) => el.attribs.href !== undefined)?.attribs.href;
  const base = (baseHref && normalizeUrl(baseHref, pageUrl)) || pageUrl;
  const ld = jsonLdNodes($);
  const hostname = new URL(pageUrl).hostname;
  const region =
    options.region ??
    guessRegion({ addressCountry: addressCountry(ld), lang: elements.named('html')[0]?.attribs.lang, hostname });
  const text = visibleText($.root().children().toArray());

  const links: string[] = [];
  for (const el of elements.all) {
    const href = el.name === 'a' || el.name === 'area' ? el.attribs.href : undefined;
    // Cloudflare's /cdn-cgi/ paths (email protection, challenge pages) are no pages of the site.
    const url =
      href && !/^(mailto|tel|javascript|data|callto):/i.test(href.trim()) && !href.includes('/cdn-cgi/')
        ? normalizeUrl(href, base)
        : undefined;
    if (url) links.push(url);
  }
  const robotsMeta = (
    elements.named('meta').find((el) => el.attribs.name?.toLowerCase() === 'robots')?.attribs.content ?? ''
  ).toLowerCase();

  // Structured data states contacts explicitly: the emails of the organization and its people join
  // the page's; so does the organization's telephone (a person's is a direct line, not the company's).
  const ldEmails: string[] = [];
  const ldPhones: PhoneRecord[] = [];
  for (const node of ld) {
    for (const e of ldList(node.email)) if (typeof e === 'string') ldEmails.push(e.replace(/^mailto:/i, ''));
    if (isOrganization(node))
      for (const t of ldList(node.telephone)) if (typeof t === 'string') ldPhones.push(parsePhone(t, region));
  }

  let team: TeamMember[] = [];
  if (options.extractTeam)
    team = [...ldTeamMembers(ld, base), ...(options.teamPage ? structuredTeamMembers($, base) : [])];
  const facts: PageFacts = {
    title: clean(textOf($, elements.named('title')[0])) ?? clean(textOf($, elements.named('h1')[0])) ?? null,
    links,
    nofollow: /\b(nofollow|none)\b/.test(robotsMeta),
    emails: uniqueEmails([...ldEmails, ...pageEmails($, text)]),
    phones: [...ldPhones, ...pagePhones($, text, region)],
    social: pageSocialLinks($, ld),
    company: options.companyPage || ld.some(isOrganization) ? pageCompanyInfo($, ld, base) : {},
    team,
    region,
  };
  // Last: the compendium strips the document.
  if (options.compendium) facts.compendium = pageMarkdown($, options.compendium, base);
  return facts;
}
