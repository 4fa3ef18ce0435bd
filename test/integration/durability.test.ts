import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { CATALOG } from '../../jobs';
import { jobTaskQueue } from '../../jobs/queues';
import { runJobInput } from '../../jobs/run-input';
import { runJob } from '../../workflows';
import { bearer, ownQueues, startTestApi, type TestApi } from '../support/api';
import { caller, waitForStatus } from '../support/jobs';
import { spawnWorkerProcess } from '../support/processes';
import { startTestWorker } from '../support/worker';
import { startLeadSites, type LeadSites } from '../stand-ins/lead-sites';

let api: TestApi;
let sites: LeadSites;
const children: ChildProcess[] = [];
beforeAll(async () => {
  sites = await startLeadSites();
});
afterAll(async () => {
  children.forEach((p) => p.kill('SIGKILL'));
  await api?.close();
  await sites.close();
});

async function workerProcess(identity: string, queues: Record<string, string>): Promise<ChildProcess> {
  const child = await spawnWorkerProcess(identity, ['crawlSite'], queues);
  children.push(child);
  return child;
}

describe('durability', () => {
  test('a worker killed mid-activity loses nothing: another worker finishes the job with exactly one result', async () => {
    const queues = ownQueues('durability');
    api = await startTestApi({ RATE_LIMIT_ENABLED: 'false', ...queues });
    const c = caller(api, bearer(await api.newClient()));
    const doomed = await workerProcess('doomed-worker', queues);
    // A site whose page takes 4 s: the worker dies while it waits for it.
    const url = sites.url({ delay_ms: 4000, leads: 2 });
    const { job_id } = await c.json<{ job_id: string }>(
      await c.post('/api/v1/jobs/crawlSite/submit', { payload: { url } }),
    );
    expect((await waitForStatus(c, job_id, ['processing'])).worker_id).toBe('doomed-worker');
    while (sites.requests(url).length === 0) await new Promise((r) => setTimeout(r, 50));
    doomed.kill('SIGKILL');

    const survivor = await startTestWorker({ types: ['crawlSite'], identity: 'survivor-worker', overrides: queues });
    try {
      // The lost attempt is noticed by its heartbeat timeout (20 s), then retried here.
      const done = await waitForStatus(c, job_id, ['completed', 'failed'], 90000);
      expect(done).toMatchObject({ status: 'completed', results_count: 1, worker_id: 'survivor-worker' });
      const results = await api.deps.db('job_results').where({ job_id });
      expect(results).toHaveLength(1);
      const site = new URL(url).searchParams.get('site');
      expect(results[0].data).toMatchObject({ emails: [`lead0@${site}.example`, `lead1@${site}.example`] });
      // The page was asked for again by the survivor: the killed attempt's work was redone, not lost.
      expect(sites.requests(url).length).toBe(2);
      const events = await api.deps.db('events').where({ job_id }).orderBy('id').pluck('name');
      expect(events).toEqual(['job.queued', 'job.started', 'job.completed']);
    } finally {
      await survivor.stop();
    }
  }, 120000);

  test('a workflow whose job row was never committed (the API died between workflow start and commit) ends within seconds', async () => {
    // startJob waits on the submission's lock: once it has it, a missing row will never appear.
    // It used to be retried 20 times (about 2.5 minutes) anyway.
    const queues = ownQueues('durability-orphan');
    api ??= await startTestApi({ RATE_LIMIT_ENABLED: 'false', ...queues });
    const worker = await startTestWorker({ types: ['crawlSite'], identity: 'orphan-worker', overrides: queues });
    try {
      const jobId = randomUUID();
      const handle = await api.deps.temporal.client.workflow.start(runJob, {
        taskQueue: jobTaskQueue(queues.TASK_QUEUE_PREFIX as string, CATALOG.crawlSite),
        workflowId: `job/${jobId}`,
        args: [
          runJobInput(
            { id: jobId, client_id: 'cli_orphan', type: 'crawlSite', payload: { url: sites.url() } },
            api.deps.config,
          ),
        ],
      });
      const outcome = await handle.result().then(
        () => 'completed',
        (err: unknown) => err,
      );
      expect(outcome).toBeInstanceOf(WorkflowFailedError);
      expect(String((outcome as WorkflowFailedError).cause?.message)).toContain(`job ${jobId} not found`);
      // Ended at once: startJob ran one attempt, not its 20 retries (Temporal records an activity's
      // last attempt in the history's started event). Counted, not timed.
      const { events } = await handle.fetchHistory();
      const scheduled = new Map(
        (events ?? [])
          .filter((e) => e.activityTaskScheduledEventAttributes)
          .map((e) => [String(e.eventId), e.activityTaskScheduledEventAttributes?.activityType?.name]),
      );
      const attempts = (events ?? []).flatMap((e) => {
        const run = e.activityTaskStartedEventAttributes;
        return run ? [[scheduled.get(String(run.scheduledEventId)), run.attempt]] : [];
      });
      expect(attempts.filter(([type]) => type === 'startJob')).toEqual([['startJob', 1]]);
      expect(await api.deps.db('jobs').where({ id: jobId })).toEqual([]);
    } finally {
      await worker.stop();
    }
  }, 60000);
});
