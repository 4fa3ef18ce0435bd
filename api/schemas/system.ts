import { z } from 'zod';

const dependencyState = z.enum(['connected', 'unavailable']);

export const healthResponse = z
  .object({
    status: z.enum(['healthy', 'unhealthy']),
    database: dependencyState.describe('Postgres'),
    queue: dependencyState.describe('Temporal'),
    search: dependencyState.describe('Elasticsearch'),
    storage: dependencyState.describe('MinIO object storage'),
    timestamp: z.string().describe('ISO 8601'),
  })
  .meta({ id: 'HealthResponse' });
