import { TenantModel } from './tenant';
import type { ResourceType } from '../../lib/idap';

/** An IDAP resource (spec §2.9). Written only through db/repositories/resources.ts. */
export class ResourceModel extends TenantModel {
  static override tableName = 'idap_resources';

  id!: string;
  resource_type!: ResourceType;
  natural_key!: string;
  data!: Record<string, unknown>;
  flags!: string[];
  sources!: string[];
  campaign_ids!: string[];
  change_seq!: string;
  created_at!: Date;
  modified_at!: Date;
  /** created_at / modified_at as ISO 8601 with microseconds (selected by the repository). */
  created_iso?: string;
  modified_iso?: string;
}
