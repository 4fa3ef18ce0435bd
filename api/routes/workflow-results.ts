import { clientIdOf, type AppContext } from '../context';
import type { ApiRouter } from '../routing';
import {
  campaignJobParams,
  workflowJobParams,
  workflowResults,
  workflowResultsQuery,
} from '../schemas/workflow-results';
import { NOT_A_WORKFLOW_JOB, type WorkflowResultsService } from '../workflow-results';

const DESCRIPTION =
  'The maps -> site -> verify pipeline of a crawlMaps job submitted with `workflow`: every business of the maps result with its site ' +
  'and verify stage results (spec §2.8, §4.3). Businesses whose website is a social network, review site, directory or marketplace ' +
  'are domain_filtered (filter_reason) and not crawled. Status: queued / processing (progress) until the pipeline ends; then completed, ' +
  "completed_with_errors (a site or verification failed), partial (the overall time limit, or a stage's, was reached: spidersite_timed_out / " +
  'spiderverify_timed_out) or failed (the maps job failed or was cancelled, or the pipeline was cancelled: error_message "cancelled"). ' +
  'success is true for completed, completed_with_errors and partial; has_results when they have businesses. With wait=true (default) ' +
  "the answer comes when the status is final, or with the current state once the pipeline's deadline has passed.";

/**
 * A hang-up of the client ends a waiting request. Taken before the handler's first query: the
 * response's 'close' fires once, so a hang-up before a later listener would go unseen (and one
 * before the handler ran is seen from the socket).
 */
function disconnectSignal(ctx: AppContext): AbortSignal {
  const controller = new AbortController();
  const gone = () => {
    if (!ctx.res.writableEnded) controller.abort();
  };
  if (ctx.req.socket.destroyed) gone();
  else ctx.res.once('close', gone);
  return controller.signal;
}

/** Workflow results of one crawlMaps job, standalone or in a campaign (spec §4.2, §4.3). */
export function workflowResultRoutes(api: ApiRouter, service: WorkflowResultsService): void {
  api.add({
    method: 'get',
    path: '/api/v1/jobs/{job_id}/workflow-results',
    operationId: 'getJobWorkflowResults',
    summary: 'Maps -> site -> verify results of a crawlMaps job submitted with workflow',
    description: DESCRIPTION,
    tags: ['jobs'],
    security: 'client',
    params: workflowJobParams,
    query: workflowResultsQuery,
    responses: {
      200: { description: 'The workflow results (spec §4.3)', schema: workflowResults },
      400: { description: `'invalid job id format, expected UUID', or '${NOT_A_WORKFLOW_JOB}'` },
      404: { description: "job not found (or another client's)" },
    },
    handler: async (ctx, { params, query }) => {
      const signal = disconnectSignal(ctx);
      const job = await service.jobOf(clientIdOf(ctx), params.job_id);
      ctx.body = await service.results(job, { wait: query.wait, signal });
    },
  });

  api.add({
    method: 'get',
    path: '/api/v1/jobs/crawlMaps/campaigns/{campaign_id}/jobs/{job_id}/results',
    operationId: 'getCampaignJobResults',
    summary: 'Maps -> site -> verify results of one location job of a campaign',
    description: DESCRIPTION,
    tags: ['campaigns'],
    security: 'client',
    params: campaignJobParams,
    query: workflowResultsQuery,
    responses: {
      200: { description: 'The workflow results (spec §4.3)', schema: workflowResults },
      400: {
        description:
          "'invalid campaign id format, expected UUID', 'invalid job id format, expected UUID', or 'campaign without workflow configuration'",
      },
      404: {
        description: "'campaign not found' (or another client's), or 'job not found' (not a job of this campaign)",
      },
    },
    handler: async (ctx, { params, query }) => {
      const signal = disconnectSignal(ctx);
      const job = await service.campaignJobOf(clientIdOf(ctx), params.campaign_id, params.job_id);
      ctx.body = await service.results(job, { wait: query.wait, signal });
    },
  });
}
