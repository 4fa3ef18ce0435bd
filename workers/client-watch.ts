import { Client, Connection, ScheduleNotFoundError, WorkflowNotFoundError } from '@temporalio/client';
import type { Knex } from 'knex';
import { Client as PgClient } from 'pg';
import { clientsChannel } from '../db/client-cache';
import { CampaignRepository } from '../db/repositories/campaigns';
import { ClientRepository } from '../db/repositories/clients';
import { MailRepository } from '../db/repositories/mail';
import { WebhookRepository } from '../db/repositories/webhooks';
import { CredentialCipher } from '../lib/cipher';
import type { Config } from '../lib/config';
import type { Logger } from '../lib/logger';
import { temporalConnectionOptions } from '../lib/temporal';
import { CLIENT_DEACTIVATED_NOTE, mailSyncScheduleId } from '../workflows/mail';

export interface ClientWatch {
  stop(): Promise<void>;
}

/** A worker process's client watch, on a Temporal client connection of its own that `stop` closes. */
export async function startWorkerClientWatch(config: Config, db: Knex, logger: Logger): Promise<ClientWatch> {
  const connection = await Connection.connect(temporalConnectionOptions(config));
  const watch = startClientWatch({
    db,
    connectionString: config.DATABASE_URL,
    schema: config.DATABASE_SCHEMA,
    cipher: CredentialCipher.fromConfig(config),
    client: new Client({ connection, namespace: config.TEMPORAL_NAMESPACE }),
    logger,
  });
  return {
    stop: async () => {
      await watch.stop();
      await connection.close();
    },
  };
}

export interface ClientWatchOptions {
  db: Knex;
  connectionString: string;
  schema: string;
  /** Mailbox rows are read through the mail repository, which needs it; without one no mailbox syncs anyway. */
  cipher: CredentialCipher | undefined;
  client: Client;
  logger: Logger;
}

/**
 * What a deactivated client has running stops (issue 38 item 12): the workers hear every change of
 * a client row (the clients table's NOTIFY, migration 20261125000500, whatever made it: the CLI or
 * SQL by hand) and, for a client now inactive, cancel its running campaigns (rows and workflows, as
 * DELETE would), pause its mailboxes' sync schedules (note CLIENT_DEACTIVATED_NOTE; a sync under
 * way is cancelled) and cancel its pending webhook deliveries. A client active again gets those
 * schedules resumed; its campaigns and deliveries stay cancelled (docs/security.md). The API ends
 * its streams (db/event-listener.ts), and the activities refuse its work on their own too, for
 * whatever this misses. Announcements are missed while the LISTEN connection is down: each
 * (re)connect sweeps every inactive client, and every schedule paused for a deactivation whose
 * client is active again. Everything here is idempotent: every worker process runs it.
 */
