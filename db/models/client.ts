import { BaseModel } from './base';

export class ClientModel extends BaseModel {
  static override tableName = 'clients';

  id!: string;
  name!: string;
  api_key_hash!: string;
  api_secret_hash!: string;
  is_active!: boolean;
  deactivated_at!: Date | null;
}
