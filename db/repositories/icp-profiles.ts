import type { Knex } from 'knex';
import { IcpProfileModel } from '../models/icp-profile';

export interface IcpRow {
  industries: string[];
  countries: string[];
  updated_at: Date | null;
}

/** Each client's ideal-customer profile (one row per client; none = no preference). */
export class IcpProfiles {
  constructor(private readonly db: Knex) {}

  async get(clientId: string): Promise<IcpRow> {
    const row = (await IcpProfileModel.forClient(this.db, clientId)
      .select('industries', 'countries', 'updated_at')
      .first()) as unknown as IcpRow | undefined;
    return row ?? { industries: [], countries: [], updated_at: null };
  }

  async put(trx: Knex, clientId: string, icp: { industries: string[]; countries: string[] }): Promise<IcpRow> {
    const [row] = (await trx('icp_profiles')
      .insert({ client_id: clientId, industries: icp.industries, countries: icp.countries, updated_at: trx.fn.now() })
      .onConflict('client_id')
      .merge()
      .returning(['industries', 'countries', 'updated_at'])) as IcpRow[];
    return row as IcpRow;
  }
}
