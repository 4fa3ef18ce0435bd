import { randomUUID } from 'node:crypto';
import { Connection } from '@temporalio/client';
import { createDb } from '../../db';
import { parseConfig } from '../../lib/config';
import { Storage } from '../../lib/storage';
import { temporalConnectionOptions } from '../../lib/temporal';
import { createSearchClient } from '../../search/client';
import { removeRunWorkflowBundle } from './workflow-bundle';

/** Drops what this run created: its schema, its indices, its buckets and its workflows still running. */
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

  // Once its tests have ended no worker polls the run's task queues, so its workflows still running
  // (jobs a test left queued, storms, timers) would wait for their deadlines in the shared Temporal
  // server, whose file grows with them. One batch operation terminates them in the server's background.
  try {
    const connection = await Connection.connect({ ...temporalConnectionOptions(config), connectTimeout: '5s' });
    try {
      await connection.workflowService.startBatchOperation({
        namespace: config.TEMPORAL_NAMESPACE,
        jobId: randomUUID(),
        reason: 'test run finished',
        visibilityQuery: `ExecutionStatus = "Running" AND TaskQueue STARTS_WITH "${config.TASK_QUEUE_PREFIX}-"`,
        terminationOperation: {},
      });
    } finally {
      await connection.close();
    }
  } catch {
    // Temporal down at the end of a run: the run's workflows wait for their deadlines.
  }
}
