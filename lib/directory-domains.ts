import { domainOf } from './normalize';

/**
 * Websites the maps -> site -> verify pipeline does not crawl: a maps listing whose "website" is a
 * page on a social network, review site, directory or marketplace says nothing about the business's
 * own e-mails (crawling it would collect the platform's addresses, or be refused). Such a business
 * is `domain_filtered` with `filter_reason` "<category>: <domain>".
 *
 * Maintenance: entries are registrable domains (Public Suffix List, as lib/normalize domainOf
 * derives them), so one entry covers every subdomain (m.facebook.com, de-de.facebook.com). A
 * country site on another suffix is its own entry (facebook.co.uk is not facebook.com). Add a
 * domain when listings point at it instead of the business's own site; keep each category sorted.
 */
export const FILTERED_DOMAINS = {
  social_media: [
    'facebook.com',
    'fb.com',
    'fb.me',
    'instagram.com',
    'linkedin.com',
    'pinterest.com',
    'snapchat.com',
    'threads.net',
    'tiktok.com',
    'tumblr.com',
    'twitter.com',
    'vk.com',
    'wa.me',
    'whatsapp.com',
    'x.com',
    'youtube.com',
    'youtu.be',
  ],
  review_site: [
    'foursquare.com',
    'opentable.com',
    'thefork.com',
    'trustpilot.com',
    'tripadvisor.co.uk',
    'tripadvisor.com',
    'yell.com',
    'yelp.co.uk',
    'yelp.com',
    'zomato.com',
  ],
  directory: [
    'bbb.org',
    'business.site',
    'cylex.co.uk',
    'cylex.de',
    'dasoertliche.de',
    'gelbeseiten.de',
    'google.com',
    'goo.gl',
    'hotfrog.com',
    'linktr.ee',
    'manta.com',
    'pagesjaunes.fr',
    'paginegialle.it',
    'thomsonlocal.com',
    'yellowpages.ca',
    'yellowpages.com',
    'yellowpages.com.au',
    'yp.com',
  ],
  marketplace: [
    'airbnb.com',
    'amazon.co.uk',
    'amazon.com',
    'amazon.de',
    'booking.com',
    'deliveroo.co.uk',
    'doordash.com',
    'ebay.co.uk',
    'ebay.com',
    'etsy.com',
    'fiverr.com',
    'grubhub.com',
    'just-eat.co.uk',
    'lieferando.de',
    'shopify.com',
    'ubereats.com',
    'upwork.com',
  ],
} as const satisfies Record<string, readonly string[]>;

export type FilterCategory = keyof typeof FILTERED_DOMAINS;

const CATEGORY_OF: ReadonlyMap<string, FilterCategory> = new Map(
  (Object.entries(FILTERED_DOMAINS) as [FilterCategory, readonly string[]][]).flatMap(([category, domains]) =>
    domains.map((d) => [d, category] as const),
  ),
);

/** Why a website is not crawled ("social_media: facebook.com"), or null when it is the business's own site. */
export function filterReason(website: string | null | undefined): string | null {
  const domain = domainOf(website);
  if (!domain) return null;
  const category = CATEGORY_OF.get(domain);
  return category ? `${category}: ${domain}` : null;
}
