import type { CheerioAPI } from 'cheerio';
import type { CountryCode } from 'libphonenumber-js';
import { decodeCfEmail, emailsFromMailto, findEmailsInText, uniqueEmails } from '../../../lib/emails';
import { findPhonesInText, parsePhone, uniquePhones, type PhoneRecord } from '../../../lib/phones';
import { anchors, pageElements } from './dom';

/**
 * Emails of one page: mailto: links, Cloudflare-protected addresses (`data-cfemail` and
 * `/cdn-cgi/l/email-protection#<hex>` links), and addresses in the visible text, plain or
 * obfuscated. Cleaned (lower case, junk dropped) and de-duplicated in page order.
 */
export function pageEmails($: CheerioAPI, text: string): string[] {
  const found: string[] = [];
  for (const { href } of anchors($)) {
    if (/^mailto:/i.test(href)) found.push(...emailsFromMailto(href));
    const cf = /\/cdn-cgi\/l\/email-protection#([0-9a-f]+)/i.exec(href);
    const decoded = cf?.[1] ? decodeCfEmail(cf[1]) : undefined;
    if (decoded) found.push(decoded);
  }
  for (const el of pageElements($).all) {
    const cf = el.attribs['data-cfemail'];
    const decoded = cf === undefined ? undefined : decodeCfEmail(cf);
    if (decoded) found.push(decoded);
  }
  // The visible text of a Cloudflare-protected page says "[email protected]": nothing to find there.
  found.push(...findEmailsInText(text));
  return uniqueEmails(found);
}

/**
 * Phones of one page: tel: links (kept even when invalid, with their raw text) and numbers in the
 * visible text. Each distinct link is parsed once, the first MAX_TEL_LINKS of them: a hostile page of
 * 120,000 links took 6 s.
 */
export function pagePhones($: CheerioAPI, text: string, region: CountryCode | undefined): PhoneRecord[] {
  const raws = new Set<string>();
  for (const { href } of anchors($)) {
    if (!(href.startsWith('tel:') || href.startsWith('TEL:') || href.startsWith('callto:'))) continue;
    let raw = href.replace(/^(tel|callto):/i, '');
    try {
      raw = decodeURIComponent(raw);
    } catch {
      // keep as written
    }
    if (raw.replace(/\D/g, '').length >= 5) raws.add(raw);
    if (raws.size >= MAX_TEL_LINKS) break;
  }
  const found = [...raws].map((raw) => parsePhone(raw, region));
  found.push(...findPhonesInText(text, region));
  return uniquePhones(found);
}

// A directory page links hundreds of numbers; parsing one costs about 40 µs.
const MAX_TEL_LINKS = 2_000;
