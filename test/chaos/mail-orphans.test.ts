import { createServer, connect, type Server, type Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { ScheduleNotFoundError } from '@temporalio/client';
import { createDb, type Db } from '../../db';
import { ClientRepository } from '../../db/repositories/clients';
import { connectTemporalLazy, type Temporal } from '../../lib/temporal';
import { bearer, ownQueues, testConfig } from '../support/api';
import { startApiProcess, type ServiceProcess } from '../support/chaos';
import { devDovecot, startSmtpRelay, type DevDovecot, type SmtpRelay } from '../support/mail-servers';
import { freePort } from '../support/processes';
import { startTestWorker, type TestWorker } from '../support/worker';

// Issue 38 item 7, mail: the API stores a message (a mailbox) and then starts its send workflow (its
// sync schedule). The real API process (api/server.ts) reaches Temporal through a relay here that
// can stall, so that the start hangs after the commit; the API is SIGKILLed right then, and started
// again. The worker (real, on the stack's Temporal) reconciles: the message is sent, the mailbox syncs.
const env = {
  ...ownQueues('mail-orphans'),
  RATE_LIMIT_ENABLED: 'false',
  USER_URL_ALLOW_HOSTS: '127.0.0.0/8',
  MAIL_RECONCILE_INTERVAL_MS: '500',
};
jest.setTimeout(180_000);

/** A TCP relay to Temporal's frontend; `stall()` cuts its connections and lets new ones hang, `resume()` forwards again. */
async function startRelay(
  target: string,
): Promise<{ address: string; stall(): void; resume(): void; close(): Promise<void> }> {
  const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
  let stalled = false;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    if (stalled) return;
    const upstream = connect(port, host);
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = `127.0.0.1:${(server.address() as { port: number }).port}`;
  const cut = () => sockets.forEach((s) => s.destroy());
  return {
    address,
    stall: () => {
      stalled = true;
      cut();
    },
    resume: () => {
      stalled = false;
      cut();
    },
    close: async () => {
      cut();
      await new Promise((r) => server.close(r));
    },
  };
}

let db: Db;
let temporal: Temporal;
let worker: TestWorker;
let dovecot: DevDovecot;
let smtp: SmtpRelay;
let relay: Awaited<ReturnType<typeof startRelay>>;
let api: ServiceProcess | undefined;
let port: number;

beforeAll(async () => {
  const config = testConfig(env);
  db = createDb(config);
  temporal = connectTemporalLazy(config);
  dovecot = devDovecot();
  smtp = await startSmtpRelay(dovecot);
  relay = await startRelay(config.TEMPORAL_ADDRESS);
  worker = await startTestWorker({ types: [], identity: 'mail-orphans', overrides: env });
  port = await freePort();
  api = await startApiProcess(port, { ...env, TEMPORAL_ADDRESS: relay.address });
});
afterAll(async () => {
  await api?.kill('SIGKILL');
  await worker?.stop();
  await relay?.close();
  await smtp?.close();
  await temporal?.connection.close();
  await db?.destroy();
});

async function until<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 60_000,
  everyMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

const post = (auth: string, path: string, body: unknown) =>
  fetch(`http://127.0.0.1:${port}${path}`, {
    method: 'POST',
    headers: { authorization: auth, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

/** SIGKILLs the API once `committed` finds the row (its Temporal call is hanging behind the stalled relay), then starts it again. */
async function killBetween<T>(request: () => Promise<Response>, committed: () => Promise<T | undefined>): Promise<T> {
  relay.stall();
  const answered = request().then(
    (r) => r.status,
    () => 'connection lost',
  );
  const row = await until('the row committed', committed, 4_000, 20);
  await api?.kill('SIGKILL');
  // The start never answered: the process died with it.
  expect(await answered).toBe('connection lost');
  relay.resume();
  api = await startApiProcess(port, { ...env, TEMPORAL_ADDRESS: relay.address });
  return row;
}

const scheduleExists = async (id: string) => {
  try {
    await temporal.client.schedule.getHandle(id).describe();
    return true;
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) return undefined;
    throw err;
  }
};

test('an API killed between storing a message and starting its send: the message is still sent', async () => {
  const creds = await new ClientRepository(db).create('mail orphans');
  const auth = bearer(creds);
  const address = `orphan-${randomUUID().slice(0, 8)}@mail.test`;
  const server = (p: number) => ({
    host: '127.0.0.1',
    port: p,
    secure: false,
    username: address,
    password: dovecot.password,
  });
  const mailbox = await post(auth, '/api/v1/mail/mailboxes', { address, smtp: server(smtp.port) });
  expect(mailbox.status).toBe(201);
  const mailboxId = ((await mailbox.json()) as { mailbox: { id: number } }).mailbox.id;
  const to = `orphan-to-${randomUUID().slice(0, 8)}@mail.test`;

  const message = await killBetween(
    () =>
      post(auth, '/api/v1/mail/messages', {
        mailbox_id: mailboxId,
        to: [to],
        subject: 'sent after all',
        text: 'the API died after storing me',
      }),
    async () =>
      (await db('mail_messages').where({ mailbox_id: mailboxId, direction: 'outbound' }).first()) as
        { id: number; send_status: string } | undefined,
  );
  expect(message.send_status).toBe('queued');

  // What the client sees through the restarted API, and what the mail server got.
  const sent = await until(
    'the message sent',
    async () => {
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/mail/messages/${message.id}`, {
        headers: { authorization: auth },
      });
      const body = (await res.json()) as { message?: { send_status: string } };
      return body.message?.send_status === 'sent' ? body.message : undefined;
    },
    90_000,
    500,
  );
  expect(sent.send_status).toBe('sent');
  expect(smtp.received.filter((m) => m.envelope.to.includes(to)).map((m) => m.subject)).toEqual(['sent after all']);
});

test('an API killed between storing a mailbox with IMAP and creating its sync schedule: the schedule is created', async () => {
  const creds = await new ClientRepository(db).create('mail orphans');
  const auth = bearer(creds);
  const address = `orphan-box-${randomUUID().slice(0, 8)}@mail.test`;
  const server = (p: number) => ({
    host: '127.0.0.1',
    port: p,
    secure: false,
    username: address,
    password: dovecot.password,
  });
  const mailbox = await killBetween(
    () => post(auth, '/api/v1/mail/mailboxes', { address, smtp: server(smtp.port), imap: server(dovecot.imapPort) }),
    async () => (await db('mail_mailboxes').where({ address }).first()) as { id: number } | undefined,
  );
  const scheduleId = `mail-sync/${creds.client_id}/${mailbox.id}`;
  expect(await until('the sync schedule', () => scheduleExists(scheduleId), 90_000, 500)).toBe(true);
  // The client can remove it as any other (its schedule goes with it).
  const removed = await fetch(`http://127.0.0.1:${port}/api/v1/mail/mailboxes/${mailbox.id}`, {
    method: 'DELETE',
    headers: { authorization: auth },
  });
  expect(removed.status).toBeLessThan(300);
});
