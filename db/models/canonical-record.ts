import { Model, type QueryBuilder } from 'objection';
import type { RecordType } from '../../lib/dedupe';

/** A canonical record of the de-duplication store (spec §2.7); ids are integers (bigserial). */
export class CanonicalRecordModel extends Model {
  static override tableName = 'canonical_records';

  id!: string;
  client_id!: string;
  record_type!: RecordType;
  campaign_id!: string | null;
  record_hash!: string;
  email!: string | null;
  full_name!: string | null;
  company_name!: string | null;
  company_domain!: string | null;
  maps_place_id!: string | null;
  proflink_url!: string | null;
  phone!: string | null;
  city!: string | null;
  country!: string | null;
  source_worker!: string;
  data!: Record<string, unknown>;
  created_at!: Date;
  deleted_at!: Date | null;

  /** Every tenant-scoped query goes through forClient; soft-deleted records are not there either. */
  static override modifiers = {
    forClient(query: QueryBuilder<CanonicalRecordModel>, clientId: string) {
      query.where('canonical_records.client_id', clientId).whereNull('canonical_records.deleted_at');
    },
  };
}
