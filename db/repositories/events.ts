import type { Knex } from 'knex';
import { EventModel } from '../models/event';
import type { EventName } from '../../jobs';
import { inline } from '../batched';
import { queueDeliveries } from './webhook-outbox';

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

// Events appended inside transactionWithEvents, announced once the transaction has committed.
const pendingByTransaction = new WeakMap<Knex.Transaction, StoredEvent[]>();

/**
 * Runs `fn` in a transaction and announces the events it appended after the commit. A commit
 * that NOTIFYs holds a database-wide lock through its WAL flush, which would serialize every
 * submission; a notify-only statement afterwards writes no WAL. Listeners thus never see an
 * event whose state change was rolled back, and one lost to a crash in between is still in the
 * table for Last-Event-ID replay. The announcement is waited for: left to run in the background,
 * announcements piled up on the connection pool under a submission storm (a CI run saw the
 * worker's activities time out acquiring a connection).
 */
export async function transactionWithEvents<T>(
  db: Knex,
  schema: string,
  fn: (trx: Knex.Transaction) => Promise<T>,
): Promise<T> {
  let events: StoredEvent[] = [];
  const result = await db.transaction(async (trx) => {
    events = [];
    pendingByTransaction.set(trx, events);
    return fn(trx);
  });
  await publishEvents(db, schema, events);
  return result;
}

/** What NOTIFY carries for each event: the event, or its id alone when it is too large. */
function notifyPayloads(events: StoredEvent[]): string[] {
  return events.map((e) => {
    const full = JSON.stringify(e);
    return Buffer.byteLength(full) > MAX_NOTIFY_BYTES
      ? JSON.stringify({ id: e.id, client_id: e.client_id, truncated: true })
      : full;
  });
}

async function publishEvents(db: Knex, schema: string, events: StoredEvent[]): Promise<void> {
  if (events.length === 0) return;
  const payloads = notifyPayloads(events);
  await db.raw(
    `select ${payloads.map(() => 'pg_notify(?, ?)').join(', ')}`,
    payloads.flatMap((p) => [eventsChannel(schema), p]),
  );
}

/** The statement that announces `events`, sent in a batch after a commit (db/batched.ts); undefined for none. */
export function announcementStatement(schema: string, events: StoredEvent[]): string | undefined {
  if (events.length === 0) return undefined;
  return `select ${notifyPayloads(events.map(normalize))
    .map((p) => `pg_notify(${inline('$1, $2', [eventsChannel(schema), p])})`)
    .join(', ')}`;
}

/** Queues an event inserted by other means for announcement after the commit; false outside transactionWithEvents. */
export function queueEvent(db: Knex | Knex.Transaction, event: StoredEvent): boolean {
  const pending = pendingByTransaction.get(db as Knex.Transaction);
  if (pending) pending.push(normalize(event));
  return pending !== undefined;
}

/**
 * Appends an event. Inside transactionWithEvents it is announced after the commit; otherwise
 * (no transaction, or a plain one) with NOTIFY right away, which Postgres delivers at commit.
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
  await queueDeliveries(db, stored);
  if (!queueEvent(db, stored)) await publishEvents(db as Knex, schema, [stored]);
  return stored;
}

export async function findEvent(db: Knex, id: number): Promise<StoredEvent | undefined> {
  const row = (await db('events').where({ id }).first()) as StoredEvent | undefined;
  return row && normalize(row);
}

/**
 * The client's events after `afterId` up to `upTo`, oldest first (Last-Event-ID replay). `upTo` is
 * an id below which no event can still commit (EventListener#horizon): above it, a later event
 * could be replayed before a lower one that has yet to commit, and a client that resumes after it
 * would never get that one.
 */
export async function eventsSince(
  db: Knex,
  clientId: string,
  afterId: number,
  upTo: number,
  limit = 1000,
): Promise<StoredEvent[]> {
  const rows = (await EventModel.forClient(db, clientId)
    .where('id', '>', afterId)
    .andWhere('id', '<=', upTo)
    .orderBy('id')
    .limit(limit)) as unknown as StoredEvent[];
  return rows.map(normalize);
}

/** The stored (committed) events whose ids fall in one of the inclusive ranges `[from, to]`, oldest first. */
export async function eventsInRanges(db: Knex, ranges: [number, number][]): Promise<StoredEvent[]> {
  if (ranges.length === 0) return [];
  // Two array parameters however many ranges; each range is one index range scan, however wide.
  const rows = (await db('events')
    .select('events.*')
    .joinRaw('join unnest(?::bigint[], ?::bigint[]) as r(lo, hi) on events.id between r.lo and r.hi', [
      `{${ranges.map((r) => r[0]).join(',')}}`,
      `{${ranges.map((r) => r[1]).join(',')}}`,
    ])
    .orderBy('events.id')) as StoredEvent[];
  return rows.map(normalize);
}

function normalize(row: StoredEvent): StoredEvent {
  return { ...row, id: Number(row.id), created_at: new Date(row.created_at).toISOString() };
}
