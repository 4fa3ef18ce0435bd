import { SENT } from '../../../db/repositories/mail';
import { notFound } from '../../../lib/errors';
import { refuseUnsubscribed } from '../../../lib/mail/list-unsubscribe';
import { newMessageId } from '../../../lib/mail/message-id';
import { render } from '../../../lib/mail/templates';
import { clientIdOf } from '../../context';
import { messageView, messageSummary } from '../../presenters/mail';
import type { ApiRouter } from '../../routing';
import {
  messageIdParams,
  messageListQuery,
  messageListResponse,
  messagePatchBody,
  messageResponse,
  messageSendBody,
} from '../../schemas/mail';
import { type MailLookups, type MailRouteDeps, MAIL_ROUTE, invalid, plainTextOf } from './shared';

/** Messages: send through a mailbox, list, read (marks read), flags. */
export function messagesRoutes(api: ApiRouter, deps: MailRouteDeps, l: MailLookups): void {
  const { repoOf, mailbox, message } = l;
  api.add({
    ...MAIL_ROUTE,
    method: 'post',
    path: '/api/v1/mail/messages',
    operationId: 'sendMessage',
    summary: 'Send a message through a mailbox',
    description:
      'Stores the message (direction outbound, folder Sent, send_status queued) with a new Message-ID and hands it to a Temporal workflow ' +
      "that delivers it through the mailbox's SMTP server with retries (MAIL_SEND_MAX_ATTEMPTS); send_status becomes sent or failed. " +
      'Recipients unsubscribed from `list` (or from everything) are refused with 409 naming them, and nothing is sent. ' +
      "Each recipient's copy carries List-Unsubscribe (a signed link of its own) and List-Unsubscribe-Post (one-click). " +
      "With template_id the template's html_source, its {{variables}} filled from `variables`, is the HTML body; a missing value is a 422.",
    body: messageSendBody,
    responses: {
      202: { description: 'Accepted for delivery', schema: messageResponse },
      404: { description: 'No such mailbox for this client' },
      409: { description: 'Recipients unsubscribed (named in detail)' },
    },
    handler: async (ctx, { body }) => {
      const clientId = clientIdOf(ctx);
      const repo = repoOf();
      const box = await mailbox(clientId, body.mailbox_id);
      const values = body.variables ?? {};
      let html = body.html ?? null;
      if (body.template_id !== undefined) {
        if (body.html !== undefined) throw invalid(['body', 'html'], 'give either html or template_id, not both');
        const t = await repo.findTemplate(clientId, body.template_id);
        if (!t || !t.is_active) throw invalid(['body', 'template_id'], `no active template ${body.template_id}`);
        const filled = render(t.html_source, values, { html: true });
        if (filled.missing.length)
          throw invalid(['body', 'variables'], `missing values for template variables: ${filled.missing.join(', ')}`);
        html = filled.text;
      }
      const parent = body.in_reply_to === undefined ? undefined : await repo.findMessage(clientId, body.in_reply_to);
      if (body.in_reply_to !== undefined && !parent)
        throw invalid(['body', 'in_reply_to'], `no message ${body.in_reply_to}`);
      const subjectSource =
        body.subject ?? (parent ? (/^re:/i.test(parent.subject) ? parent.subject : `Re: ${parent.subject}`) : '');
      const subject = render(subjectSource, values, { html: false });
      if (subject.missing.length)
        throw invalid(['body', 'variables'], `missing values for subject variables: ${subject.missing.join(', ')}`);
      const to = body.to.map((a) => a.toLowerCase());
      const cc = body.cc?.map((a) => a.toLowerCase()) ?? [];
      await refuseUnsubscribed(deps.suppressions, clientId, [...new Set([...to, ...cc])], body.list ?? null);
      const { row } = await repo.insertMessage(
        clientId,
        box.id,
        {
          message_id: newMessageId(box.address),
          in_reply_to: parent?.message_id ?? null,
          references: parent ? [...parent.references, parent.message_id] : [],
          from_address: box.address.toLowerCase(),
          to_addresses: to,
          cc_addresses: cc.length ? cc : null,
          subject: subject.text,
          body_text: body.text ?? (html ? plainTextOf(html) : ''),
          body_html: html,
          date: new Date(),
        },
        {
          direction: 'outbound',
          folder: SENT,
          is_read: true,
          list: body.list ?? null,
          template_id: body.template_id ?? null,
          send_status: 'queued',
        },
      );
      try {
        await deps.workflows.startSend(row);
      } catch (err) {
        // Not sent and never will be: do not leave it queued in Sent.
        await repo.deleteMessage(clientId, row.id);
        throw err;
      }
      ctx.status = 202;
      ctx.body = { success: true, message: messageView(row) };
    },
  });

  api.add({
    ...MAIL_ROUTE,
    method: 'get',
    path: '/api/v1/mail/messages',
    operationId: 'listMessages',
    summary: 'Messages, newest first, with body_text_preview',
    query: messageListQuery,
    responses: { 200: { description: 'One page of messages', schema: messageListResponse } },
    handler: async (ctx, { query }) => {
      const { messages, total } = await repoOf().listMessages(clientIdOf(ctx), query);
      ctx.body = {
        success: true,
        messages: messages.map(messageSummary),
        total,
        page: query.page,
        page_size: query.page_size,
      };
    },
  });

  api.add({
    ...MAIL_ROUTE,
    method: 'get',
    path: '/api/v1/mail/messages/{message_id}',
    operationId: 'getMessage',
    summary: 'The full message; marks it read',
    description: 'GET marks the message read; HEAD (answered by this route) changes nothing.',
    params: messageIdParams,
    responses: {
      200: { description: 'The message', schema: messageResponse },
      404: { description: 'No such message for this client' },
    },
    handler: async (ctx, { params }) => {
      const clientId = clientIdOf(ctx);
      // HEAD is a safe method (RFC 9110 §9.2.1): only GET marks the message read.
      const row =
        ctx.method === 'HEAD'
          ? await repoOf().findMessage(clientId, params.message_id)
          : await repoOf().readMessage(clientId, params.message_id);
      if (!row) throw notFound('message not found');
      ctx.body = { success: true, message: messageView(row) };
    },
  });

  api.add({
    ...MAIL_ROUTE,
    method: 'patch',
    path: '/api/v1/mail/messages/{message_id}',
    operationId: 'updateMessage',
    summary: 'Read and star flags, labels, folder',
    description:
      'Only the fields given change. Moving a snoozed message to a folder ends its snooze (and cancels the timer).',
    params: messageIdParams,
    body: messagePatchBody,
    responses: {
      200: { description: 'The message', schema: messageResponse },
      404: { description: 'No such message for this client' },
    },
    handler: async (ctx, { params, body }) => {
      const clientId = clientIdOf(ctx);
      const current = await message(clientId, params.message_id);
      if (body.folder !== undefined && current.snoozed_until !== null) await deps.workflows.cancelSnooze(current);
      const row = await repoOf().updateFlags(clientId, params.message_id, body);
      if (!row) throw notFound('message not found');
      ctx.body = { success: true, message: messageView(row) };
    },
  });
}
