import dns2 from 'dns2';

const { Packet } = dns2;
type Resource = InstanceType<typeof Packet>['answers'][number];
/** A record as the wire encoder reads it (the typings ask for a toBuffer the encoder never calls). */
const record = (r: Omit<Resource, 'toBuffer'>) => r as Resource;

/** The records of one name; a name absent from the zone is NXDOMAIN, a listed one without the asked type is NODATA. */
export interface ZoneEntry {
  mx?: { exchange: string; priority: number }[];
  a?: string[];
  /** TXT records; one given as several strings is sent as that many character-strings (a record over 255 bytes). */
  txt?: (string | string[])[];
  /** Answer SERVFAIL to everything about this name (a broken authoritative server). */
  servfail?: boolean;
}

export interface DnsStandIn {
  /** `127.0.0.1:<port>`: a DNS_SERVERS entry. */
  server: string;
  /** Questions asked, `<type> <name>` each (MX caching is asserted on it). */
  queries: string[];
  /** Adds or replaces a name's records (a record published while the test runs). */
  set(name: string, entry: ZoneEntry): void;
  close(): Promise<void>;
}

/**
 * An authoritative DNS server (dns2, UDP on 127.0.0.1, a free port) for the test domains: MX, A and
 * TXT records in the real wire format, NXDOMAIN for unknown names, SERVFAIL on request.
 */
export async function startDnsStandIn(zone: Record<string, ZoneEntry>): Promise<DnsStandIn> {
  const queries: string[] = [];
  const names = new Map(Object.entries(zone).map(([name, entry]) => [name.toLowerCase(), entry]));
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const question = request.questions[0];
      if (!question) return send(response);
      const name = question.name.toLowerCase().replace(/\.$/, '');
      const typeName =
        { [Packet.TYPE.MX]: 'MX', [Packet.TYPE.A]: 'A', [Packet.TYPE.AAAA]: 'AAAA', [Packet.TYPE.TXT]: 'TXT' }[
          question.type
        ] ?? String(question.type);
      queries.push(`${typeName} ${name}`);
      const entry = names.get(name);
      response.header.aa = 1;
      if (!entry) {
        response.header.rcode = Packet.RCODE.NXDOMAIN;
        return send(response);
      }
      if (entry.servfail) {
        response.header.rcode = Packet.RCODE.SERVFAIL;
        return send(response);
      }
      if (question.type === Packet.TYPE.MX) {
        for (const mx of entry.mx ?? [])
          response.answers.push(
            record({
              name: question.name,
              type: Packet.TYPE.MX,
              class: Packet.CLASS.IN,
              ttl: 300,
              exchange: mx.exchange,
              priority: mx.priority,
            }),
          );
      } else if (question.type === Packet.TYPE.A) {
        for (const address of entry.a ?? [])
          response.answers.push(
            record({ name: question.name, type: Packet.TYPE.A, class: Packet.CLASS.IN, ttl: 300, address }),
          );
      } else if (question.type === Packet.TYPE.TXT) {
        for (const data of entry.txt ?? [])
          response.answers.push(
            record({ name: question.name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 300, data } as Omit<
              Resource,
              'toBuffer'
            >),
          );
      }
      return send(response);
    },
  });
  const addresses = await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  const port = addresses.udp?.port;
  if (!port) throw new Error('the DNS stand-in did not get a UDP port');
  return {
    server: `127.0.0.1:${port}`,
    queries,
    set: (name, entry) => void names.set(name.toLowerCase(), entry),
    close: () => server.close(),
  };
}
