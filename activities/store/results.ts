import type { ActivityDeps } from '../deps';

// Results up to this size live in Postgres (jsonb); larger ones in the private results bucket.
const INLINE_LIMIT_BYTES = 256 * 1024;

/**
 * Stores a job's result data. Idempotent: a retried activity overwrites the same row and the same
 * object key. The job becomes `completed` only afterwards, in completeJob.
 */
export async function saveJobResult(deps: Pick<ActivityDeps, 'db' | 'storage'>, jobId: string, data: unknown): Promise<number> {
  const json = JSON.stringify(data);
  const size = Buffer.byteLength(json);
  let row: { job_id: string; data: string | null; object_key: string | null; size_bytes: number };
  if (size <= INLINE_LIMIT_BYTES) {
    row = { job_id: jobId, data: json, object_key: null, size_bytes: size };
  } else {
    const stored = await deps.storage.putPrivate(`jobs/${jobId}/result.json`, json, 'application/json');
    row = { job_id: jobId, data: null, object_key: stored.key, size_bytes: size };
  }
  await deps.db('job_results').insert(row).onConflict('job_id').merge();
  return size;
}

/** The stored result of a job, wherever it lives; undefined when there is none. */
export async function loadJobResult(deps: Pick<ActivityDeps, 'db' | 'storage'>, jobId: string): Promise<unknown> {
  const row = (await deps.db('job_results').where({ job_id: jobId }).first()) as { data: unknown; object_key: string | null } | undefined;
  if (!row) return undefined;
  if (row.object_key) return JSON.parse((await deps.storage.get(deps.storage.resultsBucket, row.object_key)).toString('utf8')) as unknown;
  return row.data;
}