export function startClientWatch(options: ClientWatchOptions): ClientWatch {
  const { db, client, logger } = options;
  const clients = new ClientRepository(db);
  const campaigns = new CampaignRepository(db, options.schema);
  const webhooks = new WebhookRepository(db, options.schema);
  const mail = options.cipher ? new MailRepository(db, options.cipher) : undefined;
  const channel = clientsChannel(options.schema);
  let stopped = false;
  let listener: PgClient | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let retryMs = 250;
  let current: Promise<void> = Promise.resolve();
  // One client at a time, in the order announced; a client announced again while queued runs once.
  let chain: Promise<void> = Promise.resolve();
  const queued = new Set<string>();

  const syncedMailboxes = async (clientId: string) =>
    mail ? (await mail.listMailboxes(clientId)).filter((m) => m.imap_host) : [];

  const quiesce = async (clientId: string) => {
    const cancelled = await campaigns.cancelRunning(clientId);
    for (const c of cancelled) {
      try {
        await client.workflow.getHandle(c.workflow_id).cancel();
      } catch (err) {
        // The rows say cancelled already: the workflow claims nothing more (activities/campaign/campaign.ts).
        if (!(err instanceof WorkflowNotFoundError))
          logger.warn({ err: String(err), campaign_id: c.id }, 'deactivated client: campaign workflow cancel failed');
      }
    }
    for (const mb of await syncedMailboxes(clientId)) {
      const handle = client.schedule.getHandle(mailSyncScheduleId(clientId, mb.id));
      try {
        const d = await handle.describe();
        if (!d.state.paused) await handle.pause(CLIENT_DEACTIVATED_NOTE);
        for (const running of d.info.runningActions)
          await client.workflow
            .getHandle(running.workflow.workflowId, running.workflow.firstExecutionRunId)
            .cancel()
            .catch(() => undefined);
      } catch (err) {
        if (!(err instanceof ScheduleNotFoundError)) throw err;
      }
    }
    const deliveries = await webhooks.cancelPending(clientId);
    logger.info(
      { client_id: clientId, campaigns: cancelled.length, deliveries },
      'deactivated client: its campaigns, mail sync and webhook deliveries stopped',
    );
  };

  const resume = async (clientId: string) => {
    for (const mb of await syncedMailboxes(clientId)) {
      const handle = client.schedule.getHandle(mailSyncScheduleId(clientId, mb.id));
      try {
        const d = await handle.describe();
        // Only what the deactivation paused.
        if (d.state.paused && d.state.note === CLIENT_DEACTIVATED_NOTE) await handle.unpause('client re-activated');
      } catch (err) {
        if (!(err instanceof ScheduleNotFoundError)) throw err;
      }
    }
  };

  const reconcile = (clientId: string) => {
    if (queued.has(clientId)) return;
    queued.add(clientId);
    chain = chain
      .then(async () => {
        queued.delete(clientId);
        if (stopped) return;
        const row = await clients.findById(clientId);
        // Another schema's client (schedules are listed namespace-wide), or removed: nothing of it here.
        if (!row) return;
        await (row.is_active ? resume(clientId) : quiesce(clientId));
      })
      .catch((err: unknown) => {
        // Swept again at the next (re)connect; the activities refuse its work meanwhile.
        logger.warn(
          { err: String(err), client_id: clientId },
          'client watch could not bring a client in line with its row',
        );
      });
  };

  const sweep = async () => {
    for (const id of await clients.inactiveIds()) reconcile(id);
    for await (const s of client.schedule.list()) {
      if (stopped) return;
      const match = /^mail-sync\/([^/]+)\/\d+$/.exec(s.scheduleId);
      if (match?.[1] && s.state.paused && s.state.note === CLIENT_DEACTIVATED_NOTE) reconcile(match[1]);
    }
  };

  const lost = (pg: PgClient, err: Error) => {
    if (listener !== pg) return;
    listener = undefined;
    pg.removeAllListeners();
    pg.on('error', () => undefined);
    if (stopped) return;
    logger.warn({ err: err.message }, 'client watch lost its LISTEN connection; reconnecting');
    retry();
  };

  const retry = () => {
    retryTimer = setTimeout(() => {
      current = connect();
    }, retryMs);
    retryMs = Math.min(retryMs * 2, 5000);
  };

  const connect = async () => {
    if (stopped) return;
    const pg = new PgClient({
      connectionString: options.connectionString,
      application_name: `leadjobs-client-watch/${process.pid}`,
      connectionTimeoutMillis: 10_000,
    });
    pg.on('notification', (msg) => {
      if (msg.channel === channel && msg.payload) reconcile(msg.payload);
    });
    pg.on('error', (err) => lost(pg, err));
    pg.on('end', () => lost(pg, new Error('connection ended')));
    try {
      await pg.connect();
      await pg.query(`LISTEN "${channel}"`);
    } catch (err) {
      pg.removeAllListeners();
      pg.on('error', () => undefined);
      await pg.end().catch(() => undefined);
      logger.warn({ err: String(err) }, 'client watch could not listen; retrying');
      retry();
      return;
    }
    if (stopped) {
      pg.removeAllListeners();
      await pg.end().catch(() => undefined);
      return;
    }
    listener = pg;
    retryMs = 250;
    // Listening first, then the sweep: a change from here on is heard, one before it is swept.
    await sweep().catch((err: unknown) =>
      logger.warn({ err: String(err) }, 'client watch sweep failed; it runs again at the next reconnect'),
    );
  };
  current = connect();

  return {
    stop: async () => {
      stopped = true;
      clearTimeout(retryTimer);
      await current;
      const pg = listener;
      listener = undefined;
      if (pg) {
        pg.removeAllListeners();
        pg.on('error', () => undefined);
        await pg.end().catch(() => undefined);
      }
      await chain;
    },
  };
}
