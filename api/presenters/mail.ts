import type { MailboxRow, MessageRow, TemplateRow } from '../../db/repositories/mail';
import { iso } from '../../lib/dates';

/** The API's views of mail rows (spec §2.13): what a response shows of a mailbox, a message and a template. */

export function mailboxView(r: MailboxRow) {
  return {
    id: r.id,
    address: r.address,
    display_name: r.display_name,
    smtp: { host: r.smtp_host, port: r.smtp_port, secure: r.smtp_secure, username: r.smtp_username },
    imap:
      r.imap_host && r.imap_port !== null && r.imap_username !== null
        ? { host: r.imap_host, port: r.imap_port, secure: r.imap_secure ?? false, username: r.imap_username }
        : null,
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
