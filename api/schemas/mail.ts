import { z } from 'zod';

// ---- shared pieces ----------------------------------------------------------------------------

// RFC 5321's limits (a 64-character local part, 254 in all), which `format: email` implies and the columns hold.
const email = z
  .string()
  .trim()
  .max(254)
  .email()
  .refine((v) => v.lastIndexOf('@') <= 64, 'the part before @ is at most 64 characters');
/** Ids are Postgres `integer`s: a larger number is refused here rather than by the database. */
const MAX_ID = 2 ** 31 - 1;
const idParam = (what: string) =>
  z
    .string()
    .regex(/^\d{1,9}$/, `${what} id must be an integer`)
    .transform(Number)
    .describe(`${what} id (integer)`);
const queryBool = z.enum(['true', 'false']).transform((v) => v === 'true');
// A list name as the unsubscribe pages know it (lib/unsubscribe.ts LIST_NAME).
const listName = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'a list name: lower-case letters, digits, ".", "_" or "-", at most 64');
const folderName = z.string().trim().min(1).max(200);
const labelName = z.string().trim().min(1).max(100);

const server = z.strictObject({
  host: z.string().trim().min(1).max(253),
  port: z.number().int().min(1).max(65535),
  secure: z.boolean().describe('TLS from the first byte (465, 993); false: plain, STARTTLS when the server offers it'),
  username: z.string().min(1).max(320),
  password: z.string().min(1).max(1000).describe('stored encrypted (AES-256-GCM); never shown again'),
});

// ---- mailboxes -----------------------------------------------------------------------------------

export const mailboxCreateBody = z.strictObject({
  address: email,
  display_name: z.string().trim().max(200).nullable().optional(),
  smtp: server,
  imap: server.nullable().optional().describe('optional; without it the mailbox only sends'),
});

export const mailboxPatchBody = z.strictObject({
  address: email.optional(),
  display_name: z.string().trim().max(200).nullable().optional(),
  smtp: server.optional().describe('replaces the SMTP settings whole (password included)'),
  imap: server
    .nullable()
    .optional()
    .describe('replaces the IMAP settings whole and restarts sync from the beginning; null removes IMAP'),
});

export const mailboxIdParams = z.object({ mailbox_id: idParam('mailbox') });

const serverView = z.object({ host: z.string(), port: z.number().int(), secure: z.boolean(), username: z.string() });

export const mailboxView = z
  .object({
    id: z.number().int(),
    address: z.string(),
    display_name: z.string().nullable(),
    smtp: serverView,
    imap: serverView.nullable(),
    last_synced_at: z.string().nullable(),
    last_sync_error: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'MailMailbox', description: 'A mailbox (passwords are never shown)' });

export const mailboxResponse = z.object({ success: z.literal(true), mailbox: mailboxView });
export const mailboxListResponse = z.object({
  success: z.literal(true),
  mailboxes: z.array(mailboxView),
  total: z.number().int(),
});
const loginResult = z.object({ ok: z.boolean(), error: z.string().nullable() });
export const mailboxTestResponse = z.object({
  success: z.boolean().describe('true when every configured server accepted the login'),
  smtp: loginResult,
  imap: loginResult.nullable(),
});
export const mailboxSyncResponse = z.object({ success: z.literal(true), message: z.string() });

export const foldersResponse = z.object({
  success: z.literal(true),
  folders: z.array(z.object({ name: z.string(), total: z.number().int(), unread: z.number().int() })),
});
export const labelsResponse = z.object({
  success: z.literal(true),
  labels: z.array(z.object({ name: z.string(), total: z.number().int() })),
});
export const mailboxScopeQuery = z.strictObject({
  mailbox_id: z.coerce.number().int().min(1).max(MAX_ID).describe('mailbox id'),
});

// ---- messages ------------------------------------------------------------------------------------

