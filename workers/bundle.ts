/**
 * The workflow code bundled once at `npm run build` instead of at every worker start (about 2 s of
 * CPU each time on a 2-core machine). `node dist/workers/bundle.js` (the build's last step) writes
 * `dist/workflow-bundle.js` and, next to it, a manifest with a digest of every other `.js` file of
 * `dist/`. A compiled worker uses the bundle only while that digest still matches: a `dist/`
 * changed after the build (a `tsc` run alone, a hand-patched file) makes it bundle at start again,
 * with a warning, rather than run workflow code older than its activities.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { WorkflowBundlePath } from '@temporalio/worker';
import type { Logger } from '../lib/logger';

export const BUNDLE_FILE = 'workflow-bundle.js';
export const MANIFEST_FILE = 'workflow-bundle.json';

interface Manifest {
  /** sha256 over the path and content of every `.js` file of the directory but the bundle. */
  digest: string;
  files: number;
}

/** The digest of a compiled tree: every `.js` file but the bundle, by relative path and content. */
export function treeDigest(dir: string): Manifest {
  const files = listJs(dir)
    .filter((f) => f !== BUNDLE_FILE)
    .sort();
  const hash = createHash('sha256');
  for (const f of files)
    hash
      .update(f)
      .update('\0')
      .update(readFileSync(path.join(dir, f)))
      .update('\0');
  return { digest: hash.digest('hex'), files: files.length };
}

function listJs(dir: string, prefix = ''): string[] {
  return readdirSync(path.join(dir, prefix), { withFileTypes: true }).flatMap((e) => {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory()) return listJs(dir, rel);
    return e.isFile() && e.name.endsWith('.js') ? [rel] : [];
  });
}

/** Writes the bundle code and the manifest of the tree it was made from. */
export function writePrebuiltBundle(dir: string, code: string): void {
  writeFileSync(path.join(dir, BUNDLE_FILE), code);
  writeFileSync(path.join(dir, MANIFEST_FILE), `${JSON.stringify(treeDigest(dir))}\n`);
}

/**
 * The prebuilt bundle of `dir` when there is one made from the tree as it is now; undefined (a
 * warning when a stale one is there) otherwise.
 */
export function prebuiltBundle(dir: string, log?: Logger): WorkflowBundlePath | undefined {
  const codePath = path.join(dir, BUNDLE_FILE);
  const manifestPath = path.join(dir, MANIFEST_FILE);
  if (!existsSync(codePath) || !existsSync(manifestPath)) return undefined;
  let manifest: Manifest;
  try {
    manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Manifest;
  } catch {
    log?.warn(
      { manifest: manifestPath },
      'the prebuilt workflow bundle has an unreadable manifest: bundling the workflow code now',
    );
    return undefined;
  }
  const now = treeDigest(dir);
  if (now.digest !== manifest.digest) {
    log?.warn(
      { bundle: codePath, files_then: manifest.files, files_now: now.files },
      'the compiled code changed after the workflow bundle was made (run npm run build): bundling the workflow code now',
    );
    return undefined;
  }
  return { codePath };
}

/** Where a compiled worker's tree starts (dist/), or undefined when this runs from the TypeScript sources. */
export function compiledRoot(): string | undefined {
  return __filename.endsWith('.js') ? path.resolve(__dirname, '..') : undefined;
}

if (require.main === module) {
  void (async () => {
    const root = compiledRoot();
    if (!root) throw new Error('run the compiled file: node dist/workers/bundle.js');
    const { workflowBundle } = await import('./worker');
    const bundle = await workflowBundle();
    writePrebuiltBundle(root, bundle.code);
    process.stdout.write(
      `workflow bundle: ${path.join(root, BUNDLE_FILE)} (${Math.round(bundle.code.length / 1024)} KiB)\n`,
    );
  })().catch((err: unknown) => {
    process.stderr.write(`workflow bundle failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}
