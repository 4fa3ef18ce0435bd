import { randomUUID } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import type { PipelinePlan } from '../../activities/pipeline/pipeline';
import { runJob } from '../../workflows';
import { runWorkflowBundle } from '../support/workflow-bundle';
import { HEARTBEAT_INTERVAL } from '../../jobs/limits';
import { createLocalTemporal } from '../support/temporal';

// runJob with RunJobInput.pipeline and runLeadPipeline's own logic, against a real Temporal dev
// server; activities are recording fakes on one task queue.
let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await createLocalTemporal();
}, 120000);
afterAll(() => env?.teardown());

type Call = [string, unknown];

function fakes(
  calls: Call[],
  taskQueue: string,
  plan: Partial<PipelinePlan>,
  site: (origin: string) => Promise<{ status: string; emailsFound: number }>,
) {
  return {
    startJob: async (i: { jobId: string }) => {
      calls.push(['startJob', i]);
      return { run: true, status: 'processing', type: 'crawlMaps', clientId: 'cli_x', payload: {} };
    },
    crawlSite: async () => ({ resultsCount: 3 }),
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
      return { status: 'completed' };
    },
    projectJobResult: async () => ({ resources: 0, businesses: 0 }),
    indexLeads: async () => ({ indexed: 0, more: false }),
    startPipeline: async (i: unknown): Promise<PipelinePlan> => {
      calls.push(['startPipeline', i]);
      return {
        limits: { siteMs: 60_000, verifyMs: 60_000, overallMs: 60_000 },
        concurrency: 2,
        startedAt: Date.now(),
        verifyEnabled: true,
        queues: { site: taskQueue, verify: taskQueue },
        businesses: [
          { placeId: 'p1', origin: 'https://a.example', filtered: false },
          { placeId: 'p2', origin: null, filtered: true },
          { placeId: 'p3', origin: 'https://a.example', filtered: false },
          { placeId: 'p4', origin: 'https://b.example', filtered: false },
        ],
        ...plan,
      };
    },
    crawlBusinessSite: async (i: { origin: string }) => {
      calls.push(['crawlBusinessSite', i.origin]);
      return site(i.origin);
    },
    verifyBusinessEmails: async (i: { origin: string }) => {
      calls.push(['verifyBusinessEmails', i.origin]);
      return { status: 'completed', valid: 1 };
    },
    recordStageEnd: async (i: { origin: string; stage: string; status: string }) => {
      calls.push(['recordStageEnd', [i.origin, i.stage, i.status]]);
    },
    failPipeline: async (i: { errorMessage: string }) => {
      calls.push(['failPipeline', i.errorMessage]);
    },
    finishPipeline: async (i: { outcome: string }) => {
      calls.push(['finishPipeline', i.outcome]);
      return { status: i.outcome === 'deadline' ? 'partial' : 'completed', businesses: 0 };
    },
  };
}

async function withWorker<T>(
  activities: (taskQueue: string) => object,
  fn: (taskQueue: string) => Promise<T>,
): Promise<T> {
  const taskQueue = `wf-test-${randomUUID()}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await runWorkflowBundle(),
    activities: activities(taskQueue),
    defaultHeartbeatThrottleInterval: HEARTBEAT_INTERVAL.ms,
    maxHeartbeatThrottleInterval: HEARTBEAT_INTERVAL.ms,
  });
  return worker.runUntil(fn(taskQueue));
}

const input = (jobId: string) => ({
  jobId,
  clientId: 'cli_x',
  type: 'crawlSite' as const,
  limits: { activityMs: 60_000, deadlineMs: 600_000 },
  pipeline: true,
});

describe('runLeadPipeline', () => {
  test('runJob runs the pipeline as job/<id>/pipeline after completing; each site is crawled once, then verified; filtered ones never', async () => {
    const calls: Call[] = [];
    const jobId = randomUUID();
    const result = await withWorker(
      (q) =>
        fakes(calls, q, {}, async (origin) => ({
          status: 'completed',
          emailsFound: origin === 'https://a.example' ? 2 : 0,
        })),
      async (taskQueue) => {
        const done = await env.client.workflow.execute(runJob, {
          taskQueue,
          workflowId: `job/${jobId}`,
          args: [input(jobId)],
        });
        const child = await env.client.workflow.getHandle(`job/${jobId}/pipeline`).describe();
        expect(child.status.name).toBe('COMPLETED');
        return done;
      },
    );
    expect(result).toMatchObject({ status: 'completed' });
    const names = calls.map((c) => c[0]);
    expect(names.indexOf('completeJob')).toBeLessThan(names.indexOf('startPipeline'));
    expect(
      calls
        .filter((c) => c[0] === 'crawlBusinessSite')
        .map((c) => c[1])
        .sort(),
    ).toEqual(['https://a.example', 'https://b.example']);
    // b.example found no e-mails: nothing to verify.
    expect(calls.filter((c) => c[0] === 'verifyBusinessEmails').map((c) => c[1])).toEqual(['https://a.example']);
    expect(calls.at(-1)).toEqual(['finishPipeline', 'done']);
  });

  test('at the overall deadline the hanging site is cancelled and the pipeline finishes with outcome deadline', async () => {
    const calls: Call[] = [];
    const jobId = randomUUID();
    let cancelled = false;
    const hang = async () => {
      const ctx = Context.current();
      const beat = setInterval(() => ctx.heartbeat(), 200);
      try {
        await ctx.cancelled;
      } catch (err) {
        cancelled = true;
        throw err;
      } finally {
        clearInterval(beat);
      }
      return { status: 'completed', emailsFound: 0 };
    };
    await withWorker(
      (q) =>
        fakes(calls, q, { limits: { siteMs: 60_000, verifyMs: 60_000, overallMs: 2000 } }, async (origin) =>
          origin === 'https://b.example' ? hang() : { status: 'failed', emailsFound: 0 },
        ),
      (taskQueue) =>
        env.client.workflow.execute(runJob, { taskQueue, workflowId: `job/${jobId}`, args: [input(jobId)] }),
    );
    expect(cancelled).toBe(true);
    expect(calls.at(-1)).toEqual(['finishPipeline', 'deadline']);
    expect(calls.some((c) => c[0] === 'verifyBusinessEmails')).toBe(false);
  });

  test('a pipeline that fails for good is recorded as failed with its reason; the maps job stays completed', async () => {
    const calls: Call[] = [];
    const jobId = randomUUID();
    const result = await withWorker(
      (q) => ({
        ...fakes(calls, q, {}, async () => ({ status: 'completed', emailsFound: 0 })),
        startPipeline: async () => {
          throw ApplicationFailure.nonRetryable('the stored maps result is gone', 'NotFound');
        },
      }),
      (taskQueue) =>
        env.client.workflow.execute(runJob, { taskQueue, workflowId: `job/${jobId}`, args: [input(jobId)] }),
    );
    expect(result).toMatchObject({ status: 'completed' });
    const failed = calls.filter((c) => c[0] === 'failPipeline');
    expect(failed).toHaveLength(1);
    expect(failed[0]?.[1]).toMatch(/^the pipeline failed: .*the stored maps result is gone/);
    expect(calls.map((c) => c[0])).not.toContain('failJob');
  });
});
