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

/**
 * One LISTEN connection per API process, fanning each stored event out to that process's SSE
 * subscribers of the event's client. Any worker's event reaches any API process this way.
 * Connects on the first subscriber and reconnects with backoff.
 */
export class EventListener {
  private client?: Client;
  private connecting?: Promise<void>;
  private readonly subscribers = new Set<EventSubscriber>();
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
    return this.subscribers.size;
  }

  async subscribe(subscriber: EventSubscriber): Promise<() => void> {
    this.subscribers.add(subscriber);
    await this.ensureConnected();
    return () => this.subscribers.delete(subscriber);
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
      if (this.closed || this.subscribers.size === 0) return;
      this.ensureConnected().then(
        () => this.subscribers.forEach((s) => s.onResync()),
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
    for (const s of this.subscribers) if (s.clientId === event.client_id) s.onEvent(event);
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
