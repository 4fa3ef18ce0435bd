/**
 * bench/data: the data endpoints at volume. Loads N canonical records and N IDAP businesses for one
 * client (straight SQL, in chunks), starts the real API in its own process, then times
 *   - POST /api/v1/dedupe/check-batch with 100 records (half known: matched by place id, e-mail,
 *     phone or domain; half new and added), and again with fuzzy: true (half known businesses written
 *     differently, matched as fuzzy_business by name and town; half new), and
 *   - an IDAP sync: GET /api/v1/idap/businesses?sort=updated_at&order=asc&limit=500 following next_cursor.
 *   - lead search with facets, through the API and the same query straight to Elasticsearch
 *     (bench/search-leads.ts), after indexing N lead documents.
 * Prints p50/p95 and writes JSON to bench/results/.
 * BENCH_API_LOG=info shows the API's request log (server-side ms per request) in the output;
 * BENCH_PROFILE_DIR=<dir> writes a CPU profile of the API process there.
 *   npm run bench:data -- [--size 100000] [--batches 300] [--pages 300] [--queries 300] [--concurrency 1]
 * Targets at 1M rows (--size 1000000): check-batch p95 <= 30 ms (with fuzzy: 60 ms), sync page p95 <= 50 ms,
 * search p95 <= 30 ms and <= 1.2x the direct query.
 */
import os from 'node:os';
import { createDb, migrateLatest, type Db } from '../db';
import { ClientRepository } from '../db/repositories/clients';
import { parseConfig } from '../lib/config';
import { searchTimings } from './search-leads';
import { args, load, serveScript, stackEnv, stats, writeResult, type Stats } from './support';

const CHUNK = 100_000;

const SYLLABLES = [
  'ka',
  'lo',
  'mer',
  'vin',
  'ta',
  'ro',
  'bel',
  'dun',
  'fa',
  'gor',
  'hal',
  'ix',
  'jo',
  'ken',
  'lu',
  'mo',
  'nar',
  'ost',
  'pe',
  'quin',
  'ra',
  'sel',
  'tor',
  'ul',
  'ven',
  'wy',
  'xa',
  'yor',
  'zen',
  'bri',
];
const TRADES = [
  'bakery',
  'cafe',
  'garage',
  'florist',
  'joinery',
  'dental',
  'pharmacy',
  'books',
  'butchers',
  'plumbing',
  'salon',
  'tailors',
  'print',
  'brewery',
  'deli',
  'opticians',
  'kennels',
  'motors',
  'glass',
  'roofing',
];
/** The made-up name of record i in SQL (the same as `nameOf(i)`). */
const SQL_NAME = `(array['${SYLLABLES.join("','")}'])[1 + i % 30] || (array['${SYLLABLES.join("','")}'])[1 + (i / 30) % 30] || (array['${SYLLABLES.join("','")}'])[1 + (i / 900) % 30] || (array['${SYLLABLES.join("','")}'])[1 + (i / 27000) % 30] || ' ' || (array['${TRADES.join("','")}'])[1 + (i / 810000 + i) % 20]`;
const nameOf = (i: number) =>
  `${SYLLABLES[i % 30]}${SYLLABLES[Math.floor(i / 30) % 30]}${SYLLABLES[Math.floor(i / 900) % 30]}${SYLLABLES[Math.floor(i / 27000) % 30]} ${TRADES[(Math.floor(i / 810000) + i) % 20]}`;

