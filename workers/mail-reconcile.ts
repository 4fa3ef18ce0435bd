import { Client, Connection } from '@temporalio/client';
import type { Knex } from 'knex';
import { MailWorkflows } from '../api/mail-service';
import { MailRepository } from '../db/repositories/mail';
import { CredentialCipher } from '../lib/cipher';
import type { Config } from '../lib/config';
import type { Logger } from '../lib/logger';
import { temporalConnectionOptions } from '../lib/temporal';

/** Left to the API this long after the row's commit: its own start comes right after. */
const GRACE_MS = 10_000;
// A send's workflow ends within a day (api/mail-service.ts SEND_DEADLINE): an older queued message is not restarted.
const SEND_WINDOW_MS = 24 * 3_600_000;
/** Messages started per sweep; more wait for the next one. */
const BATCH = 100;

export interface MailReconciler {
  stop(): Promise<void>;
}

/** A worker process's reconciler, every `intervalMs` (MAIL_RECONCILE_INTERVAL_MS), on a Temporal client connection of its own that `stop` closes. */
export async function startWorkerMailReconciler(
  config: Config,
  db: Knex,
  logger: Logger,
  intervalMs: number,
): Promise<MailReconciler> {
  const cipher = CredentialCipher.fromConfig(config);
  // Without the key no mailbox can send or sync anyway (activities/mail/repo.ts).
  if (!cipher) return { stop: () => Promise.resolve() };
  const connection = await Connection.connect(temporalConnectionOptions(config));
  const client = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
  const workflows = new MailWorkflows({ connection, client }, config, logger);
  const reconciler = startMailReconciler({ repo: new MailRepository(db, cipher), workflows, intervalMs, logger });
  return {
    stop: async () => {
      await reconciler.stop();
      await workflows.drain();
      await connection.close();
    },
  };
}

/**
 * The API stores a message (or a mailbox) and then starts its send workflow (its sync schedule);
 * an API that dies between the two leaves a message queued for ever, a mailbox that never syncs
 * (issue 38 item 7). Every MAIL_RECONCILE_INTERVAL_MS this starts `mail-send/<client>/<id>` for
 * every outbound message still queued (stored more than GRACE_MS and less than a day ago), and
 * creates the sync schedule of every mailbox with IMAP changed since the last sweep (all of them at
 * the first) that has none. Both are idempotent by id: a send already started is the one kept
 * (USE_EXISTING), and a schedule that exists is left as it is, so every worker runs this and
 * running it twice changes nothing.
 */
export function startMailReconciler(options: {
  repo: MailRepository;
  workflows: MailWorkflows;
  intervalMs: number;
  logger: Logger;
}): MailReconciler {
  const { repo, workflows, logger } = options;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let mailboxesSince: Date | undefined;

  const sweep = async () => {
    const now = Date.now();
    const before = new Date(now - GRACE_MS);
    for (const m of await repo.queuedSends(new Date(now - SEND_WINDOW_MS), before, BATCH)) {
      if (stopped) return;
      await workflows.startSend(m);
    }
    for (const mb of await repo.syncedMailboxes(mailboxesSince, before)) {
      if (stopped) return;
      await workflows.ensureSync(mb);
    }
    mailboxesSince = before;
  };

  const tick = async () => {
    try {
      await sweep();
    } catch (err) {
      // What failed is swept again next time (the mailboxes' window moves only after a whole sweep).
      logger.warn({ err: String(err) }, 'mail reconcile failed; retrying at the next sweep');
    }
    if (!stopped)
      timer = setTimeout(() => {
        current = tick();
      }, options.intervalMs);
  };
  let current = tick();

  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await current;
    },
  };
}
