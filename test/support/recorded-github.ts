/**
 * Real provider answers that other public projects recorded from the live services and keep in
 * their GitHub repositories (test/fixtures/recorded/SOURCES.md, "Recorded answers laid out from git
 * mirrors"). Nothing of theirs is committed here: run as a script this lays them out as plain files
 * under $STACK_DIR/recorded/github/<provider>/<name> (git-ignored with .stack/), from git copies of
 * their repositories, or from a folder holding them by hand (`DIR/<provider>/<name>`) for those no
 * git copy has:
 *
 *   npx tsx test/support/recorded-github.ts --mirror /work/.mirror [--files DIR]
 *
 * Every file is checked against its sha256 below. The tests read a file from
 * $STACK_DIR/recorded/github/ first, then from ../shared/recorded/ (the same layout), and skip the
 * blocks whose files neither place has.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const repo = path.join(__dirname, '../..');
const stackDir = process.env.STACK_DIR ?? path.join(repo, '.stack');
const LOCAL = path.join(stackDir, 'recorded', 'github');
const SHARED = path.join(repo, '..', 'shared', 'recorded');

/**
 * How our file is made from the upstream blob: as it is; the body inside PHP's `s:<bytes>:"...";`
 * (geocoder-php's `.cached_responses`, `serialize($response->getBody())`); `response.responseBody`
 * of NewPipeExtractor's mock JSON, as UTF-8.
 */
export type Transformation = 'raw' | 'php-serialized-body' | 'newpipe-response-body';

export interface GithubFile {
  /** owner/name on GitHub. */
  repository: string;
  commit: string;
  path: string;
  transformation: Transformation;
  /** sha256 of our file (after the transformation). */
  sha256: string;
  /** Why no git copy of it was at hand when it was taken: it can only come from a folder (--files). */
  byHand?: string;
}

const GEOCODER = 'geocoder-php/Geocoder';
const GEOCODER_COMMIT = '8f41c3b7f45cae12b7b42faef79b9bbe6e52fcf8';
const NOMINATIM_CACHE = 'src/Provider/Nominatim/Tests/.cached_responses/nominatim.openstreetmap.org_';
const NEWPIPE = 'TeamNewPipe/NewPipeExtractor';
const NEWPIPE_COMMIT = '43f8e6ebeef469db7c5328714bc5f33c9f06f092';
const PEERTUBE_MOCKS =
  'extractor/src/test/resources/mocks/v1/org/schabi/newpipe/extractor/services/peertube/peertubestreamextractor/whatispeertube/';
const EDGARKIT = 'r007/edgarkit';
const EDGARKIT_COMMIT = 'e921d0b6b353d3f77246bef034eebe973d756778';
const VIES_REPO = 'id-sign/business-registers';
const VIES_BY_HAND = 'copied from the search index: no git snapshot of id-sign/business-registers could be fetched';

const nominatim = (file: string, sha256: string): GithubFile => ({
  repository: GEOCODER,
  commit: GEOCODER_COMMIT,
  path: NOMINATIM_CACHE + file,
  transformation: 'php-serialized-body',
  sha256,
});

