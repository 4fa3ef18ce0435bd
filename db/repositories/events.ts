import type { Knex } from 'knex';
import type { EventName } from '../../lib/job-types';

export interface NewEvent {
  clientId: string;
  name: EventName;
  jobId?: string | null;
  campaignId?: string | null;
  data: Record<string, unknown>;
}

export interface StoredEvent {
  id: number;
  client_id: string;
  name: EventName;
  job_id: string | null;
  campaign_id: string | null;
  data: Record<string, unknown>;
  created_at: string;
}

/** One NOTIFY channel per schema, so test runs sharing a database do not hear each other. */
export function eventsChannel(schema: string): string {
  return `${schema}_events`;
}

// pg_notify payloads must stay under 8000 bytes; larger events are announced by id only.
const MAX_NOTIFY_BYTES = 7000;

/**
 * Appends an event and announces it with NOTIFY. Inside a transaction the notification is sent at
 * commit, so listeners never see an event whose state change was rolled back.
 */
export async function appendEvent(db: Knex | Knex.Transaction, schema: string, event: NewEvent): Promise<StoredEvent> {
  const [row] = (await db('events')
    .insert({
      client_id: event.clientId,
      name: event.name,
      job_id: event.jobId ?? null,
      campaign_id: event.campaignId ?? null,
      data: JSON.stringify(event.data),
    })
    .returning(['id', 'client_id', 'name', 'job_id', 'campaign_id', 'data', 'created_at'])) as StoredEvent[];
  const stored = normalize(row as StoredEvent);
  let payload = JSON.stringify(stored);
  if (Buffer.byteLength(payload) > MAX_NOTIFY_BYTES) payload = JSON.stringify({ id: stored.id, client_id: stored.client_id, truncated: true });
  await db.raw('select pg_notify(?, ?)', [eventsChannel(schema), payload]);
  return stored;
}

export async function findEvent(db: Knex, id: number): Promise<StoredEvent | undefined> {
  const row = (await db('events').where({ id }).first()) as StoredEvent | undefined;
  return row && normalize(row);
}

/** The client's events after `afterId`, oldest first (Last-Event-ID replay). */
export async function eventsSince(db: Knex, clientId: string, afterId: number, limit = 1000): Promise<StoredEvent[]> {
  const rows = (await db('events').where('client_id', clientId).andWhere('id', '>', afterId).orderBy('id').limit(limit)) as StoredEvent[];
  return rows.map(normalize);
}

function normalize(row: StoredEvent): StoredEvent {
  return { ...row, id: Number(row.id), created_at: new Date(row.created_at).toISOString() };
}
