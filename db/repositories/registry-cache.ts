import type { Knex } from 'knex';

export interface CachedAnswer<T> {
  answer: T;
  retrievedAt: string;
  expiresAt: string;
}

/**
 * Company-registry answers by (source, normalised question), shared by all clients. An expired
 * entry is a miss; a write replaces the entry, so a retried activity stores the same row again.
 */
export class RegistryCache {
  constructor(private readonly db: Knex) {}

  async get<T>(source: string, queryKey: string): Promise<CachedAnswer<T> | undefined> {
    const row = (await this.db('registry_cache')
      .where({ source, query_key: queryKey })
      .andWhere('expires_at', '>', this.db.fn.now())
      .first('answer', 'retrieved_at', 'expires_at')) as
      { answer: T; retrieved_at: Date; expires_at: Date } | undefined;
    return (
      row && {
        answer: row.answer,
        retrievedAt: row.retrieved_at.toISOString(),
        expiresAt: row.expires_at.toISOString(),
      }
    );
  }

  /** Stores an answer for `ttlSeconds` from `retrievedAt`; returns when it expires. */
  async put(
    source: string,
    queryKey: string,
    answer: unknown,
    retrievedAt: string,
    ttlSeconds: number,
  ): Promise<string> {
    const expiresAt = new Date(Date.parse(retrievedAt) + ttlSeconds * 1000).toISOString();
    await this.db('registry_cache')
      .insert({
        source,
        query_key: queryKey,
        answer: JSON.stringify(answer),
        retrieved_at: retrievedAt,
        expires_at: expiresAt,
      })
      .onConflict(['source', 'query_key'])
      .merge();
    return expiresAt;
  }
}
