/** The seven job types of spec §1.1. Each is also the name of the activity that does its work. */
export const JOB_TYPES = ['crawlMaps', 'crawlSite', 'crawlVerify', 'crawlPeople', 'crawlCompanyData', 'crawlLanding', 'crawlPublicSocial'] as const;
export type JobType = (typeof JOB_TYPES)[number];

export const JOB_STATUSES = ['queued', 'processing', 'completed', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export const TERMINAL_STATUSES: readonly JobStatus[] = ['completed', 'failed', 'cancelled'];

export const EVENT_NAMES = ['job.queued', 'job.started', 'job.completed', 'job.failed', 'job.cancelled', 'campaign.terminal'] as const;
export type EventName = (typeof EVENT_NAMES)[number];

/**
 * Spec priority 0-10 (higher first) onto Temporal's priorityKey (lower first). The dev server
 * runs with matching.priorityLevels=11, so every spec level keeps its own key: 10 -> 1 ... 0 -> 11.
 */
export const PRIORITY_LEVELS = 11;
export function priorityKeyFor(priority: number): number {
  return PRIORITY_LEVELS - Math.max(0, Math.min(10, Math.round(priority)));
}

/** Job types whose activity is implemented (activities/index.ts); submitting another is 501. */
export const AVAILABLE_JOB_TYPES: readonly JobType[] = ['crawlSite', 'crawlCompanyData'];
