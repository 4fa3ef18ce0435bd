import { Client } from 'pg';
import type { Knex } from 'knex';
import type { Logger } from '../lib/logger';
import type { ClientModel } from './models/client';
import { ClientRepository } from './repositories/clients';

/** The channel the clients table's trigger announces changes on (migration 20261125000500). */
export function clientsChannel(schema: string): string {
  return `${schema}_clients`;
}

export interface ClientCacheOptions {
  connectionString: string;
  schema: string;
  /** How long an entry may serve without a database read; 0 turns the cache off. */
  maxAgeMs: number;
  /** Most clients held; the oldest entry goes first. */
  maxEntries: number;
}

/**
 * The client rows that authenticate requests, kept in memory so that a request costs no database
 * round trip for its credentials. It holds what the table holds (the key and secret hashes and
 * is_active), never a verdict: every request's key and secret are still compared with the stored
 * hashes, in constant time, by the caller. Correctness rests on LISTEN: a trigger on `clients`
 * announces every update or delete with the client's id at commit, and this process drops that
 * entry when it hears it. Entries are only served while the LISTEN connection is up; a row read
 * while any change was announced is not kept (it may predate the change); losing the connection
 * empties the cache until it is back. Unknown client ids are never cached.
 */
export class ClientCache {
  private readonly repo: ClientRepository;
  private readonly entries = new Map<string, { client: ClientModel; at: number }>();
  private listener?: Client;
  private connecting?: Promise<void>;
  // Bumped on every announcement and on a lost connection: a read that spans a bump is not kept.
  private generation = 0;
  private closed = false;
  private retryMs = 250;
  private retryAt = 0;

  constructor(
    db: Knex,
    private readonly options: ClientCacheOptions,
    private readonly log: Logger,
  ) {
    this.repo = new ClientRepository(db);
  }

  /** Whether entries are being served (the LISTEN connection is up). */
  get listening(): boolean {
    return this.listener !== undefined;
  }

  /** The client row with this id, from memory when the cache may serve it, else from the database. */
  async find(id: string): Promise<ClientModel | undefined> {
    if (this.options.maxAgeMs <= 0) return this.repo.findById(id);
    if (!this.listener && performance.now() >= this.retryAt) void this.ensureListening().catch(() => undefined);
    const hit = this.listener ? this.entries.get(id) : undefined;
    if (hit && performance.now() - hit.at < this.options.maxAgeMs) return hit.client;

    const generation = this.generation;
    const listening = this.listener !== undefined;
    const row = await this.repo.findById(id);
    if (row && listening && this.listener && generation === this.generation) {
      this.entries.delete(id);
      this.entries.set(id, { client: row, at: performance.now() });
      if (this.entries.size > this.options.maxEntries) {
        const oldest = this.entries.keys().next().value;
        if (oldest !== undefined) this.entries.delete(oldest);
      }
    }
    return row;
  }

  /** Starts listening (the API calls it at start so that the first requests are served from memory). */
  ensureListening(): Promise<void> {
    if (this.listener || this.closed || this.options.maxAgeMs <= 0) return Promise.resolve();
    return (this.connecting ??= this.connect()
      .then(
        () => {
          this.retryMs = 250;
        },
        (err: unknown) => {
          // Until the next attempt, requests read their client from the database.
          this.retryAt = performance.now() + this.retryMs;
          this.retryMs = Math.min(this.retryMs * 2, 5000);
          throw err;
        },
      )
      .finally(() => {
        this.connecting = undefined;
      }));
  }

  private async connect(): Promise<void> {
    const client = new Client({ connectionString: this.options.connectionString });
    client.on('notification', (msg) => {
      this.generation++;
      if (msg.payload) this.entries.delete(msg.payload);
    });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    try {
      await client.connect();
      await client.query(`LISTEN "${clientsChannel(this.options.schema)}"`);
    } catch (err) {
      client.removeAllListeners();
      client.on('error', () => undefined);
      await client.end().catch(() => undefined);
      throw err;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.listener = client;
  }

  private lost(client: Client, err: Error): void {
    if (this.listener !== client) return;
    // Announcements may be missed from here on: nothing held can be trusted.
    this.listener = undefined;
    this.generation++;
    this.entries.clear();
    client.removeAllListeners();
    client.on('error', () => undefined);
    if (this.closed) return;
    // The next request reconnects (find); until then requests read their client from the database.
    this.log.warn(
      { err: err.message },
      'client cache lost its LISTEN connection; reading clients from the database until it is back',
    );
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.connecting?.catch(() => undefined);
    const client = this.listener;
    this.listener = undefined;
    this.entries.clear();
    if (client) {
      client.removeAllListeners();
      client.on('error', () => undefined);
      await client.end().catch(() => undefined);
    }
  }
}
