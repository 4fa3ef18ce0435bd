import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { Context } from '@temporalio/activity';
import { JobResultStore } from '../../db/repositories/job-results';
import {
  crawlVerifyPayload,
  VERIFY_RESERVE_SECONDS,
  type CrawlVerifyResult,
  type VerifyResultItem,
} from '../../jobs/crawl-verify';
import { HEARTBEAT_INTERVAL, VERIFY_STAGE } from '../../jobs/limits';
import type { Config } from '../../lib/config';
import { normalizeEmail } from '../../lib/normalize';
import { AllowList, isBlockedAddress } from '../../lib/outbound';
import { sleep } from '../../lib/sleep';
import { parsePayload, type ActivityDeps, type JobActivityInput, type JobActivityOutput } from '../deps';
import { isDisposable, isFreeProvider, isRoleAccount, parseAddress, type ParsedAddress } from './address';
import { MailDns } from './dns';
import { probeMailbox, replyText, SmtpProbeError, type ProbeAnswer } from './smtp';
import { acceptsAnything, classifyRcpt, verdict, type MailboxCheck, type VerifyFacts } from './verdict';

/** Addresses verified at once in one job; the per-server limit below is what protects providers. */
const JOB_CONCURRENCY = 16;
/** One SMTP command's reply: RFC 5321 §4.5.3.2 allows minutes, but a probe that waits that long learns nothing more. */
const COMMAND_TIMEOUT_MS = 10_000;
/** Greylisting retries: the first after 1 s, doubling, within the address's time (real greylisters ask for minutes; those end unknown). */
const GREYLIST_FIRST_RETRY_MS = 1000;

/** At most `limit` holders per key at a time (SMTP sessions per mail server), FIFO. */
export class KeyedLimiter {
  private readonly active = new Map<string, number>();
  private readonly queues = new Map<string, (() => void)[]>();

  constructor(private readonly limit: number) {}

  async run<T>(key: string, signal: AbortSignal | undefined, work: () => Promise<T>): Promise<T> {
    await this.acquire(key, signal);
    try {
      return await work();
    } finally {
      this.release(key);
    }
  }

  private acquire(key: string, signal: AbortSignal | undefined): Promise<void> {
    signal?.throwIfAborted();
    const n = this.active.get(key) ?? 0;
    if (n < this.limit) {
      this.active.set(key, n + 1);
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const queue = this.queues.get(key) ?? [];
      const grant = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        const q = this.queues.get(key) ?? [];
        const at = q.indexOf(grant);
        if (at >= 0) q.splice(at, 1);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      queue.push(grant);
      this.queues.set(key, queue);
    });
  }

  private release(key: string): void {
    const next = this.queues.get(key)?.shift();
    // The slot passes straight to the next waiter: the count stays.
    if (next) return next();
    const n = (this.active.get(key) ?? 1) - 1;
    if (n <= 0) this.active.delete(key);
    else this.active.set(key, n);
    if (this.queues.get(key)?.length === 0) this.queues.delete(key);
  }
}

export interface VerifyContext {
  config: Pick<Config, 'SMTP_PROBE_PORT' | 'SMTP_HELO_NAME' | 'SMTP_FROM'>;
  dns: MailDns;
  allowList: AllowList;
  limiter: KeyedLimiter;
  smtpCheck: boolean;
  signal: AbortSignal;
  /**
   * Epoch ms by which this address must be decided: timeout_seconds from its start, moved on by the
   * time it waits for a session slot at a busy mail server (other addresses' time), never past `stageEnd`.
   */
  deadline: number;
  /** The end of the job's share of the verify stage. */
  stageEnd: number;
}

/** A local part no one has: 20 random characters. */
const randomLocal = () => `x${randomBytes(10).toString('hex').slice(0, 19)}`;

/**
 * The SMTP check of one parsed address at its mail servers: the first server (by MX preference)
 * that has an address is asked; its address must pass the SSRF guard. Greylisting (a 4xx answer)
 * is retried with backoff until the address's deadline.
 */
