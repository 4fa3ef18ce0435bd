import type { Knex } from 'knex';
import type { CredentialCipher, SealContext } from '../../lib/cipher';
import { nextId } from './integrations';
import type { MailServer } from '../../lib/mail/connect';
import { threadIdOf } from '../../lib/mail/message-id';
import type { ParsedMessage } from '../../lib/mail/parse';
import { MailboxModel, MailMessageModel, MailTemplateModel } from '../models/mail';

/** The row types other modules import: the models themselves (db/models/mail.ts). */
export type MailboxRow = MailboxModel;
export type MessageRow = MailMessageModel;
export type TemplateRow = MailTemplateModel;

export interface ServerInput {
  host: string;
  port: number;
  secure: boolean;
  username: string;
  password: string;
}

export interface MailboxInput {
  address?: string;
  display_name?: string | null;
  smtp?: ServerInput;
  imap?: ServerInput | null;
}

export interface MessageFilter {
  mailbox_id?: number;
  folder?: string;
  label?: string;
  is_read?: boolean;
  page: number;
  page_size: number;
}

export interface MessageFlags {
  is_read?: boolean;
  is_starred?: boolean;
  labels?: string[];
  folder?: string;
}

/** The folders every mailbox has; messages may also be moved to folders of the client's own naming. */
export const INBOX = 'INBOX';
export const SENT = 'Sent';
export const SNOOZED = 'Snoozed';

/** Where a mailbox password is sealed for (lib/cipher.ts's associated data). */
export const passwordSealedAt = (server: 'smtp' | 'imap', clientId: string, id: number): SealContext => ({
  table: 'mail_mailboxes',
  column: `${server}_password_sealed`,
  clientId,
  rowId: id,
});

/**
 * Mailboxes, messages and templates of one client: every query starts from the models' `forClient`
 * (db/models/tenant.ts), the worker-side ones too (a workflow carries the client id with the row
 * id). Only the reconciler's sweeps cross clients, each saying so.
 * Passwords go in sealed and come out only through `servers()`.
 */
export class MailRepository {
  constructor(
    private readonly db: Knex,
    private readonly cipher: CredentialCipher,
  ) {}

  private mailboxes = (clientId: string) => MailboxModel.forClient<MailboxModel>(this.db, clientId);
  private messages = (clientId: string) => MailMessageModel.forClient<MailMessageModel>(this.db, clientId);
  private templates = (clientId: string) => MailTemplateModel.forClient<MailTemplateModel>(this.db, clientId);

  // ---- mailboxes -----------------------------------------------------------------------------

  private serverColumns(prefix: 'smtp' | 'imap', s: ServerInput | null, clientId: string, id: number) {
    return {
      [`${prefix}_host`]: s?.host ?? null,
      [`${prefix}_port`]: s?.port ?? null,
      [`${prefix}_secure`]: s?.secure ?? null,
      [`${prefix}_username`]: s?.username ?? null,
      [`${prefix}_password_sealed`]: s ? this.cipher.seal(s.password, passwordSealedAt(prefix, clientId, id)) : null,
    };
  }

  async createMailbox(
    clientId: string,
    input: Required<Pick<MailboxInput, 'address' | 'smtp'>> & MailboxInput,
  ): Promise<MailboxRow> {
    // The id first: the sealed passwords are bound to their row (lib/cipher.ts).
    const id = await nextId(this.db, 'mail_mailboxes');
    return MailboxModel.query(this.db)
      .insert({
        id,
        client_id: clientId,
        address: input.address,
        display_name: input.display_name ?? null,
        ...this.serverColumns('smtp', input.smtp, clientId, id),
        ...this.serverColumns('imap', input.imap ?? null, clientId, id),
      })
      .returning('*');
  }

  async listMailboxes(clientId: string): Promise<MailboxRow[]> {
    return this.mailboxes(clientId).orderBy('id');
  }

