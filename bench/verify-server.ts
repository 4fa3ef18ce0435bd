/**
 * The mail servers bench/verify talks to, in a process of their own (as real ones would be): N
 * smtp-server instances on 127.0.0.11, 127.0.0.12, ... (one port for all, as port 25 is for real
 * servers), each the MX of its domain `d<k>.bench.test`, accepting every recipient, no STARTTLS; and
 * a DNS server (test/stand-ins/dns.ts) with those MX and A records. Prints
 * `{"dns": "127.0.0.1:<port>", "smtpPort": <port>}` and runs until SIGTERM.
 */
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { startDnsStandIn, type ZoneEntry } from '../test/stand-ins/dns';
import { args } from './support';

const serverAddress = (k: number) => `127.0.0.${11 + k}`;

async function main(): Promise<void> {
  const { servers } = args({ servers: 8 });
  const make = () =>
    new SMTPServer({ disabledCommands: ['AUTH'], disableReverseLookup: true, hideSTARTTLS: true, logger: false });
  const first = make();
  await new Promise<void>((resolve) => first.listen(0, serverAddress(0), resolve));
  const port = (first as unknown as { server: { address(): AddressInfo } }).server.address().port;
  const all = [first];
  for (let k = 1; k < servers; k++) {
    const s = make();
    await new Promise<void>((resolve) => s.listen(port, serverAddress(k), resolve));
    all.push(s);
  }
  const zone: Record<string, ZoneEntry> = {};
  for (let k = 0; k < servers; k++) {
    zone[`d${k}.bench.test`] = { mx: [{ exchange: `mx.d${k}.bench.test`, priority: 10 }] };
    zone[`mx.d${k}.bench.test`] = { a: [serverAddress(k)] };
  }
  const dns = await startDnsStandIn(zone);
  process.stdout.write(`${JSON.stringify({ dns: dns.server, smtpPort: port })}\n`);
  process.once('SIGTERM', () => {
    void Promise.all([dns.close(), ...all.map((s) => new Promise<void>((r) => s.close(() => r())))]).then(() =>
      process.exit(0),
    );
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
