/**
 * The production worker (workers/main.ts: runWorkers with every job type's queues and the
 * rate-limited ones, config from the environment) with workflow code the test bundled once:
 * `node --import tsx test/support/worker-main.ts <bundle.json> [--standby]`. With --standby it
 * loads everything, says "standby" and waits for a "start" line on stdin before it connects (a warm
 * spare: the crash tests restart a killed worker in seconds, where loading takes a minute on a busy
 * 2-core machine).
 */
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { loadConfigOrExit } from '../../lib/config';
import { runWorkers } from '../../workers/main';

const bundle = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as WorkflowBundleWithSourceMap;
const config = loadConfigOrExit();

function run(): void {
  runWorkers(config, config.WORKER_ID, bundle).then(
    ({ run: running, shutdown }) => {
      for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, shutdown);
      running.then(() => process.exit(0), (err: unknown) => {
        process.stderr.write(`worker failed: ${(err as Error).message}\n`);
        process.exit(1);
      });
    },
    (err: unknown) => {
      process.stderr.write(`worker failed to start: ${(err as Error).message}\n`);
      process.exit(1);
    },
  );
}

if (process.argv.includes('--standby')) {
  const lines = createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    if (line.trim() !== 'start') return;
    lines.close();
    run();
  });
  process.stdout.write('standby\n');
} else {
  run();
}
