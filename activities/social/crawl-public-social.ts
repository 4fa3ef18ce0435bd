import { randomInt } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { JobResultStore } from '../../db/repositories/job-results';
import { jobOfActivity } from '../../db/repositories/jobs';
import { crawlPublicSocialPayload } from '../../jobs/crawl-public-social';
import { HEARTBEAT_INTERVAL } from '../../jobs/limits';
import { hostImage, type HostedImage } from '../../lib/hosted-image';
import { BlockedAddressError } from '../../lib/outbound';
import { profileUsername } from '../../lib/social-url';
import { endpointHttp, parsePayload, type ActivityDeps, type JobActivityOutput } from '../deps';
import { pacedGlobally } from '../pacing';
import { ProfileApiClient, ProfileApiError, type WireUser } from './profile-api';
import { profileResult } from './profile';

/** What the workflow needs to run a job (workflows/social.ts): whom to ask, and how long a throttled answer is retried. */
export interface SocialPlan {
  username: string;
  retryWindowMs: number;
}

/** A profile request's outcome the workflow acts on; not found and blocked fail the activity for good. */
export type ProfileFetch =
  { kind: 'profile'; user: WireUser } | { kind: 'throttled'; how: string; retryAfterSeconds: number | null };

// A request heartbeats while it waits (for the pacing lock, the delay, the answer): a cancel is only delivered in a heartbeat's answer.
/** Pacing key of the profile requests: one randomised pause between any two and the hourly rate, whichever worker makes them. */
const PACING_KEY = 'social-profiles';

/**
 * The activities of crawlPublicSocial. `fetchSocialProfile` runs on the rate-limited social queue and
 * makes exactly one request, so that the queue's dispatch rate is a limit on requests; the other two
 * run on the job's queue.
 */
export function createSocialActivities(deps: ActivityDeps) {
  const { config } = deps;
  const results = new JobResultStore(deps.db, deps.storage);
  let api: ProfileApiClient | undefined;
  // PROXY_URL: the profile requests leave through the operator's proxy; the guard still judges every target.
  const profileApi = (): ProfileApiClient =>
    (api ??= new ProfileApiClient({
      baseUrl: config.SOCIAL_BASE_URL,
      appId: config.SOCIAL_APP_ID,
      userAgent: config.SOCIAL_USER_AGENT,
      http: deps.proxiedHttp ?? endpointHttp(deps),
    }));

  return {
    /** The job's username (its payload parsed with the catalog schema) and the retry window. No I/O; an invalid payload fails for good. */
    async planSocial(input: { payload: Record<string, unknown> }): Promise<SocialPlan> {
      const parsed = profileUsername(parsePayload(crawlPublicSocialPayload, input.payload));
      if ('error' in parsed) throw ApplicationFailure.nonRetryable(parsed.error, 'InvalidInput');
      return { username: parsed.username, retryWindowMs: config.SOCIAL_RETRY_WINDOW_SECONDS * 1000 };
    },

    /**
     * One profile request, at least a random SOCIAL_DELAY_MIN_MS..MAX_MS after the answer to the
     * previous one of any worker, and within SOCIAL_REQUESTS_PER_HOUR (activities/pacing.ts: the queue's dispatch
     * rate does not hold when a busy worker starts its activities late). A profile or a throttled answer
     * is returned; not found and blocked fail the job (non-retryable); a 5xx or network error is
     * retried by Temporal. Reads only: a retry changes nothing. Heartbeats every half second; a cancel
     * aborts the wait and the request.
     */
    async fetchSocialProfile(input: { username: string }): Promise<ProfileFetch> {
      const ctx = Context.current();
      const signal = ctx.cancellationSignal;
      const beat = setInterval(() => ctx.heartbeat({ username: input.username }), HEARTBEAT_INTERVAL.ms);
      try {
        ctx.heartbeat({ username: input.username });
        const delay = randomInt(config.SOCIAL_DELAY_MIN_MS, config.SOCIAL_DELAY_MAX_MS + 1);
        const answer = await pacedGlobally(
          deps.db,
          PACING_KEY,
          { gapMs: delay, from: 'answer', perHour: config.SOCIAL_REQUESTS_PER_HOUR },
          signal,
          () => profileApi().profile(input.username, signal),
        );
        switch (answer.kind) {
          case 'profile':
            return answer;
          case 'throttled':
            return answer;
          case 'not_found':
            throw ApplicationFailure.nonRetryable(
              `profile not found: no public account named @${input.username}`,
              'ProfileNotFound',
            );
          case 'blocked':
            throw ApplicationFailure.nonRetryable(
              `request blocked by the platform (${answer.how}): it needs a mobile proxy (set PROXY_URL)`,
              'RequestBlocked',
            );
        }
      } catch (err) {
        if (signal.aborted || err instanceof ApplicationFailure) throw err;
        if (err instanceof BlockedAddressError) throw ApplicationFailure.nonRetryable(err.message, 'BlockedAddress');
        // An unreadable answer, a 5xx, a network error: Temporal retries with backoff, then the job fails with this.
        throw ApplicationFailure.retryable(
          err instanceof ProfileApiError
            ? err.message
            : `the profile API could not be reached: ${(err as Error).message}`,
          'ProfileApiUnavailable',
        );
      } finally {
        clearInterval(beat);
      }
    },

    /**
     * The §2.6 result of a profile: its picture stored in the client's media bucket (content-hash key,
     * so a retry stores the same object), then the result row (overwritten by a retry). A picture that
     * cannot be fetched or stored leaves profile_pic_url_hosted null and has_hosted_image false.
     */
    async saveSocialProfile(input: { jobId: string; user: WireUser }): Promise<JobActivityOutput> {
      const ctx = Context.current();
      const signal = ctx.cancellationSignal;
      const job = await jobOfActivity(deps.db, input.jobId);
      if (!job) throw ApplicationFailure.nonRetryable(`job ${input.jobId} does not exist`, 'InvalidInput');
      const source = input.user.profile_pic_url_hd ?? input.user.profile_pic_url;
      let hosted: HostedImage | undefined;
      if (source) {
        const beat = setInterval(() => ctx.heartbeat({ picture: source }), HEARTBEAT_INTERVAL.ms);
        try {
          hosted = await hostImage(deps, job.client_id, source, 'social/profile-pics', signal, {
            'user-agent': config.SOCIAL_USER_AGENT,
          });
        } catch (err) {
          if (signal.aborted) throw err;
          deps.logger.warn(
            { err: String(err), jobId: input.jobId },
            'profile picture not stored; the result keeps its source URL only',
          );
        } finally {
          clearInterval(beat);
        }
      }
      await results.save(input.jobId, profileResult(input.user, hosted));
      return { resultsCount: 1 };
    },
  };
}

export type SocialActivities = ReturnType<typeof createSocialActivities>;
