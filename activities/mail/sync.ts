import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { ImapFlow } from 'imapflow';
import { ClientRepository } from '../../db/repositories/clients';
import { INBOX } from '../../db/repositories/mail';
import { HEARTBEAT_INTERVAL } from '../../jobs/limits';
import { IMAP_TOO_LARGE, imapClient, resolveMailHost } from '../../lib/mail/connect';
import { parseRawMessage } from '../../lib/mail/parse';
import { AllowList } from '../../lib/outbound';
import type { ActivityDeps } from '../deps';
import { mailRepository } from './repo';
import { asFailure } from './send';

export interface SyncMailboxResult {
  /** New messages stored by this run. */
  stored: number;
  /** Messages fetched that the mailbox already had (same Message-ID). */
  known: number;
  /** Messages larger than MAIL_MAX_MESSAGE_BYTES, left on the server. */
  skipped: number;
  /** The mailbox has no IMAP settings: nothing to do. */
  noImap?: boolean;
  /** The mailbox's client is deactivated: nothing is read. */
  clientInactive?: boolean;
}

/** Where a sync stands in the INBOX: its UIDVALIDITY and the last UID done (stored or skipped). */
interface InboxPosition {
  uidValidity: string | null;
  lastUid: number;
}

/** What a sync's heartbeat reports: its step, and in the fetching step the UID at hand. */
interface SyncProgress {
  step: 'starting' | 'connecting' | 'listing' | 'fetching';
  uid?: number;
}

