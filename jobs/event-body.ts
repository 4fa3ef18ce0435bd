/**
 * The event wire format's one owner: the `data` of an SSE frame (api/routes/events.ts) and the body
 * of a webhook delivery (db/repositories/webhook-outbox.ts, and the submit statement's SQL in
 * db/repositories/jobs.ts, built here by webhookBodySql) are made here, so they cannot drift apart.
 */

/** The fields of a stored event the wire format reads. */
export interface WireEvent {
  id: number;
  name: string;
  data: Record<string, unknown>;
  /** An ISO 8601 time (or anything Date parses); written as toISOString. */
  created_at: string;
}

/** The `data` of an event on the wire: the event's own fields, then its id and ISO time. */
export type EventData = Record<string, unknown> & { event_id: number; created_at: string };

/** An event's `data` as the stream and webhooks send it: its fields with its id and time. */
export function eventData(event: WireEvent): EventData {
  const createdAt = new Date(event.created_at).toISOString();
  return { ...event.data, event_id: event.id, created_at: createdAt };
}

/** A webhook delivery's body: the event's name and time around eventData. */
export function webhookBody(event: WireEvent): { event: string; created_at: string; data: EventData } {
  const data = eventData(event);
  return { event: event.name, created_at: data.created_at, data };
}

/**
 * webhookBody in SQL, for a statement that writes an event and its deliveries at once: `alias` is
 * the row with id, name, data and created_at; `iso` formats a timestamptz column as toISOString does.
 */
export function webhookBodySql(alias: string, iso: (column: string) => string): string {
  const createdAt = iso(`${alias}.created_at`);
  return `jsonb_build_object('event', ${alias}.name, 'created_at', ${createdAt}, 'data', ${alias}.data::jsonb || jsonb_build_object('event_id', ${alias}.id, 'created_at', ${createdAt}))`;
}
