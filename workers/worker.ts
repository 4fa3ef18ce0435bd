import {
  bundleWorkflowCode,
  DefaultLogger,
  NativeConnection,
  Worker,
  type ActivityInterceptorsFactory,
  type WorkflowBundleOption,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import { HEARTBEAT_INTERVAL } from '../jobs/limits';
import type { Logger } from '../lib/logger';

export interface WorkerSetOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueues: string[];
  activities: object;
  identity: string;
  logger: Logger;
  maxConcurrentActivities?: number;
  /** Around every activity attempt (workers/outage-wait.ts). */
  activityInterceptors?: ActivityInterceptorsFactory[];
  maxConcurrentWorkflowTasks?: number;
  /** Reuse a bundle (tests start several worker sets; a compiled worker the one `npm run build` made). */
  bundle?: WorkflowBundleOption;
}

let sharedBundle: Promise<WorkflowBundleWithSourceMap> | undefined;

/** The workflow code, bundled once per process and shared by every queue's worker. */
export function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  return (sharedBundle ??= bundleWorkflowCode({
    workflowsPath: require.resolve('../workflows'),
    logger: new DefaultLogger('WARN'),
  }));
}

/** One Worker per task queue, sharing one connection and one workflow bundle. */
export async function createWorkers(options: WorkerSetOptions): Promise<Worker[]> {
  const bundle = options.bundle ?? (await workflowBundle());
  return Promise.all(
    options.taskQueues.map((taskQueue) =>
      Worker.create({
        connection: options.connection,
        namespace: options.namespace,
        taskQueue,
        workflowBundle: bundle,
        activities: options.activities,
        identity: options.identity,
        interceptors: { activity: options.activityInterceptors ?? [] },
        maxConcurrentActivityTaskExecutions: options.maxConcurrentActivities ?? 20,
        // A single workflow-task slot only works without the sticky cache (its poller needs two slots).
        ...(options.maxConcurrentWorkflowTasks
          ? {
              maxConcurrentWorkflowTaskExecutions: options.maxConcurrentWorkflowTasks,
              ...(options.maxConcurrentWorkflowTasks < 2 ? { maxCachedWorkflows: 0 } : {}),
            }
          : {}),
        // Cancel requests reach activities through heartbeats; this bounds how late they can be.
        defaultHeartbeatThrottleInterval: HEARTBEAT_INTERVAL.ms,
        maxHeartbeatThrottleInterval: HEARTBEAT_INTERVAL.ms,
        shutdownGraceTime: '10s',
      }),
    ),
  );
}

/**
 * Activity-only Workers for rate-limited queues (the company registries). The limit is sent to the
 * server with each poll and enforced by matching for the whole queue, whatever the number of workers.
 */
export async function createRateLimitedWorkers(
  options: Omit<WorkerSetOptions, 'taskQueues' | 'bundle' | 'maxConcurrentWorkflowTasks'> & {
    queues: { taskQueue: string; perSecond?: number }[];
  },
): Promise<Worker[]> {
  return Promise.all(
    options.queues.map(({ taskQueue, perSecond }) =>
      Worker.create({
        connection: options.connection,
        namespace: options.namespace,
        taskQueue,
        activities: options.activities,
        identity: options.identity,
        interceptors: { activity: options.activityInterceptors ?? [] },
        maxConcurrentActivityTaskExecutions: options.maxConcurrentActivities ?? 20,
        ...(perSecond ? { maxTaskQueueActivitiesPerSecond: perSecond } : {}),
        // As on the job queues: a cancel reaches a running request within about half a second.
        defaultHeartbeatThrottleInterval: HEARTBEAT_INTERVAL.ms,
        maxHeartbeatThrottleInterval: HEARTBEAT_INTERVAL.ms,
        shutdownGraceTime: '10s',
      }),
    ),
  );
}
