import { TenantModel } from './tenant';

/** A client's ideal-customer profile (one row per client). */
export class IcpProfileModel extends TenantModel {
  static override tableName = 'icp_profiles';
  static override idColumn = 'client_id';

  industries!: string[];
  countries!: string[];
  updated_at!: Date | null;
}
