import { INBOX } from '../../../db/repositories/mail';
import { AppError, notFound } from '../../../lib/errors';
import { checkLogins } from '../../../lib/mail/connect';
import { parseRawMessage, UnparseableMessageError } from '../../../lib/mail/parse';
import { clientIdOf } from '../../context';
import { mailboxView, messageView } from '../../presenters/mail';
import type { ApiRouter } from '../../routing';
import {
  foldersResponse,
  importDoc,
  labelsResponse,
  mailboxCreateBody,
  mailboxIdParams,
  mailboxListResponse,
  mailboxPatchBody,
  mailboxResponse,
  mailboxScopeQuery,
  mailboxSyncResponse,
  rawMessageBody,
  mailboxTestResponse,
  messageResponse,
} from '../../schemas/mail';
import { type MailLookups, type MailRouteDeps, MAIL_ROUTE, invalid, readRawMessage } from './shared';

/** Mailboxes: CRUD, the login check, a sync now, raw import, and a mailbox's folders and labels. */
export function mailboxesRoutes(api: ApiRouter, deps: MailRouteDeps, l: MailLookups): void {
  const { repoOf, mailbox } = l;
  api.add({
    ...MAIL_ROUTE,
    method: 'post',
    path: '/api/v1/mail/mailboxes',
    operationId: 'createMailbox',
    summary: 'Add a mailbox (SMTP for sending, IMAP optional for receiving)',
    description:
      'Passwords are encrypted at rest (AES-256-GCM) and never shown again. With IMAP, the INBOX is synced every MAIL_SYNC_INTERVAL_SECONDS ' +
      '(a Temporal schedule per mailbox) and at once on `POST .../sync`. Logins are not tried here: `POST .../test` does.',
    body: mailboxCreateBody,
    responses: {
      201: { description: 'Stored', schema: mailboxResponse },
      409: { description: 'The client already has a mailbox with this address' },
    },
    handler: async (ctx, { body }) => {
      const clientId = clientIdOf(ctx);
      const row = await repoOf().createMailbox(clientId, { ...body, imap: body.imap ?? null });
      try {
        await deps.workflows.ensureSync(row);
      } catch (err) {
        // No mailbox without its sync: the client may simply try again.
        await repoOf().deleteMailbox(clientId, row.id);
        throw err;
      }
      ctx.status = 201;
      ctx.body = { success: true, mailbox: mailboxView(row) };
    },
  });

  api.add({
    ...MAIL_ROUTE,
    method: 'get',
    path: '/api/v1/mail/mailboxes',
    operationId: 'listMailboxes',
    summary: "The client's mailboxes",
    responses: { 200: { description: 'Every mailbox of the client', schema: mailboxListResponse } },
    handler: async (ctx) => {
      const rows = await repoOf().listMailboxes(clientIdOf(ctx));
      ctx.body = { success: true, mailboxes: rows.map(mailboxView), total: rows.length };
    },
  });

  api.add({
    ...MAIL_ROUTE,
    method: 'get',
    path: '/api/v1/mail/mailboxes/{mailbox_id}',
    operationId: 'getMailbox',
    summary: 'One mailbox',
    params: mailboxIdParams,
    responses: {
      200: { description: 'The mailbox', schema: mailboxResponse },
      404: { description: 'No such mailbox for this client' },
    },
    handler: async (ctx, { params }) => {
      ctx.body = { success: true, mailbox: mailboxView(await mailbox(clientIdOf(ctx), params.mailbox_id)) };
    },
  });

  api.add({
    ...MAIL_ROUTE,
    method: 'patch',
    path: '/api/v1/mail/mailboxes/{mailbox_id}',
    operationId: 'updateMailbox',
    summary: 'Change a mailbox (only the fields given)',
    params: mailboxIdParams,
    body: mailboxPatchBody,
    responses: {
      200: { description: 'The updated mailbox', schema: mailboxResponse },
      404: { description: 'No such mailbox for this client' },
      409: { description: 'The client already has a mailbox with this address' },
    },
    handler: async (ctx, { params, body }) => {
      const clientId = clientIdOf(ctx);
      await mailbox(clientId, params.mailbox_id);
      const row = await repoOf().updateMailbox(clientId, params.mailbox_id, body);
      if (!row) throw notFound('mailbox not found');
      if (body.imap !== undefined) await deps.workflows.ensureSync(row);
      ctx.body = { success: true, mailbox: mailboxView(row) };
    },
  });

  api.add({
    ...MAIL_ROUTE,
    method: 'delete',
    path: '/api/v1/mail/mailboxes/{mailbox_id}',
    operationId: 'deleteMailbox',
    summary: 'Delete a mailbox, its messages and its sync schedule',
    params: mailboxIdParams,
    responses: { 204: { description: 'Deleted' }, 404: { description: 'No such mailbox for this client' } },
    handler: async (ctx, { params }) => {
      const clientId = clientIdOf(ctx);
      const row = await mailbox(clientId, params.mailbox_id);
      await deps.workflows.removeSync(row);
      if (!(await repoOf().deleteMailbox(clientId, row.id))) throw notFound('mailbox not found');
      ctx.status = 204;
    },
  });

  api.add({
    ...MAIL_ROUTE,
    method: 'post',
    path: '/api/v1/mail/mailboxes/{mailbox_id}/test',
    operationId: 'testMailbox',
    summary: "Log in to the mailbox's SMTP and IMAP servers",
    description:
      'SMTP: connect, EHLO and AUTH; IMAP: connect and LOGIN. Hosts in private or loopback ranges are refused unless USER_URL_ALLOW_HOSTS lists them.',
    params: mailboxIdParams,
    responses: {
      200: { description: "Each server's outcome", schema: mailboxTestResponse },
      404: { description: 'No such mailbox for this client' },
    },
    handler: async (ctx, { params }) => {
      const row = await mailbox(clientIdOf(ctx), params.mailbox_id);
      const result = await checkLogins(repoOf().servers(row), deps.allowHosts, deps.timeoutMs);
      ctx.body = { success: result.smtp.ok && (result.imap?.ok ?? true), ...result };
    },
  });

  api.add({
    ...MAIL_ROUTE,
    method: 'post',
    path: '/api/v1/mail/mailboxes/{mailbox_id}/sync',
    operationId: 'syncMailbox',
    summary: "Sync the mailbox's INBOX over IMAP now",
    description:
      "Starts the mailbox's sync workflow at once (after a running one). New messages appear in GET /api/v1/mail/messages once it is done.",
    params: mailboxIdParams,
    responses: {
      202: { description: 'Sync started', schema: mailboxSyncResponse },
      400: { description: 'The mailbox has no IMAP settings' },
      404: { description: 'No such mailbox for this client' },
    },
    handler: async (ctx, { params }) => {
      const row = await mailbox(clientIdOf(ctx), params.mailbox_id);
      if (!row.imap_host) throw new AppError(400, 'this mailbox has no IMAP settings to sync from');
      await deps.workflows.triggerSync(row);
      ctx.status = 202;
      ctx.body = { success: true, message: 'sync started' };
    },
  });

  api.add({
    ...MAIL_ROUTE,
    method: 'post',
    path: '/api/v1/mail/mailboxes/{mailbox_id}/import',
    operationId: 'importMessage',
    summary: 'Import one raw RFC 5322 message into the mailbox',
    description:
      'Body: the message itself, `Content-Type: message/rfc822` (at most MAIL_MAX_MESSAGE_BYTES). 201 with the stored message; ' +
      'a Message-ID the mailbox already has answers 200 with the stored copy and stores nothing. The message goes to INBOX as inbound and joins its thread. ' +
      'A NUL character it decodes to (an encoded-word or quoted-printable `=00`) is stored as U+FFFD.',
    params: mailboxIdParams,
    // The raw body reader runs after authentication, so an unauthenticated upload is never read.
    before: [readRawMessage(deps.maxMessageBytes)],
    body: rawMessageBody,
    bodyContentType: 'message/rfc822',
    bodyDoc: importDoc,
    responses: {
      201: { description: 'Stored', schema: messageResponse },
      200: { description: 'Already stored (same Message-ID): the stored message', schema: messageResponse },
      404: { description: 'No such mailbox for this client' },
      413: { description: 'Larger than MAIL_MAX_MESSAGE_BYTES' },
      415: { description: 'Not message/rfc822' },
      422: { description: 'Not a message mailparser can read' },
    },
    handler: async (ctx, { params, body }) => {
      const clientId = clientIdOf(ctx);
      const row = await mailbox(clientId, params.mailbox_id);
      let parsed;
      try {
        parsed = await parseRawMessage(body);
      } catch (err) {
        if (err instanceof UnparseableMessageError) throw invalid(['body'], err.message);
        throw err;
      }
      const { row: stored, created } = await repoOf().insertMessage(clientId, row.id, parsed, {
        direction: 'inbound',
        folder: INBOX,
      });
      ctx.status = created ? 201 : 200;
      ctx.body = { success: true, message: messageView(stored) };
    },
  });

  api.add({
    ...MAIL_ROUTE,
    method: 'get',
    path: '/api/v1/mail/folders',
    operationId: 'listMailFolders',
    summary: "A mailbox's folders with message and unread counts",
    query: mailboxScopeQuery,
    responses: {
      200: { description: 'INBOX, Sent, Snoozed and every folder in use', schema: foldersResponse },
      404: { description: 'No such mailbox for this client' },
    },
    handler: async (ctx, { query }) => {
      const clientId = clientIdOf(ctx);
      await mailbox(clientId, query.mailbox_id);
      ctx.body = { success: true, folders: await repoOf().folders(clientId, query.mailbox_id) };
    },
  });

  api.add({
    ...MAIL_ROUTE,
    method: 'get',
    path: '/api/v1/mail/labels',
    operationId: 'listMailLabels',
    summary: 'The labels in use in a mailbox, with message counts',
    query: mailboxScopeQuery,
    responses: {
      200: { description: 'Labels', schema: labelsResponse },
      404: { description: 'No such mailbox for this client' },
    },
    handler: async (ctx, { query }) => {
      const clientId = clientIdOf(ctx);
      await mailbox(clientId, query.mailbox_id);
      ctx.body = { success: true, labels: await repoOf().labels(clientId, query.mailbox_id) };
    },
  });
}
