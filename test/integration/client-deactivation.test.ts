import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { ScheduleNotFoundError } from '@temporalio/client';
import { appendEvent } from '../../db/repositories/events';
import type { IssuedCredentials } from '../../lib/credentials';
import { bearer, ownQueues, startTestApi, type TestApi } from '../support/api';
import { caller, type Caller } from '../support/jobs';
import { devDovecot, startSmtpRelay, type DevDovecot, type SmtpRelay } from '../support/mail-servers';
import { startTestWorker, type TestWorker } from '../support/worker';
import { startWebhookReceiver, type WebhookReceiver } from '../stand-ins/webhook-receiver';

// Issue 38 item 12: `npm run client:deactivate` stops what a client has running, not only its new
// requests. Through the real API, a real worker (its dispatcher and the campaign, mail and webhook
// workflows), the stack's Temporal, Postgres and Dovecot, and a webhook receiver on 127.0.0.1.
const SETTINGS = {
  RATE_LIMIT_ENABLED: 'false',
  USER_URL_ALLOW_HOSTS: '127.0.0.0/8',
  WEBHOOK_DISPATCH_INTERVAL_MS: '200',
  ...ownQueues('deactivation'),
};
// Generous: the command itself (a tsx start) takes a few seconds of it.
const BOUND_MS = 10_000;
const run = process.env.LEADJOBS_TEST_RUN ?? String(Date.now());

let api: TestApi;
let worker: TestWorker;
let relay: SmtpRelay;
let dovecot: DevDovecot;
let receiver: WebhookReceiver;

beforeAll(async () => {
  dovecot = devDovecot();
  relay = await startSmtpRelay(dovecot);
  receiver = await startWebhookReceiver();
  api = await startTestApi(SETTINGS);
  worker = await startTestWorker({ types: [], identity: 'deactivation-test', overrides: SETTINGS });
});
afterAll(async () => {
  await worker?.stop();
  await api?.close();
  await relay?.close();
  await receiver?.close();
});

/** The operator's command (db/cli.ts) on this run's schema. */
async function cli(command: 'client:deactivate' | 'client:activate', clientId: string): Promise<void> {
  await promisify(execFile)(process.execPath, ['--import', 'tsx', 'db/cli.ts', command, '--client-id', clientId], {
    cwd: path.join(__dirname, '../..'),
    env: process.env,
  });
}

