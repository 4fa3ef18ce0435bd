/**
 * The production worker (workers/main.ts: runWorkers with every job type's queues and the
 * rate-limited ones, config from the environment) with workflow code the test bundled once:
 * `node --import tsx test/support/worker-main.ts <bundle.json> [--standby]`. With --standby it
 * creates and connects every Worker, says "standby" and waits for a "start" line on stdin before
 * any polls (a warm spare: the crash tests restart a killed worker in seconds, where loading and
 * creating the Workers takes a minute or two on a busy 2-core machine).
 */
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { loadConfigOrExit } from '../../lib/config';
import { runAsProcess, runWorkers } from '../../workers/main';

const bundle = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as WorkflowBundleWithSourceMap;
const config = loadConfigOrExit();

/** In standby: says so once every Worker is created and connected, and waits for a "start" line before any polls. */
function startLine(): Promise<void> {
  return new Promise((resolve) => {
    const lines = createInterface({ input: process.stdin });
    lines.on('line', (line) => {
      if (line.trim() !== 'start') return;
      lines.close();
      resolve();
    });
    process.stdout.write('standby\n');
  });
}

runAsProcess(
  runWorkers(config, config.WORKER_ID, { bundle, ready: process.argv.includes('--standby') ? startLine : undefined }),
);
