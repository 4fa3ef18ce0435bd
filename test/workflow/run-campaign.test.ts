import { randomUUID } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type { ClaimedJob, ClaimResult } from '../../activities/campaign/campaign';
import { runCampaign } from '../../workflows';
import { CampaignIdKey, ClientIdKey, JobIdKey, JobTypeKey } from '../../workflows/search-attributes';
import { runWorkflowBundle } from '../support/workflow-bundle';
import { HEARTBEAT_INTERVAL } from '../../jobs/limits';
import { createLocalTemporal } from '../support/temporal';

// runCampaign's own logic against a real Temporal dev server: the campaign's activities and its
// children's job activities are fakes that keep the locations in memory.
let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await createLocalTemporal([ClientIdKey, JobTypeKey, JobIdKey, CampaignIdKey]);
}, 120000);
afterAll(() => env?.teardown());

/** A campaign of `total` locations in memory, claimed as runCampaign's activities would claim them. */
function fakeCampaign(total: number, taskQueue: string, failing = new Set<number>()) {
  const claims = new Map<string, ClaimedJob[]>();
  const jobOf = new Map<string, number>();
  let next = 0;
  let running = 0;
  const state = {
    most: 0,
    finished: [] as { campaignId: string; cancelled: boolean }[],
    claimKeys: [] as string[],
    done: [] as number[],
  };
  const activities = {
    claimCampaignLocations: async (input: {
      campaignId: string;
      claimKey: string;
      limit: number;
    }): Promise<ClaimResult> => {
      state.claimKeys.push(input.claimKey);
      let jobs = claims.get(input.claimKey);
      if (!jobs) {
        jobs = [];
        for (; jobs.length < input.limit && next < total; next++) {
          const jobId = randomUUID();
          jobOf.set(jobId, next);
          jobs.push({
            jobId,
            workflowId: `job/${jobId}`,
            taskQueue,
            priority: 0,
            priorityKey: 5,
            searchString: `bakery in City ${next}`,
            input: { jobId, clientId: 'cli_x', type: 'crawlSite', limits: { activityMs: 60_000, deadlineMs: 120_000 } },
          });
        }
        claims.set(input.claimKey, jobs);
      }
      return { jobs, pendingRemaining: total - next, releasable: total - next, status: 'running' };
    },
    finishCampaign: async (input: { campaignId: string; cancelled: boolean; expired?: boolean }) => {
      state.finished.push(input);
      return { status: input.cancelled ? ('cancelled' as const) : ('completed' as const) };
    },
    startJob: async () => {
      running++;
      state.most = Math.max(state.most, running);
      return { run: true, status: 'processing', type: 'crawlSite', clientId: 'cli_x', payload: {} };
    },
    crawlSite: async (i: { jobId: string }) => {
      await new Promise((r) => setTimeout(r, 100));
      const n = jobOf.get(i.jobId) as number;
      if (failing.has(n)) {
        running--;
        throw ApplicationFailure.nonRetryable(`location ${n} failed`, 'InvalidInput');
      }
      return { resultsCount: 1 };
    },
    completeJob: async (i: { jobId: string }) => {
      running--;
      state.done.push(jobOf.get(i.jobId) as number);
      return { status: 'completed' };
    },
    failJob: async () => ({ status: 'failed' }),
    cancelJob: async () => ({ status: 'cancelled' }),
    projectJobResult: async () => ({ resources: 0, businesses: 0 }),
  };
  return { activities, state };
}

/** A worker whose jobs take long (each heartbeats until it is cancelled); `cancelled` lists the jobs cancelJob recorded. */
async function longJobsWorker(
  taskQueue: string,
  activities: ReturnType<typeof fakeCampaign>['activities'],
): Promise<{ worker: Worker; cancelled: string[] }> {
  const cancelled: string[] = [];
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await runWorkflowBundle(),
    // Heartbeats go out every HEARTBEAT_INTERVAL at most, as the production workers send them (workers/worker.ts).
    defaultHeartbeatThrottleInterval: HEARTBEAT_INTERVAL.ms,
    maxHeartbeatThrottleInterval: HEARTBEAT_INTERVAL.ms,
    activities: {
      ...activities,
      crawlSite: async () => {
        const ctx = Context.current();
        for (;;) {
          ctx.heartbeat();
          await new Promise((r) => setTimeout(r, 100));
          if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason;
        }
      },
      cancelJob: async (i: { jobId: string }) => {
        cancelled.push(i.jobId);
        return { status: 'cancelled' };
      },
    },
  });
  return { worker, cancelled };
}

