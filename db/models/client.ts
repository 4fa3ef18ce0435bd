import { BaseModel } from './base';

export class ClientModel extends BaseModel {
  static override tableName = 'clients';

  id!: string;
  name!: string;
  api_key_hash!: string;
  api_secret_hash!: string;
  is_active!: boolean;
  deactivated_at!: Date | null;
  /** The pair a rotation replaced, accepted until previous_valid_until (client:rotate). */
  previous_key_hash!: string | null;
  previous_secret_hash!: string | null;
  previous_valid_until!: Date | null;
}
