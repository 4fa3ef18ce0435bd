import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** Recipients (local parts at any domain but the catch-all one) and what the server says to them. */
export const MAILBOXES = {
  /** 250: the mailbox exists. */
  accept: ['alice', 'bob', 'info', 'owner', 'ceo'],
  /** 451 on the first session that asks, 250 afterwards (a greylister that lets a retry through). */
  greylistOnce: ['grey'],
  /** 451 always (a greylister that wants a retry after minutes). */
  greylistAlways: ['stuck'],
  /** 552 5.2.2 mailbox full. */
  full: ['full'],
} as const;

export interface SmtpSessionRecord {
  /** RCPT TO addresses in order, with whether the session was under TLS by then. */
  rcpts: { address: string; secure: boolean }[];
  helo: string | undefined;
  from: string | undefined;
}

export interface SmtpStandIn {
  /** The port both servers listen on (SMTP_PROBE_PORT). */
  port: number;
  /** 127.0.0.1: the smtp-server mail server. */
  address: string;
  /** 127.0.0.2: a TCP server that accepts connections and never greets. */
  silentAddress: string;
  sessions: SmtpSessionRecord[];
  /** Most sessions open at the same time on the mail server. */
  maxConcurrent(): number;
  /** Connections to the silent server: when each opened and when the client hung up (undefined while open). */
  silent: { openedAt: number; closedAt?: number }[];
  close(): Promise<void>;
}

type SmtpError = Error & { responseCode: number };
const smtpError = (code: number, text: string): SmtpError => Object.assign(new Error(text), { responseCode: code });

/**
 * A mail server (smtp-server, STARTTLS offered with its built-in self-signed certificate) on
 * 127.0.0.1 that answers by recipient, and a never-greeting TCP server on 127.0.0.2 on the same
 * port (`starttls: false` hides STARTTLS). `catchAllDomain` accepts every recipient; elsewhere, an unknown recipient is
 * `550 5.1.1 <addr>: no such user`. DATA is refused: a probe never sends one.
 */
export async function startSmtpStandIn(options: { catchAllDomain: string; starttls?: boolean }): Promise<SmtpStandIn> {
  const sessions: SmtpSessionRecord[] = [];
  const greylisted = new Set<string>();
  const bySession = new Map<string, SmtpSessionRecord>();
  let open = 0;
  let max = 0;
  const mail = new SMTPServer({
    disabledCommands: ['AUTH'],
    // Its default reverse lookup of the client's address would ask the machine's resolver about 127.0.0.1 on every connection.
    disableReverseLookup: true,
    hideSTARTTLS: options.starttls === false,
    logger: false,
    banner: 'stand-in ESMTP ready',
    onConnect(session, callback) {
      open++;
      max = Math.max(max, open);
      const record: SmtpSessionRecord = { rcpts: [], helo: undefined, from: undefined };
      bySession.set(session.id, record);
      sessions.push(record);
      callback();
    },
    onClose(session) {
      open--;
      bySession.delete(session.id);
    },
    onMailFrom(address, session, callback) {
      const record = bySession.get(session.id);
      if (record) {
        record.from = address.address;
        record.helo = session.hostNameAppearsAs;
      }
      callback();
    },
    onRcptTo(address, session, callback) {
      const rcpt = address.address.toLowerCase();
      bySession.get(session.id)?.rcpts.push({ address: rcpt, secure: session.secure });
      const [local = '', domain = ''] = rcpt.split('@');
      if (domain === options.catchAllDomain) return callback();
      if ((MAILBOXES.accept as readonly string[]).includes(local)) return callback();
      if ((MAILBOXES.full as readonly string[]).includes(local))
        return callback(smtpError(552, `5.2.2 <${rcpt}>: mailbox full`));
      if ((MAILBOXES.greylistAlways as readonly string[]).includes(local))
        return callback(smtpError(451, '4.7.1 greylisted, please try again later'));
      if ((MAILBOXES.greylistOnce as readonly string[]).includes(local)) {
        if (greylisted.has(rcpt)) return callback();
        greylisted.add(rcpt);
        return callback(smtpError(451, '4.7.1 greylisted, please try again later'));
      }
      return callback(smtpError(550, `5.1.1 <${rcpt}>: no such user`));
    },
    onData(stream, _session, callback) {
      stream.resume();
      stream.on('end', () => callback(smtpError(554, '5.7.1 this stand-in takes no mail')));
    },
  });
  // smtp-server re-emits a session's socket errors on the server: a prober that dies mid-session
  // (a SIGKILLed worker) resets its connection, which a real mail server shrugs off too. Without a
  // listener the reset would be an uncaught error in the test process.
  mail.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'ECONNRESET' && err.code !== 'EPIPE') throw err;
  });
  await new Promise<void>((resolve) => mail.listen(0, '127.0.0.1', resolve));
  const port = ((mail as unknown as { server: Server }).server.address() as AddressInfo).port;

  const silent: { openedAt: number; closedAt?: number }[] = [];
  const sockets = new Set<Socket>();
  const quiet = createServer((socket) => {
    const entry: { openedAt: number; closedAt?: number } = { openedAt: Date.now() };
    silent.push(entry);
    sockets.add(socket);
    socket.on('close', () => {
      entry.closedAt = Date.now();
      sockets.delete(socket);
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve, reject) => {
    quiet.once('error', reject);
    quiet.listen(port, '127.0.0.2', resolve);
  });

  return {
    port,
    address: '127.0.0.1',
    silentAddress: '127.0.0.2',
    sessions,
    maxConcurrent: () => max,
    silent,
    close: async () => {
      for (const s of sockets) s.destroy();
      await Promise.all([
        new Promise<void>((r) => mail.close(() => r())),
        new Promise<void>((r) => quiet.close(() => r())),
      ]);
    },
  };
}
