import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';

/** One SMTP reply: its code and every line's text (RFC 5321 §4.2: `250-first`, ..., `250 last`). */
export interface SmtpReply {
  code: number;
  lines: string[];
}

export const replyText = (r: SmtpReply): string => `${r.code} ${r.lines.join(' ').trim()}`.trim();

/**
 * Splits received text into complete replies. A multi-line reply's lines carry `<code>-`, its last
 * `<code> ` (or the bare code); `rest` is an unfinished line or reply, kept for the next chunk.
 * Lines end in CRLF; a bare LF is accepted too, as servers in the wild send it. A line that is no
 * reply at all (no three-digit code) throws.
 */
export function parseReplies(text: string): { replies: SmtpReply[]; rest: string } {
  const replies: SmtpReply[] = [];
  let pending: string[] = [];
  let consumed = 0;
  let pos = 0;
  for (;;) {
    const nl = text.indexOf('\n', pos);
    if (nl < 0) break;
    const line = text.slice(pos, nl).replace(/\r$/, '');
    pos = nl + 1;
    const m = /^(\d{3})([ -]|$)(.*)$/.exec(line);
    if (!m) throw new SmtpProtocolError(`malformed SMTP reply line "${line.slice(0, 80)}"`);
    pending.push(m[3] ?? '');
    if (m[2] !== '-') {
      replies.push({ code: Number(m[1]), lines: pending });
      pending = [];
      consumed = pos;
    }
  }
  return { replies, rest: text.slice(consumed) };
}

/** Why a probe could not get an answer; `kind` decides the wording of the verdict. */
export type ProbeErrorKind = 'timeout' | 'refused' | 'closed' | 'network' | 'protocol' | 'blocked';

export class SmtpProbeError extends Error {
  constructor(
    readonly kind: ProbeErrorKind,
    message: string,
  ) {
    super(message);
  }
}

class SmtpProtocolError extends SmtpProbeError {
  constructor(message: string) {
    super('protocol', message);
  }
}

/** Longest reply accepted: a server that streams without ending a reply is broken or hostile. */
const MAX_REPLY_CHARS = 64 * 1024;

/**
 * A client end of an SMTP session over net/tls: send a command, read its reply, each read with its
 * own deadline. Everything fails with an SmtpProbeError; `close()` destroys the socket at once.
 */
export class SmtpConnection {
  private socket: Socket | TLSSocket;
  private buffer = '';
  private readonly replies: SmtpReply[] = [];
  private waiter: { resolve: (r: SmtpReply) => void; reject: (e: Error) => void } | undefined;
  private failure: SmtpProbeError | undefined;
  private readonly onData = (chunk: Buffer) => this.receive(chunk.toString('latin1'));
  private readonly onClose = () => this.fail(new SmtpProbeError('closed', `${this.where} closed the connection`));
  private readonly onError = (err: Error) => this.fail(socketError(err, this.where));

  private constructor(
    socket: Socket,
    private readonly where: string,
  ) {
    this.socket = socket;
    this.listen();
  }

