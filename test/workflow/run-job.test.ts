import { randomUUID } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type { JobActivityInput } from '../../activities';
import { runJob } from '../../workflows';
import { runWorkflowBundle } from '../support/workflow-bundle';
import { HEARTBEAT_INTERVAL } from '../../jobs/limits';
import { createLocalTemporal } from '../support/temporal';

// The workflow's own logic, against a real Temporal dev server; activities are recording fakes.
let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await createLocalTemporal();
}, 120000);
afterAll(() => env?.teardown());

type Call = [string, unknown];

// What the API passes for a crawlSite job (jobs/crawl-site.ts), unless a test shortens the deadline.
const jobInput = (
  jobId: string,
  limits: { activityMs: number; deadlineMs: number; heartbeatMs?: number } = {
    activityMs: 300_000,
    deadlineMs: 600_000,
  },
) => ({ jobId, clientId: 'cli_x', type: 'crawlSite' as const, limits });

function lifecycle(calls: Call[], run = true) {
  return {
    startJob: async (i: { jobId: string }) => {
      calls.push(['startJob', i]);
      return {
        run,
        status: run ? 'processing' : 'cancelled',
        type: 'crawlSite',
        clientId: 'cli_x',
        payload: { url: 'https://example.com' },
      };
    },
    completeJob: async (i: unknown) => {
      calls.push(['completeJob', i]);
      return { status: 'completed' };
    },
    failJob: async (i: unknown) => {
      calls.push(['failJob', i]);
      return { status: 'failed' };
    },
    cancelJob: async (i: unknown) => {
      calls.push(['cancelJob', i]);
      return { status: 'cancelled' };
    },
    projectJobResult: async (i: unknown) => {
      calls.push(['projectJobResult', i]);
      return { resources: 0, businesses: 0 };
    },
    indexLeads: async (i: unknown) => {
      calls.push(['indexLeads', i]);
      return { indexed: 0 };
    },
  };
}

async function withWorker<T>(activities: object, fn: (taskQueue: string) => Promise<T>): Promise<T> {
  const taskQueue = `wf-test-${randomUUID()}`;
  // Heartbeats go out every HEARTBEAT_INTERVAL at most, as the production workers send them (workers/worker.ts).
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await runWorkflowBundle(),
    activities,
    defaultHeartbeatThrottleInterval: HEARTBEAT_INTERVAL.ms,
    maxHeartbeatThrottleInterval: HEARTBEAT_INTERVAL.ms,
  });
  return worker.runUntil(fn(taskQueue));
}