export const RECORDED_GITHUB = {
  nominatim: {
    'search-place-des-palais.json': nominatim(
      'c0e8467e060bb49217e0966a3893931cbc2fbb8c',
      '061ec5f0339b627db4c3fe69de92c0a1864cbcabf7a5716759a8c988cfdb4bda',
    ),
    'search-elbphilharmonie.json': nominatim(
      '210cc3da1b367ae860e6077e1c4af6aae61bdbfb',
      '6164481c2169e8e7ac89643b338c7b700bd128133422c7af9caf618d5264b753',
    ),
    'search-10-downing-street.json': nominatim(
      '1c28ca51962224c6963619eaf033eb70e34892e8',
      '62a7117d7b9ad8147d4598739443c08a4afed287a192348c5f99f419f6711519',
    ),
    'search-90210.json': nominatim(
      '60b19895d3f895334fa01eb3340701e054d05dca',
      '32f2689a31361cc7edb8c10c1eecb5f475427e0d41e487e25c305379f58974ee',
    ),
    'search-italia-stream.json': nominatim(
      '614a4d899e5e7e47380278075f00be15637686c6',
      '908d24e190890d4500ee5ee26d9f87c92226f967e671817ff7c7c2e0d52946dc',
    ),
    'search-no-results.json': nominatim(
      'dfdc355642ef34fb9970df028c4ec338ce0ea3f4',
      '4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945',
    ),
  },
  'google-places': {
    'error-api-key-invalid.json': {
      repository: 'roundly-consulting/google-places-for-laravel',
      commit: '3fb2f0dc65d9862e04e73a9271f1222cfe27224a',
      path: 'tests/Fixtures/errors/places-api-key-invalid.json',
      transformation: 'raw',
      sha256: 'b008b398887d70dba1758c75ebdcac1533baeacc6fd17f76efbc9dd0c6321d57',
      byHand: 'copied from the search index: no git snapshot of the repository could be fetched',
    },
  },
  peertube: {
    'video-framatube-what-is-peertube.json': {
      repository: NEWPIPE,
      commit: NEWPIPE_COMMIT,
      path: `${PEERTUBE_MOCKS}generated_mock_0.json`,
      transformation: 'newpipe-response-body',
      sha256: '2fc9c67d8625c565dcd38bc37734e06c3c93eab33282713259fbdef6d888bd3f',
    },
    'video-framatube-remote-no-description.json': {
      repository: NEWPIPE,
      commit: NEWPIPE_COMMIT,
      path: `${PEERTUBE_MOCKS}generated_mock_6.json`,
      transformation: 'newpipe-response-body',
      sha256: 'dbc8bbf0f57ef2bbca886e5311ed8716ee37aaad9201378207196f61f0c3b926',
    },
  },
  sec: {
    'submissions-CIK0000320193.json': {
      repository: EDGARKIT,
      commit: EDGARKIT_COMMIT,
      path: 'tests/fixtures/submissions/submission.json',
      transformation: 'raw',
      sha256: '6480835d97c1009da15e481c133d82e6e4a84f9b5f75c37973dcdfbdfebb0065',
    },
    'submissions-CIK0002042902.json': {
      repository: EDGARKIT,
      commit: '7992078c7ca4f251348640cefb42c1a6b449adb5',
      path: 'tests/fixtures/submissions/submission2.json',
      transformation: 'raw',
      sha256: '2e7221f564e82fe099bc1a65826bce94308f52d6b4acbe8c7c32e2774c1b3edc',
      byHand: 'copied from the search index: the fetched snapshot (HEAD ace7af7) is older than its commit',
    },
    'company_tickers_exchange.json': {
      repository: EDGARKIT,
      commit: EDGARKIT_COMMIT,
      path: 'tests/fixtures/tickers/company_tickers_exchange.json',
      transformation: 'raw',
      sha256: '5d01191997fe8866445e634644809e2c5c260dd9b200076b0b0f4546654effb4',
    },
  },
  vies: {
    'check-vat-number-CZ45274649.json': {
      repository: VIES_REPO,
      commit: '459d134d2966b82eaf2998b318f10d0c147c9789',
      path: 'tests/Fixtures/Vies/valid-cez.json',
      transformation: 'raw',
      sha256: 'b707138116d3398978879b6fcb2a61c36c27660a6fb61d5169e2e8ddd2feca97',
      byHand: VIES_BY_HAND,
    },
    'check-vat-number-CZ11111111.json': {
      repository: VIES_REPO,
      commit: '459d134d2966b82eaf2998b318f10d0c147c9789',
      path: 'tests/Fixtures/Vies/invalid.json',
      transformation: 'raw',
      sha256: 'c74d245d3a458542a9172e7ca9e01b55a272c5e3f081ca241e05d5cc75aecff3',
      byHand: VIES_BY_HAND,
    },
    'check-vat-number-ESA15075062-trader.json': {
      repository: VIES_REPO,
      commit: 'ca3ee9fd5c4eb46c90b9d3b139c4bb6d86250d84',
      path: 'tests/Fixtures/Vies/valid-es-trader-match.json',
      transformation: 'raw',
      sha256: '2e858b5fc219526d5c7a652e110fa791916cd4d36578f722641f1bf12096b048',
      byHand: VIES_BY_HAND,
    },
  },
} satisfies Record<string, Record<string, GithubFile>>;

export type RecordedGithubProvider = keyof typeof RECORDED_GITHUB;
export type RecordedGithubName<P extends RecordedGithubProvider> = keyof (typeof RECORDED_GITHUB)[P] & string;

const PROVIDERS = Object.keys(RECORDED_GITHUB) as RecordedGithubProvider[];

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

function filesOf(provider: RecordedGithubProvider): Record<string, GithubFile> {
  return RECORDED_GITHUB[provider];
}

function entry(provider: RecordedGithubProvider, name: string): GithubFile {
  const file = filesOf(provider)[name];
  if (!file) throw new Error(`recorded-github: no file ${provider}/${name} in the manifest`);
  return file;
}

