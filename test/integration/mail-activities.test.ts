import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { CancelledFailure } from '@temporalio/activity';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createDeliverActivities } from '../../activities/mail/send';
import { createSyncActivities } from '../../activities/mail/sync';
import type { ActivityDeps } from '../../activities/deps';
import { createDb, type Db } from '../../db';
import { ClientRepository } from '../../db/repositories/clients';
import { MailRepository, SENT } from '../../db/repositories/mail';
import { UnsubscribeRepository } from '../../db/repositories/unsubscribe';
import { CredentialCipher } from '../../lib/cipher';
import { createLogger } from '../../lib/logger';
import { checkLogins } from '../../lib/mail/connect';
import { newMessageId } from '../../lib/mail/message-id';
import { AllowList, OutboundClient } from '../../lib/outbound';
import { Storage } from '../../lib/storage';
import { createSearchClient } from '../../search/client';
import { testConfig } from '../support/api';
import { devDovecot, startSmtpRelay, type SmtpRelay } from '../support/mail-servers';

// The mail activities in MockActivityEnvironment against the real Postgres: a cancel stops them
// within 3 s even when the server never answers, a sync heartbeats while it waits, a server cannot
// make them read more than MAIL_MAX_MESSAGE_BYTES (small here, so a literal past it is quick to
// send) whatever size it lists, and a repeat of a delivery sends nothing again.
// MockActivityEnvironment fires the abort signal itself, at once: its cancel tests check only how an
// activity reacts to the signal. Whether a cancel reaches the activity through a real worker
// (Temporal delivers it in a heartbeat's answer) is mail-cancel.test.ts.
const config = testConfig({
  USER_URL_ALLOW_HOSTS: '127.0.0.0/8',
  MAIL_TIMEOUT_MS: '60000',
  MAIL_MAX_MESSAGE_BYTES: String(64 * 1024),
});
let db: Db;
let deps: ActivityDeps;
let repo: MailRepository;
let relay: SmtpRelay;
let silent: Server;
let silentPort: number;
let slowList: Server;
let slowListPort: number;
let lying: Server;
let lyingPort: number;
/** Each huge literal the lying server began: the bytes it got to send, of its size. */
const hugeWrites: { sent: number; size: number }[] = [];
const sockets = new Set<Socket>();
let clientId: string;

/** Calls `handle` with each command line a fake IMAP server's client sends, its tag and its command word. */
function onCommands(s: Socket, handle: (line: string, tag: string, command: string) => void): void {
  let pending = '';
  s.on('data', (d: Buffer) => {
    pending += d.toString();
    for (let end = pending.indexOf('\r\n'); end >= 0; end = pending.indexOf('\r\n')) {
      const line = pending.slice(0, end);
      pending = pending.slice(end + 2);
      const [tag = '', command = ''] = line.split(' ');
      handle(line, tag, command);
    }
  });
}

