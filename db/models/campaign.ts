import { Model, type QueryBuilder } from 'objection';

/**
 * A campaign row, for tenant-scoped queries (the repository's row type is CampaignRow). Plain Model,
 * not BaseModel: its updated_at is written by the repository's own updates.
 */
export class CampaignModel extends Model {
  static override tableName = 'campaigns';

  id!: string;
  client_id!: string;
  status!: string;

  /** Every tenant-scoped query goes through forClient: another client's campaign is simply not there. */
  static override modifiers = {
    forClient(query: QueryBuilder<CampaignModel>, clientId: string) {
      query.where('campaigns.client_id', clientId);
    },
  };
}
