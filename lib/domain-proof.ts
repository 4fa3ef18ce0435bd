import { Resolver } from 'node:dns/promises';

/** The TXT record a client publishes on its domain to show it controls it. */
export const siteVerificationRecord = (token: string) => `leadjobs-site-verification=${token}`;

export type DomainProof = { ok: true } | { ok: false; reason: string };

const NO_RECORDS = new Set(['ENODATA', 'ENOTFOUND']);
const codeOf = (err: unknown): string => (typeof (err as { code?: unknown })?.code === 'string' ? (err as { code: string }).code : 'ERROR');

/**
 * Looks for `record` among the domain's TXT records, through DNS_SERVERS (or the system's
 * resolver). A record split into several strings (over 255 bytes) is read joined, as RFC 7208 does.
 */
export async function findTxtRecord(domain: string, record: string, servers: readonly string[], timeoutMs = 3000): Promise<DomainProof> {
  const resolver = new Resolver({ timeout: timeoutMs, tries: 2 });
  if (servers.length > 0) resolver.setServers([...servers]);
  let records: string[][];
  try {
    records = await resolver.resolveTxt(domain);
  } catch (err) {
    const code = codeOf(err);
    if (NO_RECORDS.has(code)) return { ok: false, reason: `${domain} has no TXT record ${code === 'ENOTFOUND' ? '(the name does not exist)' : ''}`.trim() };
    return { ok: false, reason: `the DNS lookup of ${domain} failed (${code}); try again later` };
  }
  if (records.some((chunks) => chunks.join('') === record)) return { ok: true };
  return { ok: false, reason: `none of the ${records.length} TXT record(s) of ${domain} is ${record}` };
}
