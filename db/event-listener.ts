import { Client } from 'pg';
import type { Knex } from 'knex';
import type { Logger } from '../lib/logger';
import { clientsChannel } from './client-cache';
import { ClientRepository } from './repositories/clients';
import { eventsChannel, eventsInRanges, findEvent, type StoredEvent } from './repositories/events';

export interface EventSubscriber {
  clientId: string;
  onEvent(event: StoredEvent): void;
  /** After a reconnect: notifications may have been missed, read them from the table. */
  onResync(): void;
  /** The client was deactivated (or removed): the stream ends; its credential opens no new one. */
  onInactive?(): void;
}

export interface EventListenerOptions {
  /** SSE_GAP_WAIT_MS: how long events wait behind a missing lower id before they go out anyway. */
  gapWaitMs: number;
}

// How often a gap in the ids is looked at while it lasts (and at each new announcement).
const GAP_POLL_MS = 25;
// How long close() waits for a LISTEN connection under way to be made and ended.
const CLOSE_WAIT_MS = 2000;
// Ids delivered from the table before their NOTIFY came, remembered so that the NOTIFY is dropped.
const MAX_RECOVERED = 10_000;

/** A gap below waiting events, resolved once every transaction in progress at a snapshot has ended. */
interface Gap {
  /** The highest waiting id when the snapshot was taken: the ids the snapshot speaks for. */
  upTo: number;
  /** The snapshot's xmax (xid8, as text). */
  xmax?: string;
  /** When its oldest waiting event was announced (or earlier: that one may have gone out since). */
  since: number;
  checking: boolean;
  timer?: NodeJS.Timeout;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

export class StreamLimitError extends Error {
  override readonly name = 'StreamLimitError';
  constructor(readonly limit: number) {
    super(`the client has ${limit} subscriptions already`);
  }
}

/**
 * One LISTEN connection per API process, fanning each stored event out to that process's SSE
 * subscribers of the event's client. Any worker's event reaches any API process this way.
 * Connects on the first subscriber and reconnects with backoff.
 *
 * Events go out in id order. An id is taken at the insert but announced at the commit, so a
 * concurrent writer's lower id can be announced after a higher one: the higher one waits until
 * every lower id is resolved (delivered, or known never to commit), so that a client resuming after
 * the last id it got misses nothing. A gap is resolved with a snapshot taken after the waiting event
 * was announced: the missing id was handed out before it, so its writer is over or in progress in
 * that snapshot. Once all of those have ended, the missing ids are read from the table (committed
 * ones whose NOTIFY is still on its way, or was lost to a crash, go out in order) and the others
 * never commit (a rollback leaves a hole in the sequence for good). Two limits, where the missing
 * event is delivered late (out of order) when it is announced: a writer takes its id a moment
 * before its transaction id when the insert is its first write, so for microseconds no snapshot
 * shows it; and a gap is given up after gapWaitMs, so that one long transaction does not hold every
 * client's stream back.
 */
export class EventListener {
  private client?: Client;
  private connecting?: Promise<void>;
  // By client: an event is handed only to its own client's subscribers.
  private readonly subscribers = new Map<string, Set<EventSubscriber>>();
  private count = 0;
  private closed = false;
  private retryMs = 250;
  /** Every id up to this one is delivered or never will be (but late); undefined until listening. */
  private resolved?: number;
  /**
   * Announced events above a gap, by id, with when each was announced. No event: a large one whose
   * announcement carried only its id and whose read failed; it is read with the gap's missing ids.
   */
  private readonly waiting = new Map<number, { event?: StoredEvent; at: number }>();
  private highest = 0;
  private gap?: Gap;
  /** Announced while the watermark was being read. */
  private early: StoredEvent[] = [];
  private readonly recovered = new Set<number>();
  /** Subscribed when the connection was lost: resynced on the reconnect, before anything else is delivered. */
  private resyncing?: EventSubscriber[];
  // Announcements are taken one after the other: a large one is read from the table first.
  private incoming: Promise<void> = Promise.resolve();