  /**
   * The workers' reconciler (workers/mail-reconcile.ts), all clients: outbound messages still
   * queued that were stored between `after` and `before`, oldest first.
   */
  async queuedSends(after: Date, before: Date, limit: number): Promise<MessageRow[]> {
    // Across clients on purpose: each row carries its client_id, which its workflow is started with.
    return MailMessageModel.query(this.db)
      .where({ direction: 'outbound', send_status: 'queued' })
      .andWhere('created_at', '>', after)
      .andWhere('created_at', '<', before)
      .orderBy('created_at')
      .limit(limit);
  }

  /** The reconciler's too, all clients: mailboxes with IMAP settings changed between `after` (or ever) and `before`. */
  async syncedMailboxes(after: Date | undefined, before: Date): Promise<MailboxRow[]> {
    const q = MailboxModel.query(this.db).whereNotNull('imap_host').andWhere('updated_at', '<', before);
    if (after) void q.andWhere('updated_at', '>', after);
    return q.orderBy('id');
  }

  async findMailbox(clientId: string, id: number): Promise<MailboxRow | undefined> {
    return this.mailboxes(clientId).findById(id);
  }

  async findMailboxByAddress(clientId: string, address: string): Promise<MailboxRow | undefined> {
    return this.mailboxes(clientId).whereRaw('lower(address) = lower(?)', [address]).first();
  }

  /** Changes only what is given; a new server replaces the old one whole (password included); `imap: null` removes IMAP. */
  async updateMailbox(clientId: string, id: number, patch: MailboxInput): Promise<MailboxRow | undefined> {
    const changes: Record<string, unknown> = { updated_at: this.db.fn.now() };
    if (patch.address !== undefined) changes.address = patch.address;
    if (patch.display_name !== undefined) changes.display_name = patch.display_name;
    if (patch.smtp !== undefined) Object.assign(changes, this.serverColumns('smtp', patch.smtp, clientId, id));
    if (patch.imap !== undefined)
      Object.assign(changes, this.serverColumns('imap', patch.imap, clientId, id), {
        imap_uidvalidity: null,
        imap_last_uid: 0,
      });
    const [row] = await this.mailboxes(clientId).where({ id }).patch(changes).returning('*');
    return row;
  }

  async deleteMailbox(clientId: string, id: number): Promise<boolean> {
    return (await this.mailboxes(clientId).deleteById(id)) > 0;
  }

  /** The mailbox's servers with their passwords opened (for the worker and the login check only). */
  servers(row: MailboxRow): { smtp: MailServer; imap: MailServer | null } {
    const smtp = {
      host: row.smtp_host,
      port: row.smtp_port,
      secure: row.smtp_secure,
      username: row.smtp_username,
      password: this.cipher.open(row.smtp_password_sealed, passwordSealedAt('smtp', row.client_id, row.id)),
    };
    const imap =
      row.imap_host && row.imap_port !== null && row.imap_username !== null && row.imap_password_sealed
        ? {
            host: row.imap_host,
            port: row.imap_port,
            secure: row.imap_secure ?? false,
            username: row.imap_username,
            password: this.cipher.open(row.imap_password_sealed, passwordSealedAt('imap', row.client_id, row.id)),
          }
        : null;
    return { smtp, imap };
  }

  async recordSync(
    clientId: string,
    id: number,
    state: { uidvalidity?: string; lastUid?: number; error: string | null },
  ): Promise<void> {
    await this.mailboxes(clientId)
      .findById(id)
      .patch({
        ...(state.uidvalidity !== undefined ? { imap_uidvalidity: state.uidvalidity } : {}),
        ...(state.lastUid !== undefined ? { imap_last_uid: String(state.lastUid) } : {}),
        last_synced_at: this.db.fn.now() as unknown as Date,
        last_sync_error: state.error,
      });
  }

