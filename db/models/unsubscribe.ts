import { TenantModel } from './tenant';

/** A recipient's subscription state for one list (or all lists) of a client. */
export class UnsubscribePreferenceModel extends TenantModel {
  static override tableName = 'unsubscribe_preferences';

  email!: string;
  list!: string;
  status!: string;
}

/** One change of a recipient's subscription state, kept for the client's audit. */
export class UnsubscribeAuditModel extends TenantModel {
  static override tableName = 'unsubscribe_audit';

  id!: string | number;
  email!: string;
}
