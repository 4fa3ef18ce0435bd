/**
 * bench/submit: job submission through the real API (its own process, real Postgres and Temporal)
 * next to a bare `client.workflow.start` loop with the same workflow options, both from 64
 * concurrent callers. Prints both, their ratios, and writes JSON to bench/results/.
 *   npm run bench:submit -- [--requests 2000] [--concurrency 64] [--warmup 1500] [--rounds 4] [--temporal dev|cluster]
 * The measured requests run in `--rounds` alternating rounds (API, bare, floor, API, ...), so that
 * the arms see the same load on a shared machine; each round's figures are printed too. The third
 * arm (`--floor 0` leaves it out) is bench/submit-floor.ts: a plain node:http server that commits
 * one row and starts the workflow, the least a durable submission over HTTP costs; its ratio to the
 * bare arm is the API's lower bound.
 * Rate limiting is off for the API process (it would cap each client at 100/min); the stack must
 * be up (dev/stack up). Workflows it starts are terminated at the end. BENCH_PROFILE_DIR=<dir>
 * writes a CPU profile of the API process there.
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { Pool } from 'undici';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { createDb, migrateLatest } from '../db';
import { ClientRepository } from '../db/repositories/clients';
import { parseConfig } from '../lib/config';
import { priorityKeyFor } from '../jobs';
import { runJobInput } from '../jobs/run-input';
import { temporalConnectionOptions } from '../lib/temporal';
import { runJob } from '../workflows';
import {
  args,
  cpuSeconds,
  cpuSince,
  load,
  serveScript,
  stackEnv,
  stats,
  temporalTarget,
  writeResult,
  type CpuGroup,
  type Stats,
} from './support';

async function main(): Promise<void> {
  const opts = args({ requests: 2000, concurrency: 64, warmup: 1500, rounds: 4, floor: 1 });
  const temporal = temporalTarget();
  const tag = `b${Date.now().toString(36)}`;
  const env = {
    ...stackEnv(),
    ...temporal.env,
    DATABASE_SCHEMA: `bench_${tag}`,
    TASK_QUEUE_PREFIX: `bench-${tag}`,
    LOG_LEVEL: 'warn',
  };
  const config = parseConfig(env);

  const db = createDb(config);
  await migrateLatest(db, config.DATABASE_SCHEMA);
  const repo = new ClientRepository(db);
  const clients = await Promise.all(Array.from({ length: opts.concurrency }, (_, i) => repo.create(`bench ${i}`)));
  const auths = clients.map((c) => `Bearer ${c.client_id}:${c.api_key}:${c.api_secret}`);

  // No worker runs the bench's jobs, so every submission stays queued: the queue's capacity must
  // hold them all and stay more than its margin (a tenth) above them, where one submission a second
  // counts the queue, as on a server far from full.
  const capacity = Math.max(config.QUEUE_CAPACITY_CRAWL_SITE, Math.ceil((opts.warmup + opts.requests) * 1.5));
  const port = 18000 + Math.floor(Math.random() * 1000);
  const profileDir = process.env.BENCH_PROFILE_DIR;
  const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const serve = (script: string, at: number, extra: string[] = []) =>
    serveScript(script, {
      nodeArgs: extra,
      env: {
        ...env,
        PORT: String(at),
        RATE_LIMIT_ENABLED: 'false',
        DATABASE_POOL_MAX: '20',
        QUEUE_CAPACITY_CRAWL_SITE: String(capacity),
      },
    });
  const api = serve('bench/submit-api.ts', port, profile);
  const floor = opts.floor ? serve('bench/submit-floor.ts', port + 1000) : undefined;
  const base = `http://127.0.0.1:${port}`;
  const floorBase = `http://127.0.0.1:${port + 1000}`;
  for (let i = 0; ; i++) {
    const apiUp = (await fetch(`${base}/openapi.json`).catch(() => undefined))?.ok;
    const floorUp =
      !floor ||
      (await fetch(floorBase, { method: 'POST', body: '{"payload":{}}' }).catch(() => undefined))?.status === 201;
    if (apiUp && floorUp) break;
    if (i > 900) throw new Error('API or floor server did not start');
    await new Promise((r) => setTimeout(r, 100));
  }

  // The API is called through a keep-alive undici pool (one connection per caller), as the bare arm's
  // gRPC client keeps its connection: on a machine the run saturates, fetch's own CPU would count
  // against the API arm only.
  const pool = new Pool(base, { connections: opts.concurrency });
  const floorPool = new Pool(floorBase, { connections: opts.concurrency });
  // The same request to the API and to the floor server.
  const submitTo = (to: Pool, name: string) => async (i: number) => {
    const res = await to.request({
      method: 'POST',
      path: '/api/v1/jobs/crawlSite/submit',
      headers: { authorization: auths[i % auths.length] as string, 'content-type': 'application/json' },
      body: JSON.stringify({ payload: { url: `https://bench-${tag}-${i}.test/` }, priority: i % 11 }),
    });
    if (res.statusCode !== 201) throw new Error(`${name} answered ${res.statusCode}: ${await res.body.text()}`);
    await res.body.arrayBuffer();
  };
  const submit = submitTo(pool, 'submit');
  const floorSubmit = submitTo(floorPool, 'floor');

  const connection = await Connection.connect(temporalConnectionOptions(config));
  const client = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
  const started: string[] = [];
  const keys = {
    client: defineSearchAttributeKey('ClientId', SearchAttributeType.KEYWORD),
    type: defineSearchAttributeKey('JobType', SearchAttributeType.KEYWORD),
    job: defineSearchAttributeKey('JobId', SearchAttributeType.KEYWORD),
  };
  const bare = async (i: number) => {
    const jobId = randomUUID();
    const workflowId = `bench/${tag}/${jobId}`;
    await client.workflow.start(runJob, {
      taskQueue: `bench-${tag}-bare`,
      workflowId,
      args: [runJobInput({ id: jobId, client_id: 'cli_bench', type: 'crawlSite', payload: {} }, config)],
      typedSearchAttributes: [
        { key: keys.client, value: 'cli_bench' },
        { key: keys.type, value: 'crawlSite' },
        { key: keys.job, value: jobId },
      ],
      staticSummary: 'crawlSite for cli_bench (priority 5)',
      memo: { clientId: 'cli_bench', type: 'crawlSite', priority: 5 },
      priority: { priorityKey: priorityKeyFor(i % 11) },
    });
    started.push(workflowId);
  };

  // Whatever happens, the bench cleans up: its workflows, the two servers, the schema.
  try {
    // Warm both paths (JIT, pools, connections), then alternate the measured runs. The API process
    // needs about a thousand submissions before V8 has optimized its path: with 200 it spent 6-7 ms
    // of CPU per submission, with 1,500 about 4.5 ms (a server's steady state is the latter).
    await load(opts.warmup, opts.concurrency, (i) => submit(1_000_000 + i));
    await load(opts.warmup, opts.concurrency, (i) => bare(i));
    if (floor) await load(opts.warmup, opts.concurrency, (i) => floorSubmit(2_000_000 + i));
    // Alternating rounds, so that both arms see the same load on a shared machine.
    // CPU per request of each process, to show where an arm's time goes on a machine it saturates.
    const groups: CpuGroup[] = [
      { name: 'api', match: (p) => p.pid === api.pid },
      { name: 'floor', match: (p) => p.pid === floor?.pid },
      { name: 'bench', match: (p) => p.pid === process.pid },
      { name: 'postgres', match: (p) => p.comm === 'postgres' },
      { name: 'temporal', match: temporal.isServer },
    ];
    // Each round's own figures too: whether a tail is the arm's or one round's (a burst of other work
    // on the machine) shows there, where the pooled percentiles cannot say.
    const newRun = () => ({
      latencies: [] as number[],
      seconds: 0,
      cpu: {} as Record<string, number>,
      rounds: [] as Stats[],
    });
    const apiRun = newRun();
    const bareRun = newRun();
    const floorRun = newRun();
    const arms: [typeof apiRun, (i: number) => Promise<void>, number][] = [
      [apiRun, submit, 0],
      [bareRun, bare, opts.warmup],
    ];
    if (floor) arms.push([floorRun, floorSubmit, 3_000_000]);
    const perRound = Math.ceil(opts.requests / opts.rounds);
    for (let r = 0; r < opts.rounds; r++) {
      for (const [run, fn, offset] of arms) {
        const before = cpuSeconds(groups);
        const part = await load(perRound, opts.concurrency, (i) => fn(offset + r * perRound + i));
        for (const [k, v] of Object.entries(cpuSince(before, cpuSeconds(groups)))) run.cpu[k] = (run.cpu[k] ?? 0) + v;
        run.latencies.push(...part.latencies);
        run.seconds += part.seconds;
        run.rounds.push(stats(part.latencies, part.seconds));
      }
    }
    const apiStats = stats(apiRun.latencies, apiRun.seconds);
    const bareStats = stats(bareRun.latencies, bareRun.seconds);
    const ratio = {
      p50: Math.round((apiStats.p50_ms / bareStats.p50_ms) * 100) / 100,
      p99: Math.round((apiStats.p99_ms / bareStats.p99_ms) * 100) / 100,
      throughput: Math.round((bareStats.per_second / apiStats.per_second) * 100) / 100,
    };
    const floorStats = floor ? stats(floorRun.latencies, floorRun.seconds) : undefined;
    const floorRatio = floorStats && {
      p50: Math.round((floorStats.p50_ms / bareStats.p50_ms) * 100) / 100,
      p99: Math.round((floorStats.p99_ms / bareStats.p99_ms) * 100) / 100,
      throughput: Math.round((bareStats.per_second / floorStats.per_second) * 100) / 100,
    };
    const cpuPerRequest = (run: typeof apiRun) =>
      Object.fromEntries(
        Object.entries(run.cpu).map(([k, v]) => [k, Math.round((v * 1000 * 100) / run.latencies.length) / 100]),
      );
    const result = {
      benchmark: 'submit',
      at: new Date().toISOString(),
      machine: {
        cores: (await import('node:os')).cpus().length,
        load_average: (await import('node:os')).loadavg().map((l) => Math.round(l * 100) / 100),
      },
      options: opts,
      temporal: temporal.name,
      api_submit: apiStats,
      bare_workflow_start: bareStats,
      floor_http_row_start: floorStats ?? null,
      ratio_api_over_bare: ratio,
      ratio_floor_over_bare: floorRatio ?? null,
      rounds: {
        api_submit: apiRun.rounds,
        bare_workflow_start: bareRun.rounds,
        ...(floor ? { floor_http_row_start: floorRun.rounds } : {}),
      },
      cpu_ms_per_request: {
        api_submit: cpuPerRequest(apiRun),
        bare_workflow_start: cpuPerRequest(bareRun),
        ...(floor ? { floor_http_row_start: cpuPerRequest(floorRun) } : {}),
      },
      targets: { max_ratio: 1.3 },
      met: { p50: ratio.p50 <= 1.3, p99: ratio.p99 <= 1.3, throughput: ratio.throughput <= 1.3 },
    };
    const line = (name: string, s: typeof apiStats) =>
      `${name.padEnd(22)} ${String(s.per_second).padStart(8)}/s  p50 ${String(s.p50_ms).padStart(7)} ms  p95 ${String(s.p95_ms).padStart(7)} ms  p99 ${String(s.p99_ms).padStart(7)} ms`;
    console.log(
      `submit benchmark on the ${temporal.name === 'cluster' ? 'Temporal cluster (dev/cluster)' : 'Temporal dev server'}: ${opts.requests} requests, ${opts.concurrency} concurrent, ${opts.rounds} alternating rounds (load average ${result.machine.load_average.join(' ')})`,
    );
    console.log(line('API POST .../submit', apiStats));
    console.log(line('bare workflow.start', bareStats));
    const cpuLine = (name: string, c: Record<string, number>) =>
      `${name.padEnd(22)} CPU ms/request: ${Object.entries(c)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}`;
    console.log(cpuLine('API POST .../submit', result.cpu_ms_per_request.api_submit));
    console.log(cpuLine('bare workflow.start', result.cpu_ms_per_request.bare_workflow_start));
    if (floorStats && floorRatio) {
      console.log(line('floor (row + start)', floorStats));
      console.log(cpuLine('floor (row + start)', cpuPerRequest(floorRun)));
    }
    const roundsLine = (name: string, run: typeof apiRun) =>
      `${name.padEnd(22)} by round (p50 / p99 ms, per s): ${run.rounds.map((x) => `${x.p50_ms} / ${x.p99_ms}, ${x.per_second}`).join('; ')}`;
    console.log(roundsLine('API POST .../submit', apiRun));
    console.log(roundsLine('bare workflow.start', bareRun));
    if (floor) console.log(roundsLine('floor (row + start)', floorRun));
    console.log(`ratio API/bare: p50 ${ratio.p50}x, p99 ${ratio.p99}x, throughput ${ratio.throughput}x`);
    if (floorRatio)
      console.log(
        `ratio floor/bare (the lowest an HTTP submission with a committed row gets): p50 ${floorRatio.p50}x, p99 ${floorRatio.p99}x, throughput ${floorRatio.throughput}x`,
      );
    console.log(`wrote ${writeResult(temporal.name === 'cluster' ? 'submit-cluster' : 'submit', result)}`);
  } finally {
    const floorIds = floor ? ((await db('floor_jobs').pluck('id')) as string[]).map((id) => `floor/${id}`) : [];
    const ids = [...started, ...(await db('jobs').pluck('workflow_id')), ...floorIds];
    await load(ids.length, 32, async (i) => {
      await client.workflow
        .getHandle(ids[i] as string)
        .terminate('benchmark finished')
        .catch(() => undefined);
    });
    await Promise.all([pool.close(), floorPool.close()]);
    api.kill('SIGTERM');
    floor?.kill('SIGTERM');
    await db.raw('DROP SCHEMA ?? CASCADE', [config.DATABASE_SCHEMA]);
    await Promise.all([db.destroy(), connection.close()]);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
