/**
 * bench/verify: crawlVerify's engine (syntax, lists, DNS with the job's MX cache, the per-server
 * limit and the full SMTP probe, as in the activity minus Temporal and storage) against local mail
 * servers (smtp-server, bench/verify-server.ts, its own process), next to a bare SMTP loop that
 * sends the same commands (EHLO, MAIL FROM, RCPT TO twice, QUIT) with as many sessions at a time.
 * Prints verifications/s for both and their ratio, and writes JSON to bench/results/.
 *   npm run bench:verify -- [--addresses 2000] [--servers 8] [--sessions 2]
 * The addresses are spread over `--servers` domains, each with its own mail server; `--sessions` is
 * VERIFY_CONCURRENCY_PER_DOMAIN. smtp-server waits 100 ms before its greeting (early-talker
 * detection, as real servers do for seconds), so one server with 2 sessions caps at 20/s for any client.
 */
import { setMaxListeners } from 'node:events';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';
import { distinctAddresses, KeyedLimiter, verifyAddress } from '../activities/verify/crawl-verify';
import { MailDns } from '../activities/verify/dns';
import { AllowList } from '../lib/outbound';
import { args, load, serveScript, stats, writeResult } from './support';

/** One session of the bare loop: each command written after the previous reply's last line. */
function bareSession(host: string, port: number, rcpt: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    const script = [
      'EHLO bench.local',
      'MAIL FROM:<bench@bench.local>',
      `RCPT TO:<${rcpt}>`,
      `RCPT TO:<xrandom@${rcpt.split('@')[1] ?? ''}>`,
      'QUIT',
    ];
    let buffer = '';
    socket.on('data', (chunk) => {
      buffer += chunk.toString('latin1');
      // A reply is complete at a line whose code is followed by a space.
      while (/^\d{3} .*\r?\n/m.test(buffer)) {
        buffer = buffer.replace(/^(?:\d{3}-.*\r?\n)*\d{3} .*\r?\n/, '');
        const next = script.shift();
        if (next === undefined) return socket.end();
        socket.write(`${next}\r\n`);
      }
    });
    socket.once('close', () => resolve());
    socket.once('error', reject);
  });
}

async function main(): Promise<void> {
  const opts = args({ addresses: 2000, servers: 8, sessions: 2 });
  const server = serveScript('bench/verify-server.ts', {
    args: ['--servers', String(opts.servers)],
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const where = JSON.parse(
    await new Promise<string>((resolve, reject) => {
      createInterface({ input: server.stdout as NodeJS.ReadableStream }).once('line', resolve);
      server.once('exit', (code) => reject(new Error(`stand-in server exited (${code})`)));
    }),
  ) as { dns: string; smtpPort: number };

  const addresses = distinctAddresses({
    emails: Array.from({ length: opts.addresses }, (_, i) => `person${i}@d${i % opts.servers}.bench.test`),
  });
  const dns = new MailDns([where.dns]);
  const limiter = new KeyedLimiter(opts.sessions);
  const signal = new AbortController().signal;
  setMaxListeners(0, signal);
  const ctx = {
    config: { SMTP_PROBE_PORT: where.smtpPort, SMTP_HELO_NAME: 'bench.local', SMTP_FROM: 'bench@bench.local' },
    dns,
    allowList: new AllowList(['127.0.0.0/8']),
    limiter,
    smtpCheck: true,
    signal,
  };
  // As many lanes as sessions may be open (the activity has 16); the limiter holds each server to `--sessions`.
  const lanes = opts.servers * opts.sessions;
  const statuses = new Map<string, number>();
  const engine = await load(addresses.length, lanes, async (i) => {
    const r = await verifyAddress(addresses[i] as string, {
      ...ctx,
      deadline: Date.now() + 30_000,
      stageEnd: Date.now() + 600_000,
    });
    statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
  });
  if (statuses.get('risky') !== addresses.length)
    throw new Error(`unexpected verdicts ${JSON.stringify(Object.fromEntries(statuses))}`);
  const bare = await load(addresses.length, lanes, (i) =>
    bareSession(`127.0.0.${11 + (i % opts.servers)}`, where.smtpPort, `person${i}@d${i % opts.servers}.bench.test`),
  );
  server.kill('SIGTERM');

  const r = (x: number) => Math.round(x * 100) / 100;
  const result = {
    addresses: addresses.length,
    servers: opts.servers,
    sessions_per_server: opts.sessions,
    engine: stats(engine.latencies, engine.seconds),
    bare_smtp: stats(bare.latencies, bare.seconds),
    ratio: r(addresses.length / engine.seconds / (addresses.length / bare.seconds)),
  };
  process.stdout.write(
    `engine    ${result.addresses} verifications in ${result.engine.seconds} s = ${result.engine.per_second}/s (target >= 100)\n` +
      `bare SMTP ${result.addresses} sessions in ${result.bare_smtp.seconds} s = ${result.bare_smtp.per_second}/s\n` +
      `ratio ${result.ratio}x (target >= 0.8); ${opts.servers} mail servers, ${opts.sessions} sessions each at a time\n`,
  );
  process.stdout.write(`${writeResult('verify', result)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
