import { ActivityCancellationType, ApplicationFailure, proxyActivities, sleep } from '@temporalio/workflow';
import type { JobActivityOutput } from '../activities/deps';
import type { SocialActivities } from '../activities/social/crawl-public-social';
import type { JobStepsInput } from './step-input';
import { jobActivities } from './worker-loss';

/** The first wait after a throttled answer (without Retry-After); each further one doubles. */
const FIRST_BACKOFF_MS = 30_000;
const MAX_BACKOFF_MS = 5 * 60_000;
/** Kept free before the job's deadline for the last request and the result, so that a throttled job fails with its own message. */
const DEADLINE_RESERVE_MS = 60_000;

// Planning reads the payload and the worker's config only.
const planning = proxyActivities<SocialActivities>({
  startToCloseTimeout: '30s', // no I/O; anything longer is a stuck worker
  retry: { initialInterval: '500ms', maximumInterval: '10s', maximumAttempts: 10 },
});

/** The job's own activity (the picture and the result), with the type's limits. */
const onJobQueue = (activityMs: number, heartbeatMs?: number) =>
  jobActivities<SocialActivities>(activityMs, { heartbeatMs, nonRetryable: ['InvalidInput'] });

/** One profile request per activity, on the social queue, whose dispatch rate holds for all workers together. */
const onSocialQueue = (taskQueue: string, activityMs: number) =>
  proxyActivities<SocialActivities>({
    taskQueue,
    // The politeness delay plus one request (jobs/crawl-public-social.ts), after waiting for the pacing
    // lock behind other workers' requests (each holds it up to SOCIAL_DELAY_MAX_MS) and for the hourly
    // rate's turn (3600 / SOCIAL_REQUESTS_PER_HOUR s each, activities/pacing.ts): five times the activity limit.
    startToCloseTimeout: activityMs * 5,
    heartbeatTimeout: '10s', // the activity heartbeats every half second while it waits and asks
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    // Waiting for the queue's hourly rate behind other jobs is expected; the job's deadline bounds it.
    scheduleToCloseTimeout: '9m',
    // An outage (5xx, network) is retried three times; not found and blocked fail at once (non-retryable).
    retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 4 },
  });

/**
 * crawlPublicSocial: the payload's username, then profile requests on the rate-limited social queue
 * until one answers with the profile. A throttled answer (401 require_login, 429) is asked again
 * after a durable timer (Retry-After, else 30 s doubling to 5 minutes) for at most
 * SOCIAL_RETRY_WINDOW_SECONDS and never past the job's deadline minus a minute; then the job fails
 * saying it was rate limited and after how many seconds to retry. Then the result is stored.
 */
export async function crawlPublicSocialSteps(input: JobStepsInput): Promise<JobActivityOutput> {
  const plan = await planning.planSocial({ payload: input.payload });
  const queue = input.queues.social;
  if (!queue)
    throw ApplicationFailure.nonRetryable('crawlPublicSocial started without the social queue', 'InvalidInput');
  const social = onSocialQueue(queue, input.limits.activityMs);
  // The job's deadline counts from the start of processing, which is (to a moment) when these steps began.
  const startedAt = Date.now();
  const lastAllowed = startedAt + Math.min(plan.retryWindowMs, input.limits.deadlineMs - DEADLINE_RESERVE_MS);
  let backoff = FIRST_BACKOFF_MS;
  for (;;) {
    const answer = await social.fetchSocialProfile({ username: plan.username });
    if (answer.kind === 'profile')
      return onJobQueue(input.limits.activityMs, input.limits.heartbeatMs).saveSocialProfile({
        jobId: input.jobId,
        user: answer.user,
      });
    const wait = answer.retryAfterSeconds !== null ? answer.retryAfterSeconds * 1000 : backoff;
    backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    const now = Date.now();
    if (now >= lastAllowed) {
      const waited = Math.round((now - startedAt) / 1000);
      throw ApplicationFailure.nonRetryable(
        `rate limit exceeded: the platform throttled the profile request (${answer.how}) for ${waited} s; retry after ${Math.ceil(wait / 1000)} seconds`,
        'RateLimited',
      );
    }
    await sleep(Math.min(wait, lastAllowed - now));
  }
}
