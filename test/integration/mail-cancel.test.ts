import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { CancelledFailure } from '@temporalio/common';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import { MailWorkflows } from '../../api/mail-service';
import { ClientRepository } from '../../db/repositories/clients';
import type { MessageRow } from '../../db/repositories/mail';
import { mailSyncScheduleId } from '../../workflows/mail';
import { bearer, ownQueues, startTestApi, type TestApi } from '../support/api';
import { caller, type Caller } from '../support/jobs';
import { startTestWorker, type TestWorker } from '../support/worker';

// Mail cancels through a real worker (test/support/worker.ts: the production activities and
// workflows on this file's own mail task queue) on the stack's Temporal and Postgres, the real API
// starting the work, and stand-in mail servers on 127.0.0.1 that stall mid-session. The spec's
// cancel limit: the activity stops within 3 s, timed from before the cancel request.
// MockActivityEnvironment (mail-activities.test.ts) fires the abort signal at once; here a cancel
// reaches the activity only as Temporal delivers it, in the answer to a heartbeat.
// The mail workflows' activity calls use the SDK's effective default cancellation type, TRY_CANCEL:
// the workflow ends as cancelled at once and the activity hears of it at its next heartbeat (the
// server then answers that the workflow is gone). So the workflow's end says nothing about the
// activity; what the stand-in servers and the rows see afterwards does.
// MAIL_TIMEOUT_MS is long so that no client-side timeout ends a stall before the cancel does.
const SETTINGS = {
  RATE_LIMIT_ENABLED: 'false',
  USER_URL_ALLOW_HOSTS: '127.0.0.0/8',
  MAIL_TIMEOUT_MS: '60000',
  ...ownQueues('mail-cancel'),
};
const CANCEL_LIMIT_MS = 3000;
/** How long a test waits for a cancelled workflow (or activity) to end before calling it hung: a failure with a message, not a Jest timeout. */
const GIVE_UP_MS = 15_000;
/** How long a stall lasts before the cancel: past the first heartbeats, as a real hang would be. */
const STALL_MS = 1500;
const run = process.env.LEADJOBS_TEST_RUN ?? String(Date.now());

let api: TestApi;
let worker: TestWorker;

/** What the stand-in SMTP server accepted: one entry per DATA, its Message-ID and RCPT TOs. */
const accepted: { messageId: string; to: string[] }[] = [];
/** RCPT TOs of these addresses get no answer until released: a server that hangs mid-transaction. */
const stallRcpt = new Set<string>();
const stalledRcpts: { address: string; answer: (err?: Error | null) => void }[] = [];
/** The recipient of each copy of the message the server accepted. */
const copiesOf = (messageId: string) =>
  accepted.filter((a) => a.messageId.replace(/^<|>$/g, '') === messageId.replace(/^<|>$/g, '')).flatMap((a) => a.to);
let smtp: SMTPServer;
let smtpPort: number;

/** The stand-in IMAP server's sessions: whether the client began the UID/size listing, and when the session closed. */
interface ImapSession {
  socket: Socket;
  listing: boolean;
  closedAt?: number;
}
const imapSessions: ImapSession[] = [];
let imap: Server;
let imapPort: number;

beforeAll(async () => {
  // Logs anyone in, accepts every message except that RCPT TO of an address in stallRcpt is left unanswered.
  smtp = new SMTPServer({
    authMethods: ['PLAIN', 'LOGIN'],
    allowInsecureAuth: true,
    hideSTARTTLS: true,
    disableReverseLookup: true,
    logger: false,
    onAuth(auth, _session, callback) {
      callback(null, { user: auth.username });
    },
    onRcptTo(address, _session, callback) {
      const rcpt = address.address.toLowerCase();
      if (stallRcpt.has(rcpt)) stalledRcpts.push({ address: rcpt, answer: callback });
      else callback();
    },
    onData(stream, session: SMTPServerSession, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString();
        accepted.push({
          messageId: /^message-id:\s*(\S+)/im.exec(raw)?.[1] ?? '',
          to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
        });
        callback();
      });
    },
  });
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
  smtpPort = (smtp.server.address() as AddressInfo).port;

  // Answers login and SELECT, then never answers the UID/size listing: a server slow to list a large mailbox.
  imap = createServer((s) => {
    const session: ImapSession = { socket: s, listing: false };
    imapSessions.push(session);
    s.on('error', () => undefined);
    s.on('close', () => (session.closedAt = Date.now()));
    s.write('* OK [CAPABILITY IMAP4rev1 AUTH=PLAIN] ready\r\n');
    let pending = '';
    s.on('data', (d: Buffer) => {
      pending += d.toString();
      for (let end = pending.indexOf('\r\n'); end >= 0; end = pending.indexOf('\r\n')) {
        const line = pending.slice(0, end);
        pending = pending.slice(end + 2);
        const [tag = '', command = ''] = line.split(' ');
        if (/^(SELECT|EXAMINE)$/i.test(command))
          s.write(
            `* 3 EXISTS\r\n* OK [UIDVALIDITY 7] ok\r\n* OK [UIDNEXT 4] ok\r\n${tag} OK [READ-WRITE] selected\r\n`,
          );
        else if (/^\S+ UID FETCH /i.test(line)) session.listing = true;
        else s.write(`${tag} OK done\r\n`);
      }
    });
  });
  await new Promise<void>((r) => imap.listen(0, '127.0.0.1', r));
  imapPort = (imap.address() as AddressInfo).port;

  api = await startTestApi(SETTINGS);
  worker = await startTestWorker({ types: [], identity: 'mail-cancel-test', overrides: SETTINGS });
});

