import type { Knex } from 'knex';
import { webhookBody, type WireEvent } from '../../jobs/event-body';
import { tenantSql } from '../models/tenant';

/**
 * Writes one delivery per active webhook of the event's client subscribed to its name, in the
 * caller's transaction (the outbox: no event is committed without its deliveries, and none is
 * delivered that was rolled back). One statement, and none at all for the common "no webhooks".
 */
export async function queueDeliveries(
  trx: Knex | Knex.Transaction,
  event: WireEvent & { client_id: string },
): Promise<void> {
  // `data` as on the event stream (api/routes/events.ts): jobs/event-body.ts owns the shape.
  const body = webhookBody(event);
  await tenantSql(trx, event.client_id).raw(
    `insert into webhook_deliveries (id, webhook_id, client_id, event_id, event, task_queue, body)
     select gen_random_uuid(), w.id, w.client_id, ?, ?, w.task_queue, ?::jsonb from {webhooks w}
     where w.active and ? = any(w.events)
     on conflict (webhook_id, event_id) do nothing`,
    [event.id, event.name, JSON.stringify(body), event.name],
  );
}
