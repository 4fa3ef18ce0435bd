import { TenantModel } from './tenant';

/** A stored event of a client (spec §2.11); the repository's row type is StoredEvent. */
export class EventModel extends TenantModel {
  static override tableName = 'events';

  id!: string | number;
  created_at!: Date | string;
}