describe('runJob workflow', () => {
  test('runs start -> the type activity with the stored payload -> complete', async () => {
    const calls: Call[] = [];
    const jobId = randomUUID();
    const result = await withWorker(
      {
        ...lifecycle(calls),
        crawlSite: async (i: JobActivityInput) => {
          calls.push(['crawlSite', i]);
          return { resultsCount: 7 };
        },
      },
      (taskQueue) =>
        env.client.workflow.execute(runJob, { taskQueue, workflowId: `job/${jobId}`, args: [jobInput(jobId)] }),
    );
    expect(result).toEqual({ jobId, status: 'completed', resultsCount: 7 });
    expect(calls).toEqual([
      ['startJob', { jobId }],
      ['crawlSite', { jobId, clientId: 'cli_x', payload: { url: 'https://example.com' } }],
      ['completeJob', { jobId, resultsCount: 7 }],
      ['projectJobResult', { jobId, clientId: 'cli_x', type: 'crawlSite' }],
    ]);
  });

  test('a job with businesses indexes them; a failure to publish leads never fails the completed job', async () => {
    const calls: Call[] = [];
    const jobId = randomUUID();
    const result = await withWorker(
      {
        ...lifecycle(calls),
        crawlSite: async () => ({ resultsCount: 1 }),
        projectJobResult: async (i: unknown) => {
          calls.push(['projectJobResult', i]);
          return { resources: 4, businesses: 1 };
        },
        indexLeads: async (i: unknown) => {
          calls.push(['indexLeads', i]);
          return { indexed: 1 };
        },
      },
      async (taskQueue) => {
        const done = await env.client.workflow.execute(runJob, {
          taskQueue,
          workflowId: `job/${jobId}`,
          args: [jobInput(jobId)],
        });
        // Indexing runs in the client's own workflow, which outlives the job's.
        while (!calls.some((c) => c[0] === 'indexLeads')) await new Promise((r) => setTimeout(r, 50));
        return done;
      },
    );
    expect(result.status).toBe('completed');
    expect(calls.map((c) => c[0])).toEqual(['startJob', 'completeJob', 'projectJobResult', 'indexLeads']);
    expect(calls.at(-1)).toEqual(['indexLeads', { clientId: 'cli_x' }]);

    const failing: Call[] = [];
    const id2 = randomUUID();
    const second = await withWorker(
      {
        ...lifecycle(failing),
        crawlSite: async () => ({ resultsCount: 1 }),
        projectJobResult: async () => {
          throw ApplicationFailure.nonRetryable('broken result', 'Broken');
        },
      },
      (taskQueue) =>
        env.client.workflow.execute(runJob, { taskQueue, workflowId: `job/${id2}`, args: [jobInput(id2)] }),
    );
    expect(second.status).toBe('completed');
    expect(failing.map((c) => c[0])).not.toContain('failJob');
  });

  test('a job cancelled before it started runs nothing', async () => {
    const calls: Call[] = [];
    const jobId = randomUUID();
    const result = await withWorker(
      {
        ...lifecycle(calls, false),
        crawlSite: async () => {
          throw new Error('must not run');
        },
      },
      (taskQueue) =>
        env.client.workflow.execute(runJob, { taskQueue, workflowId: `job/${jobId}`, args: [jobInput(jobId)] }),
    );
    expect(result.status).toBe('skipped');
    expect(calls.map((c) => c[0])).toEqual(['startJob']);
  });

  test('a permanent failure is recorded with its message and fails the workflow', async () => {
    const calls: Call[] = [];
    const jobId = randomUUID();
    const run = withWorker(
      {
        ...lifecycle(calls),
        crawlSite: async () => {
          throw ApplicationFailure.nonRetryable('connection timeout to example.com', 'Unreachable');
        },
      },
      (taskQueue) =>
        env.client.workflow.execute(runJob, { taskQueue, workflowId: `job/${jobId}`, args: [jobInput(jobId)] }),
    );
    await expect(run).rejects.toBeInstanceOf(WorkflowFailedError);
    expect(calls.at(-1)).toEqual(['failJob', { jobId, errorMessage: 'connection timeout to example.com' }]);
  });

  test('cancelling a running job cancels the activity and records the cancellation', async () => {
    const calls: Call[] = [];
    const jobId = randomUUID();
    let activityCancelledAt = 0;
    const crawlSite = async () => {
      calls.push(['crawlSite', 'started']);
      const ctx = Context.current();
      try {
        for (;;) {
          ctx.heartbeat();
          await ctx.sleep(200);
        }
      } finally {
        activityCancelledAt = Date.now();
      }
    };
    const outcome = await withWorker({ ...lifecycle(calls), crawlSite }, async (taskQueue) => {
      const handle = await env.client.workflow.start(runJob, {
        taskQueue,
        workflowId: `job/${jobId}`,
        args: [jobInput(jobId)],
      });
      while (!calls.some((c) => c[0] === 'crawlSite')) await new Promise((r) => setTimeout(r, 50));
      const cancelledAt = Date.now();
      await handle.cancel();
      const err = await handle.result().catch((e: unknown) => e);
      return { err, cancelledAt };
    });
    expect(outcome.err).toBeInstanceOf(WorkflowFailedError);
    expect(activityCancelledAt - outcome.cancelledAt).toBeLessThan(3000);
    expect(calls.map((c) => c[0])).toEqual(['startJob', 'crawlSite', 'cancelJob']);
  });

  test('a worker lost in every attempt does not fail the job: the activity is scheduled again with fresh attempts', async () => {
    const calls: Call[] = [];
    const jobId = randomUUID();
    // The first three attempts go silent (no heartbeat), as a SIGKILLed worker's do; the fourth one works.
    const crawlSite = async () => {
      const ctx = Context.current();
      calls.push(['crawlSite', ctx.info.attempt]);
      if (calls.filter((c) => c[0] === 'crawlSite').length <= 3) await ctx.sleep(4000);
      return { resultsCount: 2 };
    };
    const result = await withWorker({ ...lifecycle(calls), crawlSite }, (taskQueue) =>
      env.client.workflow.execute(runJob, {
        taskQueue,
        workflowId: `job/${jobId}`,
        args: [jobInput(jobId, { activityMs: 300_000, deadlineMs: 600_000, heartbeatMs: 1000 })],
      }),
    );
    expect(result).toEqual({ jobId, status: 'completed', resultsCount: 2 });
    // Three attempts of the first schedule (2 s and 4 s apart), then the first attempt of the second.
    expect(calls.filter((c) => c[0] === 'crawlSite').map((c) => c[1])).toEqual([1, 2, 3, 1]);
    expect(calls.map((c) => c[0])).not.toContain('failJob');
  }, 60_000);

  test('a job that outlives its deadline is stopped and fails saying it ran out of time', async () => {
    const calls: Call[] = [];
    const jobId = randomUUID();
    let activityCancelled = false;
    // A crawl that would go on for minutes, heartbeating as real ones do.
    const crawlSite = async () => {
      calls.push(['crawlSite', 'started']);
      const ctx = Context.current();
      try {
        for (;;) {
          ctx.heartbeat();
          await ctx.sleep(200);
        }
      } catch (err) {
        activityCancelled = true;
        throw err;
      }
    };
    const outcome = await withWorker({ ...lifecycle(calls), crawlSite }, async (taskQueue) => {
      const err = await env.client.workflow
        .execute(runJob, {
          taskQueue,
          workflowId: `job/${jobId}`,
          args: [jobInput(jobId, { activityMs: 300_000, deadlineMs: 2000 })],
        })
        .catch((e: unknown) => e);
      // While the worker still runs: its activity learns of the cancel through its next heartbeat.
      for (let i = 0; i < 50 && !activityCancelled; i++) await new Promise((r) => setTimeout(r, 100));
      return { err, activityCancelled };
    });
    const message = "crawlSite ran out of time: the job's 2 seconds limit was reached before it finished";
    expect(outcome.err).toBeInstanceOf(WorkflowFailedError);
    expect((outcome.err as WorkflowFailedError).cause?.message).toBe(message);
    expect(calls.map((c) => c[0])).toEqual(['startJob', 'crawlSite', 'failJob']);
    expect(calls.at(-1)).toEqual(['failJob', { jobId, errorMessage: message }]);
    expect(outcome.activityCancelled).toBe(true);
  });
});
