import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { ImapFlow } from 'imapflow';
import nodemailer, { type Transporter } from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport';
import type { AllowList } from '../outbound';

/** A mailbox's SMTP or IMAP server as the client gave it (password already opened). */
export interface MailServer {
  host: string;
  port: number;
  secure: boolean;
  username: string;
  password: string;
}

export type MailServerErrorKind = 'blocked' | 'dns' | 'auth' | 'connect';

/** Why a mail server could not be used, in words a client can act on. */
export class MailServerError extends Error {
  constructor(
    readonly kind: MailServerErrorKind,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The address to connect to, checked by the same SSRF rules as outbound HTTP (lib/outbound.ts):
 * mailbox hosts are client-supplied, so private, loopback and other special ranges are refused
 * unless USER_URL_ALLOW_HOSTS lists them. The connection then goes to this address (the name is
 * kept for TLS), so a second DNS answer cannot swap it.
 */
export async function resolveMailHost(host: string, allow: AllowList): Promise<string> {
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await lookup(host, { all: true })).map((a) => a.address);
    } catch (err) {
      throw new MailServerError('dns', `${host}: ${(err as NodeJS.ErrnoException).code ?? 'lookup failed'}`);
    }
  }
  for (const address of addresses) if (!allow.refusal(host, address)) return address;
  // Neither the address nor its range is named: a client could map the internal network with them.
  throw new MailServerError(
    'blocked',
    `${host} is not allowed as a mail server (only public internet hosts can be reached)`,
  );
}

export function smtpTransport(
  server: MailServer,
  address: string,
  timeoutMs: number,
): Transporter<SMTPTransport.SentMessageInfo> {
  return nodemailer.createTransport({
    host: address,
    port: server.port,
    secure: server.secure,
    auth: { user: server.username, pass: server.password },
    tls: isIP(server.host) ? {} : { servername: server.host },
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    // One message per connection: no pool, so a retry always starts from a fresh session.
    pool: false,
  });
}

/**
 * How much imapflow may buffer of one server response. Its defaults (1 GiB a literal or line, 2 GiB a
 * response) let a client's server that claims a small RFC822.SIZE stream a huge body into the shared
 * worker. The largest message we download fits: as a literal, with headroom because a server's size
 * claim can be a little below what it sends (line endings), or as a quoted string in one line.
 */
export function imapLimits(maxMessageBytes: number): {
  maxLiteralSize: number;
  maxLineLength: number;
  maxResponseSize: number;
} {
  const maxLiteralSize = maxMessageBytes + Math.max(64 * 1024, Math.ceil(maxMessageBytes / 8));
  // The rest of a FETCH answer around the message (UID, flags, dates, the literal's marker).
  const maxResponseSize = maxLiteralSize + 64 * 1024;
  return { maxLiteralSize, maxLineLength: maxResponseSize, maxResponseSize };
}

/** imapflow's error codes (on the client's 'error' event) for a response over imapLimits(); the connection is closed. */
export const IMAP_TOO_LARGE = new Set(['LiteralTooLarge', 'LineTooLarge', 'ResponseTooLarge']);

/** An IMAP client bounded by imapLimits(maxMessageBytes): 0 when it downloads no message. */
export function imapClient(server: MailServer, address: string, timeoutMs: number, maxMessageBytes: number): ImapFlow {
  return new ImapFlow({
    host: address,
    port: server.port,
    secure: server.secure,
    ...(isIP(server.host) ? {} : { servername: server.host }),
    auth: { user: server.username, pass: server.password },
    logger: false,
    disableAutoIdle: true,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    ...imapLimits(maxMessageBytes),
  });
}

/** A nodemailer or imapflow failure as a MailServerError (auth vs the rest). */
export function mailServerError(err: unknown, what: string): MailServerError {
  if (err instanceof MailServerError) return err;
  const e = err as {
    code?: string;
    responseCode?: number;
    authenticationFailed?: boolean;
    response?: string;
    message?: string;
  };
  if (e.code === 'EAUTH' || e.authenticationFailed || e.responseCode === 535)
    return new MailServerError('auth', `${what}: authentication failed${e.response ? ` (${e.response})` : ''}`);
  return new MailServerError('connect', `${what}: ${e.response ?? e.message ?? String(err)}`);
}

/** Logs in to SMTP (EHLO + AUTH) and, when given, IMAP; the outcome of each. */
export async function checkLogins(
  servers: { smtp: MailServer; imap: MailServer | null },
  allow: AllowList,
  timeoutMs: number,
): Promise<{ smtp: LoginResult; imap: LoginResult | null }> {
  const smtp = await loginResult(async () => {
    const transport = smtpTransport(servers.smtp, await resolveMailHost(servers.smtp.host, allow), timeoutMs);
    try {
      await transport.verify();
    } catch (err) {
      throw mailServerError(err, 'SMTP');
    } finally {
      transport.close();
    }
  });
  const imapServer = servers.imap;
  const imap = imapServer
    ? await loginResult(async () => {
        // Greeting and login only: no message is downloaded, so the bounds need not fit one.
        const client = imapClient(imapServer, await resolveMailHost(imapServer.host, allow), timeoutMs, 0);
        client.on('error', () => undefined);
        try {
          await client.connect();
          await client.logout();
        } catch (err) {
          client.close();
          throw mailServerError(err, 'IMAP');
        }
      })
    : null;
  return { smtp, imap };
}

export interface LoginResult {
  ok: boolean;
  error: string | null;
}

async function loginResult(run: () => Promise<void>): Promise<LoginResult> {
  try {
    await run();
    return { ok: true, error: null };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}
