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

  /**
   * Issues a new key and secret; the replaced pair stays valid for `graceMs` (a second rotation
   * within it ends that grace: only one previous pair is kept). The clients table's trigger tells
   * every API process to drop its cached row. Undefined when no such client exists.
   */
  async rotate(
    id: string,
    graceMs: number,
  ): Promise<(IssuedCredentials & { previous_valid_until: string }) | undefined> {
    const { api_key, api_secret } = issueCredentials();
    const validUntil = new Date(Date.now() + graceMs);
    const rows = (await this.db('clients')
      .where({ id })
      .update({
        previous_key_hash: this.db.ref('api_key_hash'),
        previous_secret_hash: this.db.ref('api_secret_hash'),
        previous_valid_until: validUntil,
        api_key_hash: hashSecret(api_key),
        api_secret_hash: hashSecret(api_secret),
        updated_at: this.db.fn.now(),
      })
      .returning('id')) as { id: string }[];
    if (rows.length === 0) return undefined;
    return { client_id: id, api_key, api_secret, previous_valid_until: validUntil.toISOString() };
  }

  /** The ids of every deactivated client (the workers' sweep after they missed announcements). */
  async inactiveIds(): Promise<string[]> {
    return (await ClientModel.query(this.db).select('id').where({ is_active: false })).map((c) => c.id);
  }

  /** Returns false when no such client exists. */
  async setActive(id: string, active: boolean): Promise<boolean> {
    const n = await ClientModel.query(this.db)
      .findById(id)
      .patch({ is_active: active, deactivated_at: active ? null : new Date() });
    return n > 0;
  }
}
