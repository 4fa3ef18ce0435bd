import { TenantModel } from './tenant';

/**
 * A campaign row, for tenant-scoped queries (the repository's row type is CampaignRow). Plain Model,
 * not BaseModel: its updated_at is written by the repository's own updates.
 */
export class CampaignModel extends TenantModel {
  static override tableName = 'campaigns';

  id!: string;
  status!: string;

}
