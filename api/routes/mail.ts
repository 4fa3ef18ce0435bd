import type { Middleware } from 'koa';
import { INBOX, SENT, type MailboxRow, type MailRepository, type MessageRow, type TemplateRow } from '../../db/repositories/mail';
import { AppError, notFound, ValidationError } from '../../lib/errors';
import { checkLogins } from '../../lib/mail/connect';
import { refuseUnsubscribed, type Suppressions } from '../../lib/mail/list-unsubscribe';
import { newMessageId, normalizeMessageId } from '../../lib/mail/message-id';
import { parseRawMessage, UnparseableMessageError } from '../../lib/mail/parse';
import { htmlToText, placeholders, render, variableMismatch } from '../../lib/mail/templates';
import { HtmlTooDeepError, MAX_HTML_DEPTH } from '../../lib/markdown';
import type { AllowList } from '../../lib/outbound';
import { clientIdOf, type AppState } from '../context';
import type { MailWorkflows } from '../mail-service';
import type { ApiRouter } from '../routing';
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
  messageIdParams,
  messageListQuery,
  messageListResponse,
  messagePatchBody,
  messageResponse,
  messageSendBody,
  searchQuery,
  searchResponse,
  snoozeBody,
  snoozedQuery,
  snoozedResponse,
  templateCreateBody,
  templateIdParams,
  templateListQuery,
  templateListResponse,
  templatePatchBody,
  templateResponse,
  threadParams,
  threadResponse,
} from '../schemas/mail';

export interface MailRouteDeps {
  /** Undefined when INTEGRATIONS_ENCRYPTION_KEY is not set (mailbox passwords cannot be sealed): every route answers 503 saying so. */
  repo: MailRepository | undefined;
  workflows: MailWorkflows;
  /** Unsubscribe preferences (lib/mail/list-unsubscribe.ts); undefined: no recipient is refused. */
  suppressions: Suppressions | undefined;
  /** USER_URL_ALLOW_HOSTS: mailbox hosts in private ranges that the login check may reach. */
  allowHosts: AllowList;
  timeoutMs: number;
  maxMessageBytes: number;
}

/** The path of raw import; app.ts keeps the JSON/YAML body parser off it. */
export const MAIL_IMPORT_PATH = /^\/api\/v1\/mail\/mailboxes\/[^/]+\/import\/?$/;

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

export function mailboxView(r: MailboxRow) {
  return {
    id: r.id,
    address: r.address,
    display_name: r.display_name,
    smtp: { host: r.smtp_host, port: r.smtp_port, secure: r.smtp_secure, username: r.smtp_username },
    imap: r.imap_host && r.imap_port !== null && r.imap_username !== null ? { host: r.imap_host, port: r.imap_port, secure: r.imap_secure ?? false, username: r.imap_username } : null,
    last_synced_at: iso(r.last_synced_at),
    last_sync_error: r.last_sync_error,
    created_at: new Date(r.created_at).toISOString(),
    updated_at: new Date(r.updated_at).toISOString(),
  };
}

function messageCommon(m: MessageRow) {
  return {
    id: m.id,
    mailbox_id: m.mailbox_id,
    message_id: m.message_id,
    in_reply_to: m.in_reply_to,
    references: m.references,
    thread_id: m.thread_id,
    direction: m.direction,
    from_address: m.from_address,
    to_addresses: m.to_addresses,
    cc_addresses: m.cc_addresses,
    subject: m.subject,
    date: new Date(m.date).toISOString(),
    folder: m.folder,
    is_read: m.is_read,
    is_starred: m.is_starred,
    labels: m.labels,
    snoozed_until: iso(m.snoozed_until),
    list: m.list,
    template_id: m.template_id,
    send_status: m.send_status,
    send_error: m.send_error,
    sent_at: iso(m.sent_at),
    created_at: new Date(m.created_at).toISOString(),
  };
}

/** The full message (spec §2.13). */
export const messageView = (m: MessageRow) => ({ ...messageCommon(m), body_text: m.body_text, body_html: m.body_html });

