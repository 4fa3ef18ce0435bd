import { bearer, ownQueues, startTestApi, type TestApi } from '../support/api';
import { caller, waitForStatus } from '../support/jobs';
import { startTestWorker } from '../support/worker';
import { startLeadSites, type LeadSites } from '../stand-ins/lead-sites';

let api: TestApi;
let sites: LeadSites;
beforeAll(async () => {
  sites = await startLeadSites();
});
afterAll(async () => {
  await api?.close();
  await sites.close();
});

describe('priority', () => {
  test('with a backlog and no worker, priority-10 jobs start before priority-0 jobs', async () => {
    const queues = ownQueues('priority');
    api = await startTestApi({ RATE_LIMIT_ENABLED: 'false', ...queues });
    const c = caller(api, bearer(await api.newClient()));
    const ids: Record<number, string[]> = { 0: [], 10: [] };
    // Low priority first, so submission order alone would run them first.
    for (let i = 0; i < 8; i++) {
      const priority = i < 4 ? 0 : 10;
      const res = await c.post('/api/v1/jobs/crawlSite/submit', { priority, payload: { url: sites.url() } });
      ids[priority]?.push((await c.json<{ job_id: string }>(res)).job_id);
    }
    // One slot each: the worker takes tasks strictly in the order the queue hands them out.
    const worker = await startTestWorker({
      types: ['crawlSite'],
      identity: 'priority-worker',
      overrides: queues,
      maxConcurrentActivities: 1,
      maxConcurrentWorkflowTasks: 1,
    });
    try {
      for (const id of [...(ids[0] ?? []), ...(ids[10] ?? [])]) await waitForStatus(c, id, ['completed'], 60000);
    } finally {
      await worker.stop();
    }
    const started = async (list: string[] = []) =>
      (await api.deps.db('jobs').whereIn('id', list).pluck('started_at')).map((d: Date) => new Date(d).getTime());
    const high = await started(ids[10]);
    const low = await started(ids[0]);
    expect(Math.max(...high)).toBeLessThan(Math.min(...low));
  });
});
