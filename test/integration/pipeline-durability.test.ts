import type { ChildProcess } from 'node:child_process';
import type { WorkflowResults } from '../../jobs/workflow';
import { bearer, ownQueues, startTestApi, type TestApi } from '../support/api';
import { caller, waitForStatus } from '../support/jobs';
import { spawnWorkerProcess } from '../support/processes';
import { startTestWorker } from '../support/worker';
import { startDnsStandIn, type DnsStandIn } from '../stand-ins/dns';
import {
  leedsBakeries,
  startGooglePlacesStandIn,
  type GooglePlacesStandIn,
  type StandInPlace,
} from '../stand-ins/google-places';
import { startLeadSites, type LeadSites } from '../stand-ins/lead-sites';
import { startSmtpStandIn, type SmtpStandIn } from '../stand-ins/smtp';

// A worker SIGKILLed while a pipeline's site stage is in flight: another worker finishes the
// pipeline; nothing is lost and nothing is done or stored twice.
const KEY = 'AIzaStandInKey-0123456789';
const MAIL_DOMAIN = 'durable.test';

let api: TestApi;
let places: GooglePlacesStandIn;
let sites: LeadSites;
let dns: DnsStandIn;
let smtp: SmtpStandIn;
const children: ChildProcess[] = [];

beforeAll(async () => {
  [places, sites, smtp] = await Promise.all([
    startGooglePlacesStandIn({ apiKey: KEY, places: [] }),
    startLeadSites(),
    startSmtpStandIn({ catchAllDomain: 'catchall.test' }),
  ]);
  dns = await startDnsStandIn({
    [MAIL_DOMAIN]: { mx: [{ exchange: `mx.${MAIL_DOMAIN}`, priority: 10 }] },
    [`mx.${MAIL_DOMAIN}`]: { a: [smtp.address] },
  });
});

afterAll(async () => {
  children.forEach((p) => p.kill('SIGKILL'));
  await api?.close();
  await Promise.all([places?.close(), sites?.close(), dns?.close(), smtp?.close()]);
});

async function workerProcess(identity: string, env: Record<string, string>): Promise<ChildProcess> {
  const child = await spawnWorkerProcess(identity, ['crawlMaps', 'crawlSite', 'crawlVerify'], env);
  children.push(child);
  return child;
}

function addPlace(n: number, website: string): string {
  const template: StandInPlace = { ...(leedsBakeries(1)[0] as StandInPlace) };
  const id = `ChIJdurablepipeline${String(n).padStart(4, '0')}`;
  places.places.push({
    ...template,
    id,
    displayName: { text: `Durable Bakery ${n}`, languageCode: 'en' },
    websiteUri: website,
    types: ['durablebakery'],
    primaryType: 'durablebakery',
    photos: [],
    reviews: [],
  });
  return id;
}

test('a worker killed mid-pipeline loses nothing and duplicates nothing', async () => {
  const env = {
    ...ownQueues('pipeline-durable'),
    RATE_LIMIT_ENABLED: 'false',
    GOOGLE_PLACES_BASE_URL: places.baseUrl,
    GOOGLE_PLACES_API_KEY: KEY,
    DNS_SERVERS: dns.server,
    SMTP_PROBE_PORT: String(smtp.port),
    SMTP_HELO_NAME: 'probe.leadjobs.test',
    USER_URL_ALLOW_HOSTS: '127.0.0.0/8',
  };
  api = await startTestApi(env);
  const c = caller(api, bearer(await api.newClient()));
  const doomed = await workerProcess('doomed-pipeline-worker', env);
  const fastUrl = await sites.ownHost({ emails: `alice@${MAIL_DOMAIN}` });
  // Its page takes 6 s: the worker dies while it waits for it.
  const slowUrl = await sites.ownHost({ delay_ms: 6000, emails: `bob@${MAIL_DOMAIN}` });
  const fast = addPlace(1, fastUrl);
  const slow = addPlace(2, slowUrl);
  const submitted = await c.post('/api/v1/jobs/crawlMaps/submit', {
    search_query: 'durablebakery in Leeds',
    max_results: 10,
    workflow: { enabled: true },
  });
  const { job_id: jobId } = await c.json<{ job_id: string }>(submitted);
  await waitForStatus(c, jobId, ['completed'], 60_000);
  // The fast site is crawled and verified, the slow one in flight.
  const db = api.deps.db;
  for (let i = 0; i < 300; i++) {
    const verified = await db('workflow_businesses')
      .where({ job_id: jobId, place_id: fast, verify_status: 'completed' })
      .first();
    if (verified && sites.requests(slowUrl).length > 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(sites.requests(slowUrl)).toHaveLength(1);
  doomed.kill('SIGKILL');

  const survivor = await startTestWorker({
    types: ['crawlMaps', 'crawlSite', 'crawlVerify'],
    identity: 'survivor-pipeline-worker',
    overrides: env,
  });
  try {
    // The lost site attempt is noticed by its heartbeat timeout (20 s), then retried on the survivor.
    const body = await c.json<WorkflowResults>(await c.get(`/api/v1/jobs/${jobId}/workflow-results`));
    expect(body).toMatchObject({
      status: 'completed',
      success: true,
      businesses_total: 2,
      spidersite_completed: 2,
      spiderverify_completed: 2,
      total_valid_emails: 2,
    });
    // The killed attempt's crawl was redone; the finished site was neither crawled nor verified again.
    expect(sites.requests(slowUrl)).toHaveLength(2);
    expect(sites.requests(fastUrl)).toHaveLength(1);
    expect(smtp.sessions.filter((s) => s.rcpts.some((r) => r.address === `alice@${MAIL_DOMAIN}`))).toHaveLength(1);
    expect(await db('job_workflows').where({ job_id: jobId })).toHaveLength(1);
    expect(
      (await db('workflow_businesses').where({ job_id: jobId }).orderBy('position')).map(
        (r: { place_id: string }) => r.place_id,
      ),
    ).toEqual([fast, slow]);
    const events = await db('events').where({ job_id: jobId }).orderBy('id').pluck('name');
    expect(events).toEqual(['job.queued', 'job.started', 'job.completed']);
    const client = (await db('jobs').where({ id: jobId }).first('client_id')) as { client_id: string };
    for (const place of [fast, slow]) {
      expect(
        await db('idap_resources')
          .where({ client_id: client.client_id, resource_type: 'businesses' })
          .whereRaw(`data->>'place_id' = ?`, [place]),
      ).toHaveLength(1);
    }
  } finally {
    await survivor.stop();
  }
}, 150_000);