async function loadRows(db: Db, clientId: string, size: number): Promise<number> {
  const started = performance.now();
  for (let from = 1; from <= size; from += CHUNK) {
    const to = Math.min(size, from + CHUNK - 1);
    // Keys in the normalised forms lib/dedupe.ts matchKeys produces for the records sent below.
    // Names of made-up words (four syllables of 30, 810,000 of them) and a trade, in 200 towns: names
    // share syllables and trades as real ones share words, so the candidate search has real work.
    // key_blocks are lib/dedupe-fuzzy.ts fuzzyKeys(...).blocks of the record: each name word's first four letters in its town,
    // and a word longer than four letters whole.
    await db.raw(
      `insert into canonical_records (client_id, record_type, record_hash, email, company_name, company_domain, maps_place_id, phone,
                                      city, key_email, key_phone, key_domain, key_blocks, data, source_worker, created_at)
       select ?, 'business', encode(sha256(('bench-' || i)::bytea), 'hex'), 'lead' || i || '@bench.test', initcap(n.name),
              'c' || i || '.bench.test', 'ChIJbench' || i, '+44 20 ' || i, 'Town' || (i % 200), 'lead' || i || '@bench.test', '4420' || i,
              'c' || i || '.bench.test', array_remove(array['town' || (i % 200) || '|' || left(n.name, 4), 'town' || (i % 200) || '|' || left(split_part(n.name, ' ', 2), 4),
                           case when length(split_part(n.name, ' ', 1)) > 4 then 'town' || (i % 200) || '|=' || split_part(n.name, ' ', 1) end,
                           case when length(split_part(n.name, ' ', 2)) > 4 then 'town' || (i % 200) || '|=' || split_part(n.name, ' ', 2) end], null), jsonb_build_object('company_name', initcap(n.name), 'city', 'Town' || (i % 200)),
              'bench', now() - make_interval(secs => ? - i)
       from generate_series(?::int, ?::int) i,
            lateral (select ${SQL_NAME} as name) n`,
      [clientId, size, from, to],
    );
    await db.raw(
      `insert into idap_resources (client_id, resource_type, natural_key, data, flags, sources, campaign_ids, change_seq, created_at, modified_at)
       select ?, 'businesses', 'place:ChIJbench' || i,
              jsonb_build_object('place_id', 'ChIJbench' || i, 'name', 'Company ' || i, 'website', 'https://c' || i || '.bench.test',
                                 'category', 'bakery', 'maps_rating', 4.5, 'source', 'crawl_maps'),
              case when i % 10 = 0 then '{qualified}'::text[] else '{new}'::text[] end, '{crawl_maps}', '{}',
              nextval('idap_change_seq'), ts, ts
       from (select i, clock_timestamp() as ts from generate_series(?::int, ?::int) i) s`,
      [clientId, from, to],
    );
    process.stdout.write(`loaded ${to}/${size}\r`);
  }
  // VACUUM as well as ANALYZE, as after any bulk load: otherwise autovacuum picks the freshly loaded
  // tables up in the middle of the timed part and competes with the API for the same two cores.
  await db.raw('vacuum analyze canonical_records');
  await db.raw('vacuum analyze idap_resources');
  process.stdout.write('\n');
  return (performance.now() - started) / 1000;
}

