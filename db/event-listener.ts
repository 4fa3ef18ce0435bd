import { Client } from 'pg';
import type { Knex } from 'knex';
import type { Logger } from '../lib/logger';
import { eventsChannel, findEvent, type StoredEvent } from './repositories/events';

export interface EventSubscriber {
  clientId: string;
  onEvent(event: StoredEvent): void;
  /** After a reconnect: notifications may have been missed, read them from the table. */
  onResync(): void;
}

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
 */
export class EventListener {
  private client?: Client;
  private connecting?: Promise<void>;
  // By client: an event is handed only to its own client's subscribers.
  private readonly subscribers = new Map<string, Set<EventSubscriber>>();
  private count = 0;
  private closed = false;
  private retryMs = 250;

  constructor(
    private readonly connectionString: string,
    private readonly schema: string,
    private readonly db: Knex,
    private readonly log: Logger,
  ) {}

  get listening(): boolean {
    return this.client !== undefined;
  }

  get subscriptionCount(): number {
    return this.count;
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
      if (own.size === 0 && this.subscribers.get(subscriber.clientId) === own) this.subscribers.delete(subscriber.clientId);
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
    return (this.connecting ??= this.connect().finally(() => { this.connecting = undefined; }));
  }

  private async connect(): Promise<void> {
    const client = new Client({ connectionString: this.connectionString });
    client.on('notification', (msg) => { void this.dispatch(msg.payload); });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    await client.connect();
    await client.query(`LISTEN "${eventsChannel(this.schema)}"`);
    this.client = client;
    this.retryMs = 250;
  }

  private lost(client: Client, err: Error): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.removeAllListeners();
    client.on('error', () => undefined);
    if (this.closed) return;
    this.log.warn({ err: err.message }, 'event listener lost its connection; reconnecting');
    const retry = () => {
      if (this.closed || this.count === 0) return;
      this.ensureConnected().then(
        () => this.subscribers.forEach((own) => own.forEach((s) => s.onResync())),
        () => { this.retryMs = Math.min(this.retryMs * 2, 5000); setTimeout(retry, this.retryMs).unref(); },
      );
    };
    setTimeout(retry, this.retryMs).unref();
  }

  private async dispatch(payload: string | undefined): Promise<void> {
    if (!payload) return;
    let event = JSON.parse(payload) as StoredEvent & { truncated?: boolean };
    if (event.truncated) {
      const full = await findEvent(this.db, event.id).catch(() => undefined);
      if (!full) return;
      event = full;
    }
    const own = this.subscribers.get(event.client_id);
    if (own) for (const s of own) s.onEvent(event);
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = undefined;
    if (client) {
      client.removeAllListeners();
      await client.end().catch(() => undefined);
    }
  }
}
