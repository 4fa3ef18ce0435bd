import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { HeldResources } from '../../activities/deps';
import { createDb } from '../../db';
import { CATALOG, type JobType } from '../../jobs';
import { campaignsTaskQueue, jobTaskQueue, leadsTaskQueue, mailTaskQueue, webhooksTaskQueue } from '../../jobs/queues';
import { createLogger } from '../../lib/logger';
import { OutboundClient } from '../../lib/outbound';
import { Storage } from '../../lib/storage';
import { temporalConnectionOptions } from '../../lib/temporal';
import { createSearchClient } from '../../search/client';
import { startWorkerClientWatch } from '../../workers/client-watch';
import { startWorkerMailReconciler } from '../../workers/mail-reconcile';
import { startWorkerProjectionSweeper } from '../../workers/projection-sweep';
import { startWorkerWebhookDispatcher } from '../../workers/webhook-dispatch';
import { createWorkers } from '../../workers/worker';
import { testConfig } from './api';
import { runWorkflowBundle } from './workflow-bundle';

try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // already installed in this process
}

export interface TestWorker {
  identity: string;
  stop(): Promise<void>;
}

/**
 * A real worker on the stack's Temporal with the production activities (job lifecycle, the job
 * types' own, lead publishing) on this run's schema, polling the queues of `types` and the
 * lead-indexing and webhooks queues, with the webhook dispatcher, the client watch, the mail reconciler and the projection sweeper. Outbound requests may reach 127.0.0.0/8 (the stand-ins) unless `overrides`
 * say otherwise, and crawlSite makes no politeness pause.
 */
export async function startTestWorker(options: {
  types: JobType[];
  identity: string;
  overrides?: Record<string, string>;
  maxConcurrentActivities?: number;
  maxConcurrentWorkflowTasks?: number;
}): Promise<TestWorker> {
  const config = testConfig({ USER_URL_ALLOW_HOSTS: '127.0.0.0/8', SITE_DELAY_MS: '0', ...options.overrides });
  const db = createDb(config);
  const storage = Storage.fromConfig(config);
  const search = createSearchClient(config);
  const logger = createLogger('silent');
  const http = OutboundClient.fromConfig(config);
  const endpointHttp = OutboundClient.forEndpoints(config);
  const held = new HeldResources();
  const activities = createActivities({
    config,
    db,
    storage,
    search,
    logger,
    http,
    endpointHttp,
    workerId: options.identity,
    held,
  });
  // As workers/main.ts connects: TLS, client certificate and API key when the config has them.
  const connection = await NativeConnection.connect(temporalConnectionOptions(config));
  const workers: Worker[] = await createWorkers({
    bundle: await runWorkflowBundle(),
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    // The lead-indexing queue too (its workflows are started by the API: ICP changes, imports), the webhooks, campaigns and mail queues.
    taskQueues: [
      ...options.types.map((t) => jobTaskQueue(config.TASK_QUEUE_PREFIX, CATALOG[t])),
      leadsTaskQueue(config.TASK_QUEUE_PREFIX),
      webhooksTaskQueue(config.TASK_QUEUE_PREFIX),
      campaignsTaskQueue(config.TASK_QUEUE_PREFIX),
      mailTaskQueue(config.TASK_QUEUE_PREFIX),
    ],
    activities,
    identity: options.identity,
    logger,
    maxConcurrentActivities: options.maxConcurrentActivities,
    maxConcurrentWorkflowTasks: options.maxConcurrentWorkflowTasks,
  });
  const dispatcher = await startWorkerWebhookDispatcher(config, db, logger);
  const clientWatch = await startWorkerClientWatch(config, db, logger);
  const mailReconciler = await startWorkerMailReconciler(config, db, logger, config.MAIL_RECONCILE_INTERVAL_MS);
  const projectionSweeper = await startWorkerProjectionSweeper(config, db, storage, logger);
  const running = Promise.all(workers.map((w) => w.run()));
  let stopped: Promise<void> | undefined;
  return {
    identity: options.identity,
    // Idempotent: a test that stops the worker itself leaves its afterAll's stop nothing to do.
    stop: () =>
      (stopped ??= (async () => {
        await Promise.all([dispatcher.stop(), clientWatch.stop(), mailReconciler.stop(), projectionSweeper.stop()]);
        workers.forEach((w) => w.shutdown());
        await running;
        await held.close();
        await Promise.allSettled([
          connection.close(),
          db.destroy(),
          search.close(),
          http.close(),
          endpointHttp.close(),
        ]);
      })()),
  };
}
