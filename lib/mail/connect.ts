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
 * unless OUTBOUND_ALLOW_HOSTS lists them. The connection then goes to this address (the name is
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
  for (const address of addresses) {
    const refusal = allow.refusal(host, address);
    if (!refusal) return address;
    if (addresses.length === 1) throw new MailServerError('blocked', `${host} resolves to ${address}, a ${refusal}; mail servers must be public`);
  }
  throw new MailServerError('blocked', `${host} resolves only to refused addresses; mail servers must be public`);
}

export function smtpTransport(server: MailServer, address: string, timeoutMs: number): Transporter<SMTPTransport.SentMessageInfo> {
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

export function imapClient(server: MailServer, address: string, timeoutMs: number): ImapFlow {
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
  });
}

/** A nodemailer or imapflow failure as a MailServerError (auth vs the rest). */
export function mailServerError(err: unknown, what: string): MailServerError {
  if (err instanceof MailServerError) return err;
  const e = err as { code?: string; responseCode?: number; authenticationFailed?: boolean; response?: string; message?: string };
  if (e.code === 'EAUTH' || e.authenticationFailed || e.responseCode === 535) return new MailServerError('auth', `${what}: authentication failed${e.response ? ` (${e.response})` : ''}`);
  return new MailServerError('connect', `${what}: ${e.response ?? e.message ?? String(err)}`);
}

/** Logs in to SMTP (EHLO + AUTH) and, when given, IMAP; the outcome of each. */
export async function checkLogins(servers: { smtp: MailServer; imap: MailServer | null }, allow: AllowList, timeoutMs: number): Promise<{ smtp: LoginResult; imap: LoginResult | null }> {
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
        const client = imapClient(imapServer, await resolveMailHost(imapServer.host, allow), timeoutMs);
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
