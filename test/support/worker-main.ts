/**
 * The production worker (workers/main.ts: runWorkers with every job type's queues and the
 * rate-limited ones, config from the environment) with workflow code the test bundled once:
 * `node --import tsx test/support/worker-main.ts <bundle.json>`. The crash tests start a worker
 * many times, and bundling takes a minute on a busy 2-core machine.
 */
import { readFileSync } from 'node:fs';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { loadConfigOrExit } from '../../lib/config';
import { runWorkers } from '../../workers/main';

const bundle = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as WorkflowBundleWithSourceMap;
const config = loadConfigOrExit();
runWorkers(config, config.WORKER_ID, bundle).then(
  ({ run, shutdown }) => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, shutdown);
    run.then(() => process.exit(0), (err: unknown) => {
      process.stderr.write(`worker failed: ${(err as Error).message}\n`);
      process.exit(1);
    });
  },
  (err: unknown) => {
    process.stderr.write(`worker failed to start: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