  /**
   * Re-seals every mailbox password not sealed with the current key (rotation, `integrations:reseal`).
   * `resealed`: the passwords updated; `unopenable`: those no key of the cipher opens (or damaged),
   * left as they are. Each password is updated only if it still holds what was read: a PATCH in
   * between sealed it with the current key already. Without `clientId`, every client's (the CLI).
   */
  async reseal(clientId?: string): Promise<{ resealed: number; unopenable: string[] }> {
    const scope = () => (clientId !== undefined ? this.mailboxes(clientId) : MailboxModel.query(this.db));
    const rows = await scope().select('id', 'client_id', 'smtp_password_sealed', 'imap_password_sealed');
    const outcome = { resealed: 0, unopenable: [] as string[] };
    for (const r of rows) {
      // One update per password: a PATCH replaces SMTP and IMAP separately.
      for (const [column, sealed, name] of [
        ['smtp_password_sealed', r.smtp_password_sealed, 'smtp'],
        ['imap_password_sealed', r.imap_password_sealed, 'imap'],
      ] as const) {
        if (!sealed || this.cipher.isCurrent(sealed)) continue;
        let password: string;
        try {
          password = this.cipher.open(sealed, passwordSealedAt(name, r.client_id, r.id));
        } catch {
          outcome.unopenable.push(`mail_mailboxes ${r.id} (${name} password)`);
          continue;
        }
        outcome.resealed += await MailboxModel.forClient<MailboxModel>(this.db, r.client_id)
          .where({ id: r.id, [column]: sealed })
          .patch({ [column]: this.cipher.seal(password, passwordSealedAt(name, r.client_id, r.id)) });
      }
    }
    return outcome;
  }

  // ---- messages ------------------------------------------------------------------------------