describe('runCampaign workflow', () => {
  test('runs every location as a child with CampaignId, at most `concurrency` at once, continues as new every childrenPerRun children, and a failed location does not fail it', async () => {
    const taskQueue = `wf-campaign-${randomUUID()}`;
    const { activities, state } = fakeCampaign(7, taskQueue, new Set([2]));
    const campaignId = randomUUID();
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await runWorkflowBundle(),
      activities,
    });
    const result = await worker.runUntil(
      env.client.workflow.execute(runCampaign, {
        taskQueue,
        workflowId: `campaign/${campaignId}`,
        args: [{ campaignId, clientId: 'cli_x', autoSubmit: true, concurrency: 2, childrenPerRun: 3 }],
      }),
    );
    expect(result).toEqual({ campaignId, status: 'completed' });
    expect(state.done.sort()).toEqual([0, 1, 3, 4, 5, 6]);
    expect(state.most).toBe(2);
    expect(state.finished).toEqual([{ campaignId, cancelled: false }]);
    // Three runs (3 + 3 + 1 children), each with claim keys of its own run id.
    const runs = new Set(state.claimKeys.map((k) => k.split('/')[0]));
    expect(runs.size).toBe(3);

    const children = [];
    for await (const w of env.client.workflow.list({ query: `CampaignId = "${campaignId}"` })) children.push(w);
    // Visibility may lag behind; the children are there with their attributes once it has caught up.
    for (let i = 0; i < 50 && children.filter((w) => w.type === 'runJob').length < 7; i++) {
      children.length = 0;
      await new Promise((r) => setTimeout(r, 200));
      for await (const w of env.client.workflow.list({ query: `CampaignId = "${campaignId}"` })) children.push(w);
    }
    const jobs = children.filter((w) => w.type === 'runJob');
    expect(jobs).toHaveLength(7);
    expect(jobs.filter((w) => w.status.name === 'FAILED')).toHaveLength(1);
  });

  test('with autoSubmit false it waits for the release signal before claiming again', async () => {
    const taskQueue = `wf-campaign-${randomUUID()}`;
    const campaignId = randomUUID();
    let released = 1;
    let claimed = 0;
    const { activities, state } = fakeCampaign(3, taskQueue);
    const claim = activities.claimCampaignLocations;
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await runWorkflowBundle(),
      activities: {
        ...activities,
        // Only `released` locations may be claimed, as released_through allows.
        claimCampaignLocations: async (input: { campaignId: string; claimKey: string; limit: number }) => {
          const r = await claim({ ...input, limit: Math.min(input.limit, released - claimed) });
          claimed += r.jobs.length;
          return { ...r, releasable: released - claimed };
        },
      },
    });
    await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(runCampaign, {
        taskQueue,
        workflowId: `campaign/${campaignId}`,
        args: [{ campaignId, clientId: 'cli_x', autoSubmit: false, concurrency: 5 }],
      });
      while (state.done.length < 1) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 1000));
      expect(state.done).toHaveLength(1);
      expect(state.finished).toEqual([]);
      released = 3;
      await handle.signal('release');
      expect(await handle.result()).toEqual({ campaignId, status: 'completed' });
    });
    expect(state.done.sort()).toEqual([0, 1, 2]);
  });

  test('cancelled (an operator in the Web UI): the children are cancelled, then finishCampaign records it; the workflow ends Cancelled', async () => {
    const taskQueue = `wf-campaign-${randomUUID()}`;
    const campaignId = randomUUID();
    const { activities, state } = fakeCampaign(5, taskQueue);
    const { worker, cancelled } = await longJobsWorker(taskQueue, activities);
    await worker.runUntil(async () => {
      const handle = await env.client.workflow.start(runCampaign, {
        taskQueue,
        workflowId: `campaign/${campaignId}`,
        args: [{ campaignId, clientId: 'cli_x', autoSubmit: true, concurrency: 2 }],
      });
      while (state.most < 2) await new Promise((r) => setTimeout(r, 50));
      await handle.cancel();
      await expect(handle.result()).rejects.toThrow(WorkflowFailedError);
      expect((await handle.describe()).status.name).toBe('CANCELLED');
    });
    expect(cancelled).toHaveLength(2);
    expect(state.finished).toEqual([{ campaignId, cancelled: true }]);
    expect(state.claimKeys).toHaveLength(1);
  });

  test('at endBy it ends itself: the jobs in flight are cancelled, then finishCampaign records it expired, and the workflow completes', async () => {
    const taskQueue = `wf-campaign-${randomUUID()}`;
    const campaignId = randomUUID();
    const { activities, state } = fakeCampaign(5, taskQueue);
    // Jobs that would outlast the campaign.
    const { worker, cancelled } = await longJobsWorker(taskQueue, activities);
    const endBy = new Date(Date.now() + 3000).toISOString();
    const result = await worker.runUntil(
      env.client.workflow.execute(runCampaign, {
        taskQueue,
        workflowId: `campaign/${campaignId}`,
        args: [{ campaignId, clientId: 'cli_x', autoSubmit: true, concurrency: 2, endBy }],
        workflowExecutionTimeout: '60s',
      }),
    );
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(endBy));
    expect(result).toEqual({ campaignId, status: 'completed' });
    expect(cancelled).toHaveLength(2);
    expect(state.finished).toEqual([{ campaignId, cancelled: false, expired: true }]);
    expect(state.claimKeys).toHaveLength(1);
  });
});
