import type { QueryBuilder } from 'objection';
import type { JobStatus, JobType } from '../../jobs';
import { BaseModel } from './base';

export class JobModel extends BaseModel {
  static override tableName = 'jobs';

  id!: string;
  client_id!: string;
  type!: JobType;
  status!: JobStatus;
  priority!: number;
  payload!: Record<string, unknown>;
  payload_hash!: string;
  campaign_id!: string | null;
  workflow_id!: string;
  task_queue!: string;
  worker_id!: string | null;
  results_count!: number | null;
  error_message!: string | null;
  started_at!: Date | null;
  completed_at!: Date | null;
  processing_time_seconds!: number | null;

  /** Every tenant-scoped query goes through forClient: another client's job is simply not there. */
  static override modifiers = {
    forClient(query: QueryBuilder<JobModel>, clientId: string) {
      query.where('jobs.client_id', clientId);
    },
  };
}
