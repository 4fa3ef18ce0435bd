import { NativeConnection, type Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { HeldResources } from '../../activities/deps';
import { createDb } from '../../db';
import { createLogger } from '../../lib/logger';
import { OutboundClient } from '../../lib/outbound';
import { Storage } from '../../lib/storage';
import { createSearchClient } from '../../search/client';
import { CATALOG, type JobType } from '../../jobs';
import { workflowTaskQueues } from '../../jobs/queues';
import { activityQueueLimits } from '../../workers/main';
import { createRateLimitedWorkers, createWorkers } from '../../workers/worker';
import { testConfig } from './api';
import { runWorkflowBundle } from './workflow-bundle';

/**
 * The production worker set for crawlCompanyData (or the `types` given) on the stack: the job queues
 * (normal and test) with the real activities, the lead-indexing queue, and every rate-limited
 * activity queue (registries, OSM, social profiles). `overrides` point the adapters at stand-ins.
 */
export async function startCompanyDataWorker(options: {
  identity: string;
  overrides: Record<string, string>;
  types?: JobType[];
}): Promise<{ stop(): Promise<void> }> {
  const config = testConfig(options.overrides);
  const db = createDb(config);
  const storage = Storage.fromConfig(config);
  const search = createSearchClient(config);
  const http = OutboundClient.fromConfig(config, { timeoutMs: 5000 });
  const endpointHttp = OutboundClient.forEndpoints(config, { timeoutMs: 5000 });
  const proxiedHttp = config.PROXY_URL
    ? OutboundClient.forEndpoints(config, { timeoutMs: 5000, proxyUrl: config.PROXY_URL })
    : undefined;
  const logger = createLogger('silent');
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
    workerId: options.identity,
    held,
  });
  const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
  const common = { connection, namespace: config.TEMPORAL_NAMESPACE, activities, identity: options.identity, logger };
  const workers: Worker[] = [
    ...(await createWorkers({
      ...common,
      bundle: await runWorkflowBundle(),
      taskQueues: workflowTaskQueues(
        config.TASK_QUEUE_PREFIX,
        (options.types ?? ['crawlCompanyData']).map((t) => CATALOG[t]),
      ),
    })),
    ...(await createRateLimitedWorkers({ ...common, queues: activityQueueLimits(config) })),
  ];
  const running = Promise.all(workers.map((w) => w.run()));
  return {
    stop: async () => {
      workers.forEach((w) => w.shutdown());
      await running;
      await held.close();
      await Promise.allSettled([
        connection.close(),
        db.destroy(),
        search.close(),
        http.close(),
        endpointHttp.close(),
        proxiedHttp?.close(),
      ]);
    },
  };
}
