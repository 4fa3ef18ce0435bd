import { z } from 'zod';
import type { JobModel } from '../../db/models/job';
import { CATALOG, ALL_JOB_SPECS, type JobType } from '../../jobs';
import { AppError, ValidationError } from '../../lib/errors';
import { clientIdOf, type AppContext } from '../context';
import type { JobService } from '../job-service';
import type { ApiRouter } from '../routing';
import {
  cancelResponse,
  genericSubmitBody,
  jobIdParams,
  jobListQuery,
  jobListResponse,
  jobStatusResponse,
  jobSubmitResponse,
  priority as prioritySchema,
  topLevelSubmitBody,
  typedSubmitBody,
  unifiedJobResponse,
} from '../schemas/jobs';
import { validate } from '../validation';
import { iso } from '../../lib/dates';

const STATUS_MESSAGE: Record<JobModel['status'], string> = {
  queued: 'job is queued',
  processing: 'job is processing',
  completed: 'job completed',
  failed: 'job failed',
  cancelled: 'job was cancelled',
};

function statusView(job: JobModel) {
  return {
    job_id: job.id,
    type: job.type,
    status: job.status,
    priority: job.priority,
    created_at: iso(job.created_at) as string,
    started_at: iso(job.started_at),
    completed_at: iso(job.completed_at),
    processing_time_seconds: job.processing_time_seconds,
    worker_id: job.worker_id,
    results_count: job.results_count,
    error_message: job.error_message,
    campaign_id: job.campaign_id,
  };
}

export interface JobRoutesOptions {
  /** Job types whose worker activity exists; others are refused with 501. */
  availableTypes: readonly JobType[];
  /** Called once per job created (not for a de-duplicated submission answered from the cache). */
  onCreated?: (type: JobType) => void;
}

