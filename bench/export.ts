/**
 * bench/export: campaign exports at volume. Loads a campaign with a workflow whose location jobs hold
 * --rows businesses in all (straight SQL, in the shapes of db/migrations/20261122001100_campaigns.ts),
 * and a second campaign a tenth that size; starts the real API in its own process, then downloads
 * GET /api/v1/campaigns/{id}/export in each format, reading as fast as it can. For each download it
 * prints rows/s, MB and the API process's peak RSS growth over its RSS before (sampled every 20 ms from
 * /proc); flat memory means the growth for the big campaign is about that of the small one.
 * V8 collects lazily while memory is plentiful, so uncapped the growth is mostly garbage not yet
 * collected: BENCH_API_HEAP_MB=<n> caps the API's old space (--max-old-space-size), and an export
 * that completes under a small cap with little growth holds no rows. Writes JSON to bench/results/.
 *   [BENCH_API_HEAP_MB=100] npm run bench:export -- [--rows 100000] [--locations 200]
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { createDb, migrateLatest, type Db } from '../db';
import { ClientRepository } from '../db/repositories/clients';
import { parseConfig } from '../lib/config';
import { args, serveScript, stackEnv, writeResult } from './support';

const FORMATS = ['csv', 'xlsx', 'ndjson'] as const;

async function loadCampaign(db: Db, clientId: string, rows: number, locations: number): Promise<string> {
  const campaign = (await db.raw('select gen_random_uuid() as id')) as { rows: { id: string }[] };
  const id = campaign.rows[0]?.id as string;
  const workflow = {
    enabled: true,
    site: { max_pages: 10, extract_team: true, compendium: { enabled: false, cleanup_level: 'fit' } },
    verify: { enabled: true, smtp_check: true },
  };
  await db('campaigns').insert({
    id,
    client_id: clientId,
    name: `bench ${rows}`,
    search_terms: ['bakery'],
    max_results_per_location: Math.ceil(rows / locations),
    workflow: JSON.stringify(workflow),
    priority: 0,
    concurrency: 5,
    auto_submit: true,
    locations_total: locations,
    workflow_id: `campaign/${id}`,
    task_queue: 'bench',
  });
  // One job per location, its campaign location and its job_workflows row.
  await db.raw(
    `with j as (
       insert into jobs (id, client_id, type, status, priority, payload, payload_hash, campaign_id, workflow_id, task_queue)
       select gen_random_uuid(), ?, 'crawlMaps', 'completed', 0,
              jsonb_build_object('search_query', 'bakery in City ' || i, 'max_results', 500, 'workflow', ?::jsonb), md5(random()::text), ?, 'job/' || i, 'bench'
       from generate_series(1, ?) i returning id, payload
     ), l as (
       insert into campaign_locations (campaign_id, client_id, location_id, search_term, search_string, display_name, sequence_order, status, job_id)
       select ?, ?, row_number() over (), 'bakery', payload->>'search_query', 'City ' || row_number() over (), row_number() over (), 'completed', id from j
     )
     insert into job_workflows (job_id, client_id, campaign_id, status, options, limits, deadline_at)
     select id, ?, ?, 'completed', ?::jsonb, '{}'::jsonb, now() from j`,
    [clientId, JSON.stringify(workflow), id, locations, id, clientId, clientId, id, JSON.stringify(workflow)],
  );
  const perJob = Math.ceil(rows / locations);
  // Businesses as the pipeline stores them: two e-mails found, both verified, socials and industry.
  await db.raw(
    `insert into workflow_businesses (job_id, place_id, client_id, campaign_id, position, business, domain_filtered, site_status, site,
                                      verify_status, emails_verified, valid_emails_count)
     select cl.job_id, 'ChIJbench' || cl.sequence_order || '-' || p, ?, ?, p,
            jsonb_build_object('business_name', 'Bakery ' || p || ' of City ' || cl.sequence_order, 'business_place_id', 'ChIJbench' || p,
                               'business_address', p || ' High Street, City ' || cl.sequence_order, 'business_phone', '+44 113 496 ' || lpad(p::text, 4, '0'),
                               'business_rating', 4.2, 'business_website', 'https://b' || p || '.c' || cl.sequence_order || '.bench.test'),
            false, 'completed',
            jsonb_build_object('pages_crawled', 7, 'emails_found', jsonb_build_array('info@b' || p || '.bench.test', 'sales@b' || p || '.bench.test'),
                               'phones_found', jsonb_build_array('+44 113 496 0000'), 'social_media', jsonb_build_object('socialnet', 'https://facebook.com/b' || p, 'instagram', null),
                               'company_info', jsonb_build_object('industry', 'Bakery'), 'team_members', '[]'::jsonb, 'compendium', null),
            'completed',
            jsonb_build_array(jsonb_build_object('email', 'info@b' || p || '.bench.test', 'status', 'risky', 'score', 70, 'is_deliverable', true, 'is_free_email', false, 'is_disposable', false, 'is_role_account', true),
                              jsonb_build_object('email', 'sales@b' || p || '.bench.test', 'status', 'valid', 'score', 90, 'is_deliverable', true, 'is_free_email', false, 'is_disposable', false, 'is_role_account', true)),
            1
     from campaign_locations cl cross join generate_series(0, ? - 1) p
     where cl.campaign_id = ? and (cl.sequence_order - 1) * ? + p < ?`,
    [clientId, id, perJob, id, perJob, rows],
  );
  return id;
}

function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

interface Download {
  format: string;
  rows: number;
  seconds: number;
  rows_per_second: number;
  mb: number;
  rss_before_mb: number;
  peak_rss_growth_mb: number;
}

async function download(
  base: string,
  auth: string,
  campaignId: string,
  format: string,
  rows: number,
  pid: number,
): Promise<Download> {
  // Let the previous download's garbage go before taking the baseline.
  await new Promise((r) => setTimeout(r, 1000));
  const before = rssOf(pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssOf(pid))), 20);
  const started = performance.now();
  const res = await fetch(`${base}/api/v1/campaigns/${campaignId}/export?format=${format}`, {
    headers: { authorization: auth },
  });
  if (res.status !== 200 || !res.body) throw new Error(`export ${format} answered ${res.status}: ${await res.text()}`);
  let bytes = 0;
  let newlines = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    if (format !== 'xlsx') for (const b of chunk) if (b === 10) newlines++;
  }
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  peak = Math.max(peak, rssOf(pid));
  // csv: a header line, then one line per business (no text here spans lines); ndjson: one line each.
  const expected = format === 'csv' ? rows + 1 : format === 'ndjson' ? rows : undefined;
  if (expected !== undefined && newlines !== expected)
    throw new Error(`${format}: expected ${expected} lines, got ${newlines}`);
  const r = (x: number) => Math.round(x * 10) / 10;
  return {
    format,
    rows,
    seconds: r(seconds),
    rows_per_second: Math.round(rows / seconds),
    mb: r(bytes / 1024 / 1024),
    rss_before_mb: r(before / 1024 / 1024),
    peak_rss_growth_mb: r((peak - before) / 1024 / 1024),
  };
}

async function main(): Promise<void> {
  const opts = args({ rows: 100_000, locations: 200 });
  const tag = `e${Date.now().toString(36)}`;
  const env = {
    ...stackEnv(),
    DATABASE_SCHEMA: `bench_${tag}`,
    ES_INDEX_PREFIX: `bench-${tag}`,
    LOG_LEVEL: process.env.BENCH_API_LOG ?? 'warn',
  };
  const config = parseConfig(env);
  const db = createDb(config);
  await migrateLatest(db, config.DATABASE_SCHEMA);
  const client = await new ClientRepository(db).create('bench export');
  const auth = `Bearer ${client.client_id}:${client.api_key}:${client.api_secret}`;
  const small = Math.max(1, Math.round(opts.rows / 10));
  console.log(`loading campaigns of ${opts.rows} and ${small} businesses into ${config.DATABASE_SCHEMA}`);
  const t0 = performance.now();
  const bigId = await loadCampaign(db, client.client_id, opts.rows, opts.locations);
  const smallId = await loadCampaign(db, client.client_id, small, Math.max(1, Math.round(opts.locations / 10)));
  await db.raw('vacuum analyze workflow_businesses');
  await db.raw('vacuum analyze campaign_locations');
  const loadSeconds = (performance.now() - t0) / 1000;

  const port = 18000 + Math.floor(Math.random() * 1000);
  const heap = process.env.BENCH_API_HEAP_MB ? [`--max-old-space-size=${process.env.BENCH_API_HEAP_MB}`] : [];
  const api = serveScript('bench/submit-api.ts', {
    nodeArgs: heap,
    env: { ...env, PORT: String(port), RATE_LIMIT_ENABLED: 'false' },
  });
  const base = `http://127.0.0.1:${port}`;
  try {
    for (let i = 0; ; i++) {
      if ((await fetch(`${base}/openapi.json`).catch(() => undefined))?.ok) break;
      if (i > 900) throw new Error('API did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
    const pid = api.pid as number;
    // Warm-up: module loading and JIT, not part of any figure.
    for (const format of FORMATS) await download(base, auth, smallId, format, small, pid);
    const downloads: Download[] = [];
    for (const format of FORMATS) {
      downloads.push(await download(base, auth, smallId, format, small, pid));
      downloads.push(await download(base, auth, bigId, format, opts.rows, pid));
    }
    const result = {
      benchmark: 'export',
      at: new Date().toISOString(),
      machine: { cores: os.cpus().length },
      options: { ...opts, api_heap_mb: process.env.BENCH_API_HEAP_MB ? Number(process.env.BENCH_API_HEAP_MB) : null },
      load_seconds: Math.round(loadSeconds * 10) / 10,
      downloads,
    };
    console.log(
      `export benchmark: campaigns of ${opts.rows} and ${small} businesses (loaded in ${result.load_seconds} s)`,
    );
    for (const d of downloads) {
      console.log(
        `${d.format.padEnd(7)} ${String(d.rows).padStart(7)} rows  ${String(d.seconds).padStart(6)} s  ${String(d.rows_per_second).padStart(7)} rows/s  ` +
          `${String(d.mb).padStart(6)} MB  API RSS ${d.rss_before_mb} MB, peak growth ${d.peak_rss_growth_mb} MB`,
      );
    }
    console.log(`wrote ${writeResult('export', result)}`);
  } finally {
    api.kill('SIGTERM');
    await db.raw('DROP SCHEMA ?? CASCADE', [config.DATABASE_SCHEMA]);
    await db.destroy();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
