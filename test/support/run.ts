import { randomBytes } from 'node:crypto';

/**
 * Per-run isolation on the shared stack (house style): a Postgres schema, an Elasticsearch index
 * prefix, a MinIO bucket prefix and a Temporal task-queue prefix of this run's own. global-setup
 * sets them in the environment that Jest's workers inherit.
 */
export function newRunId(): string {
  return `${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;
}

export function runEnv(runId: string): Record<string, string> {
  return {
    LEADJOBS_TEST_RUN: runId,
    DATABASE_SCHEMA: `t_${runId}`,
    ES_INDEX_PREFIX: `t-${runId}`,
    MINIO_BUCKET_PREFIX: `t-${runId}`,
    TASK_QUEUE_PREFIX: `t-${runId}`,
    // The run's own key for the LLM integrations' credentials (a secret: no default in config).
    INTEGRATIONS_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    // And for the unsubscribe tokens: a stack env file from before that key need not have it.
    UNSUBSCRIBE_SIGNING_KEY: randomBytes(32).toString('base64'),
  };
}
