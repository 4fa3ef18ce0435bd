import { domainToASCII } from 'node:url';
import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js';
import { parse } from 'tldts';

/**
 * Normalised forms of the keys that identify a lead: used by de-duplication (spec §4.6) and as
 * the natural keys of IDAP resources (spec §2.9). Each returns null when nothing usable remains.
 */

const blank = (v: string | null | undefined): v is null | undefined => v === null || v === undefined || v.trim() === '';

/**
 * Trimmed and lower-cased: `  Ann@Example.COM ` -> `ann@example.com`; an internationalised domain
 * in punycode, as domain keys are: `info@пример.рф` -> `info@xn--e1afmkfd.xn--p1ai`.
 */
export function normalizeEmail(v: string | null | undefined): string | null {
  if (blank(v)) return null;
  const email = v.trim().toLowerCase();
  const at = email.lastIndexOf('@');
  if (at < 0 || !/[^\p{ASCII}]/u.test(email.slice(at + 1))) return email;
  return `${email.slice(0, at)}@${domainToASCII(email.slice(at + 1)) || email.slice(at + 1)}`;
}

/** Digits only (spec §4.6): `+44 (20) 7946-0958` -> `442079460958`. */
export function phoneDigits(v: string | null | undefined): string | null {
  if (blank(v)) return null;
  const digits = v.replace(/\D/g, '');
  return digits === '' ? null : digits;
}

/**
 * E.164 (`+442079460958`) when the number parses, with `defaultCountry` for national numbers;
 * otherwise `+` and its digits when it was written with a leading +, else null.
 */
export function toE164(v: string | null | undefined, defaultCountry?: string): string | null {
  if (blank(v)) return null;
  const parsed = parsePhoneNumberFromString(v.trim(), defaultCountry?.toUpperCase() as CountryCode | undefined);
  if (parsed?.isPossible()) return parsed.number;
  const digits = phoneDigits(v);
  return digits !== null && v.trim().startsWith('+') ? `+${digits}` : null;
}

/**
 * The registrable domain of a host name (eTLD+1 by the Public Suffix List), or null when it has
 * none (IP addresses, `localhost`, a public suffix itself). Private suffixes count as public here:
 * alice.github.io and bob.github.io are two companies, not one github.io. Host names are compared
 * in punycode (`bücher.de` -> `xn--bcher-kva.de`), the form URL parsing and DNS use.
 */
export function registrableDomain(hostname: string): string | null {
  const host = domainToASCII(hostname.trim().toLowerCase().replace(/\.+$/, ''));
  if (host === '') return null;
  const { domain, isIp } = parse(host, { allowPrivateDomains: true });
  return isIp ? null : (domain ?? null);
}

/**
 * The company domain of a URL, bare domain or e-mail address: its registrable domain, lower-cased,
 * in punycode: `https://shop.Acme.co.uk:443/about` -> `acme.co.uk`; `mailto:x@mail.acme.com` ->
 * `acme.com`. A host without one keeps its own name minus `www.` (`127.0.0.1`, `github.io`);
 * single-label hosts such as `localhost` give null.
 */
export function domainOf(v: string | null | undefined): string | null {
  if (blank(v)) return null;
  let s = v.trim().toLowerCase();
  if (s.startsWith('mailto:') || (!s.includes('/') && s.includes('@'))) s = s.slice(s.lastIndexOf('@') + 1);
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//.test(s) ? s : `http://${s}`;
  let host: string;
  try {
    host = new URL(withScheme).hostname;
  } catch {
    return null;
  }
  host = host.replace(/\.$/, '');
  const registrable = registrableDomain(host);
  if (registrable) return registrable;
  host = host.replace(/^www\d*\./, '');
  return /^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(host) || /^xn--/.test(host) ? host : null;
}

/**
 * A professional-network profile URL in one form: scheme, `www.`/country subdomains, query,
 * fragment, trailing slashes and case dropped, percent-escapes decoded:
 * `https://uk.LinkedIn.com/in/Jane-Doe/?trk=x` -> `linkedin.com/in/jane-doe`.
 * Not a URL: the trimmed, lower-cased text.
 */
export function normalizeProflinkUrl(v: string | null | undefined): string | null {
  if (blank(v)) return null;
  const s = v.trim();
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(s) ? s : `https://${s}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    return s.toLowerCase();
  }
  let host = url.hostname.toLowerCase().replace(/\.$/, '');
  // www.linkedin.com, uk.linkedin.com, de.linkedin.com ... are one site.
  const m = /(?:^|\.)(linkedin\.com)$/.exec(host);
  host = m?.[1] ?? host.replace(/^www\./, '');
  let path = url.pathname;
  try {
    path = decodeURIComponent(path);
  } catch {
    // keep the raw path when it holds a malformed escape
  }
  path = path.replace(/\/+$/, '').toLowerCase();
  return `${host}${path}`;
}

/** Trimmed, inner whitespace collapsed, lower-cased: for free text in hashes and keys. */
export function normalizeText(v: string | null | undefined): string | null {
  return blank(v) ? null : v.trim().replace(/\s+/g, ' ').toLowerCase();
}
