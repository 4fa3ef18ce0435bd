/**
 * Email helpers shared by the job types that find addresses in web pages: finding addresses in
 * text (also the common "name [at] domain [dot] com" obfuscations), decoding Cloudflare's email
 * protection, and telling real addresses from junk (image file names, placeholders, tracking ids).
 */

const LOCAL = "[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*";
const DOMAIN = '(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\\.)+[a-z]{2,24}';
const LOCAL_ONLY = new RegExp(`^${LOCAL}$`, 'i');
const DOMAIN_ONLY = new RegExp(`^${DOMAIN}$`, 'i');
const PLAIN = new RegExp(`(?<![a-z0-9._%+-])${LOCAL}@${DOMAIN}(?![a-z0-9-])`, 'gi');

// "[at]", "(at)", "{at}" and the same for "dot"; the brackets may also hold "@" / ".".
const AT = '\\s*[[({]\\s*(?:at|@)\\s*[\\])}]\\s*';
const DOT = '\\s*[[({]\\s*(?:dot|\\.)\\s*[\\])}]\\s*';
const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const BRACKETED = new RegExp(`(?<![a-z0-9._%+-])([a-z0-9._%+-]+)${AT}(${LABEL}(?:(?:${DOT}|\\.)${LABEL})*(?:${DOT}|\\.)[a-z]{2,24})(?![a-z0-9-])`, 'gi');
const DOT_SPLIT = new RegExp(DOT, 'gi');
const BRACKET_AT = new RegExp(AT, 'i');
// "name AT domain DOT com": only in capitals, since " at " and " dot " in lower case are ordinary words.
const SPELLED = /(?<![A-Za-z0-9._%+-])([A-Za-z0-9._%+-]+) AT ([A-Za-z0-9-]+(?:(?: DOT |\.)[A-Za-z0-9-]+)*(?: DOT |\.)[A-Za-z]{2,24})(?![A-Za-z0-9-])/g;

const IMAGE_OR_ASSET = /\.(png|jpe?g|gif|svg|webp|avif|bmp|ico|tiff?|css|js|mjs|json|woff2?|ttf|eot|mp4|webm|mp3|pdf|zip)$/i;
/** Domains that only ever appear as placeholders or belong to error-tracking and site-builder services. */
const JUNK_DOMAINS = new Set([
  'example.com', 'example.org', 'example.net', 'example.de', 'example.co.uk', 'domain.com', 'yourdomain.com', 'yourcompany.com', 'company.com',
  'sentry.io', 'sentry.wixpress.com', 'sentry-next.wixpress.com', 'wixpress.com', 'test.com', 'localhost',
]);
const JUNK_LOCALS = new Set(['name', 'your', 'yourname', 'your.name', 'you', 'user', 'username', 'email', 'e-mail', 'someone', 'firstname.lastname', 'vorname.nachname', 'max.mustermann', 'john.doe', 'jane.doe']);

/** Lower-cases and trims an address; undefined when it is junk or not an address at all. */
export function cleanEmail(raw: string): string | undefined {
  const email = raw.trim().replace(/^mailto:/i, '').replace(/[.,;:]+$/, '').toLowerCase();
  const at = email.lastIndexOf('@');
  if (at <= 0 || at !== email.indexOf('@')) return undefined;
  const local = email.slice(0, at);
  const domain = email.slice(at + 1);
  if (!LOCAL_ONLY.test(local) || !DOMAIN_ONLY.test(domain)) return undefined;
  if (IMAGE_OR_ASSET.test(email)) return undefined;
  if (JUNK_DOMAINS.has(domain) || [...JUNK_DOMAINS].some((d) => domain.endsWith(`.${d}`))) return undefined;
  if (JUNK_LOCALS.has(local)) return undefined;
  // Retina image names ("logo@2x.png" is caught above; "icon@2x" in text is not an address).
  if (/^\d+x$/.test(domain.split('.')[0] ?? '')) return undefined;
  // Error-tracker keys and the like: a long hex string as the local part.
  if (/^[0-9a-f]{16,}$/.test(local)) return undefined;
  return email;
}

/** Addresses written plainly or obfuscated in a text, in order of appearance, cleaned and de-duplicated. */
export function findEmailsInText(text: string): string[] {
  const found: [number, string][] = [];
  // Cheap tests first: the full patterns are slow to scan, and most page texts hold none of them.
  if (text.includes('@')) for (const m of text.matchAll(PLAIN)) found.push([m.index, m[0]]);
  if (BRACKET_AT.test(text)) for (const m of text.matchAll(BRACKETED)) found.push([m.index, `${m[1] ?? ''}@${(m[2] ?? '').replace(DOT_SPLIT, '.')}`]);
  if (text.includes(' AT ')) for (const m of text.matchAll(SPELLED)) found.push([m.index, `${m[1] ?? ''}@${(m[2] ?? '').replace(/ DOT /g, '.')}`]);
  found.sort((a, b) => a[0] - b[0]);
  return uniqueEmails(found.map(([, email]) => email));
}

/** Cleans, drops junk and de-duplicates, keeping the first appearance's order. */
export function uniqueEmails(raw: Iterable<string>): string[] {
  const out = new Set<string>();
  for (const r of raw) {
    const email = cleanEmail(r);
    if (email) out.add(email);
  }
  return [...out];
}

/**
 * Cloudflare email protection: the hex string of `data-cfemail` or of a
 * `/cdn-cgi/l/email-protection#<hex>` link. Its first byte is a key XORed with every other byte.
 */
export function decodeCfEmail(hex: string): string | undefined {
  if (!/^(?:[0-9a-f]{2}){2,}$/i.test(hex)) return undefined;
  const key = parseInt(hex.slice(0, 2), 16);
  let out = '';
  for (let i = 2; i < hex.length; i += 2) out += String.fromCharCode(parseInt(hex.slice(i, i + 2), 16) ^ key);
  return out.includes('@') ? out : undefined;
}

/** The addresses of a mailto: link (several may be comma-separated; the query is dropped). */
export function emailsFromMailto(href: string): string[] {
  let target = href.replace(/^mailto:/i, '').split('?')[0] ?? '';
  try {
    target = decodeURIComponent(target);
  } catch {
    // a stray % — keep the raw text
  }
  return uniqueEmails(target.split(/[,;]/));
}
