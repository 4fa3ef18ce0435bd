import type { AddressInfo, Server } from 'node:net';
import { simpleParser } from 'mailparser';
import nodemailer from 'nodemailer';
import { SMTPServer } from 'smtp-server';

/**
 * The mail tests' servers on 127.0.0.1: the stack's Dovecot (dev/stack `dovecot`: IMAP, and LMTP
 * for delivery; any user name logs in with DEV_MAIL_PASSWORD) and, in the test process, an SMTP
 * submission server (smtp-server) that requires AUTH with that password, records every message it
 * accepts, and delivers it over LMTP into the recipients' Dovecot mailboxes, so what was sent can
 * be read back over IMAP.
 */
export interface DevDovecot {
  imapPort: number;
  lmtpPort: number;
  password: string;
}

export function devDovecot(): DevDovecot {
  const { DEV_IMAP_PORT, DEV_LMTP_PORT, DEV_MAIL_PASSWORD } = process.env;
  if (!DEV_IMAP_PORT || !DEV_LMTP_PORT || !DEV_MAIL_PASSWORD) {
    throw new Error(
      'DEV_IMAP_PORT, DEV_LMTP_PORT and DEV_MAIL_PASSWORD are not set: run the tests with `npm test` (dev/stack starts Dovecot and writes them to .stack/env)',
    );
  }
  return { imapPort: Number(DEV_IMAP_PORT), lmtpPort: Number(DEV_LMTP_PORT), password: DEV_MAIL_PASSWORD };
}

export interface ReceivedMail {
  /** MAIL FROM and RCPT TO of the SMTP transaction. */
  envelope: { from: string; to: string[] };
  /** The logged-in user. */
  user: string;
  raw: Buffer;
  headers: Map<string, unknown>;
  /** Raw header lines by lower-case name (unparsed values, as sent). */
  headerLines: Record<string, string>;
  subject: string;
  html: string | null;
  text: string;
}

export interface SmtpRelay {
  port: number;
  received: ReceivedMail[];
  /** The next RCPT TO of each of these addresses answers 451 once (a temporary refusal the sender must retry). */
  refuseOnce: Set<string>;
  close(): Promise<void>;
}

export async function startSmtpRelay(dovecot: DevDovecot): Promise<SmtpRelay> {
  const received: ReceivedMail[] = [];
  const refuseOnce = new Set<string>();
  const lmtp = nodemailer.createTransport({ lmtp: true, host: '127.0.0.1', port: dovecot.lmtpPort });
  const server = new SMTPServer({
    authMethods: ['PLAIN', 'LOGIN'],
    allowInsecureAuth: true,
    // No TLS on loopback: nodemailer would otherwise upgrade and refuse the built-in self-signed certificate.
    hideSTARTTLS: true,
    disableReverseLookup: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.password !== dovecot.password)
        return callback(Object.assign(new Error('5.7.8 authentication failed'), { responseCode: 535 }));
      callback(null, { user: auth.username });
    },
    onRcptTo(address, _session, callback) {
      const rcpt = address.address.toLowerCase();
      if (refuseOnce.delete(rcpt))
        return callback(Object.assign(new Error('4.2.0 try again later'), { responseCode: 451 }));
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks);
        const envelope = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
        };
        void (async () => {
          const parsed = await simpleParser(raw);
          const headerLines = Object.fromEntries(
            parsed.headerLines.map((h) => [h.key, h.line.slice(h.line.indexOf(':') + 1).trim()]),
          );
          await lmtp.sendMail({ envelope, raw });
          received.push({
            envelope,
            user: String(session.user),
            raw,
            headers: parsed.headers as Map<string, unknown>,
            headerLines,
            subject: parsed.subject ?? '',
            html: typeof parsed.html === 'string' ? parsed.html : null,
            text: parsed.text ?? '',
          });
        })().then(
          () => callback(),
          (err: unknown) =>
            callback(
              Object.assign(new Error(`4.3.0 delivery to Dovecot failed: ${String(err)}`), { responseCode: 451 }),
            ),
        );
      });
    },
  });
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = ((server as unknown as { server: Server }).server.address() as AddressInfo).port;
  return {
    port,
    received,
    refuseOnce,
    close: async () => {
      lmtp.close();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
