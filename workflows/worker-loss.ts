import {
  ActivityCancellationType,
  ActivityFailure,
  log,
  patched,
  proxyActivities,
  TimeoutFailure,
  type ActivityOptions,
} from '@temporalio/workflow';
import { JOB_ACTIVITY_ATTEMPTS, JOB_HEARTBEAT_TIMEOUT, WORKER_LOSS_RESCHEDULES } from '../jobs/limits';

/** Marks the histories that reschedule after a worker loss; one recorded before it replays as it ran (the job failed). */
const PATCH = 'reschedule-after-worker-loss';

/**
 * Whether an activity failed because the last of its attempts stopped heartbeating: its worker was
 * killed, lost its network or hung. Its retry policy already gave it its attempts, so the failure
 * reaches the workflow only when each of them ended so or the last one did.
 */
export function lostItsWorker(err: unknown): boolean {
  return err instanceof ActivityFailure && err.cause instanceof TimeoutFailure && err.cause.timeoutType === 'HEARTBEAT';
}

/**
 * `call` (one activity with its retry policy), scheduled again with fresh attempts when it fails
 * because its worker went silent, up to WORKER_LOSS_RESCHEDULES times (jobs/limits.ts says why).
 * Every other failure, a cancel included, passes through. The caller's deadline (a cancellation
 * scope) bounds the whole.
 */
export async function outlivingWorkerLoss<T>(name: string, call: () => Promise<T>): Promise<T> {
  for (let lost = 1; ; lost += 1) {
    try {
      return await call();
    } catch (err) {
      if (!lostItsWorker(err) || lost > WORKER_LOSS_RESCHEDULES || !patched(PATCH)) throw err;
      log.warn('a job activity lost its worker; scheduled again with fresh attempts', { activity: name, lost });
    }
  }
}

/**
 * proxyActivities for a job's own heartbeating activities: each call outlives its workers' losses
 * (outlivingWorkerLoss). Not for activities with a schedule-to-close limit of their own (a pipeline
 * stage's per-business time), which a new schedule would extend.
 */
export function proxyJobActivities<A extends object>(options: ActivityOptions): A {
  const activities = proxyActivities<Record<string, (...args: unknown[]) => Promise<unknown>>>(options);
  return new Proxy(activities, {
    get(target, name) {
      if (typeof name !== 'string') return undefined;
      const activity = target[name];
      if (!activity) return undefined;
      return (...args: unknown[]) => outlivingWorkerLoss(name, () => activity(...args));
    },
  }) as unknown as A;
}

/**
 * A job's own heartbeating activities with its type's limits (proxyJobActivities): `activityMs`
 * start to close (the catalog's limits.activity, jobs/<type>.ts says why), a heartbeat timeout (job
 * activities heartbeat every half second; a silent worker is replaced within it), a cancel (the
 * client's or the deadline's) that waits until the activity has stopped, so that no partial result
 * is saved after the job was recorded as cancelled or failed, and retries with backoff up to
 * JOB_ACTIVITY_ATTEMPTS except for the `nonRetryable` error types. A quota answer is retried after
 * the provider's own delay (the failure's nextRetryDelay).
 */
export function jobActivities<A extends object>(
  activityMs: number,
  options: { heartbeatMs?: number; nonRetryable?: string[] } = {},
): A {
  return proxyJobActivities<A>({
    startToCloseTimeout: activityMs,
    heartbeatTimeout: options.heartbeatMs ?? JOB_HEARTBEAT_TIMEOUT.ms,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: {
      initialInterval: '2s',
      backoffCoefficient: 2,
      maximumInterval: '1m',
      maximumAttempts: JOB_ACTIVITY_ATTEMPTS,
      nonRetryableErrorTypes: options.nonRetryable ?? [],
    },
  });
}
