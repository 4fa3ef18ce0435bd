import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { bearer, ownQueues, startTestApi, type TestApi } from '../support/api';
import { caller, waitForStatus, type Caller } from '../support/jobs';
import { startTestWorker, type TestWorker } from '../support/worker';
import { startLeadSites, type LeadSites } from '../stand-ins/lead-sites';
import { createDb, migrateLatest } from '../../db';
import { ClientRepository } from '../../db/repositories/clients';
import { credentialsSealedAt, IntegrationRepository } from '../../db/repositories/integrations';
import { MailRepository, passwordSealedAt } from '../../db/repositories/mail';
import { secretSealedAt, WebhookRepository } from '../../db/repositories/webhooks';
import { CredentialCipher } from '../../lib/cipher';
import {
  startWebhookReceiver,
  verifySignature,
  type ReceivedWebhook,
  type WebhookReceiver,
} from '../stand-ins/webhook-receiver';

// Webhooks through the real API and a real worker (its dispatcher and the delivery workflows)
// against a receiver on 127.0.0.1. Retries start after half a second here instead of ten.
let api: TestApi;
let worker: TestWorker;
let sites: LeadSites;
let receiver: WebhookReceiver;
beforeAll(async () => {
  sites = await startLeadSites();
  receiver = await startWebhookReceiver();
  api = await startTestApi({ RATE_LIMIT_ENABLED: 'false', ...ownQueues('webhooks') });
  worker = await startTestWorker({
    types: ['crawlSite'],
    identity: 'webhooks-test-worker',
    overrides: {
      ...ownQueues('webhooks'),
      WEBHOOK_RETRY_INITIAL_SECONDS: '0.5',
      WEBHOOK_DISABLE_AFTER_FAILURES: '3',
      WEBHOOK_DISPATCH_INTERVAL_MS: '200',
    },
  });
});
afterAll(async () => {
  await worker.stop();
  await api.close();
  await receiver.close();
  await sites.close();
});

const newCaller = async (): Promise<Caller> => caller(api, bearer(await api.newClient()));

async function createWebhook(
  c: Caller,
  body: Record<string, unknown>,
): Promise<{ webhook_id: string; secret: string }> {
  const res = await c.post('/api/v1/webhooks', body);
  expect(res.status).toBe(201);
  return c.json(res);
}

async function waitFor<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 30000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The operator's `npm run integrations:reseal` (db/cli.ts), on this run's schema unless `env` names another; its report. */
async function resealCli(env: Record<string, string> = {}): Promise<string> {
  const { stderr } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', 'db/cli.ts', 'integrations:reseal'],
    { cwd: path.join(__dirname, '../..'), env: { ...process.env, ...env } },
  );
  return stderr;
}

/** A webhook's `secret` column as a database dump shows it. */
const storedSecret = async (webhookId: string) =>
  String(((await api.deps.db('webhooks').where({ id: webhookId }).first()) as { secret: string }).secret);

const received = (path: string, count: number) =>
  waitFor(`${count} request(s) on ${path}`, () =>
    receiver.received(path).length >= count ? receiver.received(path) : undefined,
  );

