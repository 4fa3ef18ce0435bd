import { TenantModel } from './tenant';

/** A business waiting to be (re)indexed in the lead search. */
export class SearchOutboxModel extends TenantModel {
  static override tableName = 'search_outbox';
  static override idColumn = ['client_id', 'resource_id'];

  resource_id!: string;
  job_id!: string | null;
  enqueued_at!: Date;
}
