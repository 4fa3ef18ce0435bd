/**
 * Timeouts and deadlines shared by every job type, with their reasons. Plain data (workflow-safe):
 * workflows import this file; each type's own limits sit in its catalog file (jobs/<type>.ts) and
 * reach the workflow through its input.
 */
import type { Limit } from './types';

const minutes = (n: number) => n * 60_000;
const seconds = (n: number) => n * 1000;

/** Spec §8 "Workflow timeouts: overall max 10 min": no job type may document more. */
export const MAX_JOB_DEADLINE: Limit = {
  ms: minutes(10),
  why: 'spec §8: a job (workflow) takes at most 10 minutes overall',
};

/** Per-type activity deadlines the spec names (§8). */
export const SITE_STAGE: Limit = { ms: minutes(5), why: 'spec §8: site stage 5 min per business' };
export const VERIFY_STAGE: Limit = { ms: minutes(2), why: 'spec §8: verify stage 2 min per business' };

/**
 * How often a running activity heartbeats, and the workers' heartbeat throttle (workers/worker.ts).
 * A cancel reaches an activity only in a heartbeat's answer, so this is most of a cancel's latency.
 */
export const HEARTBEAT_INTERVAL: Limit = {
  ms: 500,
  why: "a cancel is delivered in a heartbeat's answer: half a second keeps a stop within the 3 s promise on a loaded worker (one second came to 3.2 s once)",
};

/** Every job-type activity heartbeats at least every HEARTBEAT_INTERVAL; a silent worker (killed, partitioned) is replaced after this. */
export const JOB_HEARTBEAT_TIMEOUT: Limit = {
  ms: seconds(20),
  why: 'forty missed half-second heartbeats: the worker is gone, retry elsewhere',
};

/**
 * Job-type activities are retried twice (three attempts) with backoff; the overall deadline bounds
 * the sum, so retries can never stretch a job past it.
 */
export const JOB_ACTIVITY_ATTEMPTS = 3;

/**
 * A job activity whose worker went silent (killed, partitioned, hung: its heartbeats stopped) in its
 * last attempt is scheduled again with fresh attempts, up to this many times
 * (workflows/worker-loss.ts): a rolling restart or a crashing host must not fail the jobs it was
 * running. The job's deadline bounds the whole, so a hung activity still ends.
 */
export const WORKER_LOSS_RESCHEDULES = 5;

/**
 * An attempt that met a backing service's outage (Postgres, MinIO, Elasticsearch restarting) waits
 * this long at most for it to answer again before failing (workers/outage-wait.ts), so a restart
 * costs a job one attempt, not all three. Never longer than the attempt's own timeout.
 */
export const OUTAGE_WAIT: Limit = {
  ms: minutes(2),
  why: 'a backing service restarting (seconds) or failing over (about a minute) costs one attempt',
};

/** The lifecycle steps (startJob, completeJob, ...) are one short Postgres transaction each. */
export const LIFECYCLE_STEP: Limit = {
  ms: seconds(30),
  why: 'one small transaction; anything longer is a stuck connection',
};

/** Projection of a result into IDAP resources: one transaction of idempotent upserts. */
export const PROJECTION_STEP: Limit = {
  ms: minutes(2),
  why: "a 100-page site's e-mails, phones and team in one transaction",
};

/** The message of a job that ran out of time (its error_message). */
export function deadlineMessage(type: string, deadlineMs: number): string {
  const mins = deadlineMs / 60_000;
  const span =
    mins >= 1 && Number.isInteger(mins)
      ? `${mins} minute${mins === 1 ? '' : 's'}`
      : `${Math.round(deadlineMs / 1000)} seconds`;
  return `${type} ran out of time: the job's ${span} limit was reached before it finished`;
}
