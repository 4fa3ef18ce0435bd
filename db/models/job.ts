import type { JobStatus, JobType } from '../../jobs';
import { Timestamped } from './base';
import { TenantModel } from './tenant';

/** A job (spec §2.1), its updated_at kept on every update. */
export class JobModel extends Timestamped(TenantModel) {
  static override tableName = 'jobs';

  id!: string;
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
}