/** Lists and search results carry body_text_preview instead of the bodies (spec §2.13). */
export const messageSummary = (m: MessageRow & { rank?: number }) => ({
  ...messageCommon(m),
  body_text_preview: m.body_text.replace(/\s+/g, ' ').trim().slice(0, 200),
  ...(m.rank !== undefined ? { rank: m.rank } : {}),
});

export const templateView = (t: TemplateRow) => ({
  id: t.id,
  name: t.name,
  description: t.description,
  template_type: t.template_type,
  html_source: t.html_source,
  variables: t.variables,
  is_active: t.is_active,
  created_at: new Date(t.created_at).toISOString(),
  updated_at: new Date(t.updated_at).toISOString(),
});

const invalid = (loc: (string | number)[], msg: string) => new ValidationError([{ type: 'value_error', loc, msg }]);

/** The text part made from an HTML-only body; HTML nested too deep to convert is a 422 on `html`. */
function plainTextOf(html: string): string {
  try {
    return htmlToText(html);
  } catch (err) {
    if (err instanceof HtmlTooDeepError) throw invalid(['body', 'html'], `elements nested more than ${MAX_HTML_DEPTH} deep; send a text part (text) or simpler HTML`);
    throw err;
  }
}

/** 422 unless every placeholder of html_source is declared and every declared variable used. */
function checkTemplateVariables(source: string, declared: string[], loc: string[]): void {
  const { undeclared, unused } = variableMismatch(source, declared);
  const issues = [
    ...(undeclared.length ? [{ type: 'value_error', loc, msg: `placeholders not listed in variables: ${undeclared.join(', ')}` }] : []),
    ...(unused.length ? [{ type: 'value_error', loc, msg: `variables not used in html_source: ${unused.join(', ')}` }] : []),
  ];
  if (issues.length) throw new ValidationError(issues);
}

/** Reads a message/rfc822 body as bytes (at most `limit`); any other content type is a 415. */
function readRawMessage(limit: number): Middleware<AppState> {
  return async (ctx, next) => {
    if (ctx.request.type !== 'message/rfc822') {
      throw new AppError(415, `unsupported content type '${ctx.request.type || 'none'}'; send one RFC 5322 message as message/rfc822`, 'unsupported_media_type');
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) throw new AppError(413, `message is larger than ${limit} bytes (MAIL_MAX_MESSAGE_BYTES)`, 'payload_too_large');
      chunks.push(chunk);
    }
    if (size === 0) throw invalid(['body'], 'the body must be one RFC 5322 message');
    ctx.request.body = Buffer.concat(chunks) as unknown as typeof ctx.request.body;
    return next();
  };
}

