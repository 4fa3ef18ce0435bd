import type { RelationMappings } from 'objection';
import { CampaignLocationModel } from './campaign-location';
import { JobModel } from './job';
import { TenantModel } from './tenant';

/**
 * A campaign row, for tenant-scoped queries (the repository's row type is CampaignRow). Not a
 * BaseModel: its updated_at is written by the repository's own updates.
 */
export class CampaignModel extends TenantModel {
  static override tableName = 'campaigns';

  id!: string;
  status!: string;

  static override get relationMappings(): RelationMappings {
    return {
      jobs: {
        relation: TenantModel.HasManyRelation,
        modelClass: JobModel,
        join: { from: 'campaigns.id', to: 'jobs.campaign_id' },
      },
      locations: {
        relation: TenantModel.HasManyRelation,
        modelClass: CampaignLocationModel,
        join: { from: 'campaigns.id', to: 'campaign_locations.campaign_id' },
      },
    };
  }
}