async function checkMailbox(
  a: ParsedAddress,
  hosts: string[],
  ctx: VerifyContext,
): Promise<{ check: MailboxCheck; mx: string }> {
  let host: string | undefined;
  let address: string | undefined;
  for (const h of hosts) {
    try {
      const found = await ctx.dns.addresses(h);
      if (found[0]) {
        host = h;
        address = found[0];
        break;
      }
    } catch (err) {
      ctx.signal.throwIfAborted();
      return {
        check: {
          kind: 'unknown',
          reason: `DNS lookup of mail server ${h} failed (${(err as { code?: string }).code ?? 'ERROR'})`,
        },
        mx: h,
      };
    }
  }
  if (!host || !address)
    return {
      check: { kind: 'unknown', reason: `no mail server of ${a.domain} has an address (${hosts.join(', ')})` },
      mx: hosts[0] ?? a.domain,
    };
  if (isBlockedAddress(address).blocked && !ctx.allowList.allows(host, address)) {
    // The MX name is the domain's own (public DNS); the address it resolved to is not said (issue 38 item 14).
    return {
      check: {
        kind: 'unknown',
        reason: `mail server ${host} is not allowed (only public internet hosts can be reached)`,
      },
      mx: host,
    };
  }
  const mailServer = { address, host };
  let attempts = 0;
  let backoff = GREYLIST_FIRST_RETRY_MS;
  for (;;) {
    attempts++;
    let answer: ProbeAnswer;
    const queuedAt = Date.now();
    try {
      answer = await ctx.limiter.run(address, ctx.signal, () => {
        ctx.deadline = Math.min(ctx.deadline + (Date.now() - queuedAt), ctx.stageEnd);
        return probeMailbox({
          ...mailServer,
          port: ctx.config.SMTP_PROBE_PORT,
          helo: ctx.config.SMTP_HELO_NAME,
          from: ctx.config.SMTP_FROM,
          rcpt: a.ascii,
          randomRcpt: `${randomLocal()}@${a.domain}`,
          commandTimeoutMs: COMMAND_TIMEOUT_MS,
          deadline: ctx.deadline,
          signal: ctx.signal,
        });
      });
    } catch (err) {
      ctx.signal.throwIfAborted();
      if (err instanceof SmtpProbeError) return { check: { kind: 'unknown', reason: err.message }, mx: host };
      throw err;
    }
    const kind =
      answer.stage === 'mail' ? (answer.reply.code < 500 ? 'temporary' : 'refused') : classifyRcpt(answer.reply);
    const text = replyText(answer.reply);
    if (kind === 'accepted')
      return {
        check: { kind: 'accepted', reply: answer.reply, catchAll: acceptsAnything(answer.randomReply) },
        mx: host,
      };
    if (kind === 'full') return { check: { kind: 'full', reason: text }, mx: host };
    if (kind === 'rejected') return { check: { kind: 'rejected', reason: text }, mx: host };
    if (kind === 'refused') {
      return {
        check: {
          kind: 'unknown',
          reason: `the mail server refused the probe (${answer.stage === 'mail' ? 'MAIL FROM' : 'RCPT TO'}): ${text}`,
        },
        mx: host,
      };
    }
    // A temporary answer: greylisting. Try again after the backoff if the address's time allows.
    if (Date.now() + backoff >= ctx.deadline) {
      return {
        check: {
          kind: 'unknown',
          reason: `greylisted: the mail server answered ${text} and still did after ${attempts} attempt${attempts === 1 ? '' : 's'}`,
        },
        mx: host,
      };
    }
    await sleep(backoff, ctx.signal);
    backoff *= 2;
  }
}