export const messageSendBody = z
  .strictObject({
    mailbox_id: z.number().int().min(1).max(MAX_ID),
    to: z.array(email).min(1).max(100),
    cc: z.array(email).max(100).optional(),
    subject: z
      .string()
      .max(998)
      .optional()
      .describe("required unless the template gives one; may use the template's {{variables}}"),
    text: z.string().max(1_000_000).optional(),
    html: z.string().max(2_000_000).optional(),
    template_id: z
      .number()
      .int()
      .min(1)
      .max(MAX_ID)
      .optional()
      .describe('an active template; its html_source with `variables` filled becomes the HTML body'),
    variables: z
      .record(z.string(), z.union([z.string(), z.number(), z.boolean()]).transform(String))
      .optional()
      .describe("values of the template's {{variables}} (and of the subject's)"),
    list: listName
      .optional()
      .describe(
        'the mailing list the message belongs to: recipients unsubscribed from it (or from everything) are refused with 409',
      ),
    in_reply_to: z
      .number()
      .int()
      .min(1)
      .max(MAX_ID)
      .optional()
      .describe(
        'id of a stored message this one answers: In-Reply-To and References are set from it, so the reply joins its thread',
      ),
  })
  .refine((b) => b.text !== undefined || b.html !== undefined || b.template_id !== undefined, {
    message: 'one of text, html or template_id is required',
    path: ['text'],
  })
  .meta({ anyOf: [{ required: ['text'] }, { required: ['html'] }, { required: ['template_id'] }] });

export const messageListQuery = z.strictObject({
  mailbox_id: z.coerce.number().int().min(1).max(MAX_ID).optional(),
  folder: folderName.optional().describe('INBOX, Sent, Snoozed or a folder of your own'),
  label: labelName.optional(),
  is_read: queryBool.optional(),
  page: z.coerce.number().int().min(1).max(100_000).default(1),
  page_size: z.coerce.number().int().min(1).max(100).default(20),
});

export const messageIdParams = z.object({ message_id: idParam('message') });

export const messagePatchBody = z.strictObject({
  is_read: z.boolean().optional(),
  is_starred: z.boolean().optional(),
  labels: z.array(labelName).max(50).optional().describe('replaces the labels'),
  folder: folderName.optional().describe('moves the message (a snoozed one stops being snoozed)'),
});

// ISO 8601: a date-time (offset optional) or a calendar date; zod's own patterns, so that both forms share the one error.
const isoMoment = new RegExp(
  `^(?:${z.regexes.datetime({ offset: true, local: true }).source.slice(1, -1)}|${z.regexes.date.source.slice(1, -1)})$`,
);
/** A date is 00:00 of that day and a time without an offset is UTC, so that the moment never depends on the server's time zone. */
const asUtc = (v: string) => (v.length === 10 ? `${v}T00:00:00Z` : /(?:Z|[+-]\d\d:\d\d)$/.test(v) ? v : `${v}Z`);

export const snoozeBody = z.strictObject({
  snoozed_until: z
    .string()
    .regex(isoMoment, 'Invalid ISO datetime')
    .transform(asUtc)
    .describe(
      'ISO 8601, in the future. A date-time without an offset is read as UTC; a date (YYYY-MM-DD) is 00:00 UTC of that day',
    ),
});

export const snoozedQuery = z.strictObject({ email: email.describe('the mailbox address') });

export const threadParams = z.object({
  thread_id: z
    .string()
    .min(1)
    .max(1000)
    .describe('the first Message-ID of the thread, URL-encoded (e.g. %3Cabc%40example.com%3E)'),
});

export const searchQuery = z.strictObject({
  email: email.describe('the mailbox address'),
  q: z.string().trim().min(1).max(500).describe('full-text query, web-search syntax: words, "a phrase", or, -not'),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});

