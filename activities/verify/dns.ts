import type { Resolver } from 'node:dns/promises';
import { dnsErrorCode as codeOf, dnsResolver, NO_RECORDS } from '../../lib/dns';

/** Where a domain's mail goes, or why it goes nowhere. */
export type MailRoute =
  /** Mail servers in the order to try them (lowest preference first). `viaA`: no MX, the domain's own address (RFC 5321 §5.1). */
  | { kind: 'servers'; hosts: string[]; viaA: boolean }
  /** The domain has no mail server: does not exist, has neither MX nor address, or publishes a null MX. */
  | { kind: 'none'; reason: string }
  /** The lookup itself failed (server failure, timeout): nothing is known. */
  | { kind: 'error'; reason: string };

/**
 * MX lookups with fallback to A/AAAA, and the mail servers' addresses, through DNS_SERVERS (or the
 * system's resolver). One per job: answers are cached for the job's lifetime, so a thousand
 * addresses at one domain cost one lookup. `cancel()` aborts every query in flight.
 */
export class MailDns {
  private readonly resolver: Resolver;
  private readonly routes = new Map<string, Promise<MailRoute>>();
  private readonly hosts = new Map<string, Promise<string[]>>();

  constructor(servers: readonly string[], timeoutMs = 3000) {
    this.resolver = dnsResolver(servers, timeoutMs);
  }

  route(domain: string): Promise<MailRoute> {
    let answer = this.routes.get(domain);
    if (!answer) {
      answer = this.lookupRoute(domain);
      this.routes.set(domain, answer);
    }
    return answer;
  }

  /** IPv4 then IPv6 addresses of a mail server (empty when it has none); errors are thrown. */
  addresses(host: string): Promise<string[]> {
    let answer = this.hosts.get(host);
    if (!answer) {
      answer = this.lookupAddresses(host);
      // A failed lookup is not cached: another address of the job may try again.
      answer.catch(() => this.hosts.delete(host));
      this.hosts.set(host, answer);
    }
    return answer;
  }

  cancel(): void {
    this.resolver.cancel();
  }

  private async lookupRoute(domain: string): Promise<MailRoute> {
    try {
      const mx = await this.resolver.resolveMx(domain);
      // RFC 7505 null MX: "MX 0 ." says the domain accepts no mail at all.
      if (mx.length === 1 && mx[0]?.exchange.replace(/\.$/, '') === '')
        return { kind: 'none', reason: `${domain} accepts no mail (null MX record)` };
      const hosts = mx
        .filter((r) => r.exchange !== '')
        .sort((a, b) => a.priority - b.priority)
        .map((r) => r.exchange.replace(/\.$/, '').toLowerCase());
      if (hosts.length > 0) return { kind: 'servers', hosts, viaA: false };
    } catch (err) {
      const code = codeOf(err);
      if (code === 'ENOTFOUND') return { kind: 'none', reason: `domain ${domain} does not exist (NXDOMAIN)` };
      if (!NO_RECORDS.has(code)) return { kind: 'error', reason: `DNS lookup of ${domain} failed (${code})` };
    }
    try {
      const own = await this.lookupAddresses(domain);
      if (own.length > 0) return { kind: 'servers', hosts: [domain], viaA: true };
      return { kind: 'none', reason: `${domain} has no MX record and no address` };
    } catch (err) {
      return { kind: 'error', reason: `DNS lookup of ${domain} failed (${codeOf(err)})` };
    }
  }

  private async lookupAddresses(host: string): Promise<string[]> {
    const one = async (family: 4 | 6): Promise<string[]> => {
      try {
        return family === 4 ? await this.resolver.resolve4(host) : await this.resolver.resolve6(host);
      } catch (err) {
        if (NO_RECORDS.has(codeOf(err))) return [];
        throw err;
      }
    };
    const v4 = await one(4);
    return v4.length > 0 ? v4 : one(6);
  }
}
