import { domainToASCII, domainToUnicode } from 'node:url';
import { parse } from 'tldts';

/**
 * C0 and C1 controls, DEL and the Unicode line separators. No address anyone mails holds one, but
 * RFC 5322's quoted local parts may (validator's isEmail accepts `"x\r\nDATA"@example.com`), and a
 * CR or LF written into an SMTP line becomes a command of its own. Every place that accepts an
 * address refuses these.
 */
const CONTROL_CHARACTER = /[\p{Cc}\u2028\u2029]/u;

export const hasControlCharacter = (s: string): boolean => CONTROL_CHARACTER.test(s);
export const NO_CONTROL_CHARACTERS = 'an e-mail address must not contain control characters (CR, LF, TAB, NUL, ...)';

/**
 * Email helpers shared by the job types that find addresses in web pages: finding addresses in
 * text (also the common "name [at] domain [dot] com" obfuscations), decoding Cloudflare's email
 * protection, and telling real addresses from junk (image file names, placeholders, tracking ids).
 *
 * Internationalised domains are addresses too: `info@пример.рф` and `info@example.xn--p1ai`.
 * Every address comes out in one form, whatever the page wrote: lower-cased, the domain in Unicode
 * (`info@xn--e1afmkfd.xn--p1ai` is reported as `info@пример.рф`), so one mailbox is one entry.
 * Local parts are ASCII only (internationalised local parts are too rare on company pages to be
 * worth the false positives).
 */

const LOCAL_CHARS = "a-z0-9!#$%&'*+/=?^_`{|}~-";
const LOCAL = `[${LOCAL_CHARS}]+(?:\\.[${LOCAL_CHARS}]+)*`;
// Labels and TLDs may be Unicode (the `u` flag is on every pattern built from these).
const LABEL = '[\\p{L}\\p{N}](?:[\\p{L}\\p{N}\\p{M}-]{0,61}[\\p{L}\\p{N}\\p{M}])?';
/**
 * An ASCII TLD, a punycode one (`xn--p1ai`) or a Unicode one (`рф`, `中国`), each with its own end:
 * an ASCII address ends where other letters begin ("info@acme.jpまで" in Japanese text), while a
 * Unicode TLD ends at the first character that is no letter.
 */
const TLD =
  '(?:[a-z]{2,24}(?![a-z0-9-])|xn--[a-z0-9-]{0,58}[a-z0-9](?![a-z0-9-])|(?:(?!\\p{ASCII})[\\p{L}\\p{M}]){2,24}(?![\\p{L}\\p{N}\\p{M}-]))';
const DOMAIN = `(?:${LABEL}\\.)+${TLD}`;
const LOCAL_ONLY = new RegExp(`^${LOCAL}$`, 'i');
const DOMAIN_ONLY = new RegExp(`^${DOMAIN}$`, 'iu');
// A plain address is looked for from each "@" (plainEmails), not by one regex over the whole text.
const PLAIN_AT = new RegExp(`${LOCAL}@${DOMAIN}`, 'iuy');
const LOCAL_OR_DOT = new RegExp(`[.${LOCAL_CHARS}]`, 'iu');
/** An address does not start right after one of these (it would be the tail of a longer word). */
const GLUED = /[a-z0-9._%+-]/iu;

// "[at]", "(at)", "{at}" and the same for "dot"; the brackets may also hold "@" / ".".
const AT = '\\s*[[({]\\s*(?:at|@)\\s*[\\])}]\\s*';
const DOT = '\\s*[[({]\\s*(?:dot|\\.)\\s*[\\])}]\\s*';
const BRACKETED = new RegExp(
  `(?<![a-z0-9._%+-])([a-z0-9._%+-]+)${AT}(${LABEL}(?:(?:${DOT}|\\.)${LABEL})*(?:${DOT}|\\.)${TLD})`,
  'giu',
);
const DOT_SPLIT = new RegExp(DOT, 'gi');
const BRACKET_AT = new RegExp(AT, 'i');
// "name AT domain DOT com": only in capitals, since " at " and " dot " in lower case are ordinary words.
const SPELLED =
  /(?<![A-Za-z0-9._%+-])([A-Za-z0-9._%+-]+) AT ([A-Za-z0-9-]+(?:(?: DOT |\.)[A-Za-z0-9-]+)*(?: DOT |\.)[A-Za-z]{2,24})(?![A-Za-z0-9-])/g;

const IMAGE_OR_ASSET =
  /\.(png|jpe?g|gif|svg|webp|avif|bmp|ico|tiff?|css|js|mjs|json|woff2?|ttf|eot|mp4|webm|mp3|pdf|zip)$/i;
/** Domains that only ever appear as placeholders or belong to error-tracking and site-builder services. */
const JUNK_DOMAINS = new Set([
  'example.com',
  'example.org',
  'example.net',
  'example.de',
  'example.co.uk',
  'domain.com',
  'yourdomain.com',
  'yourcompany.com',
  'company.com',
  'sentry.io',
  'sentry.wixpress.com',
  'sentry-next.wixpress.com',
  'wixpress.com',
  'test.com',
  'localhost',
]);
const JUNK_LOCALS = new Set([
  'name',
  'your',
  'yourname',
  'your.name',
  'you',
  'user',
  'username',
  'email',
  'e-mail',
  'someone',
  'firstname.lastname',
  'vorname.nachname',
  'max.mustermann',
  'john.doe',
  'jane.doe',
]);

