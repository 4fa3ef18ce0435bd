import type { VerifyResultItem, VerifyStatus } from '../../jobs/crawl-verify';
import { replyText, type SmtpReply } from './smtp';

/** What the SMTP probe found out about the mailbox. */
export type MailboxCheck =
  | { kind: 'accepted'; reply: SmtpReply; catchAll: boolean }
  | { kind: 'rejected'; reason: string }
  | { kind: 'full'; reason: string }
  /** No answer about the mailbox: timeout, refused connection, greylisting, policy refusal, SSRF guard. */
  | { kind: 'unknown'; reason: string }
  /** Not asked: smtp_check false, or a disposable domain (its mailboxes come and go by design). */
  | { kind: 'skipped'; reason: string };

/** Everything the verdict depends on, gathered by the activity. */
export interface VerifyFacts {
  email: string;
  syntaxError?: string;
  dns?: { kind: 'servers'; mx: string } | { kind: 'none'; reason: string } | { kind: 'error'; reason: string };
  mailbox?: MailboxCheck;
  disposable: boolean;
  free: boolean;
  role: boolean;
}

const FULL_TEXT = /mailbox (is )?full|over ?quota|quota exceeded|insufficient (system )?storage|exceeded storage/i;
/** RCPT refusals that say the mailbox does not exist (Reacher's list, plus the enhanced status codes of RFC 3463). */
const NO_MAILBOX_TEXT =
  /no such (user|mailbox|recipient)|user unknown|unknown (user|recipient)|mailbox (unavailable|not found|does not exist)|not a valid mailbox|recipient (address )?rejected|does not exist|invalid (recipient|mailbox|address)|address rejected|5\.1\.[0-6]/i;
/** Refusals aimed at the prober, not the mailbox: spam lists, reputation, policy. They say nothing about the address. */
const POLICY_TEXT =
  /5\.7\.\d|block|spam|blacklist|listed|reputation|policy|access denied|not allowed|relay|rcpthosts|not in my list/i;

/**
 * Reads the RCPT TO answer (RFC 5321 codes; the text decides between a missing mailbox, a full one
 * and a refusal of the prober): 2xx accepted; 552 or "mailbox full" text full; 4xx temporary
 * (greylisting: the caller retries); 5xx saying the mailbox does not exist rejected; another 5xx
 * unknown.
 */
export function classifyRcpt(reply: SmtpReply): 'accepted' | 'full' | 'temporary' | 'rejected' | 'refused' {
  const text = reply.lines.join(' ');
  if (reply.code >= 200 && reply.code < 300) return 'accepted';
  if (reply.code === 552 || FULL_TEXT.test(text)) return 'full';
  if (reply.code >= 400 && reply.code < 500) return 'temporary';
  if (NO_MAILBOX_TEXT.test(text) && !POLICY_TEXT.test(text.replace(/5\.1\.\d/g, ''))) return 'rejected';
  if (reply.code === 550 || reply.code === 553) return POLICY_TEXT.test(text) ? 'refused' : 'rejected';
  return 'refused';
}

/** The catch-all probe: the random mailbox was accepted too. */
export const acceptsAnything = (random: SmtpReply | null): boolean =>
  !!random && random.code >= 200 && random.code < 300;

/**
 * The verdict, following Reacher's rules (../shared/providers.md), first match wins:
 * invalid syntax or no mail server -> invalid; DNS failure -> unknown; mailbox rejected -> invalid;
 * no answer about the mailbox (timeout, refused connection, greylisting) -> unknown; full mailbox,
 * catch-all, disposable or role account -> risky; not checked -> unknown; accepted -> valid.
 * Unlike Reacher a refused connection is unknown, not invalid: port 25 is blocked on many networks,
 * and that says nothing about the address.
 */
export function verdict(f: VerifyFacts): VerifyResultItem {
  const mx = f.dns?.kind === 'servers' ? f.dns.mx : null;
  const base = { email: f.email, is_free_email: f.free, is_disposable: f.disposable, is_role_account: f.role, mx };
  const mailbox = f.mailbox;
  const deliverable = mailbox?.kind === 'accepted';
  const catchAll = mailbox?.kind === 'accepted' && mailbox.catchAll;
  const out = (status: VerifyStatus, reason: string): VerifyResultItem => ({
    ...base,
    status,
    reason,
    is_deliverable: deliverable,
    is_catch_all: catchAll,
    score: score(status, {
      deliverable,
      catchAll,
      full: mailbox?.kind === 'full',
      disposable: f.disposable,
      role: f.role,
      free: f.free,
    }),
  });
  if (f.syntaxError) return out('invalid', f.syntaxError);
  if (f.dns?.kind === 'none') return out('invalid', `no mail server: ${f.dns.reason}`);
  if (f.dns?.kind === 'error') return out('unknown', f.dns.reason);
  if (mailbox?.kind === 'rejected') return out('invalid', `mailbox does not exist: ${mailbox.reason}`);
  if (mailbox?.kind === 'unknown') return out('unknown', mailbox.reason);
  if (mailbox?.kind === 'full') return out('risky', `mailbox full: ${mailbox.reason}`);
  if (catchAll)
    return out('risky', 'catch-all domain: the mail server accepts any mailbox, so this one cannot be confirmed');
  if (f.disposable) return out('risky', `disposable address provider (${f.email.slice(f.email.lastIndexOf('@') + 1)})`);
  if (f.role)
    return out('risky', `role account (${f.email.slice(0, f.email.lastIndexOf('@'))}@): a shared inbox, not a person`);
  if (mailbox?.kind === 'accepted')
    return out('valid', `the mail server accepted the mailbox: ${replyText(mailbox.reply)}`);
  return out('unknown', mailbox?.reason ?? 'mailbox not checked');
}

/** jobs/crawl-verify.ts SCORE_RULES, as code. */
export function score(
  status: VerifyStatus,
  f: { deliverable: boolean; catchAll: boolean; full: boolean; disposable: boolean; role: boolean; free: boolean },
): number {
  if (status === 'invalid') return 0;
  let s = f.deliverable ? 100 : 40;
  if (f.catchAll) s -= 30;
  if (f.disposable) s -= 40;
  if (f.full) s -= 50;
  if (f.role) s -= 15;
  if (f.free) s -= 5;
  return Math.max(0, Math.min(100, s));
}