  constructor(
    private readonly connectionString: string,
    private readonly schema: string,
    private readonly db: Knex,
    private readonly log: Logger,
    private readonly options: EventListenerOptions = { gapWaitMs: 5000 },
  ) {}

  get listening(): boolean {
    return this.client !== undefined;
  }

  get subscriptionCount(): number {
    return this.count;
  }

  /** One client's subscriptions on this process (what that client may be told; the total is the operator's). */
  subscriptionsOf(clientId: string): number {
    return this.subscribers.get(clientId)?.size ?? 0;
  }

  /**
   * An id a Last-Event-ID replay may read up to: no event at or below it can still commit (within the
   * limits above). At least the watermark; higher when committed events are still to be announced or
   * never were (a crash between commit and NOTIFY), once the transactions in progress now have ended
   * (at most gapWaitMs).
   */
  async horizon(): Promise<number> {
    // tenancy: the stream's horizon is the highest event id of all clients; no client's row is read.
    const { rows } = await this.db.raw<{ rows: { top: string | null; xmax: string; idle: boolean }[] }>(
      'select (select max(id) from events) as top, pg_snapshot_xmax(s)::text as xmax, pg_snapshot_xmin(s) = pg_snapshot_xmax(s) as idle from pg_current_snapshot() s',
    );
    const snapshot = rows[0];
    const top = Number(snapshot?.top ?? 0);
    if (!snapshot || top <= (this.resolved ?? 0)) return this.resolved ?? 0;
    const deadline = Date.now() + this.options.gapWaitMs;
    for (let ended = snapshot.idle; !ended && Date.now() < deadline;) {
      await sleep(GAP_POLL_MS);
      ended = await this.ended(snapshot.xmax);
    }
    return Math.max(top, this.resolved ?? 0);
  }

  /** Subscribes; with `limit`, refuses (StreamLimitError) a client that has that many subscriptions already. */
  async subscribe(subscriber: EventSubscriber, limit = Number.POSITIVE_INFINITY): Promise<() => void> {
    if ((this.subscribers.get(subscriber.clientId)?.size ?? 0) >= limit) throw new StreamLimitError(limit);
    const own = this.subscribers.get(subscriber.clientId) ?? new Set<EventSubscriber>();
    this.subscribers.set(subscriber.clientId, own);
    own.add(subscriber);
    this.count++;
    const unsubscribe = () => {
      if (!own.delete(subscriber)) return;
      this.count--;
      if (own.size === 0 && this.subscribers.get(subscriber.clientId) === own)
        this.subscribers.delete(subscriber.clientId);
    };
    try {
      await this.ensureConnected();
    } catch (err) {
      // The caller gets no way to unsubscribe: kept, it would be counted and fed events for ever.
      unsubscribe();
      throw err;
    }
    return unsubscribe;
  }

  private ensureConnected(): Promise<void> {
    if (this.client || this.closed) return Promise.resolve();
    return (this.connecting ??= this.connect().finally(() => {
      this.connecting = undefined;
    }));
  }