// ---- reading them in tests ------------------------------------------------------------------

/** Where a laid-out file is: $STACK_DIR/recorded/github/ first, then ../shared/recorded/. */
function locate(provider: RecordedGithubProvider, name: string): string | undefined {
  for (const base of [LOCAL, SHARED]) {
    const file = path.join(base, provider, name);
    if (existsSync(file)) return file;
  }
  return undefined;
}

/** Whether the provider's files (all of them when `names` is not given) are laid out. */
export function haveRecordedGithub<P extends RecordedGithubProvider>(
  provider: P,
  names?: readonly RecordedGithubName<P>[],
): boolean {
  return (names ?? Object.keys(filesOf(provider))).every((name) => locate(provider, name) !== undefined);
}

const cache = new Map<string, Buffer>();

/** One laid-out file's bytes, checked against its sha256 (a file found but different is an error, not a skip). */
export function recordedGithub<P extends RecordedGithubProvider>(provider: P, name: RecordedGithubName<P>): Buffer {
  const key = `${provider}/${name}`;
  const cached = cache.get(key);
  if (cached) return cached;
  const file = locate(provider, name);
  if (!file) throw new Error(`${key} is not laid out: npx tsx test/support/recorded-github.ts --mirror DIR`);
  const data = readFileSync(file);
  const expected = entry(provider, name).sha256;
  if (sha256(data) !== expected) throw new Error(`${file}: sha256 ${sha256(data)}, expected ${expected}`);
  cache.set(key, data);
  return data;
}

/**
 * `describe` when the files are laid out, else `describe.skip` under a name that says what is
 * needed (the command, with `--files DIR` when a missing file is in no git copy).
 */
export function describeRecordedGithub<P extends RecordedGithubProvider>(
  provider: P,
  names?: readonly RecordedGithubName<P>[],
): (name: string, fn: () => void) => void {
  const wanted = names ?? (Object.keys(filesOf(provider)) as RecordedGithubName<P>[]);
  const missing = wanted.filter((name) => locate(provider, name) === undefined);
  if (missing.length === 0) return (name, fn) => describe(name, fn);
  const byHand = missing.some((name) => entry(provider, name).byHand);
  const command = `npx tsx test/support/recorded-github.ts --mirror DIR${byHand ? ' --files DIR' : ''}`;
  const what = names ? `${provider}/${missing.join(', ')}` : `the ${provider} recordings`;
  return (name, fn) => describe.skip(`${name} (needs ${what}: ${command})`, fn);
}

// ---- laying them out from git copies ----------------------------------------------------------

/** The git directory of `<mirror>/<owner>+<name>`: its repo/.git, repo (bare), or itself. */
function gitDirOf(mirror: string, repository: string): string | undefined {
  const base = path.join(mirror, repository.replace('/', '+'));
  for (const dir of [path.join(base, 'repo', '.git'), path.join(base, 'repo'), base]) {
    if (existsSync(path.join(dir, 'HEAD')) && existsSync(path.join(dir, 'objects'))) return dir;
  }
  return undefined;
}

function git(dir: string, args: string[]): Buffer {
  return execFileSync('git', ['--git-dir', dir, ...args], { maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'pipe'] });
}

function hasBlob(dir: string, rev: string): boolean {
  try {
    git(dir, ['cat-file', '-e', rev]);
    return true;
  } catch {
    return false;
  }
}

/** PHP's `s:<bytes>:"<body>";`: the body, its byte count checked. */
function phpSerializedBody(blob: Buffer): Buffer {
  const head = /^s:(\d+):"/.exec(blob.subarray(0, 32).toString('latin1'));
  if (!head) throw new Error('not a PHP serialised string (s:<bytes>:"...";)');
  const start = head[0].length;
  const end = start + Number(head[1]);
  if (blob.length !== end + 2 || blob.subarray(end).toString('latin1') !== '";')
    throw new Error(`its byte count ${head[1]} does not end the string at "; (the blob is ${blob.length} bytes)`);
  return blob.subarray(start, end);
}

/** NewPipeExtractor's recorded request/response pair: the response body as UTF-8. */
function newpipeResponseBody(blob: Buffer): Buffer {
  const mock = JSON.parse(blob.toString('utf8')) as { response?: { responseBody?: unknown } };
  const body = mock.response?.responseBody;
  if (typeof body !== 'string') throw new Error('no response.responseBody string');
  return Buffer.from(body, 'utf8');
}

