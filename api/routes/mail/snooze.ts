import { AppError, notFound } from '../../../lib/errors';
import { clientIdOf } from '../../context';
import { messageView, messageSummary } from '../../presenters/mail';
import type { ApiRouter } from '../../routing';
import { messageIdParams, messageResponse, snoozeBody, snoozedQuery, snoozedResponse } from '../../schemas/mail';
import { type MailLookups, type MailRouteDeps, MAIL_ROUTE, invalid } from './shared';

/** Snooze: a Temporal timer per message (api/mail-service.ts) brings it back. */
export function snoozeRoutes(api: ApiRouter, deps: MailRouteDeps, l: MailLookups): void {
  const { repoOf, mailboxByAddress, message } = l;
  api.add({
    ...MAIL_ROUTE,
    method: 'post',
    path: '/api/v1/mail/messages/{message_id}/snooze',
    operationId: 'snoozeMessage',
    summary: 'Snooze a message until a moment in the future',
    description:
      'Moves it to the Snoozed folder and remembers the folder it was in; at snoozed_until a Temporal timer moves it back (unread). Snoozing again replaces the timer.',
    params: messageIdParams,
    body: snoozeBody,
    responses: {
      200: { description: 'The snoozed message', schema: messageResponse },
      404: { description: 'No such message for this client' },
    },
    handler: async (ctx, { params, body }) => {
      const clientId = clientIdOf(ctx);
      const until = new Date(body.snoozed_until);
      if (until.getTime() <= Date.now()) throw invalid(['body', 'snoozed_until'], 'must be in the future');
      const current = await message(clientId, params.message_id);
      await deps.workflows.startSnooze(current, until);
      const row = await repoOf().snooze(clientId, current.id, until);
      if (!row) throw notFound('message not found');
      ctx.body = { success: true, message: messageView(row) };
    },
  });

  api.add({
    ...MAIL_ROUTE,
    method: 'delete',
    path: '/api/v1/mail/messages/{message_id}/snooze',
    operationId: 'unsnoozeMessage',
    summary: 'Unsnooze: back to the original folder now',
    description: 'Cancels the timer.',
    params: messageIdParams,
    responses: {
      200: { description: 'The message in its original folder', schema: messageResponse },
      400: { description: 'The message is not snoozed' },
      404: { description: 'No such message for this client' },
    },
    handler: async (ctx, { params }) => {
      const clientId = clientIdOf(ctx);
      const current = await message(clientId, params.message_id);
      const row = await repoOf().unsnooze(clientId, current.id);
      if (!row) throw new AppError(400, 'message is not snoozed');
      await deps.workflows.cancelSnooze(current);
      ctx.body = { success: true, message: messageView(row) };
    },
  });

  api.add({
    ...MAIL_ROUTE,
    method: 'get',
    path: '/api/v1/mail/snoozed',
    operationId: 'listSnoozed',
    summary: "A mailbox's snoozed messages, soonest back first",
    query: snoozedQuery,
    responses: {
      200: { description: 'Snoozed messages', schema: snoozedResponse },
      404: { description: 'No mailbox with this address' },
    },
    handler: async (ctx, { query }) => {
      const clientId = clientIdOf(ctx);
      const box = await mailboxByAddress(clientId, query.email);
      const rows = await repoOf().snoozed(clientId, box.id);
      ctx.body = { success: true, email: box.address, total: rows.length, messages: rows.map(messageSummary) };
    },
  });
}