  private async connect(): Promise<void> {
    // Named, so that an operator (or a test) can tell this process's listener in pg_stat_activity.
    // A connect timeout as the pool's (db/index.ts): pg sets none, and a subscriber waits for this connect.
    const client = new Client({
      connectionString: this.connectionString,
      application_name: `leadjobs-events/${process.pid}`,
      connectionTimeoutMillis: 10_000,
    });
    const clients = clientsChannel(this.schema);
    client.on('notification', (msg) => {
      if (msg.channel === clients) {
        if (msg.payload)
          this.endInactive([msg.payload]).catch((err: Error) =>
            this.log.warn({ err: err.message }, "event listener could not end a deactivated client's streams"),
          );
        return;
      }
      this.incoming = this.incoming
        .then(() => this.receive(msg.payload))
        .catch((err: Error) => this.log.warn({ err: err.message }, 'event listener dropped an announcement'));
    });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    let top: number;
    try {
      await client.connect();
      await client.query(`LISTEN "${eventsChannel(this.schema)}"`);
      // A client row's changes too (migration 20261125000500): a deactivated client's streams end.
      await client.query(`LISTEN "${clients}"`);
      // Listening first, then the watermark: whatever is announced from here on is heard. Events at or
      // below it whose writers are still in progress now are delivered late, when announced.
      const { rows } = await client.query<{ top: string | null }>(`select max(id) as top from "${this.schema}".events`);
      top = Number(rows[0]?.top ?? 0);
    } catch (err) {
      // Left open, a connection that listens would keep feeding announcements nobody resolves.
      client.removeAllListeners();
      client.on('error', () => undefined);
      void client.end().catch(() => undefined);
      throw err;
    }
    if (this.closed) {
      // close() came while this connected: it found no connection to end, and this one would LISTEN on.
      client.removeAllListeners();
      client.on('error', () => undefined);
      await client.end().catch(() => undefined);
      return;
    }
    this.start(top);
    this.client = client;
    this.retryMs = 250;
  }

  private start(top: number): void {
    this.stopGap();
    this.resolved = top;
    // Waiting from before a reconnect: announced, so committed and at or below `top`; they go out now.
    // (One not read yet goes out with the streams' resync, which replays from the table.)
    const before = [...this.waiting.values()].flatMap((w) => (w.event ? [w.event] : [])).sort((a, b) => a.id - b.id);
    this.waiting.clear();
    this.highest = 0;
    // Resynced first: a stream sent one of these before its replay would replay only what is above it,
    // and lose the lower ids whose announcements came while nobody listened.
    const resync = this.resyncing ?? [];
    this.resyncing = undefined;
    for (const s of resync) if (this.subscribers.get(s.clientId)?.has(s)) s.onResync();
    for (const event of [...before, ...this.early.splice(0)]) this.accept(event);
    // A deactivation announced while nobody listened is caught here.
    if (resync.length > 0)
      this.endInactive([...this.subscribers.keys()]).catch((err: Error) =>
        this.log.warn({ err: err.message }, 'event listener could not check its clients after a reconnect'),
      );
  }

  /**
   * Ends the subscriptions of those of `clientIds` that are no longer active (announced on the
   * clients channel: any change of the row, so it is read). A read that fails ends them too: the
   * stream's client reconnects (with Last-Event-ID) and is authenticated again.
   */
  private async endInactive(clientIds: string[]): Promise<void> {
    const subscribed = clientIds.filter((id) => this.subscribers.has(id));
    if (subscribed.length === 0) return;
    const repo = new ClientRepository(this.db);
    await Promise.all(
      subscribed.map(async (id) => {
        const row = await repo.findById(id).catch((err: Error) => {
          this.log.warn({ err: err.message }, 'event listener could not read a changed client; ending its streams');
          return undefined;
        });
        if (row?.is_active) return;
        for (const s of [...(this.subscribers.get(id) ?? [])]) s.onInactive?.();
      }),
    );
  }

  private lost(client: Client, err: Error): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.resolved = undefined;
    this.stopGap();
    client.removeAllListeners();
    client.on('error', () => undefined);
    if (this.closed) return;
    this.log.warn({ err: err.message }, 'event listener lost its connection; reconnecting');
    this.resyncing ??= [...this.subscribers.values()].flatMap((own) => [...own]);
    const retry = () => {
      if (this.closed || this.count === 0) {
        // Nobody left to hand them to: kept, they would go to streams opened later, as if new.
        this.waiting.clear();
        this.early = [];
        this.resyncing = undefined;
        return;
      }
      // Whichever connect succeeds (this one, or a new subscriber's) resyncs (start()).
      this.ensureConnected().catch(() => {
        this.retryMs = Math.min(this.retryMs * 2, 5000);
        setTimeout(retry, this.retryMs).unref();
      });
    };
    setTimeout(retry, this.retryMs).unref();
  }