export function mailRoutes(api: ApiRouter, deps: MailRouteDeps): void {
  const repoOf = () => {
    if (!deps.repo) throw new AppError(503, 'mail is not configured on this server (INTEGRATIONS_ENCRYPTION_KEY is unset: mailbox passwords cannot be encrypted)', 'not_configured');
    return deps.repo;
  };
  const mailbox = async (clientId: string, id: number) => {
    const found = await repoOf().findMailbox(clientId, id);
    if (!found) throw notFound('mailbox not found');
    return found;
  };
  const mailboxByAddress = async (clientId: string, address: string) => {
    const found = await repoOf().findMailboxByAddress(clientId, address);
    if (!found) throw notFound(`no mailbox with address ${address}`);
    return found;
  };
  const message = async (clientId: string, id: number) => {
    const found = await repoOf().findMessage(clientId, id);
    if (!found) throw notFound('message not found');
    return found;
  };
  const template = async (clientId: string, id: number) => {
    const found = await repoOf().findTemplate(clientId, id);
    if (!found) throw notFound('template not found');
    return found;
  };
  const mailboxes = { tags: ['mail'], security: 'client' as const };

  // ---- mailboxes -----------------------------------------------------------------------------

  api.add({
    ...mailboxes,
    method: 'post',
    path: '/api/v1/mail/mailboxes',
    operationId: 'createMailbox',
    summary: 'Add a mailbox (SMTP for sending, IMAP optional for receiving)',
    description:
      'Passwords are encrypted at rest (AES-256-GCM) and never shown again. With IMAP, the INBOX is synced every MAIL_SYNC_INTERVAL_SECONDS ' +
      '(a Temporal schedule per mailbox) and at once on `POST .../sync`. Logins are not tried here: `POST .../test` does.',
    body: mailboxCreateBody,
    responses: { 201: { description: 'Stored', schema: mailboxResponse }, 409: { description: 'The client already has a mailbox with this address' } },
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
    ...mailboxes,
    method: 'get',
    path: '/api/v1/mail/mailboxes',
    operationId: 'listMailboxes',
    summary: 'The client\'s mailboxes',
    responses: { 200: { description: 'Every mailbox of the client', schema: mailboxListResponse } },
    handler: async (ctx) => {
      const rows = await repoOf().listMailboxes(clientIdOf(ctx));
      ctx.body = { success: true, mailboxes: rows.map(mailboxView), total: rows.length };
    },
  });

  api.add({
    ...mailboxes,
    method: 'get',
    path: '/api/v1/mail/mailboxes/{mailbox_id}',
    operationId: 'getMailbox',
    summary: 'One mailbox',
    params: mailboxIdParams,
    responses: { 200: { description: 'The mailbox', schema: mailboxResponse }, 404: { description: 'No such mailbox for this client' } },
    handler: async (ctx, { params }) => {
      ctx.body = { success: true, mailbox: mailboxView(await mailbox(clientIdOf(ctx), params.mailbox_id)) };
    },
  });

  api.add({
    ...mailboxes,
    method: 'patch',
    path: '/api/v1/mail/mailboxes/{mailbox_id}',
    operationId: 'updateMailbox',
    summary: 'Change a mailbox (only the fields given)',
    params: mailboxIdParams,
    body: mailboxPatchBody,
    responses: { 200: { description: 'The updated mailbox', schema: mailboxResponse }, 404: { description: 'No such mailbox for this client' }, 409: { description: 'The client already has a mailbox with this address' } },
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
    ...mailboxes,
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
    ...mailboxes,
    method: 'post',
    path: '/api/v1/mail/mailboxes/{mailbox_id}/test',
    operationId: 'testMailbox',
    summary: 'Log in to the mailbox\'s SMTP and IMAP servers',
    description: 'SMTP: connect, EHLO and AUTH; IMAP: connect and LOGIN. Hosts in private or loopback ranges are refused unless USER_URL_ALLOW_HOSTS lists them.',
    params: mailboxIdParams,
    responses: { 200: { description: 'Each server\'s outcome', schema: mailboxTestResponse }, 404: { description: 'No such mailbox for this client' } },
    handler: async (ctx, { params }) => {
      const row = await mailbox(clientIdOf(ctx), params.mailbox_id);
      const result = await checkLogins(repoOf().servers(row), deps.allowHosts, deps.timeoutMs);
      ctx.body = { success: result.smtp.ok && (result.imap?.ok ?? true), ...result };
    },
  });

  api.add({
    ...mailboxes,
    method: 'post',
    path: '/api/v1/mail/mailboxes/{mailbox_id}/sync',
    operationId: 'syncMailbox',
    summary: 'Sync the mailbox\'s INBOX over IMAP now',
    description: 'Starts the mailbox\'s sync workflow at once (after a running one). New messages appear in GET /api/v1/mail/messages once it is done.',
    params: mailboxIdParams,
    responses: { 202: { description: 'Sync started', schema: mailboxSyncResponse }, 400: { description: 'The mailbox has no IMAP settings' }, 404: { description: 'No such mailbox for this client' } },
    handler: async (ctx, { params }) => {
      const row = await mailbox(clientIdOf(ctx), params.mailbox_id);
      if (!row.imap_host) throw new AppError(400, 'this mailbox has no IMAP settings to sync from');
      await deps.workflows.triggerSync(row);
      ctx.status = 202;
      ctx.body = { success: true, message: 'sync started' };
    },
  });

  api.add({
    ...mailboxes,
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
      const { row: stored, created } = await repoOf().insertMessage(clientId, row.id, parsed, { direction: 'inbound', folder: INBOX });
      ctx.status = created ? 201 : 200;
      ctx.body = { success: true, message: messageView(stored) };
    },
  });

  api.add({
    ...mailboxes,
    method: 'get',
    path: '/api/v1/mail/folders',
    operationId: 'listMailFolders',
    summary: 'A mailbox\'s folders with message and unread counts',
    query: mailboxScopeQuery,
    responses: { 200: { description: 'INBOX, Sent, Snoozed and every folder in use', schema: foldersResponse }, 404: { description: 'No such mailbox for this client' } },
    handler: async (ctx, { query }) => {
      const clientId = clientIdOf(ctx);
      await mailbox(clientId, query.mailbox_id);
      ctx.body = { success: true, folders: await repoOf().folders(clientId, query.mailbox_id) };
    },
  });

  api.add({
    ...mailboxes,
    method: 'get',
    path: '/api/v1/mail/labels',
    operationId: 'listMailLabels',
    summary: 'The labels in use in a mailbox, with message counts',
    query: mailboxScopeQuery,
    responses: { 200: { description: 'Labels', schema: labelsResponse }, 404: { description: 'No such mailbox for this client' } },
    handler: async (ctx, { query }) => {
      const clientId = clientIdOf(ctx);
      await mailbox(clientId, query.mailbox_id);
      ctx.body = { success: true, labels: await repoOf().labels(clientId, query.mailbox_id) };
    },
  });

  // ---- messages ------------------------------------------------------------------------------

  api.add({
    ...mailboxes,
    method: 'post',
    path: '/api/v1/mail/messages',
    operationId: 'sendMessage',
    summary: 'Send a message through a mailbox',
    description:
      'Stores the message (direction outbound, folder Sent, send_status queued) with a new Message-ID and hands it to a Temporal workflow ' +
      'that delivers it through the mailbox\'s SMTP server with retries (MAIL_SEND_MAX_ATTEMPTS); send_status becomes sent or failed. ' +
      'Recipients unsubscribed from `list` (or from everything) are refused with 409 naming them, and nothing is sent. ' +
      'Each recipient\'s copy carries List-Unsubscribe (a signed link of its own) and List-Unsubscribe-Post (one-click). ' +
      'With template_id the template\'s html_source, its {{variables}} filled from `variables`, is the HTML body; a missing value is a 422.',
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
        if (filled.missing.length) throw invalid(['body', 'variables'], `missing values for template variables: ${filled.missing.join(', ')}`);
        html = filled.text;
      }
      const parent = body.in_reply_to === undefined ? undefined : await repo.findMessage(clientId, body.in_reply_to);
      if (body.in_reply_to !== undefined && !parent) throw invalid(['body', 'in_reply_to'], `no message ${body.in_reply_to}`);
      const subjectSource = body.subject ?? (parent ? (/^re:/i.test(parent.subject) ? parent.subject : `Re: ${parent.subject}`) : '');
      const subject = render(subjectSource, values, { html: false });
      if (subject.missing.length) throw invalid(['body', 'variables'], `missing values for subject variables: ${subject.missing.join(', ')}`);
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
        { direction: 'outbound', folder: SENT, is_read: true, list: body.list ?? null, template_id: body.template_id ?? null, send_status: 'queued' },
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
    ...mailboxes,
    method: 'get',
    path: '/api/v1/mail/messages',
    operationId: 'listMessages',
    summary: 'Messages, newest first, with body_text_preview',
    query: messageListQuery,
    responses: { 200: { description: 'One page of messages', schema: messageListResponse } },
    handler: async (ctx, { query }) => {
      const { messages, total } = await repoOf().listMessages(clientIdOf(ctx), query);
      ctx.body = { success: true, messages: messages.map(messageSummary), total, page: query.page, page_size: query.page_size };
    },
  });

  api.add({
    ...mailboxes,
    method: 'get',
    path: '/api/v1/mail/messages/{message_id}',
    operationId: 'getMessage',
    summary: 'The full message; marks it read',
    description: 'GET marks the message read; HEAD (answered by this route) changes nothing.',
    params: messageIdParams,
    responses: { 200: { description: 'The message', schema: messageResponse }, 404: { description: 'No such message for this client' } },
    handler: async (ctx, { params }) => {
      const clientId = clientIdOf(ctx);
      // HEAD is a safe method (RFC 9110 §9.2.1): only GET marks the message read.
      const row = ctx.method === 'HEAD' ? await repoOf().findMessage(clientId, params.message_id) : await repoOf().readMessage(clientId, params.message_id);
      if (!row) throw notFound('message not found');
      ctx.body = { success: true, message: messageView(row) };
    },
  });

  api.add({
    ...mailboxes,
    method: 'patch',
    path: '/api/v1/mail/messages/{message_id}',
    operationId: 'updateMessage',
    summary: 'Read and star flags, labels, folder',
    description: 'Only the fields given change. Moving a snoozed message to a folder ends its snooze (and cancels the timer).',
    params: messageIdParams,
    body: messagePatchBody,
    responses: { 200: { description: 'The message', schema: messageResponse }, 404: { description: 'No such message for this client' } },
    handler: async (ctx, { params, body }) => {
      const clientId = clientIdOf(ctx);
      const current = await message(clientId, params.message_id);
      if (body.folder !== undefined && current.snoozed_until !== null) await deps.workflows.cancelSnooze(current);
      const row = await repoOf().updateFlags(clientId, params.message_id, body);
      if (!row) throw notFound('message not found');
      ctx.body = { success: true, message: messageView(row) };
    },
  });

  api.add({
    ...mailboxes,
    method: 'post',
    path: '/api/v1/mail/messages/{message_id}/snooze',
    operationId: 'snoozeMessage',
    summary: 'Snooze a message until a moment in the future',
    description: 'Moves it to the Snoozed folder and remembers the folder it was in; at snoozed_until a Temporal timer moves it back (unread). Snoozing again replaces the timer.',
    params: messageIdParams,
    body: snoozeBody,
    responses: { 200: { description: 'The snoozed message', schema: messageResponse }, 404: { description: 'No such message for this client' } },
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
    ...mailboxes,
    method: 'delete',
    path: '/api/v1/mail/messages/{message_id}/snooze',
    operationId: 'unsnoozeMessage',
    summary: 'Unsnooze: back to the original folder now',
    description: 'Cancels the timer.',
    params: messageIdParams,
    responses: { 200: { description: 'The message in its original folder', schema: messageResponse }, 400: { description: 'The message is not snoozed' }, 404: { description: 'No such message for this client' } },
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
    ...mailboxes,
    method: 'get',
    path: '/api/v1/mail/snoozed',
    operationId: 'listSnoozed',
    summary: 'A mailbox\'s snoozed messages, soonest back first',
    query: snoozedQuery,
    responses: { 200: { description: 'Snoozed messages', schema: snoozedResponse }, 404: { description: 'No mailbox with this address' } },
    handler: async (ctx, { query }) => {
      const clientId = clientIdOf(ctx);
      const box = await mailboxByAddress(clientId, query.email);
      const rows = await repoOf().snoozed(clientId, box.id);
      ctx.body = { success: true, email: box.address, total: rows.length, messages: rows.map(messageSummary) };
    },
  });

  api.add({
    ...mailboxes,
    method: 'get',
    path: '/api/v1/mail/threads/{thread_id}',
    operationId: 'getThread',
    summary: 'A thread in chronological order',
    description: 'thread_id is the first Message-ID of the thread, URL-encoded; the angle brackets may be left out.',
    params: threadParams,
    responses: { 200: { description: 'The thread', schema: threadResponse }, 404: { description: 'No such thread for this client' } },
    handler: async (ctx, { params }) => {
      const threadId = normalizeMessageId(params.thread_id);
      const rows = await repoOf().thread(clientIdOf(ctx), threadId);
      if (rows.length === 0) throw notFound('thread not found');
      ctx.body = { success: true, thread_id: threadId, message_count: rows.length, messages: rows.map(messageView) };
    },
  });

  api.add({
    ...mailboxes,
    method: 'get',
    path: '/api/v1/mail/search',
    operationId: 'searchMail',
    summary: 'Full-text search in a mailbox, most relevant first',
    description: 'Postgres full text (english stemming; subject weighs more than body), `q` in web-search syntax: words, "a phrase", or, -word. Ranked by ts_rank.',
    query: searchQuery,
    responses: { 200: { description: 'Matches', schema: searchResponse }, 404: { description: 'No mailbox with this address' } },
    handler: async (ctx, { query }) => {
      const clientId = clientIdOf(ctx);
      const box = await mailboxByAddress(clientId, query.email);
      const { total, messages } = await repoOf().search(clientId, box.id, query.q, query.limit);
      ctx.body = { success: true, email: box.address, query: query.q, total, messages: messages.map(messageSummary) };
    },
  });

  // ---- templates -----------------------------------------------------------------------------

  api.add({
    ...mailboxes,
    method: 'get',
    path: '/api/v1/mail/templates',
    operationId: 'listMailTemplates',
    summary: 'Active templates, optionally of one type',
    query: templateListQuery,
    responses: { 200: { description: 'Templates', schema: templateListResponse } },
    handler: async (ctx, { query }) => {
      const rows = await repoOf().listTemplates(clientIdOf(ctx), query.template_type, query.include_inactive ?? false);
      ctx.body = { success: true, templates: rows.map(templateView), total: rows.length };
    },
  });

  api.add({
    ...mailboxes,
    method: 'post',
    path: '/api/v1/mail/templates',
    operationId: 'createMailTemplate',
    summary: 'Create a template with {{variable}} placeholders',
    description: 'The placeholders of html_source are extracted and checked against `variables` (422 naming any not listed, or listed but unused); without `variables` they are the placeholders.',
    body: templateCreateBody,
    responses: { 201: { description: 'Created', schema: templateResponse } },
    handler: async (ctx, { body }) => {
      const variables = body.variables ?? placeholders(body.html_source);
      checkTemplateVariables(body.html_source, variables, ['body', 'variables']);
      const row = await repoOf().createTemplate(clientIdOf(ctx), { name: body.name, description: body.description ?? null, template_type: body.template_type, html_source: body.html_source, variables });
      ctx.status = 201;
      ctx.body = { success: true, template: templateView(row) };
    },
  });

  api.add({
    ...mailboxes,
    method: 'patch',
    path: '/api/v1/mail/templates/{template_id}',
    operationId: 'updateMailTemplate',
    summary: 'Change a template (only the fields given)',
    description: 'A new html_source without `variables` takes its placeholders as the variables; given variables are checked against the (new or current) html_source.',
    params: templateIdParams,
    body: templatePatchBody,
    responses: { 200: { description: 'The template', schema: templateResponse }, 404: { description: 'No such template for this client' } },
    handler: async (ctx, { params, body }) => {
      const clientId = clientIdOf(ctx);
      const current = await template(clientId, params.template_id);
      const patch = { ...body };
      if (body.html_source !== undefined || body.variables !== undefined) {
        const source = body.html_source ?? current.html_source;
        patch.variables = body.variables ?? (body.html_source !== undefined ? placeholders(source) : current.variables);
        checkTemplateVariables(source, patch.variables, ['body', 'variables']);
      }
      const row = await repoOf().updateTemplate(clientId, current.id, patch);
      if (!row) throw notFound('template not found');
      ctx.body = { success: true, template: templateView(row) };
    },
  });

  api.add({
    ...mailboxes,
    method: 'delete',
    path: '/api/v1/mail/templates/{template_id}',
    operationId: 'deleteMailTemplate',
    summary: 'Soft-delete a template (is_active false)',
    params: templateIdParams,
    responses: { 204: { description: 'Deleted (inactive)' }, 404: { description: 'No such template for this client' } },
    handler: async (ctx, { params }) => {
      const clientId = clientIdOf(ctx);
      await template(clientId, params.template_id);
      await repoOf().updateTemplate(clientId, params.template_id, { is_active: false });
      ctx.status = 204;
    },
  });
}
