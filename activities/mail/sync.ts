import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import { INBOX } from '../../db/repositories/mail';
import { HEARTBEAT_INTERVAL } from '../../jobs/limits';
import { imapClient, resolveMailHost } from '../../lib/mail/connect';
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
}

/** What a sync's heartbeat reports: its step, and in the fetching step the UID at hand. */
interface SyncProgress {
  step: 'starting' | 'connecting' | 'listing' | 'fetching';
  uid?: number;
}

export function createSyncActivities(deps: ActivityDeps) {
  const repo = mailRepository(deps);
  const allow = new AllowList(deps.config.OUTBOUND_ALLOW_HOSTS);

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

  async function syncInbox(input: { clientId: string; mailboxId: number }, ctx: Context, progress: SyncProgress): Promise<SyncMailboxResult> {
    const mailbox = await repo().mailboxById(input.mailboxId);
    if (!mailbox || mailbox.client_id !== input.clientId) return { stored: 0, known: 0, skipped: 0, noImap: true };
    const { imap } = repo().servers(mailbox);
    if (!imap) return { stored: 0, known: 0, skipped: 0, noImap: true };
    const result: SyncMailboxResult = { stored: 0, known: 0, skipped: 0 };
    let address: string;
    try {
      address = await resolveMailHost(imap.host, allow);
    } catch (err) {
      const failure = asFailure(err, 'IMAP');
      await repo().recordSync(mailbox.id, { error: failure.message });
      throw failure;
    }
    const client = imapClient(imap, address, deps.config.MAIL_TIMEOUT_MS);
    client.on('error', () => undefined);
    // Closing the socket is what stops a connect, a login or a fetch in progress.
    const onCancel = () => client.close();
    ctx.cancellationSignal.addEventListener('abort', onCancel, { once: true });
    try {
      // A cancel that came during the DNS lookup fired no listener: stop before connecting.
      ctx.cancellationSignal.throwIfAborted();
      progress.step = 'connecting';
      await client.connect();
      const lock = await client.getMailboxLock(INBOX);
      try {
        const opened = client.mailbox;
        const uidValidity = opened ? String(opened.uidValidity) : null;
        let lastUid = uidValidity !== null && uidValidity === mailbox.imap_uidvalidity ? Number(mailbox.imap_last_uid) : 0;
        if (uidValidity !== mailbox.imap_uidvalidity) await repo().recordSync(mailbox.id, { uidvalidity: uidValidity ?? undefined, lastUid: 0, error: null });
        progress.step = 'listing';
        // Sizes first, so that an oversized message is never downloaded; `n:*` also returns the last message when it is below n.
        const listed = (await client.fetchAll(`${lastUid + 1}:*`, { uid: true, size: true }, { uid: true })).filter((m) => m.uid > lastUid).sort((a, b) => a.uid - b.uid);
        progress.step = 'fetching';
        for (const item of listed) {
          ctx.cancellationSignal.throwIfAborted();
          progress.uid = item.uid;
          if ((item.size ?? 0) > deps.config.MAIL_MAX_MESSAGE_BYTES) {
            result.skipped += 1;
          } else {
            const full = await client.fetchOne(String(item.uid), { uid: true, source: true }, { uid: true });
            if (full && full.source) {
              try {
                const parsed = await parseRawMessage(full.source, full.internalDate instanceof Date ? full.internalDate : new Date());
                const { created } = await repo().insertMessage(mailbox.client_id, mailbox.id, parsed, { direction: 'inbound', folder: INBOX });
                if (created) result.stored += 1;
                else result.known += 1;
              } catch (err) {
                deps.logger.warn({ err: String(err), mailboxId: mailbox.id, uid: item.uid }, 'IMAP message not stored');
                result.skipped += 1;
              }
            }
          }
          lastUid = item.uid;
          await repo().recordSync(mailbox.id, { lastUid, error: null });
        }
      } finally {
        lock.release();
      }
      await repo().recordSync(mailbox.id, { error: null });
      await client.logout();
      return result;
    } catch (err) {
      if (ctx.cancellationSignal.aborted) throw new CancelledFailure('sync cancelled');
      const failure = err instanceof ApplicationFailure ? err : asFailure(err, 'IMAP');
      await repo().recordSync(mailbox.id, { error: failure.message });
      throw failure;
    } finally {
      ctx.cancellationSignal.removeEventListener('abort', onCancel);
      client.close();
    }
  }

  return { syncMailboxInbox };
}
