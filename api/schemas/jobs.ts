import { z } from 'zod';
import { ALL_JOB_SPECS, JOB_STATUSES, JOB_TYPES } from '../../jobs';
import { anyResult } from '../../jobs/fields';
import { uuidParam } from './params';

/** `data` of a completed job: each type's documented result (jobs/<type>.ts), or another type's object. */
const jobResultData = z
  .union([...ALL_JOB_SPECS.filter((s) => s.result !== anyResult).map((s) => s.result), anyResult])
  .nullable()
  .describe("the job type's result; null until the job completes");

// ---- request bodies -------------------------------------------------------------------------

export const priority = z.number().int().min(0).max(10).describe('0-10; higher runs first');

/** Spec §4.1: priority "may be null/empty": null, absent and "" all mean the type's default. */
const submittedPriority = z.union([priority, z.literal('').describe("empty: the type's default")]).nullish();

export const genericSubmitBody = z.strictObject({
  type: z.enum(JOB_TYPES),
  payload: z.record(z.string(), z.unknown()).nullish().describe('validated per type'),
  priority: submittedPriority,
});

export const typedSubmitBody = z.strictObject({
  payload: z.record(z.string(), z.unknown()).describe('validated per type'),
  priority: submittedPriority,
});

/** crawlMaps: the payload keys sit at the top level of the body (the spec's examples), with priority. */
export const topLevelSubmitBody = z
  .record(z.string(), z.unknown())
  .describe('payload keys at the top level, plus priority (0-10)');

// ---- responses (spec §2.1) ------------------------------------------------------------------

const isoTime = z.string().describe('ISO 8601');

export const jobSubmitResponse = z
  .object({
    job_id: z.string().uuid(),
    type: z.enum(JOB_TYPES),
    status: z.enum(JOB_STATUSES),
    created_at: isoTime,
    from_cache: z.boolean(),
    message: z.string(),
    success: z.boolean().optional().describe('present for crawlMaps submissions'),
  })
  .meta({ id: 'JobSubmitResponse' });

export const jobStatusResponse = z
  .object({
    job_id: z.string().uuid(),
    type: z.enum(JOB_TYPES),
    status: z.enum(JOB_STATUSES),
    priority: z.number().int(),
    created_at: isoTime,
    started_at: isoTime.nullable(),
    completed_at: isoTime.nullable(),
    processing_time_seconds: z.number().nullable(),
    worker_id: z.string().nullable(),
    results_count: z.number().int().nullable(),
    error_message: z.string().nullable(),
    campaign_id: z.string().nullable(),
    message: z.string(),
  })
  .meta({ id: 'JobStatusResponse' });

export const unifiedJobResponse = z
  .object({
    success: z.boolean(),
    job_id: z.string().uuid(),
    type: z.enum(JOB_TYPES),
    status: z.enum(JOB_STATUSES),
    processing_time_seconds: z.number().nullable(),
    worker_id: z.string().nullable(),
    completed_at: isoTime.nullable(),
    data: jobResultData,
    error_message: z.string().nullable(),
    message: z.string().optional().describe('present while queued/processing and for cancelled jobs'),
  })
  .meta({ id: 'UnifiedJobResponse' });

export const jobListItem = jobStatusResponse.omit({ message: true }).meta({ id: 'JobListItem' });

export const jobListQuery = z.strictObject({
  status_filter: z.enum(JOB_STATUSES).optional(),
  type_filter: z.enum(JOB_TYPES).optional(),
  page: z.coerce.number().int().min(1).default(1),
  page_size: z.coerce.number().int().min(1).max(100).default(50),
});

export const jobListResponse = z
  .object({
    total: z.number().int(),
    page: z.number().int(),
    page_size: z.number().int(),
    jobs: z.array(jobListItem),
  })
  .meta({ id: 'JobListResponse' });

export const jobIdParams = z.object({ job_id: uuidParam('job id (UUID)') });

export const cancelResponse = z
  .object({
    success: z.boolean(),
    job_id: z.string().uuid(),
    status: z.literal('cancelled'),
    message: z.string(),
  })
  .meta({ id: 'JobCancelResponse' });
