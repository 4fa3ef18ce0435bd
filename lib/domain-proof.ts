import { dnsErrorCode, dnsResolver, NO_RECORDS } from './dns';

/** The TXT record a client publishes on its domain to show it controls it. */
export const siteVerificationRecord = (token: string) => `leadjobs-site-verification=${token}`;

export type DomainProof = { ok: true } | { ok: false; reason: string };

/**
 * Looks for `record` among the domain's TXT records, through DNS_SERVERS (or the system's
 * resolver). A record split into several strings (over 255 bytes) is read joined, as RFC 7208 does.
 */
export async function findTxtRecord(domain: string, record: string, servers: readonly string[], timeoutMs = 3000): Promise<DomainProof> {
  const resolver = dnsResolver(servers, timeoutMs);
  let records: string[][];
  try {
    records = await resolver.resolveTxt(domain);
  } catch (err) {
    const code = dnsErrorCode(err);
    if (code === 'ENOTFOUND') return { ok: false, reason: `${domain} has no TXT record (the name does not exist)` };
    if (NO_RECORDS.has(code)) return { ok: false, reason: `${domain} has no TXT record` };
    return { ok: false, reason: `the DNS lookup of ${domain} failed (${code}); try again later` };
  }
  if (records.some((chunks) => chunks.join('') === record)) return { ok: true };
  return { ok: false, reason: `none of the ${records.length} TXT record(s) of ${domain} is ${record}` };
}