  private async receive(payload: string | undefined): Promise<void> {
    if (!payload) return;
    let event = JSON.parse(payload) as StoredEvent & { truncated?: boolean };
    if (event.truncated) {
      const full = await findEvent(this.db, event.id).catch(() => undefined);
      if (!full) {
        // Not readable now (the database busy, a connection lost): it waits in its place, unread, and
        // is read from the table with the gap's missing ids, retried until that read succeeds.
        this.unread(event.id);
        return;
      }
      event = full;
    }
    this.accept(event);
  }

  private unread(id: number): void {
    // Before the watermark (connecting) or at or below it: the streams' resync replays it from the table.
    if (this.resolved === undefined || id <= this.resolved || this.waiting.has(id)) return;
    this.waiting.set(id, { at: Date.now() });
    this.highest = Math.max(this.highest, id);
    this.watchGap();
  }

  private accept(event: StoredEvent): void {
    if (this.resolved === undefined) {
      this.early.push(event);
      return;
    }
    if (event.id <= this.resolved) {
      // Delivered already (read from the table when its gap was resolved), or late: see above.
      if (!this.recovered.delete(event.id)) this.deliver(event);
      return;
    }
    if (event.id === this.resolved + 1 && this.waiting.size === 0) {
      this.resolved = event.id;
      this.deliver(event);
      return;
    }
    this.waiting.set(event.id, { event, at: Date.now() });
    this.highest = Math.max(this.highest, event.id);
    this.advance();
    if (this.waiting.size > 0) this.watchGap();
  }

  /** Delivers the waiting events that follow the watermark with no gap. */
  private advance(): void {
    let resolved = this.resolved ?? 0;
    for (let next = this.waiting.get(resolved + 1); next?.event; next = this.waiting.get(resolved + 1)) {
      this.waiting.delete(++resolved);
      this.resolved = resolved;
      this.deliver(next.event);
    }
    if (this.waiting.size === 0) this.stopGap();
  }

  private watchGap(): void {
    if (this.gap) {
      void this.check(this.gap);
      return;
    }
    let since = Number.POSITIVE_INFINITY;
    for (const w of this.waiting.values()) since = Math.min(since, w.at);
    this.gap = { upTo: this.highest, since, checking: false };
    void this.check(this.gap);
  }

  private async check(gap: Gap): Promise<void> {
    if (this.gap !== gap || gap.checking) return;
    gap.checking = true;
    clearTimeout(gap.timer);
    try {
      let ended: boolean;
      if (gap.xmax === undefined) {
        // Taken after the waiting events were announced, so after the missing ids below them were handed out.
        gap.upTo = this.highest;
        const { rows } = await this.db.raw<{ rows: { xmax: string; idle: boolean }[] }>(
          'select pg_snapshot_xmax(s)::text as xmax, pg_snapshot_xmin(s) = pg_snapshot_xmax(s) as idle from pg_current_snapshot() s',
        );
        gap.xmax = rows[0]?.xmax;
        ended = rows[0]?.idle ?? false;
      } else {
        ended = await this.ended(gap.xmax);
      }
      if (this.gap !== gap) return;
      if (ended) await this.settle(gap, gap.upTo);
      else if (Date.now() - gap.since >= this.options.gapWaitMs) {
        const overdue = this.overdue(gap);
        if (overdue !== undefined) await this.settle(gap, overdue);
      }
    } catch (err) {
      this.log.warn(
        { err: (err as Error).message },
        'event listener could not check a gap in event ids; checking again',
      );
    } finally {
      gap.checking = false;
      if (this.gap === gap) gap.timer = setTimeout(() => void this.check(gap), GAP_POLL_MS).unref();
    }
  }