const messageFields = {
  id: z.number().int(),
  mailbox_id: z.number().int(),
  message_id: z.string(),
  in_reply_to: z.string().nullable(),
  references: z.array(z.string()),
  thread_id: z.string(),
  direction: z.enum(['inbound', 'outbound']),
  from_address: z.string(),
  to_addresses: z.array(z.string()),
  cc_addresses: z.array(z.string()).nullable(),
  subject: z.string(),
  date: z.string(),
  folder: z.string(),
  is_read: z.boolean(),
  is_starred: z.boolean(),
  labels: z.array(z.string()),
  snoozed_until: z.string().nullable(),
  list: z.string().nullable(),
  template_id: z.number().int().nullable(),
  send_status: z
    .enum(['queued', 'sent', 'failed'])
    .nullable()
    .describe('outbound: queued until the SMTP server accepted it for every recipient'),
  send_error: z.string().nullable(),
  sent_at: z.string().nullable(),
  created_at: z.string(),
};

export const messageView = z
  .object({ ...messageFields, body_text: z.string(), body_html: z.string().nullable() })
  .meta({ id: 'MailMessage', description: 'A mail message (spec §2.13)' });
export const messageSummaryView = z
  .object({
    ...messageFields,
    body_text_preview: z.string().describe('the first 200 characters of the text body'),
    rank: z.number().optional().describe('search relevance (ts_rank)'),
  })
  .meta({ id: 'MailMessageSummary' });

export const messageResponse = z.object({ success: z.literal(true), message: messageView });
export const messageListResponse = z.object({
  success: z.literal(true),
  messages: z.array(messageSummaryView),
  total: z.number().int(),
  page: z.number().int(),
  page_size: z.number().int(),
});
export const snoozedResponse = z.object({
  success: z.literal(true),
  email: z.string(),
  total: z.number().int(),
  messages: z.array(messageSummaryView),
});
export const threadResponse = z.object({
  success: z.literal(true),
  thread_id: z.string(),
  message_count: z.number().int(),
  messages: z.array(messageView),
});
export const searchResponse = z.object({
  success: z.literal(true),
  email: z.string(),
  query: z.string(),
  total: z.number().int(),
  messages: z.array(messageSummaryView),
});
/** The raw message as read by the route's body reader (api/routes/mail/shared.ts readRawMessage). */
export const rawMessageBody = z.custom<Buffer>((v) => Buffer.isBuffer(v), 'the body must be one RFC 5322 message');
export const importDoc = z.string().meta({ format: 'binary', description: 'one RFC 5322 message' });

// ---- templates -----------------------------------------------------------------------------------

const templateType = z.enum(['signature', 'header', 'layout', 'full']);
const variableName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_.-]*$/, 'a variable name: letters, digits, "_", "." or "-"');

export const templateCreateBody = z.strictObject({
  name: z.string().trim().min(1).max(200),
  description: z.string().max(2000).nullable().optional(),
  template_type: templateType,
  html_source: z.string().min(1).max(1_000_000).describe('HTML with {{variable}} placeholders'),
  variables: z
    .array(variableName)
    .max(200)
    .optional()
    .describe(
      'the placeholders html_source uses; default: those it uses. Each placeholder must be listed and each listed name used',
    ),
});

export const templatePatchBody = z.strictObject({
  name: z.string().trim().min(1).max(200).optional(),
  description: z.string().max(2000).nullable().optional(),
  template_type: templateType.optional(),
  html_source: z.string().min(1).max(1_000_000).optional(),
  variables: z.array(variableName).max(200).optional(),
  is_active: z.boolean().optional(),
});

export const templateListQuery = z.strictObject({
  template_type: templateType.optional(),
  include_inactive: queryBool.optional().describe('also deleted (inactive) templates'),
});

export const templateIdParams = z.object({ template_id: idParam('template') });

export const templateView = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string().nullable(),
    template_type: templateType,
    html_source: z.string(),
    variables: z.array(z.string()),
    is_active: z.boolean(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'MailTemplate' });

export const templateResponse = z.object({ success: z.literal(true), template: templateView });
export const templateListResponse = z.object({
  success: z.literal(true),
  templates: z.array(templateView),
  total: z.number().int(),
});
