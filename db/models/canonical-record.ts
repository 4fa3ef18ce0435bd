import type { QueryBuilder, Model } from 'objection';
import type { RecordType } from '../../lib/dedupe';
import { TenantModel } from './tenant';

/** A canonical record of the de-duplication store (spec §2.7); ids are integers (bigserial). */
export class CanonicalRecordModel extends TenantModel {
  static override tableName = 'canonical_records';

  id!: string;
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
  /** Merged: the canonical record this one now stands for (a match on it answers that record). */
  merged_into!: string | null;
  merged_at!: Date | null;

  /** A client's records are its live ones: soft-deleted records are not there either. */
  static override tenantScope<M extends Model>(query: QueryBuilder<M>, clientId: string): void {
    super.tenantScope(query, clientId);
    query.whereNull(query.tableRefFor(query.modelClass()) + '.deleted_at');
  }
}

/**
 * One blocking key of a live canonical record (lib/dedupe-fuzzy.ts fuzzyKeys), kept in step with
 * canonical_records.key_blocks by the database's triggers (migration 20261207000100): written by no
 * code, read by the fuzzy candidate search (db/repositories/dedupe.ts fuzzyCandidates).
 */
export class CanonicalBlockModel extends TenantModel {
  static override tableName = 'canonical_blocks';
  static override idColumn = ['client_id', 'record_type', 'key', 'record_id'];

  record_type!: RecordType;
  key!: string;
  record_id!: string;
  campaign_id!: string | null;
}