/** One address from raw input to its result. */
export async function verifyAddress(raw: string, ctx: VerifyContext): Promise<VerifyResultItem> {
  const parsed = parseAddress(raw);
  if ('error' in parsed)
    return verdict({ email: parsed.display, syntaxError: parsed.error, disposable: false, free: false, role: false });
  const facts: VerifyFacts = {
    email: parsed.display,
    disposable: isDisposable(parsed),
    free: isFreeProvider(parsed),
    role: isRoleAccount(parsed),
  };
  const route = await ctx.dns.route(parsed.domain);
  ctx.signal.throwIfAborted();
  if (route.kind !== 'servers') return verdict({ ...facts, dns: route });
  const best = route.hosts[0] ?? parsed.domain;
  if (!ctx.smtpCheck)
    return verdict({
      ...facts,
      dns: { kind: 'servers', mx: best },
      mailbox: { kind: 'skipped', reason: 'mailbox not checked (smtp_check is false)' },
    });
  if (facts.disposable)
    return verdict({
      ...facts,
      dns: { kind: 'servers', mx: best },
      mailbox: { kind: 'skipped', reason: 'disposable provider: not probed' },
    });
  const { check, mx } = await checkMailbox(parsed, route.hosts, ctx);
  return verdict({ ...facts, dns: { kind: 'servers', mx }, mailbox: check });
}

/** The job's addresses, each once: keyed as IDAP keys e-mails (lower case, punycode domain), in the order first given. */
export function distinctAddresses(payload: { emails?: string[]; email?: string }): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of [...(payload.emails ?? []), ...(payload.email === undefined ? [] : [payload.email])]) {
    const parsed = parseAddress(raw);
    const key = 'error' in parsed ? parsed.display : (normalizeEmail(parsed.ascii) ?? parsed.ascii);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(raw);
  }
  return out;
}

/** What every verification on this worker shares: the SSRF allow list and the per-mail-server session limit. */
interface VerifyShared {
  allowList: AllowList;
  limiter: KeyedLimiter;
}
const sharedByDeps = new WeakMap<ActivityDeps, VerifyShared>();
// Made on the first use (the catalog test builds the activities without a configuration), once per
// worker: crawlVerify jobs and the pipeline's verify stage share the limit, which is per mail server whoever asks.
function sharedOf(deps: ActivityDeps): VerifyShared {
  let shared = sharedByDeps.get(deps);
  if (!shared) {
    shared = {
      allowList: new AllowList(deps.config.USER_URL_ALLOW_HOSTS),
      limiter: new KeyedLimiter(deps.config.VERIFY_CONCURRENCY_PER_DOMAIN),
    };
    sharedByDeps.set(deps, shared);
  }
  return shared;
}

export interface VerifyRun {
  smtpCheck: boolean;
  /** Time per address (timeout_seconds). */
  timeoutSeconds: number;
  /** Epoch ms by which every address is decided: one still open then is `unknown`. */
  stageEnd: number;
  signal: AbortSignal;
  /** How many addresses are decided so far (for the caller's heartbeat). */
  onProgress?(done: number): void;
}

/**
 * Verifies each address (already distinct) with JOB_CONCURRENCY lanes: syntax, lists, DNS, SMTP
 * probe. Per-address problems are verdicts (`unknown` with a reason), never a throw; a cancel
 * aborts DNS queries and destroys every SMTP socket at once and rejects. Used by crawlVerify jobs
 * and by the pipeline's verify stage.
 */
