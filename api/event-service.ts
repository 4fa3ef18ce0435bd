import type { Db } from '../db';
import { ClientRepository } from '../db/repositories/clients';
import { eventsSince, type StoredEvent } from '../db/repositories/events';

/** What the event stream reads from Postgres: the events a reconnecting client missed, and whether the client is still active. */
export class EventService {
  private readonly clients: ClientRepository;

  constructor(private readonly db: Db) {
    this.clients = new ClientRepository(db);
  }

  /** The client's stored events after `afterId` up to `upTo` (EventListener#horizon), oldest first, at most `limit`. */
  since(clientId: string, afterId: number, upTo: number, limit: number): Promise<StoredEvent[]> {
    return eventsSince(this.db, clientId, afterId, upTo, limit);
  }

  /** Whether the client's row says it is active (read now, not from the authentication cache); false for no such client. */
  async isActive(clientId: string): Promise<boolean> {
    return (await this.clients.findById(clientId))?.is_active === true;
  }
}
