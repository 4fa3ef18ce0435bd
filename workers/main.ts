/**
 * Worker composition root: parses config once, opens one connection to each dependency, runs a
 * Worker per job task queue, and drains on SIGTERM/SIGINT (in-flight activities get the grace time).
 */
import { hostname } from 'node:os';
import { NativeConnection, Runtime, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { createActivities } from '../activities';
import { HeldResources } from '../activities/deps';
import { createDb, pingDatabase } from '../db';
import { loadConfigOrExit, type Config } from '../lib/config';
import { createLogger } from '../lib/logger';
import { providerCallCounter } from './metrics';
import { OutboundClient } from '../lib/outbound';
import { Storage } from '../lib/storage';
import { temporalConnectionOptions } from '../lib/temporal';
import { createSearchClient, pingSearch } from '../search/client';
import { ALL_JOB_SPECS } from '../jobs';
import { OUTAGE_WAIT } from '../jobs/limits';
import { taskQueue, workflowTaskQueues } from '../jobs/queues';
import { startWorkerClientWatch } from './client-watch';
import { startWorkerMailReconciler } from './mail-reconcile';
import { startWorkerProjectionSweeper } from './projection-sweep';
import { startWorkerWebhookDispatcher } from './webhook-dispatch';
import { createRateLimitedWorkers, createWorkers } from './worker';
import { outageWait } from './outage-wait';
import { sdkLogger } from './sdk-logger';
import { compiledRoot, prebuiltBundle } from './bundle';

export interface RunWorkersOptions {
  /** Workflow code bundled beforehand; by default it is bundled here, once per process. */
  bundle?: WorkflowBundleWithSourceMap;
  /** Awaited once every Worker is created and connected, before any polls: a warm spare (the crash tests') waits here. */
  ready?: () => Promise<void>;
}

export async function runWorkers(
  config: Config,
  identity = config.WORKER_ID ?? `${hostname()}:${process.pid}`,
  options: RunWorkersOptions = {},
): Promise<{ run: Promise<void>; shutdown: () => void }> {
  const logger = createLogger(config.LOG_LEVEL, 'worker');
  Runtime.install({
    logger: sdkLogger(logger, config.LOG_LEVEL),
    // The SDK's Prometheus exporter also carries the service's own worker metrics (workers/metrics.ts, activities/store/jobs.ts).
    ...(config.WORKER_METRICS_ADDRESS
      ? {
          telemetryOptions: {
            metrics: {
              prometheus: {
                bindAddress: config.WORKER_METRICS_ADDRESS,
                countersTotalSuffix: true,
                useSecondsForDurations: true,
              },
            },
          },
        }
      : {}),
  });
  if (config.WORKER_METRICS_ADDRESS)
    logger.info({ url: `http://${config.WORKER_METRICS_ADDRESS}/metrics` }, 'worker metrics listening');
  const db = createDb(config);
  const storage = Storage.fromConfig(config);
  const search = createSearchClient(config);
  const onProviderCall = providerCallCounter();
  // Two guarded clients: URLs clients supply (USER_URL_ALLOW_HOSTS only) and the operator's endpoints
  // (providers, LLM base URLs: OUTBOUND_ALLOW_HOSTS as well), so a host listed for an in-house
  // endpoint is not a host every tenant's crawl, capture or webhook can reach.
  const http = OutboundClient.fromConfig(config, { onProviderCall });
  const endpointHttp = OutboundClient.forEndpoints(config, { onProviderCall });
  const proxiedHttp = config.PROXY_URL
    ? OutboundClient.forEndpoints(config, { proxyUrl: config.PROXY_URL, onProviderCall })
    : undefined;
  const connection = await NativeConnection.connect(temporalConnectionOptions(config));
  const held = new HeldResources();
  const activities = createActivities({
    config,
    db,
    storage,
    search,
    logger,
    http,
    endpointHttp,
    proxiedHttp,
    workerId: identity,
    held,
  });
  // An attempt that met a backing service's outage waits for it to answer again before it fails (workers/outage-wait.ts).
  const activityInterceptors = [
    outageWait({
      probes: { database: () => pingDatabase(db), storage: () => storage.ping(), search: () => pingSearch(search) },
      maxWaitMs: OUTAGE_WAIT.ms,
    }),
  ];
  // Compiled (dist/): the bundle `npm run build` made, while dist/ is as the build left it.
  const root = compiledRoot();
  const bundle = options.bundle ?? (root ? prebuiltBundle(root, logger) : undefined);
  const workers = await createWorkers({
    activityInterceptors,
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueues: workflowTaskQueues(config.TASK_QUEUE_PREFIX, ALL_JOB_SPECS),
    activities,
    identity,
    logger,
    bundle,
  });
  workers.push(
    ...(await createRateLimitedWorkers({
      connection,
      namespace: config.TEMPORAL_NAMESPACE,
      queues: activityQueueLimits(config),
      activities,
      activityInterceptors,
      identity,
      logger,
    })),
  );
  await options.ready?.();
  if (!config.SEC_USER_AGENT) logger.warn('SEC_USER_AGENT is not set: US crawlCompanyData jobs will fail');
  if (!config.COMPANIES_HOUSE_API_KEY)
    logger.warn('COMPANIES_HOUSE_API_KEY is not set: GB crawlCompanyData jobs will fail');
  if (!config.GOOGLE_PLACES_API_KEY)
    logger.info(
      'GOOGLE_PLACES_API_KEY is not set: crawlMaps jobs use OpenStreetMap unless they ask for google_places (which then fail)',
    );
  const dispatcher = await startWorkerWebhookDispatcher(config, db, logger);
  // A deactivated client's campaigns, mail sync and webhook deliveries stop (workers/client-watch.ts).
  const clientWatch = await startWorkerClientWatch(config, db, logger);
  // Sends and sync schedules an API left unstarted (it died between its commit and the start) are started (workers/mail-reconcile.ts).
  const mailReconciler = await startWorkerMailReconciler(config, db, logger, config.MAIL_RECONCILE_INTERVAL_MS);
  // Completed jobs whose leads have not reached IDAP past runJob's attempts are projected again (workers/projection-sweep.ts).
  const projectionSweeper = await startWorkerProjectionSweeper(config, db, storage, logger);
  logger.info(
    {
      identity,
      taskQueues: workers.map((w) => w.options.taskQueue),
      workflow_bundle: options.bundle ? 'given' : bundle ? 'prebuilt' : 'bundled at start',
    },
    'worker running',
  );
  const run = Promise.all(workers.map((w) => w.run())).then(async () => {
    await Promise.all([dispatcher.stop(), clientWatch.stop(), mailReconciler.stop(), projectionSweeper.stop()]);
    await held.close();
    await Promise.allSettled([
      db.destroy(),
      connection.close(),
      search.close(),
      http.close(),
      endpointHttp.close(),
      proxiedHttp?.close(),
    ]);
    logger.info('worker stopped');
  });
  // Idempotent: a second signal (SIGTERM after Ctrl-C) must not throw "Not running" and cut the drain short.
  return {
    run,
    shutdown: () =>
      workers.forEach((w) => {
        if (w.getState() === 'RUNNING') w.shutdown();
      }),
  };
}

/** Every job type's activity-only queues (e.g. the company registries') with their shared dispatch limits. */
export function activityQueueLimits(config: Config): { taskQueue: string; perSecond?: number }[] {
  const queues = ALL_JOB_SPECS.flatMap((spec) => spec.activityQueues?.(config) ?? []).map((q) => ({
    taskQueue: taskQueue(config.TASK_QUEUE_PREFIX, q.queue),
    perSecond: q.perSecond,
  }));
  // Types may share a queue (crawlPeople asks the registries on crawlCompanyData's queues): one Worker each.
  return queues.filter((q, i) => queues.findIndex((o) => o.taskQueue === q.taskQueue) === i);
}

/** This process runs the workers: SIGTERM/SIGINT drain them; exit 0 once they stop, 1 on a failure. */
export function runAsProcess(started: ReturnType<typeof runWorkers>): void {
  started.then(
    ({ run, shutdown }) => {
      for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, shutdown);
      run.then(
        () => process.exit(0),
        (err: unknown) => {
          process.stderr.write(`worker failed: ${(err as Error).message}\n`);
          process.exit(1);
        },
      );
    },
    (err: unknown) => {
      process.stderr.write(`worker failed to start: ${(err as Error).message}\n`);
      process.exit(1);
    },
  );
}

if (require.main === module) runAsProcess(runWorkers(loadConfigOrExit()));