export function createSyncActivities(deps: ActivityDeps) {
  const repo = mailRepository(deps);
  const clients = new ClientRepository(deps.db);
  const allow = new AllowList(deps.config.USER_URL_ALLOW_HOSTS);

  /**
   * Fetches the INBOX messages past the last UID stored (all of them after a UIDVALIDITY change)
   * and stores each by Message-ID (idempotent: one already there is counted as known). The UID
   * position is saved after every message, so a retry or the next run goes on from there.
   * Heartbeats every half second throughout (connect, the listing and one download can each take
   * minutes); a cancel closes the connection.
   */
  async function syncMailboxInbox(input: { clientId: string; mailboxId: number }): Promise<SyncMailboxResult> {
    const ctx = Context.current();
    const progress: SyncProgress = { step: 'starting' };
    const beat = setInterval(() => ctx.heartbeat(progress), HEARTBEAT_INTERVAL.ms);
    try {
      ctx.heartbeat(progress);
      return await syncInbox(input, ctx, progress);
    } finally {
      clearInterval(beat);
    }
  }

  async function syncInbox(
    input: { clientId: string; mailboxId: number },
    ctx: Context,
    progress: SyncProgress,
  ): Promise<SyncMailboxResult> {
    const mailbox = await repo().findMailbox(input.clientId, input.mailboxId);
    if (!mailbox) return { stored: 0, known: 0, skipped: 0, noImap: true };
    // A deactivated client's mailbox is not read (its schedule is paused too: workers/client-watch.ts).
    if (!(await clients.findById(input.clientId))?.is_active)
      return { stored: 0, known: 0, skipped: 0, clientInactive: true };
    const { imap } = repo().servers(mailbox);
    if (!imap) return { stored: 0, known: 0, skipped: 0, noImap: true };
    const result: SyncMailboxResult = { stored: 0, known: 0, skipped: 0 };
    let address: string;
    try {
      address = await resolveMailHost(imap.host, allow);
    } catch (err) {
      const failure = asFailure(err, 'IMAP');
      await repo().recordSync(mailbox.client_id, mailbox.id, { error: failure.message });
      throw failure;
    }
    const position: InboxPosition = {
      uidValidity: mailbox.imap_uidvalidity,
      lastUid: mailbox.imap_uidvalidity !== null ? Number(mailbox.imap_last_uid) : 0,
    };
    let client: ImapFlow | null = null;
    // Closing the socket is what stops a connect, a login or a fetch in progress.
    const onCancel = () => client?.close();
    ctx.cancellationSignal.addEventListener('abort', onCancel, { once: true });
    try {
      // One session per pass: a download the client's limits refused closed the connection, and the next pass goes on past that message.
      for (let more = true; more;) {
        // A cancel that came during the DNS lookup or between sessions fired no listener: stop before connecting.
        ctx.cancellationSignal.throwIfAborted();
        const session = imapClient(imap, address, deps.config.MAIL_TIMEOUT_MS, deps.config.MAIL_MAX_MESSAGE_BYTES);
        client = session;
        try {
          more = await syncSession(session, mailbox.id, mailbox.client_id, position, result, ctx, progress);
        } finally {
          session.close();
        }
      }
      await repo().recordSync(mailbox.client_id, mailbox.id, { error: null });
      return result;
    } catch (err) {
      if (ctx.cancellationSignal.aborted) throw new CancelledFailure('sync cancelled');
      const failure = err instanceof ApplicationFailure ? err : asFailure(err, 'IMAP');
      await repo().recordSync(mailbox.client_id, mailbox.id, { error: failure.message });
      throw failure;
    } finally {
      ctx.cancellationSignal.removeEventListener('abort', onCancel);
    }
  }

  /**
   * One IMAP session: stores the INBOX messages past `position`, moving it (and the mailbox's saved
   * position) after each. True when it ended at a message the client's size limits refused, which
   * is skipped: the connection is gone and the rest needs a new session.
   */
  async function syncSession(
    client: ImapFlow,
    mailboxId: number,
    clientId: string,
    position: InboxPosition,
    result: SyncMailboxResult,
    ctx: Context,
    progress: SyncProgress,
  ): Promise<boolean> {
    let refused = false;
    client.on('error', (err: { code?: string }) => {
      if (err.code && IMAP_TOO_LARGE.has(err.code)) refused = true;
    });
    progress.step = 'connecting';
    await client.connect();
    const lock = await client.getMailboxLock(INBOX);
    try {
      const opened = client.mailbox;
      const uidValidity = opened ? String(opened.uidValidity) : null;
      if (uidValidity !== position.uidValidity) {
        await repo().recordSync(clientId, mailboxId, {
          uidvalidity: uidValidity ?? undefined,
          lastUid: 0,
          error: null,
        });
        Object.assign(position, { uidValidity, lastUid: 0 });
      }
      progress.step = 'listing';
      // Sizes first, so that an oversized message is never downloaded; `n:*` also returns the last message when it is below n.
      const listed = (await client.fetchAll(`${position.lastUid + 1}:*`, { uid: true, size: true }, { uid: true }))
        .filter((m) => m.uid > position.lastUid)
        .sort((a, b) => a.uid - b.uid);
      progress.step = 'fetching';
      for (const item of listed) {
        ctx.cancellationSignal.throwIfAborted();
        progress.uid = item.uid;
        if ((item.size ?? 0) > deps.config.MAIL_MAX_MESSAGE_BYTES) {
          result.skipped += 1;
        } else {
          let full: Awaited<ReturnType<ImapFlow['fetchOne']>>;
          try {
            full = await client.fetchOne(String(item.uid), { uid: true, source: true }, { uid: true });
          } catch (err) {
            if (!refused) throw err;
            // The server sent more than MAIL_MAX_MESSAGE_BYTES whatever size it had listed: oversized.
            deps.logger.warn(
              { mailboxId, uid: item.uid, listedSize: item.size },
              'IMAP message larger than listed, left on the server',
            );
            result.skipped += 1;
            await advance(clientId, mailboxId, position, item.uid);
            return true;
          }
          if (full && full.source) {
            try {
              const parsed = await parseRawMessage(
                full.source,
                full.internalDate instanceof Date ? full.internalDate : new Date(),
              );
              const { created } = await repo().insertMessage(clientId, mailboxId, parsed, {
                direction: 'inbound',
                folder: INBOX,
              });
              if (created) result.stored += 1;
              else result.known += 1;
            } catch (err) {
              deps.logger.warn({ err: String(err), mailboxId, uid: item.uid }, 'IMAP message not stored');
              result.skipped += 1;
            }
          }
        }
        await advance(clientId, mailboxId, position, item.uid);
      }
    } finally {
      lock.release();
    }
    await client.logout();
    return false;
  }

  /** Saves the UID position past `uid`, so a retry or the next run goes on from there. */
  async function advance(clientId: string, mailboxId: number, position: InboxPosition, uid: number): Promise<void> {
    position.lastUid = uid;
    await repo().recordSync(clientId, mailboxId, { lastUid: uid, error: null });
  }

  return { syncMailboxInbox };
}