/** Lower-cases and trims an address; undefined when it is junk or not an address at all. */
export function cleanEmail(raw: string): string | undefined {
  const email = raw
    .trim()
    .replace(/^mailto:/i, '')
    .replace(/[.,;:]+$/, '')
    .toLowerCase();
  const at = email.lastIndexOf('@');
  if (at <= 0 || at !== email.indexOf('@')) return undefined;
  const local = email.slice(0, at);
  const written = email.slice(at + 1);
  if (!LOCAL_ONLY.test(local) || !DOMAIN_ONLY.test(written)) return undefined;
  const domain = unicodeDomain(written);
  if (!domain) return undefined;
  if (IMAGE_OR_ASSET.test(email)) return undefined;
  if (JUNK_DOMAINS.has(domain) || [...JUNK_DOMAINS].some((d) => domain.endsWith(`.${d}`))) return undefined;
  if (JUNK_LOCALS.has(local)) return undefined;
  // Retina image names ("logo@2x.png" is caught above; "icon@2x" in text is not an address).
  if (/^\d+x$/.test(domain.split('.')[0] ?? '')) return undefined;
  // Error-tracker keys and the like: a long hex string as the local part.
  if (/^[0-9a-f]{16,}$/.test(local)) return undefined;
  return `${local}@${domain}`;
}

/**
 * The form every reported address takes, without judging it (team members keep addresses that
 * cleanEmail would call placeholders): trimmed, no `mailto:`, lower-cased, the domain in Unicode.
 */
export function emailForm(raw: string): string {
  const email = raw
    .trim()
    .replace(/^mailto:/i, '')
    .toLowerCase();
  const at = email.lastIndexOf('@');
  if (at < 0) return email;
  const domain = email.slice(at + 1);
  return `${email.slice(0, at)}@${unicodeDomain(domain) ?? domain}`;
}

/**
 * The domain in Unicode, or undefined when it is no real internationalised name: broken punycode,
 * or a Unicode / punycode TLD the Public Suffix List does not know (unlike ASCII TLDs, which are
 * taken as written, these are rare enough to check, and text glued to an address looks like one).
 */
function unicodeDomain(domain: string): string | undefined {
  if (!/[^\p{ASCII}]|(?:^|\.)xn--/u.test(domain)) return domain;
  const ascii = domainToASCII(domain);
  const unicode = ascii && domainToUnicode(ascii);
  if (!unicode) return undefined;
  const tld = ascii.slice(ascii.lastIndexOf('.') + 1);
  if (tld.startsWith('xn--') && parse(ascii).isIcann !== true) return undefined;
  return unicode;
}

/** Addresses written plainly or obfuscated in a text, in order of appearance, cleaned and de-duplicated. */
export function findEmailsInText(text: string): string[] {
  const found: [number, string][] = [];
  // Cheap tests first: the full patterns are slow to scan, and most page texts hold none of them.
  if (text.includes('@')) for (const f of plainEmails(text)) found.push(f);
  if (BRACKET_AT.test(text))
    for (const m of text.matchAll(BRACKETED))
      found.push([m.index, `${m[1] ?? ''}@${(m[2] ?? '').replace(DOT_SPLIT, '.')}`]);
  if (text.includes(' AT '))
    for (const m of text.matchAll(SPELLED))
      found.push([m.index, `${m[1] ?? ''}@${(m[2] ?? '').replace(/ DOT /g, '.')}`]);
  found.sort((a, b) => a[0] - b[0]);
  return uniqueEmails(found.map(([, email]) => email));
}

/**
 * Plain addresses with their index: what `(?<![a-z0-9._%+-])LOCAL@DOMAIN` with matchAll found. That
 * regex tried a match at every character of a long run like "!!!…!" and scanned the run each time
 * (8 s for 64 KiB of "!" and an "@"), so the start is worked out from each "@" instead: the local
 * part is the run of local-part characters and dots before it, and the regex is tried only at the
 * first place in that run where it could match. Every character is looked at a few times at most.
 */
function plainEmails(text: string): [number, string][] {
  const found: [number, string][] = [];
  // Where the last address ended; the next one starts there at the earliest.
  let from = 0;
  for (let at = text.indexOf('@'); at >= 0; at = text.indexOf('@', at + 1)) {
    let start = at;
    while (start > from && LOCAL_OR_DOT.test(text[start - 1] as string)) start--;
    // A local part holds no "..", so it starts after the last one.
    for (let i = start; i + 1 < at; i++) if (text[i] === '.' && text[i + 1] === '.') start = i + 2;
    // Nor does it start with a dot or right after a letter, digit or ._%+- (the look-behind).
    while (start < at && (text[start] === '.' || (start > 0 && GLUED.test(text[start - 1] as string)))) start++;
    if (start === at) continue;
    // The run checked above leaves one attempt per "@"; it fails on a bad domain or a trailing dot.
    PLAIN_AT.lastIndex = start;
    const m = PLAIN_AT.exec(text);
    if (!m) continue;
    found.push([start, m[0]]);
    from = start + m[0].length;
  }
  return found;
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
