import type { Knex } from 'knex';
import type { Storage } from '../../lib/storage';

// Results up to this size live in Postgres (jsonb); larger ones in the private results bucket.
const INLINE_LIMIT_BYTES = 256 * 1024;

/** Where a result too large for its row lives, in the private results bucket. */
export const resultObjectKey = (jobId: string): string => `jobs/${jobId}/result.json`;

/** Job result data: written by job-type activities, read by the results endpoint. */
export class JobResultStore {
  constructor(
    private readonly db: Knex,
    private readonly storage: Storage,
  ) {}

  /**
   * Stores a job's result. Idempotent: a retried activity overwrites the same row and object key.
   * The job becomes `completed` only afterwards (completeJob), which discards it if the job was
   * cancelled meanwhile. Returns the size in bytes.
   */
  async save(jobId: string, data: unknown): Promise<number> {
    const json = JSON.stringify(data);
    const size = Buffer.byteLength(json);
    let row: { job_id: string; data: string | null; object_key: string | null; size_bytes: number };
    if (size <= INLINE_LIMIT_BYTES) {
      row = { job_id: jobId, data: json, object_key: null, size_bytes: size };
    } else {
      const stored = await this.storage.putPrivate(resultObjectKey(jobId), json, 'application/json');
      row = { job_id: jobId, data: null, object_key: stored.key, size_bytes: size };
    }
    await this.db('job_results').insert(row).onConflict('job_id').merge();
    return size;
  }

  /**
   * Deletes the result's storage object, if the job ever had one. The job row's discard (in its
   * transaction) drops only the Postgres row; this runs after that commit. The key is derived from
   * the job id, so it is found even when the API's cancel already dropped the row that named it.
   * Idempotent: a missing object is not an error.
   */
  async removeObject(jobId: string): Promise<void> {
    await this.storage.remove(this.storage.resultsBucket, resultObjectKey(jobId));
  }

  /** The stored result, wherever it lives; undefined when there is none. */
  async load(jobId: string): Promise<unknown> {
    const row = (await this.db('job_results').where({ job_id: jobId }).first()) as
      { data: unknown; object_key: string | null } | undefined;
    if (!row) return undefined;
    if (row.object_key)
      return JSON.parse(
        (await this.storage.get(this.storage.resultsBucket, row.object_key)).toString('utf8'),
      ) as unknown;
    return row.data;
  }
}
