import { Model, type QueryBuilder } from 'objection';
import type { ResourceType } from '../../lib/idap';

/** An IDAP resource (spec §2.9). Written only through db/repositories/resources.ts. */
export class ResourceModel extends Model {
  static override tableName = 'idap_resources';

  id!: string;
  client_id!: string;
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

  /** Every tenant-scoped query goes through forClient: another client's resource is simply not there. */
  static override modifiers = {
    forClient(query: QueryBuilder<ResourceModel>, clientId: string) {
      query.where('idap_resources.client_id', clientId);
    },
  };
}
