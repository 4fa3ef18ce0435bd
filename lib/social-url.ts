/**
 * Instagram-style public profile addresses: a username as typed (`@acme.widgets`) or a profile URL in
 * any of the forms people paste (www/m/no host prefix, instagr.am, `_u/` deep links, a trailing
 * slash, `?igshid=` share parameters, a `/reels/` or `/tagged/` tab, a story link) read as the
 * username. Pure: the API validates payloads with it, the worker reads them with it.
 */

/** Usernames: 1-30 letters, digits, `.` and `_` (the platform's own rule). */
const USERNAME = /^[A-Za-z0-9._]{1,30}$/;

/** Hosts that serve profiles (lower case, without a trailing dot). */
const PROFILE_HOSTS = new Set([
  'instagram.com',
  'www.instagram.com',
  'm.instagram.com',
  'i.instagram.com',
  'instagr.am',
  'www.instagr.am',
]);

/** First path segments that are the platform's own pages, not usernames. */
const RESERVED = new Set([
  'p',
  'reel',
  'reels',
  'tv',
  'explore',
  'accounts',
  'direct',
  'about',
  'developer',
  'legal',
  'web',
  'api',
  'challenge',
  'emails',
  'session',
  'privacy',
  'terms',
  'static',
  'graphql',
  'oauth',
  'press',
  'directory',
  'lite',
  'topics',
  'locations',
  'ar',
]);

export type UsernameResult = { username: string } | { error: string };

/** A typed username: a leading @ dropped, lower-cased (usernames are case-insensitive). */
export function parseUsername(raw: string): UsernameResult {
  const name = raw.trim().replace(/^@/, '');
  if (!USERNAME.test(name)) return { error: 'username may hold letters, digits, . and _ (at most 30)' };
  return { username: name.toLowerCase() };
}

/** The username a profile URL names, or why it names none. */
export function usernameFromProfileUrl(raw: string): UsernameResult {
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(raw.trim()) ? raw.trim() : `https://${raw.trim()}`);
  } catch {
    return { error: 'profile_url must be a valid http(s) URL' };
  }
  const host = url.hostname.toLowerCase().replace(/\.+$/, '');
  if (!PROFILE_HOSTS.has(host)) return { error: `profile_url must be an instagram.com profile URL, not ${host}` };
  const segments = url.pathname
    .split('/')
    .filter(Boolean)
    .map((s) => decodeSegment(s));
  // instagram.com/_u/<name> is the app's deep link; stories/<name>/<id> a story of the profile.
  const first = segments[0]?.toLowerCase();
  const candidate = first === '_u' || first === 'stories' ? segments[1] : segments[0];
  if (!candidate) return { error: 'profile_url names no profile (expected instagram.com/<username>)' };
  if (first !== '_u' && first !== 'stories' && RESERVED.has(candidate.toLowerCase())) {
    return {
      error: `profile_url is a ${candidate.toLowerCase() === 'p' || candidate.toLowerCase().startsWith('reel') ? 'post' : 'platform'} page, not a profile (expected instagram.com/<username>)`,
    };
  }
  return parseUsername(candidate);
}

/** The username of a payload that holds a username, a profile URL or both (the username wins). */
export function profileUsername(p: { username?: string; profile_url?: string }): UsernameResult {
  if (p.username !== undefined) return parseUsername(p.username);
  if (p.profile_url !== undefined) return usernameFromProfileUrl(p.profile_url);
  return { error: 'either username or profile URL must be provided' };
}

/** The canonical profile URL of a username. */
export function profileUrlOf(username: string): string {
  return `https://www.instagram.com/${username}/`;
}

function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
