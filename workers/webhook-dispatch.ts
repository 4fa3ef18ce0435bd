import { Client, Connection, WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/client';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { Knex } from 'knex';
import { WebhookRepository } from '../db/repositories/webhooks';
import { webhooksTaskQueue } from '../jobs/queues';
import type { Config } from '../lib/config';
import type { Logger } from '../lib/logger';
import { temporalConnectionOptions } from '../lib/temporal';
import { deliverWebhookEvent } from '../workflows';

// Operators find a client's deliveries in the Web UI with `ClientId = "..."`, as its jobs.
const ClientIdKey = defineSearchAttributeKey('ClientId', SearchAttributeType.KEYWORD);

/** Deliveries started per poll; more wait for the next one. */
const BATCH = 100;

export interface WebhookDispatcher {
  stop(): Promise<void>;
}

/** A worker process's dispatcher, on a Temporal client connection of its own that `stop` closes. */
export async function startWorkerWebhookDispatcher(
  config: Config,
  db: Knex,
  logger: Logger,
): Promise<WebhookDispatcher> {
  const connection = await Connection.connect(temporalConnectionOptions(config));
  const dispatcher = startWebhookDispatcher({
    db,
    schema: config.DATABASE_SCHEMA,
    client: new Client({ connection, namespace: config.TEMPORAL_NAMESPACE }),
    taskQueuePrefix: config.TASK_QUEUE_PREFIX,
    intervalMs: config.WEBHOOK_DISPATCH_INTERVAL_MS,
    logger,
  });
  return {
    stop: async () => {
      await dispatcher.stop();
      await connection.close();
    },
  };
}

/**
 * Starts a `webhook-delivery/<id>` workflow for every delivery in the outbox, polling every
 * WEBHOOK_DISPATCH_INTERVAL_MS. Why a poll in each worker rather than a signal after commit:
 * events are written both by API transactions and by worker activities (and campaigns will add
 * more writers); an outbox that the workers drain needs no Temporal call on any of those paths
 * and cannot miss one. Durable: a row is marked dispatched only after its start succeeded, and
 * the start is idempotent (REJECT_DUPLICATE on the delivery's workflow id), so a crash in between
 * at worst repeats a start that Temporal refuses. Several workers share the rows (SKIP LOCKED).
 */
export function startWebhookDispatcher(options: {
  db: Knex;
  schema: string;
  client: Client;
  taskQueuePrefix: string;
  intervalMs: number;
  logger: Logger;
}): WebhookDispatcher {
  const repo = new WebhookRepository(options.db, options.schema);
  const taskQueue = webhooksTaskQueue(options.taskQueuePrefix);
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();

  const start = async (id: string, clientId: string, event: string) => {
    try {
      await options.client.workflow.start(deliverWebhookEvent, {
        workflowId: `webhook-delivery/${id}`,
        taskQueue,
        args: [{ deliveryId: id }],
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        typedSearchAttributes: [{ key: ClientIdKey, value: clientId }],
        staticSummary: `${event} webhook for ${clientId}`,
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  };

  const poll = async () => {
    try {
      // Drain while full batches come back, then wait for the next tick.
      while (
        !stopped &&
        (await repo.dispatch(taskQueue, BATCH, async (rows) => {
          await Promise.all(rows.map((r) => start(r.id, r.client_id, r.event)));
        })) === BATCH
      );
    } catch (err) {
      options.logger.warn({ err: String(err) }, 'webhook dispatch failed; retrying at the next poll');
    }
    if (!stopped)
      timer = setTimeout(() => {
        current = poll();
      }, options.intervalMs);
  };
  current = poll();

  return {
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await current;
    },
  };
}
