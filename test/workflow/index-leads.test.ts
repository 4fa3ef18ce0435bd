import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { indexLeads } from '../../workflows';
import { moreLeadsSignal } from '../../workflows/leads';
import { runWorkflowBundle } from '../support/workflow-bundle';
import { createLocalTemporal } from '../support/temporal';

// The client's lead-indexing workflow against a real Temporal dev server; the outbox is an
// in-memory queue that the fake indexLeads activity drains, at most 25 leads per call.
let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await createLocalTemporal();
}, 120000);
afterAll(() => env?.teardown());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test("a busy client's indexLeads continues as new with a bounded history, and every queued lead is indexed", async () => {
  const clientId = `cli_${randomUUID().slice(0, 8)}`;
  const workflowId = `leads-index/${clientId}`;
  const taskQueue = `wf-test-${randomUUID()}`;
  const queue: string[] = [];
  const indexed: string[] = [];
  const inputs: unknown[] = [];
  const activities = {
    indexLeads: async (i: { clientId?: string }) => {
      inputs.push(i);
      await sleep(30);
      const taken = queue.splice(0, 25);
      indexed.push(...taken);
      return { indexed: taken.length, more: queue.length > 0 };
    },
  };
  // As the API does it: the rows are queued first, then signalWithStart.
  const kick = () =>
    env.client.workflow.signalWithStart(indexLeads, {
      taskQueue,
      workflowId,
      args: [{ clientId, maxBatchesPerRun: 2 }],
      signal: moreLeadsSignal,
      signalArgs: [],
    });
  const queued: string[] = [];
  const enqueue = (n: number) => {
    for (let k = 0; k < n; k++) {
      const id = `lead-${queued.length}`;
      queued.push(id);
      queue.push(id);
    }
  };

  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await runWorkflowBundle(),
    activities,
  });
  await worker.runUntil(async () => {
    // An ICP change: more leads at once than one activity call takes (25), so passes follow each other.
    enqueue(120);
    await kick();
    // Then a stream of imports, each a signal, some arriving while a run continues as new.
    for (let k = 0; k < 40; k++) {
      enqueue(1);
      await kick();
      await sleep(k % 10 === 0 ? 60 : 5);
    }
    await env.client.workflow.getHandle(workflowId).result();
  });

  // Nothing was lost, nothing indexed twice.
  expect(indexed.sort()).toEqual([...queued].sort());
  expect(queue).toEqual([]);
  expect(new Set(inputs.map((i) => JSON.stringify(i)))).toEqual(new Set([JSON.stringify({ clientId })]));

  // Runs continued as new, none with more than its 2 passes, and the count was carried over: the
  // runs that finished (one, unless a pause of over a second let the workflow end between
  // signals) add up to every lead.
  const runs = [];
  for await (const run of env.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) runs.push(run);
  const continued = runs.filter((r) => r.status.name === 'CONTINUED_AS_NEW');
  const completed = runs.filter((r) => r.status.name === 'COMPLETED');
  expect(continued.length).toBeGreaterThanOrEqual(2);
  expect(continued.length + completed.length).toBe(runs.length);
  let total = 0;
  for (const run of runs) {
    const handle = env.client.workflow.getHandle(workflowId, run.runId, { followRuns: false });
    const passes = ((await handle.fetchHistory()).events ?? []).filter((e) => e.activityTaskScheduledEventAttributes);
    expect(passes.length).toBeLessThanOrEqual(2);
    if (run.status.name === 'COMPLETED') total += (await handle.result()).indexed;
  }
  expect(total).toBe(queued.length);
});