async function within<T>(what: string, deadline: number, probe: () => Promise<T | undefined>): Promise<T> {
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`not within the bound: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** An open event stream; `ended` resolves when the server ends it. */
async function openStream(
  creds: IssuedCredentials,
): Promise<{ status: number; ended: Promise<void>; connected: Promise<void>; abort: () => void }> {
  const controller = new AbortController();
  const res = await fetch(
    `${api.url}/api/v1/events/stream?token=${creds.client_id}:${creds.api_key}:${creds.api_secret}`,
    { signal: controller.signal },
  );
  if (!res.body)
    return { status: res.status, ended: Promise.resolve(), connected: Promise.resolve(), abort: () => undefined };
  const reader = res.body.getReader();
  let markConnected: () => void = () => undefined;
  const connected = new Promise<void>((resolve) => {
    markConnected = resolve;
  });
  const ended = (async () => {
    const decoder = new TextDecoder();
    let text = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        text += decoder.decode(value, { stream: true });
        if (text.includes('event: connected')) markConnected();
      }
    } catch {
      // aborted by the test
    }
  })();
  return { status: res.status, ended, connected, abort: () => controller.abort() };
}

const scheduleState = async (scheduleId: string): Promise<'paused' | 'running' | 'gone'> => {
  try {
    const d = await api.deps.temporal.client.schedule.getHandle(scheduleId).describe();
    return d.state.paused ? 'paused' : 'running';
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) return 'gone';
    throw err;
  }
};

const campaignStatus = async (id: string) =>
  String(((await api.deps.db('campaigns').where({ id }).first()) as { status: string }).status);
const deliveryStatuses = async (webhookId: string) =>
  (
    (await api.deps.db('webhook_deliveries').where({ webhook_id: webhookId }).orderBy('created_at')) as {
      event: string;
      status: string;
    }[]
  ).map((d) => `${d.event}:${d.status}`);

async function clientWithEverything(): Promise<{
  creds: IssuedCredentials;
  c: Caller;
  hookPath: string;
  webhookId: string;
  scheduleId: string;
  campaignId: string;
  mailboxId: number;
}> {
  const creds = await api.newClient('to deactivate');
  const c = caller(api, bearer(creds));
  const hookPath = `/hooks/${randomUUID()}`;
  const hook = await c.json<{ webhook_id: string }>(
    await c.post('/api/v1/webhooks', {
      url: receiver.url(hookPath),
      events: ['job.queued', 'job.completed', 'campaign.terminal'],
    }),
  );
  const address = `deactivated-${run}-${randomUUID().slice(0, 8)}@mail.test`;
  const created = await c.post('/api/v1/mail/mailboxes', {
    address,
    smtp: { host: '127.0.0.1', port: relay.port, secure: false, username: address, password: dovecot.password },
    imap: { host: '127.0.0.1', port: dovecot.imapPort, secure: false, username: address, password: dovecot.password },
  });
  expect(created.status).toBe(201);
  const mailboxId = (await c.json<{ mailbox: { id: number } }>(created)).mailbox.id;
  // auto_submit false: the campaign stays running, claiming nothing, until told (or cancelled).
  const campaign = await c.post('/api/v1/campaigns', {
    name: 'held',
    search_terms: ['bakery'],
    locations: [{ city: 'York', country: 'GB' }],
    auto_submit: false,
  });
  expect(campaign.status).toBe(201);
  const campaignId = (await c.json<{ campaign_id: string }>(campaign)).campaign_id;
  return {
    creds,
    c,
    hookPath,
    webhookId: hook.webhook_id,
    scheduleId: `mail-sync/${creds.client_id}/${mailboxId}`,
    campaignId,
    mailboxId,
  };
}

test('deactivating a client ends its open stream, pauses its mail sync, cancels its running campaign and stops its webhooks, within 10 s', async () => {
  const x = await clientWithEverything();
  const stream = await openStream(x.creds);
  expect(stream.status).toBe(200);
  await stream.connected;
  expect(await scheduleState(x.scheduleId)).toBe('running');
  expect(await campaignStatus(x.campaignId)).toBe('running');
  // The webhook works before: a job submitted is announced to the receiver (no worker runs crawlSite here).
  expect((await x.c.post('/api/v1/jobs/crawlSite/submit', { payload: { url: 'https://example.com/' } })).status).toBe(
    201,
  );
  await within('job.queued delivered before the deactivation', Date.now() + 30_000, async () =>
    receiver.received(x.hookPath).length >= 1 ? true : undefined,
  );

  let streamEnded = false;
  void stream.ended.then(() => {
    streamEnded = true;
  });
  const deadline = Date.now() + BOUND_MS;
  await cli('client:deactivate', x.creds.client_id);
  // What the worker writes for the client from here on (a job of it that finishes) is no longer sent.
  await api.deps.db.transaction((trx) =>
    appendEvent(trx, api.deps.config.DATABASE_SCHEMA, {
      clientId: x.creds.client_id,
      name: 'job.completed',
      data: { job_id: randomUUID(), status: 'completed' },
    }),
  );

  await within('the stream ended', deadline, async () => (streamEnded ? true : undefined));
  await within('the campaign no longer running', deadline, async () =>
    (await campaignStatus(x.campaignId)) !== 'running' ? true : undefined,
  );
  await within('the mail sync schedule paused or deleted', deadline, async () =>
    (await scheduleState(x.scheduleId)) !== 'running' ? true : undefined,
  );
  expect(await campaignStatus(x.campaignId)).toBe('cancelled');
  // Every delivery queued after the deactivation (job.completed, campaign.terminal) settles as cancelled, and none reached the receiver.
  const settled = await within('the deliveries after the deactivation settled', deadline, async () => {
    const all = await deliveryStatuses(x.webhookId);
    return all.length >= 3 && all.every((d) => !d.endsWith(':pending')) ? all : undefined;
  });
  expect([...settled].sort()).toEqual([
    'campaign.terminal:cancelled',
    'job.completed:cancelled',
    'job.queued:delivered',
  ]);
  expect(receiver.received(x.hookPath).map((r) => r.body.event)).toEqual(['job.queued']);
  // And the client itself is refused.
  expect((await x.c.get('/api/v1/campaigns')).status).toBe(403);
  stream.abort();

  // Re-activation (docs/security.md): the mail sync resumes; the cancelled campaign and the undelivered webhooks stay as they are.
  await cli('client:activate', x.creds.client_id);
  await within('the mail sync schedule running again', Date.now() + BOUND_MS, async () =>
    (await scheduleState(x.scheduleId)) === 'running' ? true : undefined,
  );
  expect(await campaignStatus(x.campaignId)).toBe('cancelled');
  expect((await x.c.get('/api/v1/campaigns')).status).toBe(200);
  const again = await openStream(x.creds);
  expect(again.status).toBe(200);
  await again.connected;
  again.abort();
  await again.ended;
  expect((await x.c.del(`/api/v1/mail/mailboxes/${x.mailboxId}`)).status).toBeLessThan(300);
}, 90_000);
