import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { MessageRow } from '../../db/repositories/mail';
import { MailServerError, mailServerError, resolveMailHost, smtpTransport } from '../../lib/mail/connect';
import { AllowList } from '../../lib/outbound';
import type { ActivityDeps } from '../deps';
import { UnsubscribeRepository } from '../../db/repositories/unsubscribe';
import {
  DEFAULT_LIST,
  listUnsubscribeHeaders,
  unsubscribeLinks,
  unsubscribedOf,
} from '../../lib/mail/list-unsubscribe';
import { mailRepository } from './repo';
import { HEARTBEAT_INTERVAL } from '../../jobs/limits';

/** A stored message a workflow works on: the client it belongs to and its row id. */
export interface MessageRef {
  clientId: string;
  messageId: number;
}

/** Every recipient once (To then Cc), lower-cased. */
export const recipientsOf = (m: Pick<MessageRow, 'to_addresses' | 'cc_addresses'>): string[] => [
  ...new Set([...m.to_addresses, ...(m.cc_addresses ?? [])].map((a) => a.toLowerCase())),
];

export function createDeliverActivities(deps: ActivityDeps) {
  const repo = mailRepository(deps);
  const allow = new AllowList(deps.config.USER_URL_ALLOW_HOSTS);
  const links = unsubscribeLinks(deps.config);
  const preferences = new UnsubscribeRepository(deps.db);

  /**
   * Hands a stored outbound message to its mailbox's SMTP server, one SMTP transaction per
   * recipient so that each copy carries that recipient's own signed List-Unsubscribe link. Each
   * accepted recipient is recorded at once; a retry skips them (idempotent: a retry after the server
   * accepted never sends twice). Authentication failures, 5xx refusals and refused hosts are
   * permanent; connection errors and 4xx are retried by the workflow. A recipient who unsubscribed
   * since the message was accepted (or before a retry) gets no copy, recorded as skipped; when none
   * is left to send to, the message fails saying so. Heartbeats per recipient and every
   * HEARTBEAT_INTERVAL while a server answers; a cancel stops at once.
   */
  async function deliverMailMessage(input: MessageRef): Promise<{ sent: number }> {
    const ctx = Context.current();
    const message = await repo().findMessage(input.clientId, input.messageId);
    if (!message) throw ApplicationFailure.nonRetryable(`message ${input.messageId} no longer exists`, 'MessageGone');
    if (message.send_status === 'sent') return { sent: 0 };
    const mailbox = await repo().findMailbox(input.clientId, message.mailbox_id);
    if (!mailbox)
      throw ApplicationFailure.nonRetryable(`mailbox ${message.mailbox_id} no longer exists`, 'MessageGone');
    const { smtp } = repo().servers(mailbox);
    let pending = recipientsOf(message).filter((r) => !message.delivery[r]);
    const unsubscribed = new Set(await unsubscribedOf(preferences, message.client_id, pending, message.list));
    for (const r of unsubscribed) await repo().recordSkipped(input.clientId, message.id, r, 'unsubscribed');
    pending = pending.filter((r) => !unsubscribed.has(r));
    if (recipientsOf(message).every((r) => unsubscribed.has(r) || 'skipped_at' in (message.delivery[r] ?? {}))) {
      throw ApplicationFailure.nonRetryable('every recipient has unsubscribed: nothing sent', 'MailRejected');
    }
    let sent = 0;
    if (pending.length > 0) {
      let address: string;
      try {
        address = await resolveMailHost(smtp.host, allow);
      } catch (err) {
        throw asFailure(err, 'SMTP');
      }
      const transport = smtpTransport(smtp, address, deps.config.MAIL_TIMEOUT_MS);
      // nodemailer cannot abort a transaction in flight: a cancel stops waiting for it (its socket
      // ends by MAIL_TIMEOUT_MS at the latest) and throws CancelledFailure below.
      const cancelled = new Promise<never>((_, reject) => {
        ctx.cancellationSignal.addEventListener('abort', () => reject(new CancelledFailure('delivery cancelled')), {
          once: true,
        });
      });
      cancelled.catch(() => undefined);
      // A cancel reaches a running activity only in the answer to a heartbeat: the timer keeps
      // beating while a server takes its time over one transaction, so the cancel arrives there too.
      let current: string | undefined;
      const beat = setInterval(() => ctx.heartbeat({ recipient: current }), HEARTBEAT_INTERVAL.ms);
      try {
        for (const recipient of pending) {
          ctx.cancellationSignal.throwIfAborted();
          current = recipient;
          ctx.heartbeat({ recipient });
          // The recipient's preferences page lists the lists it gets mail of.
          if (links) await preferences.register(message.client_id, recipient, message.list ?? DEFAULT_LIST);
          let info: { response: string };
          try {
            info = await Promise.race([
              cancelled,
              transport.sendMail({
                from: { name: mailbox.display_name ?? '', address: mailbox.address },
                to: message.to_addresses,
                cc: message.cc_addresses ?? undefined,
                subject: message.subject,
                text: message.body_text,
                html: message.body_html ?? undefined,
                date: message.date,
                messageId: message.message_id,
                inReplyTo: message.in_reply_to ?? undefined,
                references: message.references.length > 0 ? message.references : undefined,
                headers: listUnsubscribeHeaders(links, {
                  clientId: message.client_id,
                  email: recipient,
                  list: message.list,
                }),
                envelope: { from: mailbox.address, to: [recipient] },
              }),
            ]);
          } catch (err) {
            throw asFailure(err, `SMTP to ${recipient}`);
          }
          await repo().recordAccepted(input.clientId, message.id, recipient, info.response);
          sent += 1;
        }
      } catch (err) {
        if (ctx.cancellationSignal.aborted) throw new CancelledFailure('delivery cancelled');
        if (err instanceof ApplicationFailure) await repo().recordSendError(input.clientId, message.id, err.message);
        throw err;
      } finally {
        clearInterval(beat);
        transport.close();
      }
    }
    await repo().markSent(input.clientId, message.id);
    return { sent };
  }

  /** The workflow gave up: the message is marked failed with the last error (never a sent one). */
  async function failMailMessage(input: MessageRef & { error: string }): Promise<void> {
    await repo().markFailed(input.clientId, input.messageId, input.error);
  }

  /** The snooze timer's end (idempotent: only if still snoozed until that moment). */
  async function returnSnoozedMessage(input: MessageRef & { until: string }): Promise<boolean> {
    return repo().returnSnoozed(input.clientId, input.messageId, new Date(input.until));
  }

  return { deliverMailMessage, failMailMessage, returnSnoozedMessage };
}

/** A mail failure as a Temporal one: permanent (typed, non-retryable) or retryable. */
export function asFailure(err: unknown, what: string): ApplicationFailure {
  const e = mailServerError(err, what);
  const code = (err as { responseCode?: number }).responseCode;
  if (e.kind === 'auth') return ApplicationFailure.nonRetryable(e.message, 'MailAuthFailed');
  if (e.kind === 'blocked') return ApplicationFailure.nonRetryable(e.message, 'MailBlocked');
  if (typeof code === 'number' && code >= 500 && code < 600)
    return ApplicationFailure.nonRetryable(e.message, 'MailRejected');
  return ApplicationFailure.retryable(
    e.message,
    err instanceof MailServerError ? `Mail_${err.kind}` : 'MailUnavailable',
  );
}
