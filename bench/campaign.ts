/**
 * bench/campaign: a campaign of 20 locations x 20 businesses with the maps -> site -> verify
 * workflow, end to end on the local stack: created through the real API (in this process), run by
 * the production worker set (in this process), against the Google Places stand-in (places per city),
 * 400 small company websites (each its own origin: 20 loopback addresses x 20 ports, three pages
 * each) and the mail servers of bench/verify-server.ts (DNS + SMTP, their own process).
 *
 * Prints the engine's wall time (created -> campaign.terminal) next to the sum of its stage
 * activities' run times (from the workflows' Temporal histories: maps, site, verify and the
 * bookkeeping steps), their ratio (the parallelism the engine achieved) and the time activities
 * waited in task queues; writes JSON to bench/results/.
 *   npm run bench:campaign -- [--locations 20] [--businesses 20] [--concurrency 5] [--latency 0]
 * `--latency` delays every website page (ms), as a real site's round trip does.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import type { temporal } from '@temporalio/proto';
import { cityPlaces, startGooglePlacesStandIn } from '../test/stand-ins/google-places';
import { args, serveScript, writeResult } from './support';
import { startBenchService } from './service';

const KEY = 'bench-places-key-0123456789';
const MAIL_SERVERS = 8;

/** 20 loopback addresses x `perHost` ports: one origin per business, three pages each. */
async function startSites(
  count: number,
  latencyMs: number,
): Promise<{ origins: string[]; pages: () => number; close: () => Promise<void> }> {
  let pages = 0;
  const servers: Server[] = [];
  const origins: string[] = [];
  for (let i = 0; i < count; i++) {
    const host = `127.0.0.${2 + (i % 20)}`;
    const domain = `d${i % MAIL_SERVERS}.bench.test`;
    const server = createServer((req, res) => {
      pages++;
      const path = (req.url ?? '/').split('?')[0];
      const page = (body: string) =>
        setTimeout(() => {
          res
            .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
            .end(
              `<!doctype html><html><head><title>Business ${i}</title><meta property="og:site_name" content="Business ${i}"></head><body>${body}</body></html>`,
            );
        }, latencyMs);
      if (path === '/') return page(`<h1>Business ${i}</h1><a href="/about">About</a> <a href="/contact">Contact</a>`);
      if (path === '/about')
        return page(`<h1>About</h1><p>A family bakery since 19${10 + (i % 90)}.</p><a href="/contact">Contact</a>`);
      if (path === '/contact')
        return page(
          `<h1>Contact</h1><a href="mailto:info@${domain}">info@${domain}</a> <a href="mailto:owner${i}@${domain}">owner${i}@${domain}</a>`,
        );
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    });
    await new Promise<void>((resolve) => server.listen(0, host, resolve));
    servers.push(server);
    origins.push(`http://${host}:${(server.address() as AddressInfo).port}/`);
  }
  return {
    origins,
    pages: () => pages,
    close: async () => {
      for (const s of servers) s.closeAllConnections();
      await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    },
  };
}

const ms = (t: temporal.api.history.v1.IHistoryEvent): number => {
  const time = t.eventTime;
  return time ? Number(time.seconds ?? 0) * 1000 + Math.round((time.nanos ?? 0) / 1e6) : 0;
};

/** Run time (started -> closed) and queue wait (scheduled -> started) of each activity in a history, by activity name. */
function activityTimes(
  events: temporal.api.history.v1.IHistoryEvent[],
): { name: string; runMs: number; waitMs: number }[] {
  const scheduled = new Map<string, { name: string; at: number }>();
  const started = new Map<string, number>();
  const out: { name: string; runMs: number; waitMs: number }[] = [];
  for (const e of events) {
    const id = String(e.eventId);
    if (e.activityTaskScheduledEventAttributes)
      scheduled.set(id, { name: e.activityTaskScheduledEventAttributes.activityType?.name ?? '?', at: ms(e) });
    if (e.activityTaskStartedEventAttributes)
      started.set(String(e.activityTaskStartedEventAttributes.scheduledEventId), ms(e));
    const closed =
      e.activityTaskCompletedEventAttributes ??
      e.activityTaskFailedEventAttributes ??
      e.activityTaskTimedOutEventAttributes ??
      e.activityTaskCanceledEventAttributes;
    if (closed) {
      const key = String(closed.scheduledEventId);
      const s = scheduled.get(key);
      const begun = started.get(key);
      if (s && begun !== undefined) out.push({ name: s.name, runMs: ms(e) - begun, waitMs: begun - s.at });
    }
  }
  return out;
}