  /**
   * Stores a message unless the mailbox already has its Message-ID: `created` false then, with the
   * stored copy. The thread is the one of a known ancestor (References / In-Reply-To), else the first
   * of them, else the message's own Message-ID (lib/mail/message-id.ts threadIdOf). Replies stored
   * before it took its Message-ID as their thread; in the same transaction they move to its thread,
   * so the order messages arrive in does not matter.
   */
  async insertMessage(
    clientId: string,
    mailboxId: number,
    message: ParsedMessage,
    extra: {
      direction: 'inbound' | 'outbound';
      folder: string;
      is_read?: boolean;
      list?: string | null;
      template_id?: number | null;
      send_status?: 'queued' | null;
    },
  ): Promise<{ row: MessageRow; created: boolean }> {
    const existing = await this.byMessageId(clientId, mailboxId, message.message_id);
    if (existing) return { row: existing, created: false };
    return this.db.transaction(async (trx) => {
      // One message of the client threaded at a time: a reply and its ancestor stored at once would each miss the other.
      await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`mail-thread/${clientId}`]);
      const ancestors = [...message.references, ...(message.in_reply_to ? [message.in_reply_to] : [])];
      const known = ancestors.length
        ? await MailMessageModel.forClient<MailMessageModel>(trx, clientId)
            .whereIn('message_id', ancestors)
            .select('message_id', 'thread_id')
        : [];
      const threadId = threadIdOf(
        { messageId: message.message_id, inReplyTo: message.in_reply_to, references: message.references },
        (id) => known.find((k) => k.message_id === id)?.thread_id,
      );
      // knex, not the model: an insert the conflict clause ignored returns no row, and the model would answer with its input.
      const [inserted] = (await trx('mail_messages')
        .insert({
          client_id: clientId,
          mailbox_id: mailboxId,
          message_id: message.message_id,
          in_reply_to: message.in_reply_to,
          references: message.references,
          thread_id: threadId,
          direction: extra.direction,
          from_address: message.from_address,
          to_addresses: JSON.stringify(message.to_addresses),
          cc_addresses: message.cc_addresses === null ? null : JSON.stringify(message.cc_addresses),
          subject: message.subject,
          body_text: message.body_text,
          body_html: message.body_html,
          date: message.date,
          folder: extra.folder,
          is_read: extra.is_read ?? false,
          list: extra.list ?? null,
          template_id: extra.template_id ?? null,
          send_status: extra.send_status ?? null,
        })
        .onConflict(['mailbox_id', 'message_id'])
        .ignore()
        .returning('*')) as Record<string, unknown>[];
      if (!inserted) {
        // A concurrent import of the same message won the race: answer with its copy.
        const raced = await MailMessageModel.forClient<MailMessageModel>(trx, clientId).findOne({
          mailbox_id: mailboxId,
          message_id: message.message_id,
        });
        if (!raced) throw new Error(`message ${message.message_id} neither inserted nor found`);
        return { row: raced, created: false };
      }
      // Descendants stored while this message was unknown have its Message-ID as their thread (threadIdOf's fallback).
      if (threadId !== message.message_id) {
        await MailMessageModel.forClient<MailMessageModel>(trx, clientId)
          .where({ thread_id: message.message_id })
          .patch({ thread_id: threadId, updated_at: trx.fn.now() as unknown as Date });
      }
      return { row: MailMessageModel.fromDatabaseJson(inserted), created: true };
    });
  }

  private async byMessageId(clientId: string, mailboxId: number, messageId: string): Promise<MessageRow | undefined> {
    return this.messages(clientId).findOne({ mailbox_id: mailboxId, message_id: messageId });
  }

  async listMessages(clientId: string, f: MessageFilter): Promise<{ messages: MessageRow[]; total: number }> {
    const q = this.messages(clientId);
    if (f.mailbox_id !== undefined) void q.andWhere({ mailbox_id: f.mailbox_id });
    if (f.folder !== undefined) void q.andWhere({ folder: f.folder });
    if (f.label !== undefined) void q.andWhereRaw('? = ANY(labels)', [f.label]);
    if (f.is_read !== undefined) void q.andWhere({ is_read: f.is_read });
    const total = await q.clone().resultSize();
    const messages = await q
      .orderBy([
        { column: 'date', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(f.page_size)
      .offset((f.page - 1) * f.page_size);
    return { messages, total };
  }

  async findMessage(clientId: string, id: number): Promise<MessageRow | undefined> {
    return this.messages(clientId).findById(id);
  }

  /** The full message, marked read (spec §4.10). */
  async readMessage(clientId: string, id: number): Promise<MessageRow | undefined> {
    const [row] = await this.messages(clientId)
      .where({ id })
      .patch({ is_read: true, updated_at: this.db.fn.now() as unknown as Date })
      .returning('*');
    return row;
  }

  async updateFlags(clientId: string, id: number, flags: MessageFlags): Promise<MessageRow | undefined> {
    const changes: Record<string, unknown> = { updated_at: this.db.fn.now() };
    if (flags.is_read !== undefined) changes.is_read = flags.is_read;
    if (flags.is_starred !== undefined) changes.is_starred = flags.is_starred;
    if (flags.labels !== undefined) changes.labels = flags.labels;
    if (flags.folder !== undefined)
      Object.assign(changes, { folder: flags.folder, snoozed_until: null, snooze_original_folder: null });
    const [row] = await this.messages(clientId).where({ id }).patch(changes).returning('*');
    return row;
  }

  async deleteMessage(clientId: string, id: number): Promise<boolean> {
    return (await this.messages(clientId).deleteById(id)) > 0;
  }

  /** Folders of a mailbox with their message and unread counts. */
  async folders(clientId: string, mailboxId: number): Promise<{ name: string; total: number; unread: number }[]> {
    const rows = (await this.messages(clientId)
      .where({ mailbox_id: mailboxId })
      .groupBy('folder')
      .select('folder as name')
      .count({ total: '*' })
      .select(this.db.raw('count(*) FILTER (WHERE NOT is_read) AS unread'))
      .orderBy('folder')) as unknown as { name: string; total: string; unread: string }[];
    const byName = new Map(
      rows.map((r) => [r.name, { name: r.name, total: Number(r.total), unread: Number(r.unread) }]),
    );
    for (const name of [INBOX, SENT, SNOOZED]) if (!byName.has(name)) byName.set(name, { name, total: 0, unread: 0 });
    return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  /** Labels in use in a mailbox with their message counts. */
  async labels(clientId: string, mailboxId: number): Promise<{ name: string; total: number }[]> {
    const rows = (await this.messages(clientId)
      .where({ mailbox_id: mailboxId })
      .select(this.db.raw('unnest(labels) AS name'))
      .count({ total: '*' })
      .groupByRaw('1')
      .orderBy('name')) as unknown as { name: string; total: string }[];
    return rows.map((r) => ({ name: r.name, total: Number(r.total) }));
  }

  /** Moves the message to Snoozed (remembering the folder it was in, unless it is already snoozed). */
  async snooze(clientId: string, id: number, until: Date): Promise<MessageRow | undefined> {
    const [row] = await this.messages(clientId)
      .where({ id })
      .patch({
        snoozed_until: until,
        snooze_original_folder: this.db.raw(
          'CASE WHEN folder = ? THEN coalesce(snooze_original_folder, ?) ELSE folder END',
          [SNOOZED, INBOX],
        ) as unknown as string,
        folder: SNOOZED,
        updated_at: this.db.fn.now() as unknown as Date,
      })
      .returning('*');
    return row;
  }

  private unsnoozed() {
    return {
      folder: this.db.raw('coalesce(snooze_original_folder, ?)', [INBOX]) as unknown as string,
      snoozed_until: null,
      snooze_original_folder: null,
      updated_at: this.db.fn.now() as unknown as Date,
    };
  }

  /** Back to the remembered folder now; undefined when the message is not snoozed. */
  async unsnooze(clientId: string, id: number): Promise<MessageRow | undefined> {
    const [row] = await this.messages(clientId)
      .where({ id })
      .where({ folder: SNOOZED })
      .patch(this.unsnoozed())
      .returning('*');
    return row;
  }

  /**
   * The snooze timer's end: back to the remembered folder, but only if the message is still
   * snoozed until that moment (a later snooze or an unsnooze has its own timer, or none). Idempotent.
   */
  async returnSnoozed(clientId: string, id: number, until: Date): Promise<boolean> {
    const n = await this.messages(clientId)
      .findById(id)
      .where({ folder: SNOOZED, snoozed_until: until })
      .patch({ ...this.unsnoozed(), is_read: false });
    return n > 0;
  }

  async snoozed(clientId: string, mailboxId: number): Promise<MessageRow[]> {
    return this.messages(clientId)
      .where({ mailbox_id: mailboxId, folder: SNOOZED })
      .orderBy([{ column: 'snoozed_until' }, { column: 'id' }]);
  }

  /** Every message of the client's thread, oldest first. */
  async thread(clientId: string, threadId: string): Promise<MessageRow[]> {
    return this.messages(clientId)
      .where({ thread_id: threadId })
      .orderBy([{ column: 'date' }, { column: 'id' }]);
  }

  /** Full-text search in one mailbox (websearch syntax), most relevant first. */
  async search(
    clientId: string,
    mailboxId: number,
    query: string,
    limit: number,
  ): Promise<{ total: number; messages: (MessageRow & { rank: number })[] }> {
    const q = this.db.raw('websearch_to_tsquery(?, ?)', ['english', query]);
    const rows = (await this.messages(clientId)
      .select(
        'mail_messages.*',
        this.db.raw('ts_rank(search, ?) AS rank', [q]),
        this.db.raw('count(*) OVER () AS total_hits'),
      )
      .where({ mailbox_id: mailboxId })
      .whereRaw('search @@ ?', [q])
      .orderBy([
        { column: 'rank', order: 'desc' },
        { column: 'date', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(limit)) as (MessageRow & { rank: number | string; total_hits: string; search?: unknown })[];
    const total = rows[0] ? Number(rows[0].total_hits) : 0;
    const messages = rows.map((m) => {
      const { total_hits: _t, search: _s, ...rest } = m;
      return Object.assign(MailMessageModel.fromJson(rest, { skipValidation: true }), { rank: Number(m.rank) });
    });
    return { total, messages };
  }

  // ---- outbound delivery (worker) --------------------------------------------------------------

  /** Records that the SMTP server accepted the message for `recipient`, at once, so that a retry never sends it again. */
  async recordAccepted(clientId: string, id: number, recipient: string, response: string): Promise<void> {
    await this.messages(clientId)
      .findById(id)
      .patch({
        delivery: this.db.raw(
          "delivery || jsonb_build_object(?::text, jsonb_build_object('accepted_at', now(), 'response', ?::text))",
          [recipient, response],
        ) as unknown as MessageRow['delivery'],
        updated_at: this.db.fn.now() as unknown as Date,
      });
  }

  /** Records that `recipient` gets no copy (e.g. unsubscribed after the message was accepted for delivery). */
  async recordSkipped(clientId: string, id: number, recipient: string, reason: string): Promise<void> {
    await this.messages(clientId)
      .findById(id)
      .patch({
        delivery: this.db.raw(
          "delivery || jsonb_build_object(?::text, jsonb_build_object('skipped_at', now(), 'reason', ?::text))",
          [recipient, reason],
        ) as unknown as MessageRow['delivery'],
        updated_at: this.db.fn.now() as unknown as Date,
      });
  }

  async markSent(clientId: string, id: number): Promise<void> {
    await this.messages(clientId)
      .findById(id)
      .patch({
        send_status: 'sent',
        send_error: null,
        sent_at: this.db.fn.now() as unknown as Date,
        updated_at: this.db.fn.now() as unknown as Date,
      });
  }

  async markFailed(clientId: string, id: number, error: string): Promise<void> {
    await this.messages(clientId)
      .findById(id)
      .whereNot({ send_status: 'sent' })
      .patch({ send_status: 'failed', send_error: error, updated_at: this.db.fn.now() as unknown as Date });
  }

  async recordSendError(clientId: string, id: number, error: string): Promise<void> {
    await this.messages(clientId)
      .findById(id)
      .patch({ send_error: error, updated_at: this.db.fn.now() as unknown as Date });
  }

  // ---- templates -----------------------------------------------------------------------------

  async listTemplates(clientId: string, type: string | undefined, includeInactive: boolean): Promise<TemplateRow[]> {
    const q = this.templates(clientId);
    if (!includeInactive) void q.andWhere({ is_active: true });
    if (type) void q.andWhere({ template_type: type });
    return q.orderBy('id');
  }

  async findTemplate(clientId: string, id: number): Promise<TemplateRow | undefined> {
    return this.templates(clientId).findById(id);
  }

  async createTemplate(
    clientId: string,
    t: Pick<TemplateRow, 'name' | 'description' | 'template_type' | 'html_source' | 'variables'>,
  ): Promise<TemplateRow> {
    return MailTemplateModel.query(this.db)
      .insert({ client_id: clientId, ...t })
      .returning('*');
  }

  async updateTemplate(
    clientId: string,
    id: number,
    patch: Partial<
      Pick<TemplateRow, 'name' | 'description' | 'template_type' | 'html_source' | 'variables' | 'is_active'>
    >,
  ): Promise<TemplateRow | undefined> {
    const [row] = await this.templates(clientId)
      .where({ id })
      .patch({ ...patch, updated_at: this.db.fn.now() as unknown as Date })
      .returning('*');
    return row;
  }
}
