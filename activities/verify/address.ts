import { domainToASCII, domainToUnicode } from 'node:url';
import freeProviders from 'email-providers/all.json';
import { blacklist } from 'mailchecker';
import isEmail from 'validator/lib/isEmail';
import { hasControlCharacter } from '../../lib/emails';

/** An address that passed the syntax check, in the forms verification needs. */
export interface ParsedAddress {
  /** As reported: trimmed, lower-cased, the domain in Unicode (lib/emails.ts emailForm, the form crawled addresses are reported in). */
  display: string;
  local: string;
  /** The domain in ASCII (punycode): what DNS and SMTP see. */
  domain: string;
  /** The address with the ASCII domain: the one RCPT TO names (the probe does not ask for SMTPUTF8). */
  ascii: string;
}

/**
 * Syntax and normalisation: `validator`'s isEmail on the address with its domain in punycode (so
 * `info@bücher.de` and `info@xn--bcher-kva.de` are one address, checked as the latter). Local parts
 * are ASCII only, as lib/emails.ts takes them.
 */
export function parseAddress(raw: string): ParsedAddress | { error: string; display: string } {
  const trimmed = raw
    .trim()
    .replace(/^mailto:/i, '')
    .toLowerCase();
  // isEmail accepts quoted local parts with CR, LF and other controls; the probe must never see one
  // (addresses also arrive here from crawled pages, not only from the payload's schema).
  if (hasControlCharacter(trimmed))
    return {
      error: 'invalid syntax: the address contains a control character',
      display: JSON.stringify(trimmed).slice(1, -1),
    };
  const at = trimmed.lastIndexOf('@');
  if (at <= 0 || at === trimmed.length - 1)
    return { error: 'invalid syntax: no local part and domain around an @', display: trimmed };
  const local = trimmed.slice(0, at);
  const written = trimmed.slice(at + 1).replace(/\.$/, '');
  const domain = domainToASCII(written);
  if (!domain) return { error: `invalid syntax: "${written}" is not a valid domain name`, display: trimmed };
  const display = `${local}@${domainToUnicode(domain) || written}`;
  const ascii = `${local}@${domain}`;
  if (
    !isEmail(ascii, {
      allow_utf8_local_part: false,
      require_tld: true,
      allow_ip_domain: false,
      allow_display_name: false,
    })
  ) {
    return { error: 'invalid syntax: not a valid e-mail address', display };
  }
  return { display, local, domain, ascii };
}

const FREE = new Set<string>(freeProviders);
const DISPOSABLE = blacklist();

/**
 * Local parts that name a function, not a person: mail to them reaches a shared inbox or a ticket
 * queue, so they count as risky for outreach (a short list, as Reacher keeps one).
 */
export const ROLE_LOCAL_PARTS = new Set([
  'abuse',
  'accounts',
  'admin',
  'administrator',
  'billing',
  'careers',
  'contact',
  'enquiries',
  'finance',
  'hello',
  'help',
  'hostmaster',
  'hr',
  'info',
  'inquiries',
  'jobs',
  'legal',
  'mail',
  'marketing',
  'media',
  'newsletter',
  'no-reply',
  'noreply',
  'office',
  'postmaster',
  'press',
  'privacy',
  'sales',
  'security',
  'service',
  'support',
  'team',
  'webmaster',
]);

/** The domain or one of its parents is in the list (a provider's subdomains are the provider's). */
function listed(list: ReadonlySet<string>, domain: string): boolean {
  const labels = domain.split('.');
  for (let i = 0; i < labels.length - 1; i++) if (list.has(labels.slice(i).join('.'))) return true;
  return false;
}

export const isDisposable = (a: ParsedAddress) => listed(DISPOSABLE, a.domain);
export const isFreeProvider = (a: ParsedAddress) => FREE.has(a.domain);
/** `info` and `info+leads` are role accounts (a sub-address is still the shared inbox); `info.smith` is a person. */
export const isRoleAccount = (a: ParsedAddress) => ROLE_LOCAL_PARTS.has(a.local.split('+')[0] ?? '');