  /** Connects; rejects on refusal, network errors or when `timeoutMs` passes first. */
  static open(
    address: string,
    port: number,
    timeoutMs: number,
    where: string,
    signal?: AbortSignal,
  ): Promise<SmtpConnection> {
    return new Promise((resolve, reject) => {
      // net.connect destroys the socket itself when the signal aborts (and fails with AbortError).
      const socket = netConnect({ host: address, port, signal });
      const timer = setTimeout(() => {
        socket.destroy();
        reject(
          new SmtpProbeError(
            'timeout',
            `timed out connecting to ${where} after ${timeoutMs} ms (outbound port ${port} may be blocked on this network)`,
          ),
        );
      }, timeoutMs);
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.removeAllListeners('error');
        resolve(new SmtpConnection(socket, where));
      });
      socket.once('error', (err) => {
        clearTimeout(timer);
        socket.destroy();
        reject(socketError(err, where));
      });
    });
  }

  get secure(): boolean {
    return 'encrypted' in this.socket && this.socket.encrypted;
  }

  /** The next reply, e.g. the greeting. */
  read(timeoutMs: number, waitingFor: string): Promise<SmtpReply> {
    const ready = this.replies.shift();
    if (ready) return Promise.resolve(ready);
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = undefined;
        reject(new SmtpProbeError('timeout', `${this.where} did not answer ${waitingFor} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiter = {
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
    });
  }

  async command(line: string, timeoutMs: number): Promise<SmtpReply> {
    if (this.failure) throw this.failure;
    // The last line of defence against command injection: a CR or LF inside `line` would end it
    // and start another command (RCPT, DATA) of someone else's choosing.
    if (/[\r\n]/.test(line))
      throw new SmtpProbeError('blocked', 'refusing to send an SMTP command that contains CR or LF');
    this.socket.write(`${line}\r\n`);
    return this.read(timeoutMs, line.split(':')[0] ?? line);
  }

  /** Upgrades the session after a 220 to STARTTLS. Certificates are not checked: mail servers' often do not match (as every verifier does). */
  async startTls(servername: string, timeoutMs: number): Promise<void> {
    const plain = this.socket;
    plain.off('data', this.onData);
    plain.off('close', this.onClose);
    plain.off('error', this.onError);
    const secure = await new Promise<TLSSocket>((resolve, reject) => {
      const s = tlsConnect({
        socket: plain,
        servername: isIP(servername) ? undefined : servername,
        rejectUnauthorized: false,
      });
      const timer = setTimeout(() => {
        s.destroy();
        reject(new SmtpProbeError('timeout', `TLS handshake with ${this.where} took longer than ${timeoutMs} ms`));
      }, timeoutMs);
      s.once('secureConnect', () => {
        clearTimeout(timer);
        s.removeAllListeners('error');
        resolve(s);
      });
      s.once('error', (err) => {
        clearTimeout(timer);
        s.destroy();
        reject(new SmtpProbeError('network', `TLS handshake with ${this.where} failed: ${err.message}`));
      });
    });
    this.socket = secure;
    this.buffer = '';
    this.listen();
  }

  /** Sends QUIT and waits briefly for the goodbye (being polite costs at most `timeoutMs`), then closes. */
  async quit(timeoutMs: number): Promise<void> {
    try {
      await this.command('QUIT', timeoutMs);
    } catch {
      // The verdict is already known; a server that drops the line instead of saying 221 changes nothing.
    } finally {
      this.close();
    }
  }

  close(): void {
    this.socket.destroy();
  }

  private listen(): void {
    this.socket.on('data', this.onData);
    this.socket.on('close', this.onClose);
    this.socket.on('error', this.onError);
  }

  private receive(text: string): void {
    this.buffer += text;
    try {
      const { replies, rest } = parseReplies(this.buffer);
      this.buffer = rest;
      if (rest.length > MAX_REPLY_CHARS)
        throw new SmtpProtocolError(`${this.where} sent a reply longer than ${MAX_REPLY_CHARS} characters`);
      this.replies.push(...replies);
    } catch (err) {
      this.fail(err instanceof SmtpProbeError ? err : new SmtpProtocolError(String(err)));
      this.socket.destroy();
      return;
    }
    const next = this.waiter && this.replies.shift();
    if (next && this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      w.resolve(next);
    }
  }

  private fail(err: SmtpProbeError): void {
    this.failure ??= err;
    const w = this.waiter;
    this.waiter = undefined;
    w?.reject(this.failure);
  }
}

function socketError(err: Error, where: string): SmtpProbeError {
  const code = (err as { code?: string }).code;
  if (code === 'ECONNREFUSED')
    return new SmtpProbeError(
      'refused',
      `connection refused by ${where} (nothing listens there, or outbound port is blocked)`,
    );
  if (code === 'ETIMEDOUT')
    return new SmtpProbeError(
      'timeout',
      `timed out connecting to ${where} (outbound port 25 may be blocked on this network)`,
    );
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH')
    return new SmtpProbeError('network', `${where} is unreachable (${code})`);
  return new SmtpProbeError('network', `network error talking to ${where}: ${err.message}${code ? ` (${code})` : ''}`);
}

export interface ProbeRequest {
  /** The mail server's address (already passed the SSRF guard) and its name (TLS SNI, messages). */
  address: string;
  host: string;
  port: number;
  helo: string;
  from: string;
  /** The address to ask about, ASCII domain. */
  rcpt: string;
  /** A mailbox that surely does not exist at the same domain (catch-all detection). */
  randomRcpt: string;
  /** Each command's reply must come within this (and before `deadline`). */
  commandTimeoutMs: number;
  /** Epoch ms after which nothing more is waited for. */
  deadline: number;
  signal?: AbortSignal;
}

export interface ProbeAnswer {
  /** MAIL FROM's reply when it was not 2xx (then RCPT was not asked), else the RCPT TO reply. */
  stage: 'mail' | 'rcpt';
  reply: SmtpReply;
  /** The random mailbox's RCPT reply; only asked after the address was accepted. */
  randomReply: SmtpReply | null;
  tls: boolean;
}

/**
 * One probe session: greeting, EHLO (HELO if EHLO is refused), STARTTLS when offered (then EHLO
 * again), MAIL FROM, RCPT TO the address, RCPT TO a random mailbox when the address was accepted,
 * QUIT. No DATA: nothing is ever sent. An abort of `signal` destroys the socket at once.
 */
export async function probeMailbox(req: ProbeRequest): Promise<ProbeAnswer> {
  req.signal?.throwIfAborted();
  const where = `${req.host}${req.host === req.address ? '' : ` (${req.address})`}:${req.port}`;
  const wait = () => {
    const left = req.deadline - Date.now();
    if (left <= 0) throw new SmtpProbeError('timeout', `the time for this address ran out talking to ${where}`);
    return Math.min(req.commandTimeoutMs, left);
  };
  const conn = await SmtpConnection.open(req.address, req.port, wait(), where, req.signal).catch((err: unknown) => {
    req.signal?.throwIfAborted();
    throw err;
  });
  const onAbort = () => conn.close();
  req.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const greeting = await conn.read(wait(), 'with its greeting');
    if (greeting.code !== 220)
      throw new SmtpProbeError('protocol', `${where} refused the session: ${replyText(greeting)}`);
    let ehlo = await conn.command(`EHLO ${req.helo}`, wait());
    if (ehlo.code >= 500) ehlo = await conn.command(`HELO ${req.helo}`, wait());
    if (ehlo.code !== 250) throw new SmtpProbeError('protocol', `${where} refused EHLO/HELO: ${replyText(ehlo)}`);
    if (ehlo.lines.slice(1).some((l) => /^STARTTLS\b/i.test(l))) {
      const go = await conn.command('STARTTLS', wait());
      if (go.code === 220) {
        await conn.startTls(req.host, wait());
        ehlo = await conn.command(`EHLO ${req.helo}`, wait());
        if (ehlo.code !== 250)
          throw new SmtpProbeError('protocol', `${where} refused EHLO after STARTTLS: ${replyText(ehlo)}`);
      }
    }
    const mail = await conn.command(`MAIL FROM:<${req.from}>`, wait());
    if (mail.code >= 300) {
      await conn.quit(Math.min(1000, wait()));
      return { stage: 'mail', reply: mail, randomReply: null, tls: conn.secure };
    }
    const reply = await conn.command(`RCPT TO:<${req.rcpt}>`, wait());
    const randomReply =
      reply.code >= 200 && reply.code < 300 ? await conn.command(`RCPT TO:<${req.randomRcpt}>`, wait()) : null;
    const tls = conn.secure;
    await conn.quit(Math.min(1000, Math.max(1, req.deadline - Date.now())));
    return { stage: 'rcpt', reply, randomReply, tls };
  } catch (err) {
    req.signal?.throwIfAborted();
    throw err;
  } finally {
    req.signal?.removeEventListener('abort', onAbort);
    conn.close();
  }
}