async function main(): Promise<void> {
  const opts = args({ size: 100_000, batches: 300, pages: 300, concurrency: 1, warmup: 20, queries: 300 });
  const tag = `d${Date.now().toString(36)}`;
  const env = {
    ...stackEnv(),
    DATABASE_SCHEMA: `bench_${tag}`,
    ES_INDEX_PREFIX: `bench-${tag}`,
    LOG_LEVEL: process.env.BENCH_API_LOG ?? 'warn',
  };
  const config = parseConfig(env);
  const db = createDb(config);
  await migrateLatest(db, config.DATABASE_SCHEMA);
  const client = await new ClientRepository(db).create('bench data');
  const auth = `Bearer ${client.client_id}:${client.api_key}:${client.api_secret}`;
  console.log(`loading ${opts.size} canonical records and ${opts.size} IDAP businesses into ${config.DATABASE_SCHEMA}`);
  const loadSeconds = await loadRows(db, client.client_id, opts.size);

  const port = 18000 + Math.floor(Math.random() * 1000);
  const profileDir = process.env.BENCH_PROFILE_DIR;
  const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const api = serveScript('bench/submit-api.ts', {
    nodeArgs: profile,
    env: { ...env, PORT: String(port), RATE_LIMIT_ENABLED: 'false' },
  });
  const base = `http://127.0.0.1:${port}`;
  try {
    for (let i = 0; ; i++) {
      if ((await fetch(`${base}/openapi.json`).catch(() => undefined))?.ok) break;
      if (i > 900) throw new Error('API did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: auth, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      if (res.status !== 200) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`);
      return (await res.json()) as Record<string, unknown>;
    };

    // check-batch(100): 50 known records (by rotating keys) and 50 new ones, added to the store.
    let fresh = 0;
    const rnd = () => 1 + Math.floor(Math.random() * opts.size);
    const batch = async () => {
      const records = Array.from({ length: 100 }, (_, j) => {
        if (j % 2 === 1) {
          fresh++;
          return { company_name: `New ${tag} ${fresh}`, email: `new${fresh}@${tag}.test`, phone: `+1 555 ${fresh}` };
        }
        const i = rnd();
        return [
          { maps_place_id: `ChIJbench${i}` },
          { email: `LEAD${i}@bench.test` },
          { phone: `+44 (20) ${i}` },
          { website: `https://www.c${i}.bench.test/` },
        ][j % 4] as Record<string, string>;
      });
      const out = await call('POST', '/api/v1/dedupe/check-batch', { record_type: 'business', records });
      const s = out.stats as { duplicate_count: number };
      if (s.duplicate_count !== 50) throw new Error(`expected 50 duplicates, got ${s.duplicate_count}`);
    };
    await load(opts.warmup, 1, batch);
    const batchRun = await load(opts.batches, opts.concurrency, batch);

    // The same with fuzzy: true: 50 known businesses written differently (upper case, a legal form,
    // the same town; no exact key), matched as fuzzy_business, and 50 new ones of other names.
    let freshFuzzy = 0;
    const fuzzyBatch = async () => {
      const records = Array.from({ length: 100 }, (_, j) => {
        if (j % 2 === 1) {
          freshFuzzy++;
          return { company_name: `Zq${tag}${freshFuzzy} Holdings`, city: `Newtown${freshFuzzy % 50}` };
        }
        const i = rnd();
        return { company_name: `${nameOf(i).toUpperCase()} LTD`, city: `Town${i % 200}` };
      });
      const out = await call('POST', '/api/v1/dedupe/check-batch', { record_type: 'business', records, fuzzy: true });
      const s = out.stats as { duplicate_count: number };
      if (s.duplicate_count < 50) throw new Error(`expected 50 fuzzy duplicates, got ${s.duplicate_count}`);
    };
    await load(opts.warmup, 1, fuzzyBatch);
    const fuzzyRun = await load(opts.batches, opts.concurrency, fuzzyBatch);

    // IDAP sync: follow next_cursor page by page in sync order (limit 500).
    let cursor: string | null = null;
    const syncPage = async () => {
      const out = await call(
        'GET',
        `/api/v1/idap/businesses?sort=updated_at&order=asc&limit=500${cursor ? `&cursor=${cursor}` : ''}`,
      );
      cursor = (out.next_cursor as string | null) ?? null;
    };
    await load(opts.warmup, 1, syncPage);
    const syncRun = await load(opts.pages, 1, syncPage);

    const checkBatch = stats(batchRun.latencies, batchRun.seconds);
    const checkBatchFuzzy = stats(fuzzyRun.latencies, fuzzyRun.seconds);
    const sync = stats(syncRun.latencies, syncRun.seconds);
    const search = await searchTimings({
      base,
      auth,
      size: opts.size,
      clientId: client.client_id,
      esUrl: config.ELASTICSEARCH_URL,
      indexPrefix: config.ES_INDEX_PREFIX,
      queries: opts.queries,
    });
    const result = {
      benchmark: 'data',
      at: new Date().toISOString(),
      machine: { cores: os.cpus().length, load_average: os.loadavg().map((l) => Math.round(l * 100) / 100) },
      options: opts,
      load_seconds: Math.round(loadSeconds * 10) / 10,
      check_batch_100: checkBatch,
      check_batch_100_fuzzy: checkBatchFuzzy,
      idap_sync_page_500: sync,
      search_leads: search,
      targets_at_1m: {
        check_batch_p95_ms: 30,
        check_batch_fuzzy_p95_ms: 60,
        sync_p95_ms: 50,
        search_p95_ms: 30,
        search_ratio_p95: 1.2,
      },
      met: {
        check_batch: checkBatch.p95_ms <= 30,
        check_batch_fuzzy: checkBatchFuzzy.p95_ms <= 60,
        sync: sync.p95_ms <= 50,
        search: search.api.p95_ms <= 30,
        search_ratio: search.ratio_p95 <= 1.2,
      },
    };
    const line = (name: string, s: Stats) =>
      `${name.padEnd(26)} p50 ${String(s.p50_ms).padStart(7)} ms  p95 ${String(s.p95_ms).padStart(7)} ms  p99 ${String(s.p99_ms).padStart(7)} ms  (${s.count})`;
    console.log(`data benchmark: ${opts.size} rows each, loaded in ${result.load_seconds} s`);
    console.log(line('dedupe check-batch (100)', checkBatch));
    console.log(line('  with fuzzy: true', checkBatchFuzzy));
    console.log(line('IDAP sync page (500)', sync));
    console.log(line('search leads (API)', search.api));
    console.log(line('search leads (direct ES)', search.direct));
    console.log(
      `search ratio API/direct at p95: ${search.ratio_p95}x (${opts.size} leads indexed in ${search.index_seconds} s)`,
    );
    console.log(`wrote ${writeResult('data', result)}`);
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