function transform(file: GithubFile, blob: Buffer): Buffer {
  if (file.transformation === 'php-serialized-body') return phpSerializedBody(blob);
  if (file.transformation === 'newpipe-response-body') return newpipeResponseBody(blob);
  return blob;
}

type Outcome = { data: Buffer; from: string } | { missing: string } | { error: string };

/**
 * One file from the git copy: the blob at its commit, else at the copy's HEAD when that gives the
 * same bytes (a snapshot newer than the commit, the file unchanged).
 */
function fromMirror(mirror: string, file: GithubFile): Outcome {
  const dir = gitDirOf(mirror, file.repository);
  if (!dir) return { missing: `no git copy ${path.join(mirror, file.repository.replace('/', '+'))}` };
  const atCommit = `${file.commit}:${file.path}`;
  if (hasBlob(dir, atCommit)) {
    const data = transform(file, git(dir, ['cat-file', 'blob', atCommit]));
    if (sha256(data) !== file.sha256)
      return { error: `${atCommit} in ${dir}: sha256 ${sha256(data)}, expected ${file.sha256}` };
    return { data, from: `${dir} at ${file.commit.slice(0, 7)}` };
  }
  const atHead = `HEAD:${file.path}`;
  if (!hasBlob(dir, atHead)) return { missing: `neither ${file.commit.slice(0, 7)} nor HEAD of ${dir} has it` };
  const data = transform(file, git(dir, ['cat-file', 'blob', atHead]));
  if (sha256(data) !== file.sha256)
    return { missing: `${dir} lacks ${file.commit.slice(0, 7)} and its HEAD's ${file.path} differs` };
  return { data, from: `${dir} at HEAD (lacks ${file.commit.slice(0, 7)}, same bytes)` };
}

/** One file from the folder given by hand: `<files>/<provider>/<name>`. */
function fromFolder(files: string, provider: RecordedGithubProvider, name: string, file: GithubFile): Outcome {
  const local = path.join(files, provider, name);
  if (!existsSync(local)) return { missing: `no ${local}` };
  const data = readFileSync(local);
  if (sha256(data) !== file.sha256) return { error: `${local}: sha256 ${sha256(data)}, expected ${file.sha256}` };
  return { data, from: local };
}

/** The git copy first, then the folder; the first error stops the search (a wrong file is not skipped over). */
function find(
  mirror: string | undefined,
  files: string | undefined,
  provider: RecordedGithubProvider,
  name: string,
  file: GithubFile,
): Outcome {
  const why: string[] = [];
  const sources: (() => Outcome)[] = [];
  if (mirror) sources.push(() => fromMirror(mirror, file));
  if (files) sources.push(() => fromFolder(files, provider, name, file));
  for (const source of sources) {
    let got: Outcome;
    try {
      got = source();
    } catch (err) {
      got = { error: `${file.repository} ${file.path}: ${(err as Error).message}` };
    }
    if (!('missing' in got)) return got;
    why.push(got.missing);
  }
  if (file.byHand) why.push(`${file.byHand}: give --files DIR holding ${provider}/${name}`);
  return { missing: why.join('; ') };
}

function main(): void {
  const argv = process.argv.slice(2);
  const opt = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const mirror = opt('mirror');
  const files = opt('files');
  if (!mirror && !files) {
    console.error('usage: tsx test/support/recorded-github.ts --mirror DIR [--files DIR]');
    process.exit(2);
  }
  const errors: string[] = [];
  for (const provider of PROVIDERS) {
    const out = path.join(LOCAL, provider);
    const laid: string[] = [];
    const missing: string[] = [];
    for (const [name, file] of Object.entries(filesOf(provider))) {
      const got = find(mirror, files, provider, name, file);
      if ('error' in got) errors.push(`${provider}/${name}: ${got.error}`);
      else if ('missing' in got) missing.push(`${name}: ${got.missing}`);
      else {
        mkdirSync(out, { recursive: true });
        // Written aside and renamed: a test running meanwhile sees the whole file or none.
        const tmp = path.join(out, `.${name}.${process.pid}`);
        writeFileSync(tmp, got.data);
        renameSync(tmp, path.join(out, name));
        laid.push(`${name} (from ${got.from})`);
      }
    }
    console.log(`${provider}: ${laid.length} of ${Object.keys(filesOf(provider)).length} laid out -> ${out}`);
    for (const line of laid) console.log(`  + ${line}`);
    for (const line of missing) console.log(`  - missing ${line}`);
  }
  for (const e of errors) console.error(`error: ${e}`);
  if (errors.length) process.exit(1);
}

if (require.main === module) main();
