import { Client, Connection } from '@temporalio/client';
import type { Knex } from 'knex';
import { jobProjector } from '../activities/store/leads';
import { ProjectionOutbox, type SweepRetry } from '../db/repositories/projection-outbox';
import { leadsTaskQueue } from '../jobs/queues';
import type { Config } from '../lib/config';
import type { Logger } from '../lib/logger';
import type { Storage } from '../lib/storage';
import { temporalConnectionOptions } from '../lib/temporal';
import { indexLeads, moreLeadsSignal } from '../workflows/leads';

/** Projections tried per sweep at most; the rest wait for the next one. */
const PER_SWEEP = 100;
/** The longest wait between two retries of one job's projection. */
const MAX_RETRY_MS = 60 * 60 * 1000;

export interface ProjectionSweeper {
  stop(): Promise<void>;
}

/** A worker process's projection sweeper, on a Temporal client connection of its own that `stop` closes. */
export async function startWorkerProjectionSweeper(
  config: Config,
  db: Knex,
  storage: Storage,
  logger: Logger,
): Promise<ProjectionSweeper> {
  const connection = await Connection.connect(temporalConnectionOptions(config));
  const sweeper = startProjectionSweeper({
    db,
    storage,
    client: new Client({ connection, namespace: config.TEMPORAL_NAMESPACE }),
    taskQueuePrefix: config.TASK_QUEUE_PREFIX,
    intervalMs: config.PROJECTION_SWEEP_INTERVAL_MS,
    retryHours: config.PROJECTION_RETRY_HOURS,
    logger,
  });
  return {
    stop: async () => {
      await sweeper.stop();
      await connection.close();
    },
  };
}

export interface ProjectionSweeperOptions {
  db: Knex;
  storage: Storage;
  client: Client;
  taskQueuePrefix: string;
  intervalMs: number;
  retryHours: number;
  logger: Logger;
}

/**
 * Retries the projections of completed jobs that are still owed (issue 38 item 8): every
 * PROJECTION_SWEEP_INTERVAL_MS each worker projects the due rows of the projection outbox
 * (db/repositories/projection-outbox.ts), one job per transaction, and asks the client's indexLeads
 * workflow for a pass when leads were queued. A failed row waits twice as long each time (from the
 * interval up to an hour) and is given up PROJECTION_RETRY_HOURS after its job completed.
 * Idempotent: the projection upserts on natural keys, so a sweep that repeats runJob's attempt (or
 * another worker's sweep) changes nothing; SKIP LOCKED keeps workers off each other's rows.
 */
export function startProjectionSweeper(options: ProjectionSweeperOptions): ProjectionSweeper {
  const outbox = new ProjectionOutbox(options.db);
  const project = jobProjector(options.db, options.storage);
  const retry: SweepRetry = {
    initialMs: options.intervalMs,
    maxMs: Math.max(options.intervalMs, MAX_RETRY_MS),
    retryHours: options.retryHours,
  };
  // Clients whose indexing request failed (Temporal unreachable): asked again at the next sweep.
  const toIndex = new Set<string>();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();

  const requestIndexing = async (clientId: string) => {
    try {
      await options.client.workflow.signalWithStart(indexLeads, {
        workflowId: `leads-index/${clientId}`,
        taskQueue: leadsTaskQueue(options.taskQueuePrefix),
        args: [{ clientId }],
        signal: moreLeadsSignal,
        signalArgs: [],
        staticSummary: `lead indexing for ${clientId}`,
      });
      toIndex.delete(clientId);
    } catch (err) {
      toIndex.add(clientId);
      options.logger.warn(
        { err: String(err), client_id: clientId },
        'projection sweep could not request lead indexing; asking again at the next sweep',
      );
    }
  };

  const sweep = async () => {
    try {
      for (let i = 0; i < PER_SWEEP && !stopped; i++) {
        let businesses = 0;
        const outcome = await outbox.sweepOne(retry, async (row, trx) => {
          businesses = (await project({ jobId: row.job_id, clientId: row.client_id, type: row.type }, trx)).businesses;
        });
        if (outcome.kind === 'none') break;
        const log = {
          job_id: outcome.row.job_id,
          client_id: outcome.row.client_id,
          attempts: outcome.row.attempts + 1,
        };
        if (outcome.kind === 'projected') {
          options.logger.info(log, "projection sweep: a completed job's leads reached IDAP");
          if (businesses > 0) toIndex.add(outcome.row.client_id);
        } else if (outcome.givenUp) {
          options.logger.error(
            { ...log, err: outcome.error },
            "projection sweep: gave up on a completed job's leads (PROJECTION_RETRY_HOURS passed)",
          );
        } else {
          options.logger.warn(
            { ...log, err: outcome.error },
            "projection sweep: a completed job's projection failed again; retrying later",
          );
        }
      }
      for (const clientId of [...toIndex]) if (!stopped) await requestIndexing(clientId);
    } catch (err) {
      options.logger.warn({ err: String(err) }, 'projection sweep failed; retrying at the next sweep');
    }
    if (!stopped)
      timer = setTimeout(() => {
        current = sweep();
      }, options.intervalMs);
  };
  current = sweep();

  return {
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await current;
    },
  };
}
