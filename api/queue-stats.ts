import { temporal as proto } from '@temporalio/proto';
import type { Db } from '../db';
import { JobRepository } from '../db/repositories/jobs';
import { ProjectionOutbox } from '../db/repositories/projection-outbox';
import { ALL_JOB_SPECS, JOB_STATUSES, type JobStatus, type JobType } from '../jobs';
import {
  activityTaskQueues,
  campaignsTaskQueue,
  jobTaskQueue,
  leadsTaskQueue,
  mailTaskQueue,
  webhooksTaskQueue,
} from '../jobs/queues';
import type { Config } from '../lib/config';
import { AppError } from '../lib/errors';
import type { Temporal } from '../lib/temporal';
import { QUEUE_UNAVAILABLE } from './job-service';
import type { TemporalCalls } from './temporal-calls';

const { TaskQueueType, TaskQueueKind } = proto.api.enums.v1;

/** What runs on a queue: a job type's workflows and activities, one of its activity-only queues, or a service queue. */
export type QueueRole = 'job' | 'job_test' | 'activity' | 'leads' | 'webhooks' | 'campaigns' | 'mail';

export interface QueueSide {
  backlog: number;
  backlog_age_seconds: number;
  add_rate: number;
  dispatch_rate: number;
  pollers: number;
  /** The whole queue's dispatch limit set by its workers (maxTaskQueueActivitiesPerSecond), null when none. */
  rate_limit_per_second: number | null;
}

export interface QueueStats {
  name: string;
  role: QueueRole;
  /** The job types whose work runs there (several for a provider queue they share, none for service queues). */
  job_types: JobType[];
  workflow: QueueSide | null;
  activity: QueueSide;
}

interface QueueRef {
  name: string;
  role: QueueRole;
  job_types: JobType[];
  /** Activity-only queues run no workflow tasks. */
  workflows: boolean;
}

/** Every task queue this deployment uses, named from the catalog (the same names the workers poll). */
export function deploymentQueues(config: Config): QueueRef[] {
  const prefix = config.TASK_QUEUE_PREFIX;
  const refs: QueueRef[] = [];
  for (const spec of ALL_JOB_SPECS.filter((s) => s.available)) {
    refs.push({ name: jobTaskQueue(prefix, spec), role: 'job', job_types: [spec.type], workflows: true });
    if (spec.testQueue)
      refs.push({
        name: jobTaskQueue(prefix, spec, { test: true }),
        role: 'job_test',
        job_types: [spec.type],
        workflows: true,
      });
    for (const name of Object.values(activityTaskQueues(prefix, spec.activityQueues?.(config) ?? []))) {
      // Types share a provider's queue (its limit is the provider's, whoever asks): one row, every type named.
      const shared = refs.find((r) => r.name === name);
      if (shared) shared.job_types.push(spec.type);
      else refs.push({ name, role: 'activity', job_types: [spec.type], workflows: false });
    }
  }
  refs.push({ name: leadsTaskQueue(prefix), role: 'leads', job_types: [], workflows: true });
  refs.push({ name: webhooksTaskQueue(prefix), role: 'webhooks', job_types: [], workflows: true });
  refs.push({ name: campaignsTaskQueue(prefix), role: 'campaigns', job_types: [], workflows: true });
  refs.push({ name: mailTaskQueue(prefix), role: 'mail', job_types: [], workflows: true });
  return refs;
}

/** The rate a poller without a limit reports (Temporal's default maxTasksPerSecond). */
const UNLIMITED_POLLER_RATE = 100_000;

const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

/**
 * Queue statistics for operators and clients: Temporal's own description of each task queue
 * (backlog, its age, add and dispatch rates, pollers, the queue's rate limit), next to the caller's
 * jobs by status per type and its completed jobs still owed their IDAP projection, from Postgres.
 * Queue figures are the deployment's (no client data in them).
 */
export class QueueStatsService {
  constructor(
    private readonly db: Db,
    private readonly temporal: Temporal,
    private readonly calls: TemporalCalls,
    private readonly config: Config,
  ) {}

  async queues(): Promise<QueueStats[]> {
    const refs = deploymentQueues(this.config);
    try {
      return await Promise.all(
        refs.map(async (ref) => ({
          name: ref.name,
          role: ref.role,
          job_types: ref.job_types,
          workflow: ref.workflows ? await this.describe(ref.name, TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW) : null,
          activity: await this.describe(ref.name, TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY),
        })),
      );
    } catch {
      throw new AppError(503, QUEUE_UNAVAILABLE);
    }
  }

  /** The client's jobs per type and status (every available type and status present, zeros included). */
  async jobsByStatus(clientId: string): Promise<Record<string, Record<JobStatus, number>>> {
    const counts = await new JobRepository(this.db, this.config.DATABASE_SCHEMA).countByTypeAndStatus(clientId);
    const out: Record<string, Record<JobStatus, number>> = {};
    for (const spec of ALL_JOB_SPECS.filter((s) => s.available)) {
      out[spec.type] = Object.fromEntries(JOB_STATUSES.map((s) => [s, 0])) as Record<JobStatus, number>;
    }
    for (const row of counts) {
      const byStatus = out[row.type];
      if (byStatus) byStatus[row.status] = row.count;
    }
    return out;
  }

  /** The client's completed jobs whose leads have not reached IDAP yet, and those given up. */
  async projection(clientId: string): Promise<{ pending: number; oldest_seconds: number; given_up: number }> {
    const b = await new ProjectionOutbox(this.db).backlogOf(clientId);
    return { pending: b.pending, oldest_seconds: b.oldestSeconds, given_up: b.givenUp };
  }

  private async describe(name: string, type: proto.api.enums.v1.TaskQueueType): Promise<QueueSide> {
    const res = await this.calls.run(() =>
      this.temporal.connection.workflowService.describeTaskQueue({
        namespace: this.config.TEMPORAL_NAMESPACE,
        taskQueue: { name, kind: TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
        taskQueueType: type,
        reportStats: true,
        reportConfig: true,
      }),
    );
    const stats = res.stats;
    const age = stats?.approximateBacklogAge;
    // A limit set on the queue (UpdateTaskQueueConfig) wins; else the one the workers poll with
    // (maxTaskQueueActivitiesPerSecond): pollers without one report the server's 100,000.
    const configured = res.config?.queueRateLimit?.rateLimit?.requestsPerSecond;
    const polled = res.pollers.map((p) => num(p.ratePerSecond)).filter((r) => r > 0 && r < UNLIMITED_POLLER_RATE);
    const limit = configured ? Number(configured) : polled.length ? Math.min(...polled) : null;
    return {
      backlog: num(stats?.approximateBacklogCount),
      backlog_age_seconds: num(age?.seconds) + num(age?.nanos) / 1e9,
      add_rate: num(stats?.tasksAddRate),
      dispatch_rate: num(stats?.tasksDispatchRate),
      pollers: res.pollers.length,
      rate_limit_per_second: limit,
    };
  }
}
