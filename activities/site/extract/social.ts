import type { CheerioAPI } from 'cheerio';
import { anchors, ldList, typesOf, type JsonLdNode } from './dom';

/**
 * Social profile links, under the spec's keys (§2.1: proflink = LinkedIn, microblog = X/Twitter,
 * socialnet = Facebook) plus the other platforms by name. Only profile URLs count: share buttons,
 * posts, videos, login and search pages are not profiles.
 */
export const SOCIAL_KEYS = [
  'proflink',
  'microblog',
  'socialnet',
  'instagram',
  'youtube',
  'tiktok',
  'pinterest',
  'github',
] as const;
export type SocialKey = (typeof SOCIAL_KEYS)[number];
export type SocialLinks = Record<SocialKey, string | null>;

interface Platform {
  key: SocialKey;
  hosts: RegExp;
  /** Canonical host for the output URL. */
  host: string;
  /** Returns the profile path (without trailing slash) or undefined when the URL is not a profile. */
  profile(segments: string[]): string | undefined;
}

const handle = /^@?[A-Za-z0-9_.-]{1,100}$/;
const one = (segments: string[], reserved: Set<string>) =>
  segments.length === 1 && segments[0] && handle.test(segments[0]) && !reserved.has(segments[0].toLowerCase())
    ? `/${segments[0]}`
    : undefined;

const TWITTER_RESERVED = new Set([
  'share',
  'intent',
  'home',
  'search',
  'hashtag',
  'i',
  'explore',
  'login',
  'signup',
  'settings',
  'messages',
  'notifications',
  'tos',
  'privacy',
  'compose',
]);
const FACEBOOK_RESERVED = new Set([
  'sharer.php',
  'sharer',
  'share',
  'share.php',
  'dialog',
  'plugins',
  'tr',
  'login',
  'login.php',
  'home.php',
  'watch',
  'groups',
  'events',
  'photo.php',
  'permalink.php',
  'story.php',
  'hashtag',
  'policies',
  'privacy',
  'help',
  'legal',
]);
const INSTAGRAM_RESERVED = new Set([
  'p',
  'reel',
  'reels',
  'explore',
  'accounts',
  'stories',
  'direct',
  'about',
  'legal',
  'developer',
  'tv',
]);
const PINTEREST_RESERVED = new Set(['pin', 'search', 'ideas', 'business', 'login', 'today', 'settings']);
const GITHUB_RESERVED = new Set([
  'login',
  'join',
  'features',
  'pricing',
  'about',
  'explore',
  'topics',
  'marketplace',
  'sponsors',
  'settings',
  'orgs',
  'site',
  'security',
  'enterprise',
  'team',
  'collections',
  'trending',
  'contact',
  'readme',
  'customer-stories',
]);

const PLATFORMS: Platform[] = [
  {
    key: 'proflink',
    hosts: /^([a-z]{2,3}\.)?linkedin\.com$/,
    host: 'www.linkedin.com',
    profile: (s) =>
      s.length >= 2 && ['company', 'in', 'school', 'showcase'].includes(s[0]?.toLowerCase() ?? '') && s[1]
        ? `/${s[0]?.toLowerCase()}/${s[1]}`
        : undefined,
  },
  { key: 'microblog', hosts: /^(twitter|x)\.com$/, host: 'x.com', profile: (s) => one(s, TWITTER_RESERVED) },
  {
    key: 'socialnet',
    hosts: /^(facebook|fb)\.com$/,
    host: 'www.facebook.com',
    profile: (s) =>
      s[0]?.toLowerCase() === 'pages' && s.length >= 2 ? `/${s.slice(0, 3).join('/')}` : one(s, FACEBOOK_RESERVED),
  },
  {
    key: 'instagram',
    hosts: /^instagram\.com$/,
    host: 'www.instagram.com',
    profile: (s) => one(s, INSTAGRAM_RESERVED),
  },
  {
    key: 'youtube',
    hosts: /^youtube\.com$/,
    host: 'www.youtube.com',
    profile: (s) => {
      const first = s[0] ?? '';
      if (first.startsWith('@') && s.length === 1) return `/${first}`;
      if (['channel', 'c', 'user'].includes(first.toLowerCase()) && s[1] && s.length === 2)
        return `/${first.toLowerCase()}/${s[1]}`;
      return undefined;
    },
  },
  {
    key: 'tiktok',
    hosts: /^tiktok\.com$/,
    host: 'www.tiktok.com',
    profile: (s) => (s.length === 1 && s[0]?.startsWith('@') ? `/${s[0]}` : undefined),
  },
  {
    key: 'pinterest',
    hosts: /^pinterest\.(com|[a-z]{2}|co\.uk|com\.au)$/,
    host: 'www.pinterest.com',
    profile: (s) => one(s, PINTEREST_RESERVED),
  },
  { key: 'github', hosts: /^github\.com$/, host: 'github.com', profile: (s) => one(s, GITHUB_RESERVED) },
];

/** The platform and canonical profile URL of a link, or undefined when it is no profile. */
export function classifySocial(href: string): { key: SocialKey; url: string } | undefined {
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  const host = url.hostname.toLowerCase().replace(/^(www|m|mobile|web)\./, '');
  const platform = PLATFORMS.find((p) => p.hosts.test(host));
  if (!platform) return undefined;
  const segments = url.pathname
    .split('/')
    .filter(Boolean)
    .map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    });
  // Facebook's legacy profile.php?id=123 is a profile too.
  if (platform.key === 'socialnet' && segments[0] === 'profile.php' && url.searchParams.get('id')) {
    return { key: 'socialnet', url: `https://${platform.host}/profile.php?id=${url.searchParams.get('id')}` };
  }
  const path = platform.profile(segments);
  return path ? { key: platform.key, url: `https://${platform.host}${path}` } : undefined;
}

/** Profile links of one page, in a preferred order: JSON-LD sameAs first, then the page's links. */
export function pageSocialLinks($: CheerioAPI, ld: JsonLdNode[]): string[] {
  const links: string[] = [];
  for (const node of ld) {
    if (typesOf(node).some((t) => /Organization|LocalBusiness|Corporation|Store|Restaurant/.test(t))) {
      for (const s of ldList(node.sameAs)) if (typeof s === 'string') links.push(s);
    }
  }
  for (const { href } of anchors($)) if (/^https?:/i.test(href)) links.push(href);
  return links;
}

/**
 * The site's profile per platform: the first candidate wins, except that a LinkedIn company page
 * beats a person's profile (a site links its staff too).
 */
export function pickSocial(candidates: Iterable<string>): SocialLinks {
  const out = Object.fromEntries(SOCIAL_KEYS.map((k) => [k, null])) as SocialLinks;
  for (const href of candidates) {
    const found = classifySocial(href);
    if (!found) continue;
    const current = out[found.key];
    if (current === null) out[found.key] = found.url;
    else if (found.key === 'proflink' && !current.includes('/company/') && found.url.includes('/company/'))
      out.proflink = found.url;
  }
  return out;
}
