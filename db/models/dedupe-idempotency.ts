import { TenantModel } from './tenant';

/** A de-duplication response kept for its Idempotency-Key within the window. */
export class DedupeIdempotencyModel extends TenantModel {
  static override tableName = 'dedupe_idempotency';
  static override idColumn = ['client_id', 'idempotency_key'];

  idempotency_key!: string;
  response!: string;
  created_at!: Date;
}