test('a completed crawlSite job is delivered as job.completed, signed with the secret from the create response', async () => {
  const c = await newCaller();
  const path = `/hooks/${randomUUID()}`;
  const created = await c.post('/api/v1/webhooks', {
    url: receiver.url(path),
    events: ['job.completed'],
    description: 'CRM sync',
  });
  expect(created.status).toBe(201);
  const hook = await c.json<Record<string, unknown>>(created);
  expect(hook).toEqual({
    webhook_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    url: receiver.url(path),
    events: ['job.completed'],
    description: 'CRM sync',
    active: true,
    consecutive_failures: 0,
    created_at: expect.any(String),
    secret: expect.stringMatching(/^whsec_[0-9a-f]{64}$/),
  });

  const submitted = await c.json<{ job_id: string }>(
    await c.post('/api/v1/jobs/crawlSite/submit', { payload: { url: sites.url({ leads: 2 }) } }),
  );
  await waitForStatus(c, submitted.job_id, ['completed']);
  const [delivery] = await received(path, 1);
  const got = delivery as ReceivedWebhook;
  // Only the subscribed event: job.queued and job.started were not asked for.
  expect(got.body).toMatchObject({
    event: 'job.completed',
    data: { job_id: submitted.job_id, type: 'crawlSite', status: 'completed', results_count: 1 },
  });
  expect(got.headers['x-leadjobs-event']).toBe('job.completed');
  expect(got.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  // `data` as on the event stream: the event's id and time in it too.
  expect(got.body.data).toMatchObject({ event_id: expect.any(Number), created_at: got.body.created_at });
  expect(verifySignature(String(hook.secret), got.headers['x-leadjobs-signature'] as string, got.raw)).toBe(true);
  expect(verifySignature('whsec_wrong', got.headers['x-leadjobs-signature'] as string, got.raw)).toBe(false);

  // The receiver has answered; the worker logs the attempt a moment later.
  const log = await waitFor('the delivery to be logged as delivered', async () => {
    const body = await c.json<{ deliveries: Record<string, unknown>[]; total: number }>(
      await c.get(`/api/v1/webhooks/${String(hook.webhook_id)}/deliveries`),
    );
    return body.deliveries[0]?.status === 'delivered' ? body : undefined;
  });
  expect(log.total).toBe(1);
  expect(log.deliveries[0]).toMatchObject({
    delivery_id: got.body.id,
    event: 'job.completed',
    status: 'delivered',
    attempts: [{ attempt: 1, status_code: 200, error: null }],
  });
});

test('the signing secret is stored sealed: the row does not show the secret the create response gave', async () => {
  const c = await newCaller();
  const hook = await createWebhook(c, { url: 'https://hooks.example.com/at-rest', events: ['job.completed'] });
  const dump = (await api.deps.db.raw('SELECT t::text AS row FROM webhooks t WHERE id = ?', [hook.webhook_id])) as {
    rows: { row: string }[];
  };
  expect(dump.rows).toHaveLength(1);
  expect(dump.rows[0]?.row).not.toContain(hook.secret.slice('whsec_'.length));
  // Sealed with the run's INTEGRATIONS_ENCRYPTION_KEY, as the LLM keys and mailbox passwords are.
  expect(await storedSecret(hook.webhook_id)).toMatch(
    new RegExp(`^v2\\.${new CredentialCipher(String(process.env.INTEGRATIONS_ENCRYPTION_KEY)).keyId}\\.`),
  );
});

test('a secret stored in plaintext before sealing, or sealed with a previous key, still signs; a reseal seals both with the current key', async () => {
  const c = await newCaller();
  const legacyPath = `/legacy/${randomUUID()}`;
  const rotatedPath = `/rotated/${randomUUID()}`;
  const legacy = await createWebhook(c, { url: receiver.url(legacyPath), events: ['job.queued'] });
  // A row written the old way: the secret itself.
  const legacySecret = `whsec_${randomBytes(32).toString('hex')}`;
  await api.deps.db('webhooks').where({ id: legacy.webhook_id }).update({ secret: legacySecret });
  await c.post('/api/v1/jobs/crawlSite/submit', { payload: { url: sites.url() } });
  const [before] = await received(legacyPath, 1);
  expect(verifySignature(legacySecret, before?.headers['x-leadjobs-signature'] as string, before?.raw ?? '')).toBe(
    true,
  );

  // Created after that job's events, so that it gets no delivery until it is re-sealed: the worker lacks the old key.
  const rotated = await createWebhook(c, { url: receiver.url(rotatedPath), events: ['job.queued'] });
  const oldKey = randomBytes(32).toString('base64');
  await api.deps
    .db('webhooks')
    .where({ id: rotated.webhook_id })
    .update({
      secret: new CredentialCipher(oldKey).seal(
        rotated.secret,
        secretSealedAt(
          String((await api.deps.db('webhooks').where({ id: rotated.webhook_id }).first())?.client_id),
          rotated.webhook_id,
        ),
      ),
    });

  // The client's rows only: other test files share the schema, and seal credentials of their own with
  // keys this run does not have (the CLI, which reseals every client's, is tested on a schema of its own below).
  const current = new CredentialCipher(String(process.env.INTEGRATIONS_ENCRYPTION_KEY), [oldKey]);
  const resealer = new WebhookRepository(api.deps.db, api.deps.config.DATABASE_SCHEMA, current);
  const clientId = String((await api.deps.db('webhooks').where({ id: legacy.webhook_id }).first())?.client_id);
  expect(await resealer.reseal(clientId)).toEqual({ resealed: 2, unopenable: [] });
  for (const [id, secret] of [
    [legacy.webhook_id, legacySecret],
    [rotated.webhook_id, rotated.secret],
  ] as const) {
    const stored = await storedSecret(id);
    expect(stored.startsWith(`v2.${current.keyId}.`)).toBe(true);
    expect(stored).not.toContain(secret.slice('whsec_'.length));
  }
  expect(await resealer.reseal(clientId)).toEqual({ resealed: 0, unopenable: [] });

  await c.post('/api/v1/jobs/crawlSite/submit', { payload: { url: sites.url() } });
  const [, after] = await received(legacyPath, 2);
  expect(verifySignature(legacySecret, after?.headers['x-leadjobs-signature'] as string, after?.raw ?? '')).toBe(true);
  const [first] = await received(rotatedPath, 1);
  expect(verifySignature(rotated.secret, first?.headers['x-leadjobs-signature'] as string, first?.raw ?? '')).toBe(
    true,
  );
});

test('npm run integrations:reseal seals the plaintext webhook secrets of its schema and says how many', async () => {
  const schema = `reseal_${randomBytes(4).toString('hex')}`;
  const db = createDb({ ...api.deps.config, DATABASE_SCHEMA: schema });
  try {
    await migrateLatest(db, schema);
    const creds = await new ClientRepository(db).create('reseal client');
    const { webhook, secret } = await new WebhookRepository(db, schema).create(creds.client_id, 'q', {
      url: 'https://hooks.example.com/x',
      events: ['job.queued'],
    });
    expect(webhook.secret).toBe(secret);
    expect(await resealCli({ DATABASE_SCHEMA: schema })).toMatch(/ and 1 webhook secret\(s\) with key /);
    const stored = String(((await db('webhooks').where({ id: webhook.id }).first()) as { secret: string }).secret);
    expect(stored.startsWith('v2.')).toBe(true);
    expect(
      new WebhookRepository(
        db,
        schema,
        new CredentialCipher(String(process.env.INTEGRATIONS_ENCRYPTION_KEY)),
      ).signingSecret({ ...webhook, secret: stored }),
    ).toBe(secret);
    expect(await resealCli({ DATABASE_SCHEMA: schema })).toMatch(/ and 0 webhook secret\(s\) /);
  } finally {
    await db.raw('drop schema if exists ?? cascade', [schema]);
    await db.destroy();
  }
});

test('npm run integrations:reseal re-seals every value it can open, names the rows it cannot and exits 1', async () => {
  const schema = `reseal_${randomBytes(4).toString('hex')}`;
  const db = createDb({ ...api.deps.config, DATABASE_SCHEMA: schema });
  const currentKey = String(process.env.INTEGRATIONS_ENCRYPTION_KEY);
  const previousKey = randomBytes(32).toString('base64');
  const previous = new CredentialCipher(previousKey);
  // A key the command is not given: what it sealed cannot be opened.
  const lost = new CredentialCipher(randomBytes(32).toString('base64'));
  const server = (password: string) => ({
    host: 'mail.example.com',
    port: 587,
    secure: false,
    username: 'box',
    password,
  });
  try {
    await migrateLatest(db, schema);
    const { client_id: clientId } = await new ClientRepository(db).create('reseal client');
    // Created in this order, so that each table's unopenable row comes first.
    const llmLost = await new IntegrationRepository(db, lost, schema).create(
      clientId,
      'openai',
      { api_key: 'sk-lost-0123456789abcdef' },
      {},
    );
    const llmKept = await new IntegrationRepository(db, previous, schema).create(
      clientId,
      'openai',
      { api_key: 'sk-kept-0123456789abcdef' },
      {},
    );
    const boxLost = await new MailRepository(db, lost).createMailbox(clientId, {
      address: 'lost@example.com',
      smtp: server('lost-password'),
      imap: server('lost-password'),
    });
    const boxKept = await new MailRepository(db, previous).createMailbox(clientId, {
      address: 'kept@example.com',
      smtp: server('kept-password'),
      imap: server('kept-password'),
    });
    const hookLost = await new WebhookRepository(db, schema, lost).create(clientId, 'q', {
      url: 'https://hooks.example.com/lost',
      events: ['job.queued'],
    });
    const hookKept = await new WebhookRepository(db, schema, previous).create(clientId, 'q', {
      url: 'https://hooks.example.com/kept',
      events: ['job.queued'],
    });
    const hookPlain = await new WebhookRepository(db, schema).create(clientId, 'q', {
      url: 'https://hooks.example.com/plain',
      events: ['job.queued'],
    });
    const stored = async () => ({
      llm: (await db('llm_integrations').select('id', 'credentials_sealed')) as {
        id: number;
        credentials_sealed: string;
      }[],
      boxes: (await db('mail_mailboxes').select('id', 'smtp_password_sealed', 'imap_password_sealed')) as {
        id: number;
        smtp_password_sealed: string;
        imap_password_sealed: string;
      }[],
      hooks: (await db('webhooks').select('id', 'secret')) as { id: string; secret: string }[],
    });
    const before = await stored();

    const failed = (await resealCli({ DATABASE_SCHEMA: schema, INTEGRATIONS_PREVIOUS_KEYS: previousKey }).then(
      () => undefined,
      (err: unknown) => err,
    )) as { code?: number; stderr?: string } | undefined;
    // A script running the command notices.
    expect(failed?.code).toBe(1);
    const report = String(failed?.stderr);
    expect(report).toContain('re-sealed 1 credential(s), 2 mailbox password(s) and 2 webhook secret(s) with key ');
    for (const row of [
      `llm_integrations ${llmLost.id}`,
      `mail_mailboxes ${boxLost.id} (smtp password)`,
      `mail_mailboxes ${boxLost.id} (imap password)`,
      `webhooks ${hookLost.webhook.id}`,
    ])
      expect(report).toContain(row);
    for (const row of [
      `llm_integrations ${llmKept.id}`,
      `mail_mailboxes ${boxKept.id}`,
      `webhooks ${hookKept.webhook.id}`,
      `webhooks ${hookPlain.webhook.id}`,
    ])
      expect(report).not.toContain(row);
    // Never the values, sealed or not.
    for (const value of [
      'sk-lost',
      'lost-password',
      hookLost.secret,
      ...before.llm.map((r) => r.credentials_sealed),
      ...before.hooks.map((r) => r.secret),
    ])
      expect(report).not.toContain(value);

    // The others are sealed with the current key and open with it alone; the unopenable ones are left as they were.
    const current = new CredentialCipher(currentKey);
    const after = await stored();
    const llmAfter = new Map(after.llm.map((r) => [r.id, r.credentials_sealed]));
    expect(llmAfter.get(llmLost.id)).toBe(before.llm.find((r) => r.id === llmLost.id)?.credentials_sealed);
    expect(
      JSON.parse(current.open(String(llmAfter.get(llmKept.id)), credentialsSealedAt(clientId, llmKept.id))),
    ).toEqual({ api_key: 'sk-kept-0123456789abcdef' });
    const boxesAfter = new Map(after.boxes.map((r) => [r.id, r]));
    expect(boxesAfter.get(boxLost.id)).toEqual(before.boxes.find((r) => r.id === boxLost.id));
    const kept = boxesAfter.get(boxKept.id);
    expect([
      current.open(String(kept?.smtp_password_sealed), passwordSealedAt('smtp', clientId, boxKept.id)),
      current.open(String(kept?.imap_password_sealed), passwordSealedAt('imap', clientId, boxKept.id)),
    ]).toEqual(['kept-password', 'kept-password']);
    const hooksAfter = new Map(after.hooks.map((r) => [r.id, r.secret]));
    expect(hooksAfter.get(hookLost.webhook.id)).toBe(hookLost.webhook.secret);
    expect(
      current.open(String(hooksAfter.get(hookKept.webhook.id)), secretSealedAt(clientId, hookKept.webhook.id)),
    ).toBe(hookKept.secret);
    expect(
      current.open(String(hooksAfter.get(hookPlain.webhook.id)), secretSealedAt(clientId, hookPlain.webhook.id)),
    ).toBe(hookPlain.secret);
  } finally {
    await db.raw('drop schema if exists ?? cascade', [schema]);
    await db.destroy();
  }
});

test('a receiver answering 500 gets the same delivery again, and the log shows both attempts', async () => {
  const c = await newCaller();
  const path = `/flaky/${randomUUID()}`;
  const hook = await createWebhook(c, { url: receiver.url(path, [500]), events: ['job.queued'] });
  const submitted = await c.json<{ job_id: string }>(
    await c.post('/api/v1/jobs/crawlSite/submit', { payload: { url: sites.url() } }),
  );
  const [first, second] = await received(path, 2);
  expect(first?.status).toBe(500);
  expect(second?.status).toBe(200);
  expect(second?.body.id).toBe(first?.body.id);
  expect(second?.body).toMatchObject({ event: 'job.queued', data: { job_id: submitted.job_id } });
  expect(second?.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  // `data` as on the event stream, times as the API writes them everywhere (UTC, milliseconds, Z).
  expect(second?.body.data).toEqual({
    job_id: submitted.job_id,
    type: 'crawlSite',
    priority: expect.any(Number),
    event_id: expect.any(Number),
    created_at: second?.body.created_at,
  });
  for (const r of [first, second])
    expect(verifySignature(hook.secret, r?.headers['x-leadjobs-signature'] as string, r?.raw ?? '')).toBe(true);

  const log = await waitFor('the delivery to be logged as delivered', async () => {
    const body = await c.json<{
      deliveries: {
        status: string;
        attempts: { attempt: number; status_code: number | null; duration_ms: number }[];
      }[];
    }>(await c.get(`/api/v1/webhooks/${hook.webhook_id}/deliveries`));
    return body.deliveries[0]?.status === 'delivered' ? body : undefined;
  });
  expect(log.deliveries).toHaveLength(1);
  expect(log.deliveries[0]?.attempts).toEqual([
    expect.objectContaining({ attempt: 1, status_code: 500 }),
    expect.objectContaining({ attempt: 2, status_code: 200 }),
  ]);
  const hookNow = await c.json<Record<string, unknown>>(await c.get(`/api/v1/webhooks/${hook.webhook_id}`));
  expect(hookNow).toMatchObject({ active: true, consecutive_failures: 0 });
});

test("a webhook that keeps failing is disabled, and webhook.disabled is delivered to the client's other webhook", async () => {
  const c = await newCaller();
  const broken = `/broken/${randomUUID()}`;
  const watcher = `/watcher/${randomUUID()}`;
  const hook = await createWebhook(c, { url: receiver.url(broken, [500, 502, 503, 500, 500]), events: ['job.queued'] });
  await createWebhook(c, { url: receiver.url(watcher), events: ['webhook.disabled'] });
  await c.post('/api/v1/jobs/crawlSite/submit', { payload: { url: sites.url() } });

  const [notice] = await received(watcher, 1);
  expect(notice?.body).toMatchObject({
    event: 'webhook.disabled',
    data: { webhook_id: hook.webhook_id, consecutive_failures: 3 },
  });
  // WEBHOOK_DISABLE_AFTER_FAILURES=3: the third failure was the last attempt.
  expect(receiver.received(broken).map((r) => r.status)).toEqual([500, 502, 503]);
  const now = await c.json<Record<string, unknown>>(await c.get(`/api/v1/webhooks/${hook.webhook_id}`));
  expect(now).toMatchObject({ active: false, consecutive_failures: 3 });
  const log = await c.json<{ deliveries: { status: string; attempts: unknown[] }[] }>(
    await c.get(`/api/v1/webhooks/${hook.webhook_id}/deliveries`),
  );
  expect(log.deliveries[0]).toMatchObject({ status: 'failed' });
  expect(log.deliveries[0]?.attempts).toHaveLength(3);
});

test('a webhook to a private address is refused by the SSRF guard at delivery time, and the log says so', async () => {
  const c = await newCaller();
  // The test worker allows 127.0.0.0/8 (the stand-ins) only; the cloud metadata address stays blocked.
  const hook = await createWebhook(c, { url: 'http://169.254.169.254/latest/meta-data/', events: ['job.queued'] });
  await c.post('/api/v1/jobs/crawlSite/submit', { payload: { url: sites.url() } });
  const attempt = await waitFor('a logged attempt', async () => {
    const body = await c.json<{ deliveries: { attempts: { status_code: number | null; error: string | null }[] }[] }>(
      await c.get(`/api/v1/webhooks/${hook.webhook_id}/deliveries`),
    );
    return body.deliveries[0]?.attempts[0];
  });
  expect(attempt).toMatchObject({ status_code: null, error: expect.stringMatching(/^blocked: /) });
  // Refused attempts count as failures: the webhook is disabled after three (WEBHOOK_DISABLE_AFTER_FAILURES).
  await waitFor('the webhook to be disabled', async () =>
    (await c.json<{ active: boolean }>(await c.get(`/api/v1/webhooks/${hook.webhook_id}`))).active ? undefined : true,
  );
});

describe('the API', () => {
  test('lists and reads webhooks without their secret; another client gets 404 for them', async () => {
    const c = await newCaller();
    const other = await newCaller();
    const hook = await createWebhook(c, {
      url: 'https://hooks.example.com/leadjobs',
      events: ['job.completed', 'job.failed', 'job.completed'],
    });

    const list = await c.get('/api/v1/webhooks');
    expect(list.status).toBe(200);
    const listText = await list.text();
    expect(listText).not.toContain(hook.secret);
    expect(JSON.parse(listText)).toMatchObject({
      total: 1,
      webhooks: [{ webhook_id: hook.webhook_id, events: ['job.completed', 'job.failed'], active: true }],
    });
    const one = await c.get(`/api/v1/webhooks/${hook.webhook_id}`);
    expect(one.status).toBe(200);
    const oneText = await one.text();
    expect(oneText).not.toContain(hook.secret);
    expect(JSON.parse(oneText)).not.toHaveProperty('secret');

    for (const path of [
      `/api/v1/webhooks/${hook.webhook_id}`,
      `/api/v1/webhooks/${hook.webhook_id}/deliveries`,
      '/api/v1/webhooks/not-a-uuid',
    ]) {
      const res = await other.get(path);
      expect(res.status).toBe(404);
      expect(await other.json(res)).toEqual({ detail: 'webhook not found' });
    }
    expect((await other.del(`/api/v1/webhooks/${hook.webhook_id}`)).status).toBe(404);
    expect(await other.json(await other.get('/api/v1/webhooks'))).toMatchObject({ total: 0, webhooks: [] });

    expect((await c.del(`/api/v1/webhooks/${hook.webhook_id}`)).status).toBe(204);
    expect((await c.get(`/api/v1/webhooks/${hook.webhook_id}`)).status).toBe(404);
  });

  test('without INTEGRATIONS_ENCRYPTION_KEY the secret is stored as issued (plaintext), and the create response still shows it', async () => {
    const bare = await startTestApi({
      RATE_LIMIT_ENABLED: 'false',
      INTEGRATIONS_ENCRYPTION_KEY: '',
      ...ownQueues('webhooks'),
    });
    try {
      const hook = await createWebhook(caller(bare, bearer(await bare.newClient())), {
        url: 'https://hooks.example.com/no-key',
        events: ['job.completed'],
      });
      expect(hook.secret).toMatch(/^whsec_[0-9a-f]{64}$/);
      expect(await storedSecret(hook.webhook_id)).toBe(hook.secret);
    } finally {
      await bare.close();
    }
  });

  test('the delivery log is one snapshot: a delivery never shows a 200 attempt while still pending', async () => {
    // Found by CI: the log read the deliveries, then their attempts, in two statements; a success
    // committed between them showed `pending` with a 200 attempt.
    const credentials = await api.newClient();
    const c = caller(api, bearer(credentials));
    const hook = await createWebhook(c, { url: 'https://hooks.example.com/snapshot', events: ['job.completed'] });
    const repo = new WebhookRepository(api.deps.db, api.deps.config.DATABASE_SCHEMA);
    const rows = Array.from({ length: 40 }, (_, i) => ({
      id: randomUUID(),
      webhook_id: hook.webhook_id,
      client_id: credentials.client_id,
      event_id: i + 1,
      event: 'job.completed',
      task_queue: 'snapshot',
      body: {},
    }));
    await api.deps.db('webhook_deliveries').insert(rows);
    let recording = true;
    const record = (async () => {
      for (const row of rows) {
        const delivery = (await repo.delivery(row.id))?.delivery;
        if (delivery) await repo.recordSuccess(delivery, { attempt: 1, status_code: 200, error: null, duration_ms: 5 });
      }
      recording = false;
    })();
    const torn: unknown[] = [];
    while (recording) {
      const log = await c.json<{ deliveries: { status: string; attempts: { status_code: number | null }[] }[] }>(
        await c.get(`/api/v1/webhooks/${hook.webhook_id}/deliveries?page_size=100`),
      );
      for (const d of log.deliveries) if ((d.status === 'pending') !== (d.attempts.length === 0)) torn.push(d);
    }
    await record;
    expect(torn).toEqual([]);
    const done = await c.json<{ deliveries: { status: string }[] }>(
      await c.get(`/api/v1/webhooks/${hook.webhook_id}/deliveries?page_size=100`),
    );
    expect(done.deliveries.map((d) => d.status)).toEqual(rows.map(() => 'delivered'));
  });

  test.each([
    ['a non-http URL', { url: 'ftp://hooks.example.com/x', events: ['job.completed'] }, 'url'],
    ['a URL that is not one', { url: 'not a url', events: ['job.completed'] }, 'url'],
    ['an unknown event', { url: 'https://hooks.example.com/x', events: ['job.exploded'] }, 'events'],
    ['no events', { url: 'https://hooks.example.com/x', events: [] }, 'events'],
    ['an unknown field', { url: 'https://hooks.example.com/x', events: ['job.completed'], secret: 'mine' }, null],
  ])('%s is a 422 naming the field', async (_name, body, field) => {
    const c = await newCaller();
    const res = await c.post('/api/v1/webhooks', body);
    expect(res.status).toBe(422);
    const { detail } = await c.json<{ detail: { loc: (string | number)[]; msg: string }[] }>(res);
    expect(Array.isArray(detail)).toBe(true);
    if (field) expect(detail.map((d) => d.loc)).toContainEqual(expect.arrayContaining(['body', field]));
    expect(await c.json(await c.get('/api/v1/webhooks'))).toMatchObject({ total: 0 });
  });
});