beforeAll(async () => {
  db = createDb(config);
  deps = {
    config,
    db,
    storage: Storage.fromConfig(config),
    search: createSearchClient(config),
    logger: createLogger('silent'),
    http: OutboundClient.fromConfig(config),
    workerId: 'mail-activities',
  };
  repo = new MailRepository(db, new CredentialCipher(String(config.INTEGRATIONS_ENCRYPTION_KEY)));
  relay = await startSmtpRelay(devDovecot());
  // Accepts connections and never greets: an SMTP or IMAP server that hangs.
  silent = createServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  silentPort = (silent.address() as AddressInfo).port;
  // Answers login and SELECT, then never answers the UID/size listing: a server slow to list a large mailbox.
  slowList = createServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
    s.write('* OK [CAPABILITY IMAP4rev1 AUTH=PLAIN] ready\r\n');
    onCommands(s, (line, tag, command) => {
      if (/^(SELECT|EXAMINE)$/i.test(command))
        s.write(`* 3 EXISTS\r\n* OK [UIDVALIDITY 7] ok\r\n* OK [UIDNEXT 4] ok\r\n${tag} OK [READ-WRITE] selected\r\n`);
      else if (!/^\S+ UID FETCH /i.test(line)) s.write(`${tag} OK done\r\n`);
    });
  });
  await new Promise<void>((r) => slowList.listen(0, '127.0.0.1', r));
  slowListPort = (slowList.address() as AddressInfo).port;
  // Claims RFC822.SIZE 100 for every message, then sends UID 1 as a 2 MB literal (64 KiB every 20 ms)
  // and UID 2 as a small message; a LOGIN as huge-login@ gets a 2 MB literal too: a hostile server.
  lying = createServer((s) => {
    sockets.add(s);
    let open = true;
    s.on('error', () => undefined);
    s.on('end', () => (open = false));
    s.on('close', () => {
      open = false;
      sockets.delete(s);
    });
    const huge = async (head: string, tail: string) => {
      const body = Buffer.from(
        `Message-ID: <huge-${Date.now()}@mail.test>\r\nSubject: huge\r\n\r\n${`${'A'.repeat(78)}\r\n`.repeat(26000)}`,
      );
      s.write(`${head} {${body.length}}\r\n`);
      const write = { sent: 0, size: body.length };
      hugeWrites.push(write);
      while (open && write.sent < body.length) {
        s.write(body.subarray(write.sent, write.sent + 64 * 1024));
        write.sent = Math.min(body.length, write.sent + 64 * 1024);
        await new Promise((r) => setTimeout(r, 20));
      }
      if (open) s.write(tail);
    };
    const small = `Message-ID: <small-${Date.now()}@mail.test>\r\nSubject: after the huge one\r\nFrom: a@mail.test\r\n\r\nhello\r\n`;
    // No AUTH=PLAIN: imapflow logs in with LOGIN, which carries the username in the clear.
    s.write('* OK [CAPABILITY IMAP4rev1] ready\r\n');
    onCommands(s, (line, tag, command) => {
      const fetch = /^\S+ UID FETCH (\d+)(:\*)? /i.exec(line);
      if (/^(SELECT|EXAMINE)$/i.test(command))
        s.write(`* 2 EXISTS\r\n* OK [UIDVALIDITY 7] ok\r\n* OK [UIDNEXT 3] ok\r\n${tag} OK [READ-WRITE] selected\r\n`);
      else if (/^LOGIN$/i.test(command) && /huge-login@/.test(line))
        void huge('* ID ("name"', `)\r\n${tag} OK logged in\r\n`);
      else if (fetch && /RFC822\.SIZE/i.test(line)) {
        const from = Number(fetch[1]);
        s.write(
          `${[1, 2]
            .filter((uid) => (fetch[2] ? uid >= from : uid === from))
            .map((uid) => `* ${uid} FETCH (UID ${uid} RFC822.SIZE 100)\r\n`)
            .join('')}${tag} OK done\r\n`,
        );
      } else if (fetch && Number(fetch[1]) === 1) void huge('* 1 FETCH (UID 1 BODY[]', `)\r\n${tag} OK done\r\n`);
      else if (fetch)
        s.write(`* 2 FETCH (UID 2 BODY[] {${Buffer.byteLength(small)}}\r\n${small})\r\n${tag} OK done\r\n`);
      else s.write(`${tag} OK done\r\n`);
    });
  });
  await new Promise<void>((r) => lying.listen(0, '127.0.0.1', r));
  lyingPort = (lying.address() as AddressInfo).port;
  clientId = (await new ClientRepository(db).create('mail activities')).client_id;
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((r) => silent.close(r));
  await new Promise((r) => slowList.close(r));
  await new Promise((r) => lying.close(r));
  await relay.close();
  await Promise.allSettled([db.destroy(), deps.search.close(), deps.http.close()]);
});

const server = (port: number, password = devDovecot().password) => ({
  host: '127.0.0.1',
  port,
  secure: false,
  username: 'someone@mail.test',
  password,
});

async function outbound(mailboxId: number, address: string, to: string[]) {
  const { row } = await repo.insertMessage(
    clientId,
    mailboxId,
    {
      message_id: newMessageId(address),
      in_reply_to: null,
      references: [],
      from_address: address,
      to_addresses: to,
      cc_addresses: null,
      subject: 'hi',
      body_text: 'hello',
      body_html: null,
      date: new Date(),
    },
    { direction: 'outbound', folder: SENT, is_read: true, send_status: 'queued' },
  );
  return row;
}

