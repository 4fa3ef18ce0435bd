import type { RelationMappings } from 'objection';
import { TenantModel } from './tenant';

/**
 * Mail (db/migrations/20261125000400_mail.ts): a client's mailboxes, their messages (inbound and
 * outbound, threaded by thread_id) and templates. Every query starts from `forClient`
 * (db/models/tenant.ts); db/repositories/mail.ts holds the queries.
 */

/** A mailbox with its SMTP/IMAP settings; passwords stay sealed here (MailRepository.servers opens them). */
export class MailboxModel extends TenantModel {
  static override tableName = 'mail_mailboxes';

  id!: number;
  address!: string;
  display_name!: string | null;
  smtp_host!: string;
  smtp_port!: number;
  smtp_secure!: boolean;
  smtp_username!: string;
  smtp_password_sealed!: string;
  imap_host!: string | null;
  imap_port!: number | null;
  imap_secure!: boolean | null;
  imap_username!: string | null;
  imap_password_sealed!: string | null;
  // bigint columns: pg hands them over as strings.
  imap_uidvalidity!: string | null;
  imap_last_uid!: string;
  last_synced_at!: Date | null;
  last_sync_error!: string | null;
  created_at!: Date;
  updated_at!: Date;

  messages?: MailMessageModel[];

  static override relationMappings = (): RelationMappings => ({
    messages: {
      relation: TenantModel.HasManyRelation,
      modelClass: MailMessageModel,
      join: { from: 'mail_mailboxes.id', to: 'mail_messages.mailbox_id' },
    },
  });
}

/** Per recipient, once the SMTP server took the message (or it was skipped); a retry skips those. */
export type MailDelivery = Record<
  string,
  { accepted_at: string; response: string } | { skipped_at: string; reason: string }
>;

/** A stored message: the parsed headers and bodies, and where it stands in the mailbox. */
export class MailMessageModel extends TenantModel {
  static override tableName = 'mail_messages';
  // Only these are jsonb; references and labels are text[] and go to pg as arrays.
  static override jsonAttributes = ['to_addresses', 'cc_addresses', 'delivery'];

  id!: number;
  mailbox_id!: number;
  message_id!: string;
  in_reply_to!: string | null;
  references!: string[];
  thread_id!: string;
  direction!: 'inbound' | 'outbound';
  from_address!: string;
  to_addresses!: string[];
  cc_addresses!: string[] | null;
  subject!: string;
  body_text!: string;
  body_html!: string | null;
  date!: Date;
  folder!: string;
  is_read!: boolean;
  is_starred!: boolean;
  labels!: string[];
  snoozed_until!: Date | null;
  snooze_original_folder!: string | null;
  list!: string | null;
  template_id!: number | null;
  send_status!: 'queued' | 'sent' | 'failed' | null;
  send_error!: string | null;
  delivery!: MailDelivery;
  sent_at!: Date | null;
  created_at!: Date;
  updated_at!: Date;

  mailbox?: MailboxModel;
  template?: MailTemplateModel | null;

  static override relationMappings = (): RelationMappings => ({
    mailbox: {
      relation: TenantModel.BelongsToOneRelation,
      modelClass: MailboxModel,
      join: { from: 'mail_messages.mailbox_id', to: 'mail_mailboxes.id' },
    },
    template: {
      relation: TenantModel.BelongsToOneRelation,
      modelClass: MailTemplateModel,
      join: { from: 'mail_messages.template_id', to: 'mail_templates.id' },
    },
  });
}

export class MailTemplateModel extends TenantModel {
  static override tableName = 'mail_templates';

  id!: number;
  name!: string;
  description!: string | null;
  template_type!: 'signature' | 'header' | 'layout' | 'full';
  html_source!: string;
  variables!: string[];
  is_active!: boolean;
  created_at!: Date;
  updated_at!: Date;

  static override relationMappings = (): RelationMappings => ({
    messages: {
      relation: TenantModel.HasManyRelation,
      modelClass: MailMessageModel,
      join: { from: 'mail_templates.id', to: 'mail_messages.template_id' },
    },
  });
}
