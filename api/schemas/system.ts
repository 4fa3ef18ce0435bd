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

const queueSide = z.object({
  backlog: z.number().int().describe('tasks waiting for a worker (approximate)'),
  backlog_age_seconds: z.number().describe('how long the oldest waiting task has waited'),
  add_rate: z.number().describe('tasks added per second (recent average)'),
  dispatch_rate: z.number().describe('tasks handed to workers per second (recent average)'),
  pollers: z.number().int().describe('workers polling this side of the queue recently'),
  rate_limit_per_second: z
    .number()
    .nullable()
    .describe('dispatch limit of the whole queue (set by its workers or on the queue), null when unlimited'),
});

export const queueStatsResponse = z
  .object({
    success: z.literal(true),
    queues: z
      .array(
        z.object({
          name: z.string().describe('Temporal task queue'),
          role: z
            .enum(['job', 'job_test', 'activity', 'leads', 'webhooks', 'campaigns', 'mail'])
            .describe(
              "job: a job type's workflows and activities; job_test: its test queue; activity: a rate-limited provider queue; leads, webhooks, campaigns, mail: service workflows",
            ),
          job_types: z
            .array(z.string())
            .describe(
              'the job types whose work runs there: several on a provider queue they share, none on service queues',
            ),
          workflow: queueSide.nullable().describe('workflow tasks (null for activity-only queues)'),
          activity: queueSide.describe('activity tasks'),
        }),
      )
      .describe("the deployment's task queues (shared by all clients: no client data)"),
    jobs: z
      .record(
        z.string(),
        z.record(z.enum(['queued', 'processing', 'completed', 'failed', 'cancelled']), z.number().int()),
      )
      .describe("the caller's jobs per type and status"),
    projection: z
      .object({
        pending: z
          .number()
          .int()
          .describe(
            'completed jobs whose leads have not reached IDAP and search yet; retried until PROJECTION_RETRY_HOURS after completion',
          ),
        oldest_seconds: z.number().describe('how long ago the oldest of them completed (0 when none)'),
        given_up: z
          .number()
          .int()
          .describe('completed jobs whose leads never reached IDAP: retried for PROJECTION_RETRY_HOURS, then given up'),
      })
      .describe("the caller's completed jobs still owed their projection into IDAP and the lead index"),
    timestamp: z.string().describe('ISO 8601'),
  })
  .meta({ id: 'QueueStatsResponse' });