async function failure(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

test('a cancel stops a delivery stuck on a silent SMTP server within 3 s', async () => {
  const box = await repo.createMailbox(clientId, { address: 'hang@mail.test', smtp: server(silentPort), imap: null });
  const m = await outbound(box.id, box.address, ['a@example.com']);
  const { deliverMailMessage } = createDeliverActivities(deps);
  const env = new MockActivityEnvironment();
  const running = env.run(deliverMailMessage, { clientId, messageId: m.id });
  await new Promise((r) => setTimeout(r, 1000));
  const cancelledAt = Date.now();
  env.cancel();
  expect(await failure(running)).toBeInstanceOf(CancelledFailure);
  expect(Date.now() - cancelledAt).toBeLessThan(3000);
  expect((await repo.findMessage(clientId, m.id))?.send_status).toBe('queued');
});

/** The one IMAP session opened since `earlier`: a cancel ends the activity within 3 s and closes it. */
async function cancelClosesSession(
  env: MockActivityEnvironment,
  running: Promise<unknown>,
  earlier: Set<Socket>,
): Promise<void> {
  const session = [...sockets].filter((s) => !earlier.has(s));
  expect(session).toHaveLength(1);
  const cancelledAt = Date.now();
  env.cancel();
  expect(await failure(running)).toBeInstanceOf(CancelledFailure);
  expect(Date.now() - cancelledAt).toBeLessThan(3000);
  await new Promise((r) => setTimeout(r, 200));
  expect(sockets.has(session[0] as Socket)).toBe(false);
}

test('a sync stuck on a silent IMAP server heartbeats all the while, and a cancel closes its connection within 3 s', async () => {
  const box = await repo.createMailbox(clientId, {
    address: 'hang-imap@mail.test',
    smtp: server(relay.port),
    imap: server(silentPort),
  });
  const { syncMailboxInbox } = createSyncActivities(deps);
  const env = new MockActivityEnvironment();
  const beats: unknown[] = [];
  env.on('heartbeat', (d: unknown) => beats.push(d));
  const earlier = new Set(sockets);
  const running = env.run(syncMailboxInbox, { clientId, mailboxId: box.id });
  await new Promise((r) => setTimeout(r, 2000));
  // Still connecting: a step that can outlast the workflow's heartbeat timeout must beat on its own.
  expect(beats.length).toBeGreaterThanOrEqual(3);
  await cancelClosesSession(env, running, earlier);
  // No heartbeat after the end.
  const count = beats.length;
  await new Promise((r) => setTimeout(r, 1000));
  expect(beats.length).toBe(count);
});

test('a sync heartbeats through a listing that never ends, and a cancel closes its connection within 3 s', async () => {
  const box = await repo.createMailbox(clientId, {
    address: 'slow-list@mail.test',
    smtp: server(relay.port),
    imap: server(slowListPort),
  });
  const { syncMailboxInbox } = createSyncActivities(deps);
  const env = new MockActivityEnvironment();
  const beats: { step: string }[] = [];
  env.on('heartbeat', (d: { step: string }) => beats.push(d));
  const earlier = new Set(sockets);
  const running = env.run(syncMailboxInbox, { clientId, mailboxId: box.id });
  const listingBy = Date.now() + 10000;
  while (!beats.some((b) => b.step === 'listing') && Date.now() < listingBy)
    await new Promise((r) => setTimeout(r, 50));
  const listingFrom = beats.length;
  await new Promise((r) => setTimeout(r, 1500));
  expect(beats.slice(listingFrom).filter((b) => b.step === 'listing').length).toBeGreaterThanOrEqual(2);
  await cancelClosesSession(env, running, earlier);
  // The mailbox is where it was: nothing listed, nothing skipped.
  expect(Number((await repo.findMailbox(clientId, box.id))?.imap_last_uid)).toBe(0);
});

test('a message that arrives larger than MAIL_MAX_MESSAGE_BYTES despite its size claim is skipped as oversized, and the sync goes on past it', async () => {
  const box = await repo.createMailbox(clientId, {
    address: `lying-${Date.now()}@mail.test`,
    smtp: server(relay.port),
    imap: server(lyingPort),
  });
  const { syncMailboxInbox } = createSyncActivities(deps);
  const writes = hugeWrites.length;
  expect(await new MockActivityEnvironment().run(syncMailboxInbox, { clientId, mailboxId: box.id })).toEqual({
    stored: 1,
    known: 0,
    skipped: 1,
  });
  // The worker hung up at the literal's announced size instead of reading the 2 MB.
  await new Promise((r) => setTimeout(r, 100));
  expect(hugeWrites.slice(writes)).toHaveLength(1);
  expect(hugeWrites[writes]?.sent).toBeLessThan(hugeWrites[writes]?.size ?? 0);
  const { messages } = await repo.listMessages(clientId, { mailbox_id: box.id, page: 1, page_size: 10 });
  expect(messages.map((m) => m.subject)).toEqual(['after the huge one']);
  const synced = await repo.findMailbox(clientId, box.id);
  expect(Number(synced?.imap_last_uid)).toBe(2);
  expect(synced?.last_sync_error).toBeNull();
  // The next run does not try it again.
  expect(await new MockActivityEnvironment().run(syncMailboxInbox, { clientId, mailboxId: box.id })).toEqual({
    stored: 0,
    known: 0,
    skipped: 0,
  });
  expect(hugeWrites).toHaveLength(writes + 1);
});

test('a mailbox login check fails at an oversized literal from the IMAP server instead of reading it', async () => {
  const writes = hugeWrites.length;
  const result = await checkLogins(
    { smtp: server(relay.port), imap: { ...server(lyingPort), username: 'huge-login@mail.test' } },
    new AllowList(config.USER_URL_ALLOW_HOSTS),
    10000,
  );
  expect(result.smtp.ok).toBe(true);
  expect(result.imap).toEqual({
    ok: false,
    error: expect.stringMatching(/^IMAP: Literal size \d+ exceeds/) as unknown,
  });
  await new Promise((r) => setTimeout(r, 100));
  expect(hugeWrites.slice(writes)).toHaveLength(1);
  expect(hugeWrites[writes]?.sent).toBeLessThan(hugeWrites[writes]?.size ?? 0);
});

test('a recipient who unsubscribed after the send was accepted gets no copy; the others do', async () => {
  const box = await repo.createMailbox(clientId, {
    address: `late-${Date.now()}@mail.test`,
    smtp: server(relay.port),
    imap: null,
  });
  const keep = `keep-${Date.now()}@mail.test`;
  const gone = `gone-${Date.now()}@mail.test`;
  const m = await outbound(box.id, box.address, [keep, gone]);
  await new UnsubscribeRepository(db).apply({
    clientId,
    email: gone,
    list: 'general',
    scope: 'list',
    source: 'page',
    ipAddress: null,
    userAgent: null,
  });
  const { deliverMailMessage } = createDeliverActivities(deps);
  expect(await new MockActivityEnvironment().run(deliverMailMessage, { clientId, messageId: m.id })).toEqual({
    sent: 1,
  });
  expect(relay.received.filter((r) => r.headerLines['message-id'] === m.message_id).map((r) => r.envelope.to)).toEqual([
    [keep],
  ]);
  expect((await repo.findMessage(clientId, m.id))?.delivery[gone]).toMatchObject({ reason: 'unsubscribed' });

  // Only unsubscribed recipients left: the message fails instead of going nowhere.
  const alone = await outbound(box.id, box.address, [gone]);
  const err = await failure(new MockActivityEnvironment().run(deliverMailMessage, { clientId, messageId: alone.id }));
  expect(err).toMatchObject({ type: 'MailRejected', nonRetryable: true });
});

test('a delivery run again after the server accepted sends nothing twice', async () => {
  const box = await repo.createMailbox(clientId, {
    address: `once-${Date.now()}@mail.test`,
    smtp: server(relay.port),
    imap: null,
  });
  const to = [`r1-${Date.now()}@mail.test`, `r2-${Date.now()}@mail.test`];
  const m = await outbound(box.id, box.address, to);
  const { deliverMailMessage } = createDeliverActivities(deps);
  expect(await new MockActivityEnvironment().run(deliverMailMessage, { clientId, messageId: m.id })).toEqual({
    sent: 2,
  });
  // As if the worker had died after the accept and Temporal retried the activity: the recorded state wins.
  await db('mail_messages').where({ id: m.id }).update({ send_status: 'queued' });
  expect(await new MockActivityEnvironment().run(deliverMailMessage, { clientId, messageId: m.id })).toEqual({
    sent: 0,
  });
  expect(relay.received.filter((r) => r.headerLines['message-id'] === m.message_id)).toHaveLength(2);
  const row = await repo.findMessage(clientId, m.id);
  expect(row?.send_status).toBe('sent');
  expect(Object.keys(row?.delivery ?? {}).sort()).toEqual([...to].sort());
});
