import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { workflowBundle } from '../../workers/worker';

/**
 * The workflow code, bundled once per Jest run: globalSetup writes it to a file that
 * LEADJOBS_TEST_WORKFLOW_BUNDLE names, and every test file that starts a worker (in its own process
 * too: test/support/worker-main.ts) reads it. Bundled per test file, as workers/worker.ts caches it
 * per module registry, it cost about 1.8 s of CPU and left about 50 MB on the Jest worker's heap
 * each time, in 33 files.
 */
const ENV = 'LEADJOBS_TEST_WORKFLOW_BUNDLE';
const PREFIX = 'lj-bundle-';

/** globalSetup: bundles the workflow code from the sources as they are now and names the file in the environment. */
export async function writeRunWorkflowBundle(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), PREFIX));
  const file = path.join(dir, 'workflows.json');
  writeFileSync(file, JSON.stringify(await workflowBundle()));
  process.env[ENV] = file;
}

/** globalTeardown: removes the run's bundle (only a directory writeRunWorkflowBundle made, whatever the variable says). */
export function removeRunWorkflowBundle(): void {
  const file = process.env[ENV];
  if (!file) return;
  const dir = path.dirname(file);
  if (path.dirname(dir) === tmpdir() && path.basename(dir).startsWith(PREFIX))
    rmSync(dir, { recursive: true, force: true });
}

/** The run's bundle file; written by this test file when the run has none (Jest started without globalSetup). */
export async function runWorkflowBundleFile(): Promise<string> {
  if (!process.env[ENV]) {
    await writeRunWorkflowBundle();
    const dir = path.dirname(process.env[ENV] as string);
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return process.env[ENV] as string;
}

let loaded: WorkflowBundleWithSourceMap | undefined;

/** The run's bundle, for Worker.create / createWorkers in this process. */
export async function runWorkflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  return (loaded ??= JSON.parse(readFileSync(await runWorkflowBundleFile(), 'utf8')) as WorkflowBundleWithSourceMap);
}
