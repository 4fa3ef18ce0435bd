import type { Db } from '..';
import { hashSecret, issueCredentials, type IssuedCredentials } from '../../lib/credentials';
import { ClientModel } from '../models/client';

export class ClientRepository {
  constructor(private readonly db: Db) {}

  /** Creates a client and returns its credentials: the only time the key and secret exist in clear. */
  async create(name: string): Promise<IssuedCredentials> {
    const creds = issueCredentials();
    await ClientModel.query(this.db).insert({
      id: creds.client_id,
      name,
      api_key_hash: hashSecret(creds.api_key),
      api_secret_hash: hashSecret(creds.api_secret),
      is_active: true,
    });
    return creds;
  }

  async findById(id: string): Promise<ClientModel | undefined> {
    return ClientModel.query(this.db).findById(id);
  }

  /** Returns false when no such client exists. */
  async setActive(id: string, active: boolean): Promise<boolean> {
    const n = await ClientModel.query(this.db)
      .findById(id)
      .patch({ is_active: active, deactivated_at: active ? null : new Date() });
    return n > 0;
  }
}