  /**
   * The highest waiting id that has waited gapWaitMs: given up on up to it, and no further, so that a
   * later event still waits (its own gapWaitMs) for a lower id whose writer is only just committing.
   * Undefined when none has (the oldest went out meanwhile): `since` then moves to the oldest left.
   */
  private overdue(gap: Gap): number | undefined {
    const cutoff = Date.now() - this.options.gapWaitMs;
    let upTo: number | undefined;
    let oldest = Number.POSITIVE_INFINITY;
    for (const [id, w] of this.waiting) {
      oldest = Math.min(oldest, w.at);
      if (w.at <= cutoff && (upTo === undefined || id > upTo)) upTo = id;
    }
    if (upTo === undefined) gap.since = oldest;
    return upTo;
  }

  /** Whether every transaction in progress at the snapshot with this xmax has ended. */
  private async ended(xmax: string): Promise<boolean> {
    const { rows } = await this.db.raw<{ rows: { ended: boolean }[] }>(
      'select pg_snapshot_xmin(pg_current_snapshot()) >= ?::xid8 as ended',
      [xmax],
    );
    return rows[0]?.ended ?? false;
  }

  /**
   * Every id up to `upTo` is resolved: the waiting events and the missing ones that have committed go
   * out in id order; the others never commit (or, the gap given up, come late).
   */
  private async settle(gap: Gap, upTo: number): Promise<void> {
    // The missing ids as ranges between the waiting ones: a jump in the sequence is one range, not
    // millions of ids listed (built, sent and looked up one by one, it blocked the process for seconds).
    const missing: [number, number][] = [];
    let from = (this.resolved ?? 0) + 1;
    for (const id of [...this.waiting]
      .filter(([id, w]) => id <= upTo && w.event)
      .map(([id]) => id)
      .sort((a, b) => a - b)) {
      if (id > from) missing.push([from, id - 1]);
      from = Math.max(from, id + 1);
    }
    if (from <= upTo) missing.push([from, upTo]);
    const found = await eventsInRanges(this.db, missing);
    // A reconnect meanwhile has started over from a new watermark.
    if (this.gap !== gap || this.resolved === undefined) return;
    const now = Date.now();
    for (const event of found) {
      // Its NOTIFY may have come meanwhile; if not, it is dropped when it comes.
      if (event.id <= this.resolved || this.waiting.get(event.id)?.event) continue;
      // An unread one's announcement has come already: no NOTIFY of it is left to drop.
      const unread = this.waiting.has(event.id);
      this.waiting.set(event.id, { event, at: now });
      if (unread) continue;
      this.recovered.add(event.id);
      if (this.recovered.size > MAX_RECOVERED) this.recovered.delete(this.recovered.values().next().value as number);
    }
    const due = [...this.waiting.keys()].filter((id) => id <= upTo).sort((a, b) => a - b);
    this.resolved = Math.max(this.resolved, upTo);
    this.stopGap();
    for (const id of due) {
      const w = this.waiting.get(id);
      this.waiting.delete(id);
      // An unread one not found: gone (retention) since it was announced.
      if (w?.event) this.deliver(w.event);
    }
    this.advance();
    if (this.waiting.size > 0) this.watchGap();
  }

  private stopGap(): void {
    clearTimeout(this.gap?.timer);
    this.gap = undefined;
  }

  private deliver(event: StoredEvent): void {
    const own = this.subscribers.get(event.client_id);
    if (own) for (const s of own) s.onEvent(event);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stopGap();
    const client = this.client;
    this.client = undefined;
    if (client) {
      client.removeAllListeners();
      await client.end().catch(() => undefined);
    }
    // A connection under way ends itself once made (connect()). Waited for, so that closed means ended
    // for a caller that waits, but not for long: a connect to a host that does not answer can hang for minutes.
    const connecting = this.connecting;
    if (connecting) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        connecting.catch(() => undefined),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, CLOSE_WAIT_MS);
        }),
      ]);
      clearTimeout(timer);
    }
  }
}
