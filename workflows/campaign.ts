import {
  CancellationScope,
  condition,
  continueAsNew,
  defineSignal,
  isCancellation,
  log,
  patched,
  proxyActivities,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { CampaignActivities } from '../activities';
import type { ClaimedJob } from '../activities/campaign/campaign';
import { LIFECYCLE_STEP } from '../jobs/limits';
import { runJob } from './job';
import { CampaignIdKey, ClientIdKey, JobIdKey, JobTypeKey } from './search-attributes';

/** Sent by POST /api/v1/campaigns/{id}/next after it moved released_through: claim again. */
export const releaseSignal = defineSignal('release');

export interface RunCampaignInput {
  campaignId: string;
  clientId: string;
  autoSubmit: boolean;
  /** Locations (child jobs) in flight at most. */
  concurrency: number;
  /** Children started by the earlier runs of this campaign (continue-as-new); for the logs only, the state is in Postgres. */
  startedBefore?: number;
  /** Children per run before continue-as-new; CHILDREN_PER_RUN unless a test makes it small. */
  childrenPerRun?: number;
  /**
   * When the campaign ends, done or not (ISO time): its jobs in flight are cancelled, its pending
   * locations skipped, and it finishes with `campaign.terminal`. Campaigns started without it end
   * ENDLESS_MARGIN_MS before their execution timeout.
   */
  endBy?: string;
}

export interface RunCampaignResult {
  campaignId: string;
  status: string;
}

/**
 * Children per run before continue-as-new: each child adds about ten events to this history
 * (claim, start, completion), so 200 keep it near 2,000 events, far below Temporal's 50k limit.
 */
export const CHILDREN_PER_RUN = 200;

/** A campaign started without `endBy` ends this long before Temporal's execution timeout would kill it. */
const ENDLESS_MARGIN_MS = 3_600_000;
/** Histories recorded before campaigns had a deadline of their own replay as they ran (no timer). */
const END_BY_PATCH = 'campaign-end-by';

// Claim and finish are one short Postgres transaction each; both are idempotent, so they retry freely.
const steps = proxyActivities<CampaignActivities>({
  startToCloseTimeout: LIFECYCLE_STEP.ms, // one small transaction; longer is a stuck connection
  retry: {
    initialInterval: '500ms',
    backoffCoefficient: 2,
    maximumInterval: '30s',
    nonRetryableErrorTypes: ['NotFound'],
  },
});

/**
 * A campaign, workflow id `campaign/<id>` on the campaigns queue: claims pending locations
 * (claimCampaignLocations creates their crawlMaps jobs) and runs each as a child runJob
 * `job/<jobId>` on the crawlMaps queue, at most `concurrency` at once; when one ends it claims
 * more. With autoSubmit false it claims only released locations and waits for the `release`
 * signal for more. A failed child is a failed location, never a failed campaign. After
 * CHILDREN_PER_RUN (childrenPerRun) children (or when Temporal suggests it) it stops claiming, waits for the
 * children in flight and continues as new (the state is in Postgres). At the end, or when
 * cancelled (children are cancelled with it), finishCampaign records the terminal status and
 * `campaign.terminal`.
 */
export async function runCampaign(input: RunCampaignInput): Promise<RunCampaignResult> {
  const { campaignId } = input;
  const perRun = input.childrenPerRun ?? CHILDREN_PER_RUN;
  const inFlight = new Map<string, Promise<void>>();
  // Bumped by every child that ends and every release signal: what the loop waits for.
  let wakes = 0;
  let releases = 0;
  setHandler(releaseSignal, () => {
    releases++;
    wakes++;
  });

  // The campaign's deadline. Its children run in a scope of their own, so that it can cancel them
  // (a cancel of the campaign reaches them through it too).
  const expiration = workflowInfo().executionExpirationTime;
  const endBy = !patched(END_BY_PATCH)
    ? Number.POSITIVE_INFINITY
    : input.endBy
      ? Date.parse(input.endBy)
      : expiration
        ? expiration.getTime() - ENDLESS_MARGIN_MS
        : Number.POSITIVE_INFINITY;
  const children = new CancellationScope();
  let expired = false;

  let claims = 0;
  let startedThisRun = 0;
  let pendingRemaining = Number.POSITIVE_INFINITY;
  // The release count when a claim last found nothing releasable: claim again only after a new release.
  let exhaustedAt = -1;
  let rolling = false;

  try {
    for (;;) {
      // Taken before the claim: a child that ends or a release that arrives while the claim runs
      // is not missed (the loop goes round again instead of waiting).
      const seen = wakes;
      const releasesBefore = releases;
      if (Date.now() >= endBy) {
        expired = true;
        break;
      }
      rolling ||= startedThisRun >= perRun || workflowInfo().continueAsNewSuggested;
      const room = Math.min(input.concurrency - inFlight.size, perRun - startedThisRun);
      if (!rolling && room > 0 && exhaustedAt !== releases) {
        const claim = await steps.claimCampaignLocations({
          campaignId,
          claimKey: `${workflowInfo().runId}/${claims++}`,
          limit: room,
        });
        for (const job of claim.jobs) {
          const { ended } = await children.run(() => startLocation(input, job));
          inFlight.set(job.jobId, ended);
          void ended.then(() => {
            inFlight.delete(job.jobId);
            wakes++;
          });
          startedThisRun++;
        }
        pendingRemaining = claim.pendingRemaining;
        if (claim.releasable === 0) exhaustedAt = releasesBefore;
        if (claim.status !== 'running') pendingRemaining = 0;
      }
      if (inFlight.size === 0 && (rolling || pendingRemaining === 0)) break;
      // Wakes at the deadline too (the loop's check above ends the campaign then).
      if (Number.isFinite(endBy)) await condition(() => wakes !== seen, Math.max(1, endBy - Date.now()));
      else await condition(() => wakes !== seen);
    }
  } catch (err) {
    if (!isCancellation(err)) throw err;
    // Cancelled (the API's cancel, or an operator's): the children were asked to cancel with this
    // workflow; wait for them to record their jobs as cancelled, then the terminal event.
    await CancellationScope.nonCancellable(async () => {
      await Promise.allSettled(inFlight.values());
      await steps.finishCampaign({ campaignId, cancelled: true });
    });
    throw err;
  }

  if (expired) {
    // Out of time: the jobs in flight are cancelled (each records its job as cancelled and its
    // location as skipped), then the campaign ends with its pending locations skipped.
    log.info('campaign reached its deadline', { campaignId, inFlight: inFlight.size });
    children.cancel();
    await Promise.allSettled(inFlight.values());
    const done = await steps.finishCampaign({ campaignId, cancelled: false, expired: true });
    return { campaignId, status: done.status };
  }
  if (rolling && pendingRemaining !== 0) {
    log.info('campaign continues as new', { campaignId, started: (input.startedBefore ?? 0) + startedThisRun });
    return continueAsNew<typeof runCampaign>({ ...input, startedBefore: (input.startedBefore ?? 0) + startedThisRun });
  }
  const done = await steps.finishCampaign({ campaignId, cancelled: false });
  return { campaignId, status: done.status };
}

/** Starts one location's job as a child; `ended` resolves (never rejects) when the child has ended. */
async function startLocation(input: RunCampaignInput, job: ClaimedJob): Promise<{ ended: Promise<void> }> {
  const child = await startChild(runJob, {
    workflowId: job.workflowId,
    taskQueue: job.taskQueue,
    args: [job.input],
    typedSearchAttributes: [
      { key: ClientIdKey, value: input.clientId },
      { key: JobTypeKey, value: job.input.type },
      { key: JobIdKey, value: job.jobId },
      { key: CampaignIdKey, value: input.campaignId },
    ],
    staticSummary: `${job.input.type} "${job.searchString}" of campaign ${input.campaignId} (priority ${job.priority})`,
    priority: { priorityKey: job.priorityKey },
  });
  const ended = child.result().then(
    () => undefined,
    (err: unknown) => {
      // A failed or cancelled job is that location's outcome (its row says so), not the campaign's.
      if (!isCancellation(err))
        log.info('campaign location job ended unsuccessfully', {
          jobId: job.jobId,
          error: err instanceof Error ? err.message : String(err),
        });
    },
  );
  return { ended };
}