export function jobRoutes(api: ApiRouter, service: JobService, options: JobRoutesOptions): void {
  async function submit(
    ctx: AppContext,
    type: JobType,
    rawPayload: unknown,
    rawPriority: number | '' | null | undefined,
    payloadLoc: (string | number)[],
  ) {
    const spec = CATALOG[type];
    const payload = validate(spec.payload, rawPayload ?? {}, payloadLoc) as Record<string, unknown>;
    if (!options.availableTypes.includes(type))
      throw new AppError(501, `job type ${type} is not available yet on this service`, 'not_implemented');
    const { job, fromCache } = await service.submit({
      clientId: clientIdOf(ctx),
      type,
      payload,
      priority: rawPriority === '' ? spec.defaultPriority : (rawPriority ?? spec.defaultPriority),
    });
    if (!fromCache) options.onCreated?.(type);
    ctx.status = 201;
    ctx.body = {
      job_id: job.id,
      type: job.type,
      status: job.status,
      created_at: iso(job.created_at),
      from_cache: fromCache,
      message: fromCache
        ? `the same job was submitted at ${iso(job.created_at)}; returning it (submissions are de-duplicated for 24 hours)`
        : `${type} job queued`,
      ...(spec.submitResponseSuccess ? { success: true } : {}),
    };
  }

  const submitResponses = {
    201: { description: 'Job queued (or the cached job, from_cache true)', schema: jobSubmitResponse },
    501: { description: 'Job type not available on this service yet' },
    503: { description: 'Queue service unavailable, or the queue of this type is full' },
  };

  api.add({
    method: 'post',
    path: '/api/v1/jobs/submit',
    operationId: 'submitJob',
    summary: 'Submit a job of any type',
    description: 'Body: {type, payload, priority}. The payload is validated per type as in the typed endpoints.',
    tags: ['jobs'],
    security: 'client',
    body: genericSubmitBody,
    // Per type, its payload as the typed endpoint documents it; required unless an empty one is valid.
    bodyDoc: z.discriminatedUnion(
      'type',
      ALL_JOB_SPECS.map((s) =>
        z.strictObject({
          type: z.literal(s.type),
          payload: s.payload.safeParse({}).success ? s.payload.nullish() : s.payload,
          priority: prioritySchema.default(s.defaultPriority).nullish(),
        }),
      ) as unknown as [z.ZodObject, ...z.ZodObject[]],
    ),
    responses: submitResponses,
    handler: (ctx, { body }) => submit(ctx, body.type, body.payload, body.priority, ['body', 'payload']),
  });

  // Each type with its own endpoint: {payload, priority}, or (crawlMaps, as the spec's examples do)
  // the payload keys at the top level of the body beside priority.
  for (const spec of ALL_JOB_SPECS.filter((s) => s.submitRoute !== undefined)) {
    const { type } = spec;
    const priorityDoc = prioritySchema.default(spec.defaultPriority).nullish();
    const common = {
      method: 'post' as const,
      path: `/api/v1/jobs/${type}/submit`,
      operationId: `submit${type[0]?.toUpperCase()}${type.slice(1)}`,
      summary: `Submit a ${type} job`,
      tags: ['jobs'],
      security: 'client' as const,
      responses: submitResponses,
    };
    if (spec.submitRoute === 'typed') {
      api.add({
        ...common,
        description: `${spec.summary}. Body: {payload, priority}; priority 0-10, default ${spec.defaultPriority}.`,
        body: typedSubmitBody,
        bodyDoc: z.strictObject({ payload: spec.payload, priority: priorityDoc }),
        handler: (ctx, { body }) => submit(ctx, type, body.payload, body.priority, ['body', 'payload']),
      });
      continue;
    }
    api.add({
      ...common,
      description: `${spec.summary}. The payload keys sit at the top level of the body with priority (0-10, default ${spec.defaultPriority}), as in the spec's examples; a body of the form {payload, priority} is accepted too, but not both forms in one body (422 payload_conflict).`,
      body: topLevelSubmitBody,
      bodyDoc: z.intersection(spec.payload, z.object({ priority: priorityDoc })),
      handler: (ctx, { body }) => {
        const { priority, payload, ...topLevel } = body;
        const nested = payload !== undefined && payload !== null;
        if (nested && (typeof payload !== 'object' || Array.isArray(payload))) {
          throw new ValidationError([
            { type: 'dict_type', loc: ['body', 'payload'], msg: "payload must be an object of the job's keys" },
          ]);
        }
        const keys = Object.keys(topLevel);
        if (nested && keys.length > 0) {
          // Which of the two to run is a guess either way: the client says.
          throw new ValidationError([
            {
              type: 'payload_conflict',
              loc: ['body', 'payload'],
              msg: `give the payload either as the object \`payload\` or as top-level keys, not both (top-level: ${keys.slice(0, 10).join(', ')})`,
            },
          ]);
        }
        const p =
          priority === undefined || priority === null || priority === ''
            ? undefined
            : validate(prioritySchema, priority, ['body', 'priority']);
        return submit(ctx, type, nested ? payload : topLevel, p, nested ? ['body', 'payload'] : ['body']);
      },
    });
  }

  api.add({
    method: 'get',
    path: '/api/v1/jobs/list',
    operationId: 'listJobs',
    summary: "List the client's jobs, newest first",
    tags: ['jobs'],
    security: 'client',
    query: jobListQuery,
    responses: { 200: { description: 'A page of jobs', schema: jobListResponse } },
    handler: async (ctx, { query }) => {
      const { total, jobs } = await service.list(clientIdOf(ctx), {
        status: query.status_filter,
        type: query.type_filter,
        page: query.page,
        pageSize: query.page_size,
      });
      ctx.body = { total, page: query.page, page_size: query.page_size, jobs: jobs.map(statusView) };
    },
  });

  api.add({
    method: 'get',
    path: '/api/v1/jobs/{job_id}/status',
    operationId: 'getJobStatus',
    summary: 'Job status (no results)',
    tags: ['jobs'],
    security: 'client',
    params: jobIdParams,
    responses: {
      200: { description: 'Status', schema: jobStatusResponse },
      400: { description: 'Invalid job id (expected UUID)' },
      404: { description: 'No such job for this client' },
    },
    handler: async (ctx, { params }) => {
      const job = await service.get(clientIdOf(ctx), params.job_id);
      ctx.body = { ...statusView(job), message: STATUS_MESSAGE[job.status] };
    },
  });

  api.add({
    method: 'get',
    path: '/api/v1/jobs/{job_id}/results',
    operationId: 'getJobResults',
    summary: 'Job results (the unified envelope)',
    description: '200 when completed; 202 while queued/processing (poll again); 410 when failed or cancelled.',
    tags: ['jobs'],
    security: 'client',
    params: jobIdParams,
    responses: {
      200: { description: 'Completed: data holds the result', schema: unifiedJobResponse },
      202: { description: 'Queued or processing; poll again', schema: unifiedJobResponse },
      400: { description: 'Invalid job id (expected UUID)' },
      404: { description: 'No such job for this client' },
      410: { description: 'Failed (error_message) or cancelled: no results', schema: unifiedJobResponse },
    },
    handler: async (ctx, { params }) => {
      const job = await service.get(clientIdOf(ctx), params.job_id);
      const envelope = {
        success: job.status === 'completed',
        job_id: job.id,
        type: job.type,
        status: job.status,
        processing_time_seconds: job.processing_time_seconds,
        worker_id: job.worker_id,
        completed_at: iso(job.completed_at),
        data: null as unknown,
        error_message: job.error_message,
      };
      switch (job.status) {
        case 'completed':
          ctx.status = 200;
          ctx.body = { ...envelope, data: await service.resultOf(job) };
          return;
        case 'queued':
        case 'processing':
          ctx.status = 202;
          ctx.body = { ...envelope, message: `${STATUS_MESSAGE[job.status]}; poll again for results` };
          return;
        default:
          ctx.status = 410;
          ctx.body = { ...envelope, message: `${STATUS_MESSAGE[job.status]}; no results` };
      }
    },
  });

  api.add({
    method: 'delete',
    path: '/api/v1/jobs/{job_id}',
    operationId: 'cancelJob',
    summary: 'Cancel a queued or processing job',
    description:
      'A queued job is cancelled at once; a processing one stops within seconds and its partial results are discarded. Completed, failed and cancelled jobs answer 400.',
    tags: ['jobs'],
    security: 'client',
    params: jobIdParams,
    responses: {
      200: { description: 'Cancelled', schema: cancelResponse },
      400: { description: 'Invalid job id, or the job is already completed, failed or cancelled' },
      404: { description: 'No such job for this client' },
    },
    handler: async (ctx, { params }) => {
      const job = await service.cancel(clientIdOf(ctx), params.job_id);
      ctx.body = { success: true, job_id: job.id, status: 'cancelled', message: 'job cancelled' };
    },
  });
}
