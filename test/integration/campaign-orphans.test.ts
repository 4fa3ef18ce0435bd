import { CampaignService } from '../../api/campaign-service';
import { campaignCreateBody } from '../../api/schemas/campaigns';
import { bearer, ownQueues, startTestApi, type TestApi } from '../support/api';
import { caller } from '../support/jobs';
import { startTestWorker, type TestWorker } from '../support/worker';

// Issue 38 item 7, campaigns: the API starts a campaign's workflow inside the transaction that
// inserts its row (a failed start stores nothing), so the workflow's first claim can run before
// that commit. Through the real stack: Temporal, Postgres, a worker on the campaigns queue (no
// crawlMaps worker: a claimed location's job just waits, queued).
const SETTINGS = { RATE_LIMIT_ENABLED: 'false', ...ownQueues('campaign-orphans') };

let api: TestApi;
let worker: TestWorker;
beforeAll(async () => {
  api = await startTestApi(SETTINGS);
  worker = await startTestWorker({ types: [], identity: 'campaign-orphans', overrides: SETTINGS });
});
afterAll(async () => {
  await worker?.stop();
  await api?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Until the workflow's claim activity has been handed to the worker (running, or retrying), or the workflow has closed. */
async function claimAttempted(workflowId: string): Promise<void> {
  const handle = api.deps.temporal.client.workflow.getHandle(workflowId);
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const d = await handle.describe();
    if (d.status.name !== 'RUNNING') return;
    const claim = d.raw.pendingActivities?.find((a) => a.activityType?.name === 'claimCampaignLocations');
    if (
      claim &&
      (Number(claim.attempt ?? 0) > 1 ||
        String(claim.state) === 'PENDING_ACTIVITY_STATE_STARTED' ||
        Number(claim.state) === 2)
    )
      return;
    await sleep(50);
  }
}

test('a campaign whose first claim runs before its row commits still runs: its location is claimed, the campaign is not left running with a dead workflow', async () => {
  const creds = await api.newClient();
  const c = caller(api, bearer(creds));
  // The API's own service, on the same stack, with the commit held back until the worker has tried
  // to claim (a slow commit: a busy database, a long location list).
  const service = new CampaignService(api.deps.db, api.deps.temporal, api.deps.config, api.deps.logger);
  const create = service.repo.create.bind(service.repo);
  service.repo.create = (campaign, locations, start, maxRunning) =>
    create(
      campaign,
      locations,
      async (row) => {
        await start(row);
        await claimAttempted(row.workflow_id);
      },
      maxRunning,
    );
  const row = await service.create(
    creds.client_id,
    campaignCreateBody.parse({
      name: 'slow commit',
      search_terms: ['bakery'],
      locations: [{ city: 'York', country: 'GB' }],
    }),
  );

  // What the client sees: its location is submitted as a job (no crawlMaps worker runs it here).
  const deadline = Date.now() + 30_000;
  let items: { jobs: { status: string; job_id: string | null }[] } = { jobs: [] };
  while (Date.now() < deadline) {
    items = await c.json(await c.get(`/api/v1/jobs/crawlMaps/campaigns/${row.id}/jobs`));
    if (items.jobs[0]?.status === 'submitted') break;
    await sleep(200);
  }
  expect(items.jobs).toEqual([expect.objectContaining({ status: 'submitted', job_id: expect.any(String) })]);
  const d = await api.deps.temporal.client.workflow.getHandle(row.workflow_id).describe();
  expect(d.status.name).toBe('RUNNING');

  // And the client can cancel it as any other (a dead workflow's campaign could only be cancelled in its rows).
  expect((await c.post(`/api/v1/campaigns/${row.id}/cancel`, {})).status).toBe(200);
  expect((await c.json<{ status: string }>(await c.get(`/api/v1/campaigns/${row.id}`))).status).toBe('cancelled');
  // No crawlMaps worker here to take the child job's cancel: both workflows go.
  const jobId = String(items.jobs[0]?.job_id);
  await api.deps.temporal.client.workflow
    .getHandle(`job/${jobId}`)
    .terminate('test over')
    .catch(() => undefined);
  await api.deps.temporal.client.workflow
    .getHandle(row.workflow_id)
    .terminate('test over')
    .catch(() => undefined);
}, 90_000);
