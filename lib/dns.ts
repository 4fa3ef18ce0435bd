import { Resolver } from 'node:dns/promises';

/**
 * A resolver of DNS_SERVERS (`ip[:port]` each; none: the system's, /etc/resolv.conf) that gives up
 * after `timeoutMs` per try, two tries. crawlVerify's MX lookups and the content sites' TXT proof use it.
 */
export function dnsResolver(servers: readonly string[], timeoutMs: number): Resolver {
  const resolver = new Resolver({ timeout: timeoutMs, tries: 2 });
  if (servers.length > 0) resolver.setServers([...servers]);
  return resolver;
}

/** The error code of a failed lookup (ENOTFOUND, ENODATA, ESERVFAIL, ETIMEOUT, ...), ERROR when it has none. */
export const dnsErrorCode = (err: unknown): string =>
  typeof (err as { code?: unknown })?.code === 'string' ? (err as { code: string }).code : 'ERROR';

/** Codes that answer "no such records" (the name does not exist, or has none of the type), not a failed lookup. */
export const NO_RECORDS = new Set(['ENODATA', 'ENOTFOUND']);
