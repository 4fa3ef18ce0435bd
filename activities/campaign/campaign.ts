import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import { CampaignRepository } from '../../db/repositories/campaigns';
import { ClientRepository } from '../../db/repositories/clients';
import { CATALOG, priorityKeyFor } from '../../jobs';
import { jobTaskQueue } from '../../jobs/queues';
import { runJobInput, type RunJobInput } from '../../jobs/run-input';
import type { CampaignStatus } from '../../jobs/workflow';
import { payloadHash } from '../../lib/payload-hash';
import type { ActivityDeps } from '../deps';

/** One location's crawlMaps job as the campaign workflow starts it (child workflow `job/<jobId>`). */
export interface ClaimedJob {
  jobId: string;
  workflowId: string;
  taskQueue: string;
  priority: number;
  /** Temporal's priority key of the job's priority (the catalog's mapping; workflows may not import it). */
  priorityKey: number;
  searchString: string;
  input: RunJobInput;
}

export interface ClaimResult {
  jobs: ClaimedJob[];
  /** Pending locations left (released or not); 0 once the campaign is no longer running. */
  pendingRemaining: number;
  /** Pending locations that may be claimed now. */
  releasable: number;
  status: CampaignStatus;
}

/** The activities of the `campaign/<id>` workflow (workflows/campaign.ts). */
export function createCampaignActivities(deps: ActivityDeps) {
  const campaigns = new CampaignRepository(deps.db, deps.config.DATABASE_SCHEMA);
  const clients = new ClientRepository(deps.db);
  const maps = CATALOG.crawlMaps;

  return {
    /**
     * Claims up to `limit` pending locations of a running campaign and creates each one's queued
     * crawlMaps job (campaign_id set, `job.queued`), all in one transaction. Idempotent by claimKey
     * (deterministic in the workflow): a retry returns the same jobs and claims nothing new. Claims
     * nothing once the campaign is cancelled, or its client deactivated (it is cancelled then). Campaign jobs skip the 24-hour submission cache: each
     * location is its own job even when two campaigns ask the same. A campaign row not committed yet
     * (the API starts the workflow before its commit) is waited for, not failed on.
     */
    async claimCampaignLocations(input: { campaignId: string; claimKey: string; limit: number }): Promise<ClaimResult> {
      // A deactivated client's campaign claims nothing more: it is cancelled here (as the workers'
      // client watch does at the deactivation), and the workflow ends it with campaign.terminal.
      const current = await campaigns.findById(input.campaignId);
      if (current?.status === 'running' && !(await clients.findById(current.client_id))?.is_active) {
        await campaigns.cancel(current.client_id, current.id);
        return { jobs: [], pendingRemaining: 0, releasable: 0, status: 'cancelled' };
      }
      const outcome = await campaigns.claim(
        input.campaignId,
        input.claimKey,
        input.limit,
        (c, location, countryCode) => {
          // Parsed with the catalog schema, so the stored payload has its defaults as a submitted one does.
          const payload = maps.payload.parse({
            search_query: location.search_string,
            max_results: c.max_results_per_location,
            ...(c.dedupe_fuzzy ? { dedupe_fuzzy: true } : {}),
            // The city's country biases the search to it and reads its national phone numbers.
            ...(countryCode ? { region: countryCode } : {}),
            ...(c.workflow ? { workflow: c.workflow } : {}),
          }) as Record<string, unknown>;
          const id = randomUUID();
          return {
            id,
            clientId: c.client_id,
            type: 'crawlMaps',
            priority: c.priority,
            payload,
            payloadHash: payloadHash(payload),
            campaignId: c.id,
            workflowId: `job/${id}`,
            taskQueue: jobTaskQueue(deps.config.TASK_QUEUE_PREFIX, maps),
          };
        },
      );
      // Waited for on its submission lock first (db/repositories/campaigns.ts lockedCampaign): missing now, it was never committed.
      if (!outcome)
        throw ApplicationFailure.nonRetryable(
          `campaign ${input.campaignId} not found: its creation was never committed`,
          'NotFound',
        );
      return {
        jobs: outcome.claimed.map(({ location, job }) => ({
          jobId: job.id,
          workflowId: job.workflow_id,
          taskQueue: job.task_queue,
          priority: job.priority,
          priorityKey: priorityKeyFor(job.priority),
          searchString: location.search_string,
          input: runJobInput(job, deps.config),
        })),
        pendingRemaining: outcome.pendingRemaining,
        releasable: outcome.releasable,
        status: outcome.campaign.status,
      };
    },

    /**
     * The campaign's terminal status and its `campaign.terminal` event (campaign_id set, so the SSE
     * campaign_id filter and webhooks see it): at its end, when cancelled, or when `expired` (its
     * deadline passed). Idempotent: the event is appended once.
     */
    async finishCampaign(input: {
      campaignId: string;
      cancelled: boolean;
      expired?: boolean;
    }): Promise<{ status: CampaignStatus }> {
      const done = await campaigns.finish(
        input.campaignId,
        input.cancelled ? 'cancelled' : input.expired ? 'expired' : 'ended',
      );
      if (!done) throw ApplicationFailure.nonRetryable(`campaign ${input.campaignId} does not exist`, 'NotFound');
      return { status: done.status };
    },
  };
}

export type CampaignActivities = ReturnType<typeof createCampaignActivities>;
