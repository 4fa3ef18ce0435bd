import { TenantModel } from './tenant';

/** One location of a campaign (a search term in a place), with the job that searched it. */
export class CampaignLocationModel extends TenantModel {
  static override tableName = 'campaign_locations';

  campaign_id!: string;
  job_id!: string | null;
  display_name!: string;
  sequence_order!: number;
  status!: string;
}
