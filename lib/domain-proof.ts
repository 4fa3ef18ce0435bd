import { dnsErrorCode, dnsResolver, NO_RECORDS } from './dns';

/** The TXT record a client publishes on its domain to show it controls it. */
export const siteVerificationRecord = (token: string) => `leadjobs-site-verification=${token}`;

/** A domain's TXT records (each joined from its strings), or why the lookup found none. */
export type TxtRecords = { ok: true; records: string[] } | { ok: false; reason: string };

/**
 * The domain's TXT records, through DNS_SERVERS (or the system's resolver). A record split into
 * several strings (over 255 bytes) is read joined, as RFC 7208 does.
 */
export async function lookupTxt(domain: string, servers: readonly string[], timeoutMs = 3000): Promise<TxtRecords> {
  const resolver = dnsResolver(servers, timeoutMs);
  try {
    return { ok: true, records: (await resolver.resolveTxt(domain)).map((chunks) => chunks.join('')) };
  } catch (err) {
    const code = dnsErrorCode(err);
    if (code === 'ENOTFOUND') return { ok: false, reason: `${domain} has no TXT record (the name does not exist)` };
    if (NO_RECORDS.has(code)) return { ok: false, reason: `${domain} has no TXT record` };
    return { ok: false, reason: `the DNS lookup of ${domain} failed (${code}); try again later` };
  }
}

/** Why `record` is not among the domain's TXT records, or null when it is. */
export function missingRecord(domain: string, txt: TxtRecords, record: string): string | null {
  if (!txt.ok) return txt.reason;
  return txt.records.includes(record)
    ? null
    : `none of the ${txt.records.length} TXT record(s) of ${domain} is ${record}`;
}
