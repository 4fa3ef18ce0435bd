import { createDb } from '../../db';
import { parseConfig } from '../../lib/config';
import { Storage } from '../../lib/storage';
import { createSearchClient } from '../../search/client';
import { removeRunWorkflowBundle } from './workflow-bundle';

/** Drops what this run created: its schema, its indices and its buckets. */
export default async function globalTeardown(): Promise<void> {
  removeRunWorkflowBundle();
  if (process.env.KEEP_TEST_DATA === '1') return;
  const config = parseConfig(process.env);
  const db = createDb(config);
  try {
    await db.raw('DROP SCHEMA IF EXISTS ?? CASCADE', [config.DATABASE_SCHEMA]);
  } finally {
    await db.destroy();
  }

  const search = createSearchClient(config);
  try {
    const indices = await search.cat.indices({ index: `${config.ES_INDEX_PREFIX}-*`, format: 'json' });
    // Wildcard deletes are refused (destructive_requires_name): delete each index by name.
    for (const idx of indices) if (idx.index) await search.indices.delete({ index: idx.index });
  } catch {
    // Elasticsearch down at the end of a run leaves indices behind; the next run uses a new prefix.
  } finally {
    await search.close();
  }

  const storage = Storage.fromConfig(config);
  try {
    for (const bucket of await storage.minio.listBuckets()) {
      if (!bucket.name.startsWith(`${config.MINIO_BUCKET_PREFIX}-`)) continue;
      const names: string[] = [];
      for await (const obj of storage.minio.listObjectsV2(bucket.name, '', true)) if (obj.name) names.push(obj.name);
      if (names.length) await storage.minio.removeObjects(bucket.name, names);
      await storage.minio.removeBucket(bucket.name);
    }
  } catch {
    // Same as above.
  }
}
