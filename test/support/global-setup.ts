import { createDb, migrateLatest } from '../../db';
import { parseDbConfig } from '../../lib/config';
import { newRunId, runEnv } from './run';
import { writeRunWorkflowBundle } from './workflow-bundle';

export default async function globalSetup(): Promise<void> {
  const env = runEnv(newRunId());
  Object.assign(process.env, env);
  const config = parseDbConfig(process.env);
  const db = createDb(config);
  try {
    await migrateLatest(db, config.DATABASE_SCHEMA);
  } finally {
    await db.destroy();
  }
  await writeRunWorkflowBundle();
}
