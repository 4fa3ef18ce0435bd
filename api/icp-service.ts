import type { Db } from '../db';
import { IcpProfiles, type IcpRow } from '../db/repositories/icp-profiles';
import { SearchOutbox } from '../db/repositories/search-outbox';
import type { LeadIndexTrigger } from './lead-index';

export interface Icp {
  industries: string[];
  countries: string[];
}

/** The client's ideal-customer profile, which icp_score measures leads against. */
export class IcpService {
  private readonly profiles: IcpProfiles;
  private readonly outbox: SearchOutbox;

  constructor(
    private readonly db: Db,
    private readonly trigger: LeadIndexTrigger,
  ) {
    this.profiles = new IcpProfiles(db);
    this.outbox = new SearchOutbox(db);
  }

  /** The stored profile; empty lists when none is set. */
  get(clientId: string): Promise<IcpRow> {
    return this.profiles.get(clientId);
  }

  /**
   * Stores the profile and, in the same transaction, queues every business of the client for
   * re-indexing (all their scores change); then asks the indexer to drain. Returns how many were queued.
   */
  async put(clientId: string, icp: Icp): Promise<{ row: IcpRow; requeued: number }> {
    const result = await this.db.transaction(async (trx) => ({
      row: await this.profiles.put(trx, clientId, icp),
      requeued: await this.outbox.enqueueAll(trx, clientId),
    }));
    if (result.requeued > 0) await this.trigger.kick(clientId);
    return result;
  }
}