export async function verifyAddresses(
  deps: ActivityDeps,
  addresses: string[],
  run: VerifyRun,
): Promise<VerifyResultItem[]> {
  const { config } = deps;
  const { allowList, limiter } = sharedOf(deps);
  const { signal, stageEnd } = run;
  // Every lane's socket, sleep and queue slot listens for the cancel: more than Node's default 10.
  setMaxListeners(JOB_CONCURRENCY * 4, signal);
  const dns = new MailDns(config.DNS_SERVERS, Math.min(3000, run.timeoutSeconds * 1000));
  const onAbort = () => dns.cancel();
  signal.addEventListener('abort', onAbort, { once: true });
  const out: VerifyResultItem[] = new Array<VerifyResultItem>(addresses.length);
  let done = 0;
  try {
    let next = 0;
    const lane = async () => {
      while (next < addresses.length) {
        const i = next++;
        const raw = addresses[i] as string;
        const vctx: VerifyContext = {
          config,
          dns,
          allowList,
          limiter,
          smtpCheck: run.smtpCheck,
          signal,
          deadline: Math.min(Date.now() + run.timeoutSeconds * 1000, stageEnd),
          stageEnd,
        };
        out[i] =
          Date.now() >= stageEnd
            ? verdict({
                ...listFacts(raw),
                mailbox: { kind: 'unknown', reason: "not verified: the job's 2-minute verification time ran out" },
              })
            : await withinDeadline(verifyAddress(raw, vctx), raw, () => vctx.deadline, signal);
        done++;
        run.onProgress?.(done);
      }
    };
    await Promise.all(Array.from({ length: Math.min(JOB_CONCURRENCY, addresses.length) }, lane));
    signal.throwIfAborted();
    return out;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

export function createVerifyActivities(deps: ActivityDeps) {
  let results: JobResultStore | undefined;

  /**
   * crawlVerify job: verifies each distinct address of the payload (syntax, DNS, lists, SMTP probe)
   * and stores `{results, summary}`. Heartbeats every half second; a cancel aborts DNS queries and
   * destroys every SMTP socket at once. Idempotent (a retry verifies again and stores the one
   * result row). Per-address problems are verdicts (`unknown` with a reason), never a failed job;
   * only an invalid payload fails for good.
   */
  async function crawlVerify(input: JobActivityInput): Promise<JobActivityOutput> {
    const payload = parsePayload(crawlVerifyPayload, input.payload);
    const ctx = Context.current();
    const addresses = distinctAddresses(payload);
    const stageEnd = Date.now() + VERIFY_STAGE.ms - VERIFY_RESERVE_SECONDS * 1000;
    let done = 0;
    const beat = setInterval(() => ctx.heartbeat({ verified: done, of: addresses.length }), HEARTBEAT_INTERVAL.ms);
    try {
      ctx.heartbeat({ verified: 0, of: addresses.length });
      const out = await verifyAddresses(deps, addresses, {
        smtpCheck: payload.smtp_check,
        timeoutSeconds: payload.timeout_seconds,
        stageEnd,
        signal: ctx.cancellationSignal,
        onProgress: (n) => {
          done = n;
        },
      });
      const summary = { valid: 0, risky: 0, invalid: 0, unknown: 0 };
      for (const r of out) summary[r.status]++;
      const data: CrawlVerifyResult = { results: out, summary };
      await (results ??= new JobResultStore(deps.db, deps.storage)).save(input.jobId, data);
      return { resultsCount: out.length };
    } finally {
      clearInterval(beat);
    }
  }

  return { crawlVerify };
}

/** The list facts of an address that gets no further (for the time-out verdicts). */
function listFacts(raw: string): VerifyFacts {
  const parsed = parseAddress(raw);
  if ('error' in parsed)
    return { email: parsed.display, syntaxError: parsed.error, disposable: false, free: false, role: false };
  return {
    email: parsed.display,
    disposable: isDisposable(parsed),
    free: isFreeProvider(parsed),
    role: isRoleAccount(parsed),
  };
}

/**
 * The address's verification, or `unknown` when its time runs out first (DNS retries can outlast
 * it). The abandoned work ends by itself within its own timeouts.
 */
async function withinDeadline(
  work: Promise<VerifyResultItem>,
  raw: string,
  deadlineOf: () => number,
  signal: AbortSignal,
): Promise<VerifyResultItem> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<VerifyResultItem>((resolve) => {
    // The deadline can move (a wait for a session slot): look again when it seems reached.
    const check = () => {
      const left = deadlineOf() + 250 - Date.now();
      if (left > 0) timer = setTimeout(check, left);
      else
        resolve(
          verdict({
            ...listFacts(raw),
            mailbox: { kind: 'unknown', reason: "timeout: no answer within the address's time (timeout_seconds)" },
          }),
        );
    };
    check();
  });
  // Once the deadline wins, a later failure of the abandoned work has no one to report to.
  void work.catch(() => undefined);
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
    signal.throwIfAborted();
  }
}
