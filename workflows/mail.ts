import {
  ActivityFailure,
  ApplicationFailure,
  CancelledFailure,
  isCancellation,
  log,
  proxyActivities,
  sleep,
} from '@temporalio/workflow';
import type { MailActivities, MessageRef, SyncMailboxResult } from '../activities/mail';

/** Input of sendMailMessage: the stored message and how many SMTP attempts it gets (MAIL_SEND_MAX_ATTEMPTS). */
export interface SendMailInput extends MessageRef {
  maxAttempts: number;
}

const bookkeeping = proxyActivities<MailActivities>({
  startToCloseTimeout: '30s', // one small update
  retry: { initialInterval: '1s', maximumInterval: '1m', maximumAttempts: 20 },
});

/**
 * Sends one stored outbound message through its mailbox's SMTP server; id
 * `mail-send/<clientId>/<message id>`, started by the API on POST /api/v1/mail/messages.
 * deliverMailMessage records each recipient the server accepted before it returns, so a retry
 * (network error, 4xx) skips them and never sends twice. Permanent refusals (authentication, 5xx,
 * a blocked host) stop at once; after the last attempt the message is marked failed.
 */
export async function sendMailMessage(input: SendMailInput): Promise<{ status: 'sent' | 'failed' }> {
  const delivering = proxyActivities<MailActivities>({
    startToCloseTimeout: '10m', // one SMTP session per recipient, each bounded by MAIL_TIMEOUT_MS
    heartbeatTimeout: '2m', // a heartbeat per recipient
    retry: {
      initialInterval: '5s',
      backoffCoefficient: 2,
      maximumInterval: '10m',
      maximumAttempts: input.maxAttempts,
      nonRetryableErrorTypes: ['MailAuthFailed', 'MailRejected', 'MailBlocked', 'MailNotConfigured', 'MessageGone'],
    },
  });
  try {
    await delivering.deliverMailMessage({ clientId: input.clientId, messageId: input.messageId });
    return { status: 'sent' };
  } catch (err) {
    if (!(err instanceof ActivityFailure) || isCancellation(err)) throw err;
    const cause = err.cause instanceof ApplicationFailure ? err.cause.message : err.message;
    log.warn('mail delivery gave up', { messageId: input.messageId, cause });
    await bookkeeping.failMailMessage({ clientId: input.clientId, messageId: input.messageId, error: cause });
    return { status: 'failed' };
  }
}

/** The sync schedule of a mailbox with IMAP (and its workflows' id): `mail-sync/<clientId>/<mailbox id>`. */
export const mailSyncScheduleId = (clientId: string, mailboxId: number) => `mail-sync/${clientId}/${mailboxId}`;

/** The note on a schedule paused because its client was deactivated: re-activation resumes only those. */
export const CLIENT_DEACTIVATED_NOTE = 'client deactivated';

/**
 * One IMAP sync of a mailbox's INBOX; started every MAIL_SYNC_INTERVAL_SECONDS by the schedule
 * `mail-sync/<clientId>/<mailbox id>` (overlap: skip) and at once by POST .../sync. Idempotent by
 * Message-ID; the mailbox row keeps the UID position.
 */
export async function syncMailbox(input: { clientId: string; mailboxId: number }): Promise<SyncMailboxResult> {
  const syncing = proxyActivities<MailActivities>({
    startToCloseTimeout: '10m', // a large first sync; the position is saved per message, so the next run goes on
    heartbeatTimeout: '1m', // heartbeats every half second: a worker gone silent is replaced after a minute
    retry: {
      initialInterval: '5s',
      maximumInterval: '1m',
      maximumAttempts: 3,
      nonRetryableErrorTypes: ['MailAuthFailed', 'MailBlocked', 'MailNotConfigured'],
    },
  });
  return syncing.syncMailboxInbox(input);
}

/**
 * The snooze timer of one message (spec §3); id `mail-snooze/<clientId>/<message id>`, started
 * (terminating any earlier timer of the message) by POST .../snooze and cancelled by DELETE
 * .../snooze. At `until` the message returns to the folder it was snoozed from, if it is still
 * snoozed until then.
 */
export async function snoozeMailMessage(input: MessageRef & { until: string }): Promise<{ returned: boolean }> {
  try {
    await sleep(Math.max(0, Date.parse(input.until) - Date.now()));
  } catch (err) {
    if (err instanceof CancelledFailure) return { returned: false };
    throw err;
  }
  return { returned: await bookkeeping.returnSnoozedMessage(input) };
}
