/**
 * Task-queue names, spelled here only (the API starts workflows on them, the workers poll them).
 * Every name is `<TASK_QUEUE_PREFIX>-<base>`, so several deployments or test runs share one Temporal.
 * One queue per job type, so each type scales and is rate-limited on its own.
 */
import type { ActivityQueue, JobSpec } from './types';

export const taskQueue = (prefix: string, base: string): string => `${prefix}-${base}`;

/** The queue a job runs on: its type's, or the type's test queue when the payload asks for it. */
export function jobTaskQueue(prefix: string, spec: Pick<JobSpec, 'queue'>, options: { test?: boolean } = {}): string {
  return taskQueue(prefix, `${spec.queue}${options.test ? '-test' : ''}`);
}

/** The lead-indexing workflows (indexLeads, one per client), started by the API. */
export function leadsTaskQueue(prefix: string): string {
  return taskQueue(prefix, 'leads');
}

/** The webhook deliveries (deliverWebhook, one workflow per delivery), started by the workers' dispatcher. */
export function webhooksTaskQueue(prefix: string): string {
  return taskQueue(prefix, 'webhooks');
}

/** The campaign workflows (`campaign/<id>`, one per campaign), started by the API. */
export function campaignsTaskQueue(prefix: string): string {
  return taskQueue(prefix, 'campaigns');
}

/** Every queue that runs workflows and job-type activities: one per type, its test queue if it has one, the leads, webhooks, campaigns and mail queues. */
export function workflowTaskQueues(prefix: string, specs: readonly Pick<JobSpec, 'queue' | 'testQueue'>[]): string[] {
  return [
    ...specs.flatMap((s) => [
      jobTaskQueue(prefix, s),
      ...(s.testQueue ? [jobTaskQueue(prefix, s, { test: true })] : []),
    ]),
    leadsTaskQueue(prefix),
    webhooksTaskQueue(prefix),
    campaignsTaskQueue(prefix),
    mailTaskQueue(prefix),
  ];
}

/** A type's activity-only queues with their full names, keyed as the workflow looks them up. */
export function activityTaskQueues(prefix: string, queues: readonly ActivityQueue[]): Record<string, string> {
  return Object.fromEntries(queues.map((q) => [q.key, taskQueue(prefix, q.queue)]));
}

/** Mail: sending (one workflow per message), IMAP sync (a schedule per mailbox) and snooze timers, started by the API. */
export function mailTaskQueue(prefix: string): string {
  return taskQueue(prefix, 'mail');
}
