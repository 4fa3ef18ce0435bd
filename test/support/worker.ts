import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { createJobTypeActivities } from '../../activities';
import { createJobLifecycleActivities } from '../../activities/store/jobs';
import { createLeadActivities } from '../../activities/store/leads';
import { createDb } from '../../db';
import { JobResultStore } from '../../db/repositories/job-results';
import { CATALOG, type JobType } from '../../jobs';
import { jobTaskQueue, leadsTaskQueue } from '../../jobs/queues';
import { createLogger } from '../../lib/logger';
import { OutboundClient } from '../../lib/outbound';
import { Storage } from '../../lib/storage';
import { createSearchClient } from '../../search/client';
import { createWorkers } from '../../workers/worker';
import { testConfig } from './api';
import { fakeJobActivity } from './fake-job-activity';

try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // already installed in this process
}

export interface TestWorker {
  identity: string;
  startedAt: Map<string, number>;
  cancelledAt: Map<string, number>;
  stop(): Promise<void>;
}

/**
 * A real worker on the stack's Temporal, with the real lifecycle activities on this run's schema
 * and the fake job-type activity registered for `types`; the types in `real` get their real
 * activity (createJobTypeActivities) instead.
 */
export async function startTestWorker(options: { types: JobType[]; real?: JobType[]; identity: string; overrides?: Record<string, string>; maxConcurrentActivities?: number; maxConcurrentWorkflowTasks?: number }): Promise<TestWorker> {
  const config = testConfig(options.overrides);
  const db = createDb(config);
  const storage = Storage.fromConfig(config);
  const search = createSearchClient(config);
  const logger = createLogger('silent');
  const http = OutboundClient.fromConfig(config);
  const startedAt = new Map<string, number>();
  const cancelledAt = new Map<string, number>();
  const fake = fakeJobActivity(new JobResultStore(db, storage), { startedAt, cancelledAt });
  const deps = { config, db, storage, search, logger, http, workerId: options.identity };
  const real: Partial<Record<string, unknown>> = createJobTypeActivities(deps);
  const activities = {
    ...createJobLifecycleActivities(deps),
    // Jobs end by publishing their leads (IDAP resources, lead index): the real activities.
    ...createLeadActivities(deps),
    ...Object.fromEntries(options.types.map((t) => [t, fake])),
    ...Object.fromEntries((options.real ?? []).map((t) => [t, real[t]])),
  };
  const connection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
  const workers: Worker[] = await createWorkers({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    // The lead-indexing queue too: its workflows are started by the API (ICP changes, imports).
    taskQueues: [...[...options.types, ...(options.real ?? [])].map((t) => jobTaskQueue(config.TASK_QUEUE_PREFIX, CATALOG[t])), leadsTaskQueue(config.TASK_QUEUE_PREFIX)],
    activities,
    identity: options.identity,
    logger,
    maxConcurrentActivities: options.maxConcurrentActivities,
    maxConcurrentWorkflowTasks: options.maxConcurrentWorkflowTasks,
  });
  const running = Promise.all(workers.map((w) => w.run()));
  return {
    identity: options.identity,
    startedAt,
    cancelledAt,
    stop: async () => {
      workers.forEach((w) => w.shutdown());
      await running;
      await Promise.allSettled([connection.close(), db.destroy(), search.close(), http.close()]);
    },
  };
}