async function main(): Promise<void> {
  const opts = args({ locations: 20, businesses: 20, concurrency: 5, latency: 0 });
  const mail = serveScript('bench/verify-server.ts', {
    args: ['--servers', String(MAIL_SERVERS)],
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const where = JSON.parse(
    await new Promise<string>((resolve, reject) => {
      createInterface({ input: mail.stdout as NodeJS.ReadableStream }).once('line', resolve);
      mail.once('exit', (code) => reject(new Error(`mail stand-in exited (${code})`)));
    }),
  ) as { dns: string; smtpPort: number };
  const sites = await startSites(opts.locations * opts.businesses, opts.latency);
  // Its places are added once the cities are read from the database.
  const places = await startGooglePlacesStandIn({ apiKey: KEY, places: [], byCity: true });

  const tag = `c${Date.now().toString(36)}`;
  const service = await startBenchService(tag, 'campaign', {
    RATE_LIMIT_ENABLED: 'false',
    USER_URL_ALLOW_HOSTS: '127.0.0.0/8',
    GOOGLE_PLACES_BASE_URL: places.baseUrl,
    GOOGLE_PLACES_API_KEY: KEY,
    DNS_SERVERS: where.dns,
    SMTP_PROBE_PORT: String(where.smtpPort),
    SITE_DELAY_MS: '0',
  });
  const { config, db, call } = service;
  const cities = (await db
    .withSchema(config.DATABASE_SCHEMA)
    .from('locations')
    .where('country_code', 'GB')
    .orderBy('population', 'desc')
    .limit(opts.locations)
    .select('id', 'name')) as { id: number; name: string }[];
  places.places.push(
    ...cities.flatMap((c, k) =>
      cityPlaces(c.name, 'bakery', opts.businesses).map((p, j) => ({
        ...p,
        websiteUri: sites.origins[k * opts.businesses + j],
      })),
    ),
  );

  try {
    const started = performance.now();
    const created = await call('/api/v1/campaigns', {
      name: 'bench bakeries',
      search_terms: ['bakery'],
      locations: cities.map((c) => c.id),
      max_results_per_location: opts.businesses,
      concurrency: opts.concurrency,
      workflow: { enabled: true, site: { max_pages: 5 }, verify: { smtp_check: true } },
    });
    if (created.status !== 201)
      throw new Error(`campaign create answered ${created.status}: ${JSON.stringify(created.json)}`);
    const campaignId = String(created.json.campaign_id);
    let record: Record<string, unknown>;
    for (;;) {
      record = (await call(`/api/v1/campaigns/${campaignId}`)).json;
      if (record.status !== 'running') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const wallMs = performance.now() - started;
    if (record.status !== 'completed')
      throw new Error(`campaign ended ${String(record.status)}: ${JSON.stringify(record)}`);
    const aggregate = (await call(`/api/v1/campaigns/${campaignId}/workflow-results`)).json;

    // The stage activities of every location job and its pipeline, from Temporal's histories.
    const jobs = (await db
      .withSchema(config.DATABASE_SCHEMA)
      .from('jobs')
      .where('campaign_id', campaignId)
      .select('id')) as { id: string }[];
    // The campaign's own claim and finish steps too (its latest run: under 200 locations there is one).
    const times = activityTimes(
      (await service.temporal.client.workflow.getHandle(`campaign/${campaignId}`).fetchHistory()).events ?? [],
    );
    for (const { id } of jobs) {
      for (const workflowId of [`job/${id}`, `job/${id}/pipeline`]) {
        const history = await service.temporal.client.workflow.getHandle(workflowId).fetchHistory();
        times.push(...activityTimes(history.events ?? []));
      }
    }
    const byName: Record<string, { count: number; run_seconds: number; queue_wait_seconds: number }> = {};
    for (const t of times) {
      const entry = (byName[t.name] ??= { count: 0, run_seconds: 0, queue_wait_seconds: 0 });
      entry.count++;
      entry.run_seconds += t.runMs / 1000;
      entry.queue_wait_seconds += t.waitMs / 1000;
    }
    const r = (x: number) => Math.round(x * 100) / 100;
    for (const e of Object.values(byName)) {
      e.run_seconds = r(e.run_seconds);
      e.queue_wait_seconds = r(e.queue_wait_seconds);
    }
    const activitySeconds = times.reduce((s, t) => s + t.runMs, 0) / 1000;
    const waitSeconds = times.reduce((s, t) => s + t.waitMs, 0) / 1000;
    const result = {
      bench: 'campaign',
      locations: opts.locations,
      businesses_per_location: opts.businesses,
      concurrency: opts.concurrency,
      site_latency_ms: opts.latency,
      engine_wall_seconds: r(wallMs / 1000),
      stage_activity_seconds: r(activitySeconds),
      parallelism: r(activitySeconds / (wallMs / 1000)),
      queue_wait_seconds: r(waitSeconds),
      activities: byName,
      pages_served: sites.pages(),
      provider_requests: places.requests.length,
      businesses_total: aggregate.businesses_total,
      total_emails_found: aggregate.total_emails_found,
      total_valid_emails: aggregate.total_valid_emails,
      campaign_status: record.status,
      workflow_status: aggregate.status,
    };
    process.stdout.write(
      `campaign: ${opts.locations} locations x ${opts.businesses} businesses, maps -> site -> verify, concurrency ${opts.concurrency} (site latency ${opts.latency} ms)\n`,
    );
    process.stdout.write(`  engine wall time (created -> terminal): ${result.engine_wall_seconds} s\n`);
    process.stdout.write(
      `  sum of stage activities' run time: ${result.stage_activity_seconds} s (parallelism ${result.parallelism}x); time activities waited in queues: ${result.queue_wait_seconds} s\n`,
    );
    for (const [name, e] of Object.entries(byName).sort((a, b) => b[1].run_seconds - a[1].run_seconds)) {
      process.stdout.write(
        `    ${name.padEnd(24)} ${String(e.count).padStart(5)} runs  ${String(e.run_seconds).padStart(9)} s run  ${String(e.queue_wait_seconds).padStart(9)} s queued\n`,
      );
    }
    process.stdout.write(
      `  ${String(result.businesses_total)} businesses, ${String(result.total_emails_found)} e-mails found, ${String(result.total_valid_emails)} valid; ${result.pages_served} pages served, ${result.provider_requests} maps requests\n`,
    );
    process.stdout.write(`  written to ${writeResult('campaign', result)}\n`);
  } finally {
    await service.close();
    await Promise.allSettled([places.close(), sites.close()]);
    mail.kill('SIGTERM');
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:campaign failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