afterAll(async () => {
  // Whatever a failed test left hanging: the stalled SMTP transactions refused, the IMAP sessions hung up.
  for (const s of stalledRcpts.splice(0))
    s.answer(Object.assign(new Error('4.3.2 shutting down'), { responseCode: 421 }));
  for (const s of imapSessions) s.socket.destroy();
  await worker?.stop();
  await api?.close();
  await new Promise((r) => imap?.close(r));
  await new Promise((r) => smtp?.close(() => r(undefined)));
});

async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * `POST .../sync`, asked again as a client would (at most three times, after its Retry-After) while
 * it answers 503: the trigger's Temporal calls have a 5 s deadline each, which a loaded CI machine
 * once missed; the cancel, not the trigger's speed, is what this file tests.
 */
async function triggerSync(c: Caller, mailboxId: number): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    const res = await c.post(`/api/v1/mail/mailboxes/${mailboxId}/sync`, {});
    if (res.status !== 503 || attempt === 3) return res;
    await new Promise((r) => setTimeout(r, 1000 * Math.min(5, Number(res.headers.get('retry-after')) || 1)));
  }
}

/** How the workflow ended, and when (ms since the epoch, this process's clock); 'still running' after GIVE_UP_MS. */
async function outcome(handle: WorkflowHandle): Promise<{ error: unknown; at: number }> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<{ error: unknown; at: number }>((resolve) => {
    timer = setTimeout(() => resolve({ error: 'still running', at: Date.now() }), GIVE_UP_MS);
  });
  try {
    return await Promise.race([
      handle.result().then(
        () => ({ error: 'completed', at: Date.now() }),
        (error: unknown) => ({ error, at: Date.now() }),
      ),
      hung,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The workflow passed the cancel on to its activity (and did not see it fail or time out first). */
async function cancelPassedOn(
  handle: WorkflowHandle,
): Promise<{ cancelRequested: boolean; failedOrTimedOut: boolean }> {
  const events = (await handle.fetchHistory()).events ?? [];
  return {
    cancelRequested: events.some((e) => e.activityTaskCancelRequestedEventAttributes),
    failedOrTimedOut: events.some((e) => e.activityTaskFailedEventAttributes || e.activityTaskTimedOutEventAttributes),
  };
}

const sleepUntil = (at: number) => new Promise((r) => setTimeout(r, Math.max(0, at - Date.now())));

async function newCaller(): Promise<Caller & { clientId: string }> {
  const creds = await api.newClient('mail cancel');
  return { ...caller(api, bearer(creds)), clientId: creds.client_id };
}

test('real worker: a send stuck on an SMTP server that stopped answering, cancelled, ends as cancelled; its activity has stopped 3 s after the cancel, the message stays queued, and a later send skips the recipient already accepted', async () => {
  const c = await newCaller();
  const address = `sender-${run}-${randomUUID().slice(0, 8)}@mail.test`;
  const created = await c.post('/api/v1/mail/mailboxes', {
    address,
    smtp: { host: '127.0.0.1', port: smtpPort, secure: false, username: address, password: 'any' },
  });
  expect(created.status).toBe(201);
  const mailboxId = (await c.json<{ mailbox: { id: number } }>(created)).mailbox.id;
  const [first, stuck, last] = ['first', 'stuck', 'last'].map(
    (n) => `${n}-${run}-${randomUUID().slice(0, 8)}@example.com`,
  ) as [string, string, string];
  stallRcpt.add(stuck);

  // One SMTP transaction per recipient: the first is accepted, the server hangs at the second's RCPT TO.
  const res = await c.post('/api/v1/mail/messages', {
    mailbox_id: mailboxId,
    to: [first, stuck, last],
    subject: 'cancel me',
    text: 'hello',
  });
  expect(res.status).toBe(202);
  const message = (await c.json<{ message: { id: number; message_id: string } }>(res)).message;
  await waitFor('the server to hang at the second recipient', () =>
    stalledRcpts.some((s) => s.address === stuck) ? true : undefined,
  );
  expect(copiesOf(message.message_id)).toEqual([first]);
  await new Promise((r) => setTimeout(r, STALL_MS));

  // The API has no cancel route for a send: an operator cancels its workflow through Temporal (the client the API uses).
  const handle = api.deps.temporal.client.workflow.getHandle(`mail-send/${c.clientId}/${message.id}`);
  const before = Date.now();
  await handle.cancel();
  const ended = await outcome(handle);
  expect(ended.error).toBeInstanceOf(WorkflowFailedError);
  expect((ended.error as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
  expect((await handle.describe()).status.name).toBe('CANCELLED');
  expect(await cancelPassedOn(handle)).toEqual({ cancelRequested: true, failedOrTimedOut: false });

  // 3 s after the cancel the server refuses the hung transaction (421). An activity still waiting on it would now record that as the
  // message's send_error and fail; one that stopped has let go of it: nothing changes.
  await sleepUntil(before + CANCEL_LIMIT_MS);
  stallRcpt.delete(stuck);
  for (const s of stalledRcpts.splice(0))
    s.answer(Object.assign(new Error('4.3.2 try again later'), { responseCode: 421 }));
  await new Promise((r) => setTimeout(r, 1000));

  // Nothing half-done: the message is neither sent nor failed, only the recipient the server accepted is recorded, no other copy went out.
  const shown = (
    await c.json<{ message: { send_status: string; send_error: string | null } }>(
      await c.get(`/api/v1/mail/messages/${message.id}`),
    )
  ).message;
  expect(shown).toMatchObject({ send_status: 'queued', send_error: null });
  const row = (await api.deps.db('mail_messages').where({ id: message.id }).first()) as MessageRow;
  expect(Object.keys(row.delivery)).toEqual([first]);
  expect(copiesOf(message.message_id)).toEqual([first]);

  // The send starts again as the worker's mail reconciler restarts a queued message, the server answering now:
  // the other two get their copy, the one accepted before the cancel no second one.
  await new MailWorkflows(api.deps.temporal, api.deps.config, api.deps.logger).startSend(row);
  await waitFor('the message sent', async () =>
    (await c.json<{ message: { send_status: string } }>(await c.get(`/api/v1/mail/messages/${message.id}`))).message
      .send_status === 'sent'
      ? true
      : undefined,
  );
  expect(copiesOf(message.message_id).sort()).toEqual([first, stuck, last].sort());
}, 90_000);

test('real worker: deactivating a client cancels its IMAP sync stuck on a listing that never ends; the activity closes its connection within 3 s and the mailbox keeps its position', async () => {
  const c = await newCaller();
  const address = `syncer-${run}-${randomUUID().slice(0, 8)}@mail.test`;
  const server = { host: '127.0.0.1', secure: false, username: address, password: 'any' };
  const created = await c.post('/api/v1/mail/mailboxes', {
    address,
    smtp: { ...server, port: smtpPort },
    imap: { ...server, port: imapPort },
  });
  expect(created.status).toBe(201);
  const mailboxId = (await c.json<{ mailbox: { id: number } }>(created)).mailbox.id;
  const scheduleId = mailSyncScheduleId(c.clientId, mailboxId);
  try {
    const earlier = imapSessions.length;
    expect((await triggerSync(c, mailboxId)).status).toBe(202);
    const session = await waitFor('the sync to begin the listing', () =>
      imapSessions.slice(earlier).find((s) => s.listing),
    );
    await new Promise((r) => setTimeout(r, STALL_MS));
    const running = (await api.deps.temporal.client.schedule.getHandle(scheduleId).describe()).info.runningActions;
    expect(running).toHaveLength(1);
    const handle = api.deps.temporal.client.workflow.getHandle(
      running[0]?.workflow.workflowId ?? '',
      running[0]?.workflow.firstExecutionRunId,
    );

    // `npm run client:deactivate` (db/cli.ts) does just this; every worker's client watch hears it and cancels the sync under way.
    const before = Date.now();
    expect(await new ClientRepository(api.deps.db).setActive(c.clientId, false)).toBe(true);
    const ended = await outcome(handle);
    expect(ended.error).toBeInstanceOf(WorkflowFailedError);
    expect((ended.error as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    expect((await handle.describe()).status.name).toBe('CANCELLED');
    expect(await cancelPassedOn(handle)).toEqual({ cancelRequested: true, failedOrTimedOut: false });
    // The activity stopping is what the server sees: the worker hangs up.
    const closedAt = await waitFor('the sync to close its IMAP connection', () => session.closedAt, GIVE_UP_MS);
    expect(closedAt - before).toBeLessThan(CANCEL_LIMIT_MS);

    // Nothing half-done: no message stored, the position not moved, and a cancel is no sync error.
    await new Promise((r) => setTimeout(r, 500));
    const mailbox = (await api.deps.db('mail_mailboxes').where({ id: mailboxId }).first()) as {
      imap_last_uid: string;
      last_sync_error: string | null;
    };
    expect(Number(mailbox.imap_last_uid)).toBe(0);
    expect(mailbox.last_sync_error).toBeNull();
    expect(
      Number(
        (
          (await api.deps.db('mail_messages').where({ mailbox_id: mailboxId }).count({ n: '*' }).first()) as {
            n: string;
          }
        ).n,
      ),
    ).toBe(0);
  } finally {
    // The client is refused by the API now: its schedule goes directly.
    await api.deps.temporal.client.schedule
      .getHandle(scheduleId)
      .delete()
      .catch(() => undefined);
  }
}, 90_000);
