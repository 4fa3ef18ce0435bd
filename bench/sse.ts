/**
 * bench/sse: event fan-out. `--subscribers` SSE connections to GET /api/v1/events/stream of the real
 * API (its own process, bench/submit-api.ts), spread over `--clients` clients, while this process
 * commits events at a steady `--rate` per second for `--seconds` (the product's own write path:
 * db/repositories/events.ts appendEvent inside transactionWithEvents, as job status changes are
 * written). Each event goes to every subscriber of its client; the latency of a delivery is from the
 * event's commit to its frame arriving at the subscriber (one clock: both ends are this process).
 * Prints p50/p95/p99/max and missing deliveries; writes JSON to bench/results/.
 *   npm run bench:sse -- [--subscribers 1000] [--clients 1] [--rate 20] [--seconds 15]
 * Target: p99 <= 100 ms (issue 17).
 */
import http from 'node:http';
import os from 'node:os';
import { createDb, migrateLatest } from '../db';
import { ClientRepository } from '../db/repositories/clients';
import { appendEvent, transactionWithEvents } from '../db/repositories/events';
import { parseConfig } from '../lib/config';
import { args, percentile, serveScript, stackEnv, writeResult } from './support';

async function main(): Promise<void> {
  const opts = args({ subscribers: 1000, clients: 1, rate: 20, seconds: 15 });
  const tag = `s${Date.now().toString(36)}`;
  const env = { ...stackEnv(), DATABASE_SCHEMA: `bench_${tag}`, TASK_QUEUE_PREFIX: `bench-${tag}`, LOG_LEVEL: 'warn' };
  const config = parseConfig(env);
  const db = createDb(config);
  await migrateLatest(db, config.DATABASE_SCHEMA);
  const repo = new ClientRepository(db);
  const clients = await Promise.all(Array.from({ length: opts.clients }, (_, i) => repo.create(`bench sse ${i}`)));

  const port = 18000 + Math.floor(Math.random() * 1000);
  const api = serveScript('bench/submit-api.ts', {
    // All subscribers may belong to one client: the per-client stream limit (20 by default) is lifted.
    env: {
      ...env,
      PORT: String(port),
      RATE_LIMIT_ENABLED: 'false',
      SSE_MAX_STREAMS_PER_CLIENT: String(opts.subscribers),
    },
  });
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const requests: http.ClientRequest[] = [];
  try {
    for (let i = 0; ; i++) {
      if ((await fetch(`http://127.0.0.1:${port}/openapi.json`).catch(() => undefined))?.ok) break;
      if (i > 900) throw new Error('API did not start');
      await new Promise((r) => setTimeout(r, 100));
    }

    // Commit time of each event by id, and every delivery's latency.
    const committedAt = new Map<number, number>();
    const latencies: number[] = [];
    const received = new Map<number, number>();
    const subscriberClient: number[] = [];
    const connect = (index: number) =>
      new Promise<void>((resolve, reject) => {
        const c = clients[index % clients.length]!;
        subscriberClient.push(index % clients.length);
        const token = encodeURIComponent(`${c.client_id}:${c.api_key}:${c.api_secret}`);
        const req = http.get(
          { host: '127.0.0.1', port, path: `/api/v1/events/stream?token=${token}`, agent },
          (res) => {
            if (res.statusCode !== 200) return reject(new Error(`stream answered ${res.statusCode}`));
            res.setEncoding('utf8');
            let buffer = '';
            let connected = false;
            res.on('data', (chunk: string) => {
              const at = performance.now();
              buffer += chunk;
              let end: number;
              while ((end = buffer.indexOf('\n\n')) >= 0) {
                const frame = buffer.slice(0, end);
                buffer = buffer.slice(end + 2);
                if (!connected && frame.includes('event: connected')) {
                  connected = true;
                  resolve();
                  continue;
                }
                if (!frame.startsWith('id: ')) continue;
                const id = Number(frame.slice(4, frame.indexOf('\n')));
                const t = committedAt.get(id);
                if (t !== undefined) latencies.push(at - t);
                received.set(id, (received.get(id) ?? 0) + 1);
              }
            });
            res.on('error', () => undefined);
          },
        );
        req.on('error', reject);
        requests.push(req);
      });
    const connectStarted = performance.now();
    for (let i = 0; i < opts.subscribers; i += 50)
      await Promise.all(Array.from({ length: Math.min(50, opts.subscribers - i) }, (_, j) => connect(i + j)));
    const connectSeconds = (performance.now() - connectStarted) / 1000;
    const perClient = clients.map((_, k) => subscriberClient.filter((x) => x === k).length);

    // Events at a steady rate: one every 1000/rate ms, each in its own transaction, round robin over the clients.
    const total = opts.rate * opts.seconds;
    const interval = 1000 / opts.rate;
    const expected = new Map<number, number>();
    const started = performance.now();
    const writes: Promise<void>[] = [];
    for (let i = 0; i < total; i++) {
      const due = started + i * interval;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const k = i % clients.length;
      writes.push(
        transactionWithEvents(db, config.DATABASE_SCHEMA, async (trx) => {
          const event = await appendEvent(trx, config.DATABASE_SCHEMA, {
            clientId: clients[k]!.client_id,
            name: 'job.queued',
            data: { job_id: null, type: 'crawlSite', priority: 5, bench: i },
          });
          expected.set(event.id, perClient[k]!);
          // The commit: the transaction's own promise settles when COMMIT has been acknowledged.
          void trx.executionPromise.then(
            () => committedAt.set(event.id, performance.now()),
            () => undefined,
          );
        }),
      );
    }
    await Promise.all(writes);
    const writeSeconds = (performance.now() - started) / 1000;
    // Let the last deliveries arrive.
    const expectedTotal = [...expected.values()].reduce((a, b) => a + b, 0);
    for (let i = 0; i < 100 && latencies.length < expectedTotal; i++) await new Promise((r) => setTimeout(r, 100));

    const sorted = [...latencies].sort((a, b) => a - b);
    const r = (x: number) => Math.round(x * 10) / 10;
    const missing = [...expected].reduce((sum, [id, n]) => sum + Math.max(0, n - (received.get(id) ?? 0)), 0);
    const result = {
      benchmark: 'sse',
      at: new Date().toISOString(),
      machine: { cores: os.cpus().length, load_average: os.loadavg().map((l) => Math.round(l * 100) / 100) },
      options: opts,
      connect_seconds: r(connectSeconds),
      events: total,
      write_seconds: r(writeSeconds),
      deliveries_expected: expectedTotal,
      deliveries: latencies.length,
      missing,
      latency_ms: {
        p50: r(percentile(sorted, 50)),
        p95: r(percentile(sorted, 95)),
        p99: r(percentile(sorted, 99)),
        max: r(sorted.at(-1) ?? NaN),
      },
      target_p99_ms: 100,
      met: missing === 0 && percentile(sorted, 99) <= 100,
    };
    console.log(
      `sse benchmark: ${opts.subscribers} subscribers over ${opts.clients} client(s), ${total} events at ${opts.rate}/s (load average ${result.machine.load_average.join(' ')})`,
    );
    console.log(
      `  ${opts.subscribers} streams connected in ${result.connect_seconds} s; ${result.deliveries}/${expectedTotal} deliveries, ${missing} missing`,
    );
    console.log(
      `  commit -> subscriber: p50 ${result.latency_ms.p50} ms, p95 ${result.latency_ms.p95} ms, p99 ${result.latency_ms.p99} ms, max ${result.latency_ms.max} ms (target p99 <= 100 ms: ${result.met ? 'met' : 'NOT met'})`,
    );
    console.log(`wrote ${writeResult('sse', result)}`);
  } finally {
    for (const req of requests) req.destroy();
    agent.destroy();
    api.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    await db.raw('DROP SCHEMA ?? CASCADE', [config.DATABASE_SCHEMA]);
    await db.destroy();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
