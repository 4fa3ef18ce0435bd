import type { CampaignService } from '../campaign-service';
import { clientIdOf } from '../context';
import type { ApiRouter } from '../routing';
import {
  campaignCreateBody,
  campaignCreatedResponse,
  campaignIdParams,
  campaignJobsParams,
  campaignJobsQuery,
  campaignJobsResponse,
  campaignListQuery,
  campaignListResponse,
  campaignNextBody,
  campaignNextResponse,
  campaignRecord,
  campaignWorkflowResults,
} from '../schemas/campaigns';

const idErrors = {
  400: { description: 'invalid campaign id format, expected UUID' },
  404: { description: "campaign not found (or another client's)" },
};

/** Campaigns: multi-location crawlMaps runs driven by the `campaign/<id>` workflow (docs/api.md "Campaigns"). */
export function campaignRoutes(api: ApiRouter, service: CampaignService): void {
  api.add({
    method: 'post',
    path: '/api/v1/campaigns',
    operationId: 'createCampaign',
    summary: 'Create a campaign: every search term in every city, one crawlMaps job each',
    description:
      'Each (city, search term) pair is a campaign location with search_string "<term> in <City>, <CC>" and display_name ' +
      '"<term> — <City>, <Country>", in sequence order (cities in the order given, terms within). Locations are submitted ' +
      'as crawlMaps jobs (visible in GET /api/v1/jobs/list with campaign_id), `concurrency` at a time; with auto_submit false ' +
      'only those released by POST /api/v1/campaigns/{id}/next. An unknown city is 422 naming the entry.',
    tags: ['campaigns'],
    security: 'client',
    body: campaignCreateBody,
    responses: {
      201: { description: 'Created; its workflow runs', schema: campaignCreatedResponse },
      422: { description: 'Invalid body, or a location that names no city' },
      429: {
        description:
          'the client has CAMPAIGN_MAX_RUNNING_PER_CLIENT (default 20) running campaigns already; nothing was stored',
      },
      503: { description: 'queue service unavailable (nothing was stored)' },
    },
    handler: async (ctx, { body }) => {
      const row = await service.create(clientIdOf(ctx), body);
      ctx.status = 201;
      ctx.body = {
        campaign_id: row.id,
        status: row.status,
        locations_total: row.locations_total,
        created_at: new Date(row.created_at).toISOString(),
      };
    },
  });

  api.add({
    method: 'get',
    path: '/api/v1/campaigns',
    operationId: 'listCampaigns',
    summary: "List the client's campaigns, newest first",
    tags: ['campaigns'],
    security: 'client',
    query: campaignListQuery,
    responses: { 200: { description: 'A page of campaigns', schema: campaignListResponse } },
    handler: async (ctx, { query }) => {
      const { total, campaigns } = await service.list(clientIdOf(ctx), query.page, query.page_size);
      ctx.body = { total, page: query.page, page_size: query.page_size, campaigns };
    },
  });

  api.add({
    method: 'get',
    path: '/api/v1/campaigns/{id}',
    operationId: 'getCampaign',
    summary: 'A campaign with its location counts, progress and totals',
    tags: ['campaigns'],
    security: 'client',
    params: campaignIdParams,
    responses: { 200: { description: 'The campaign', schema: campaignRecord }, ...idErrors },
    handler: async (ctx, { params }) => {
      ctx.body = await service.record(await service.get(clientIdOf(ctx), params.id));
    },
  });

  api.add({
    method: 'post',
    path: '/api/v1/campaigns/{id}/next',
    operationId: 'releaseCampaignLocations',
    summary: 'Submit the next pending locations of a campaign created with auto_submit false',
    description:
      'Releases the next `count` pending locations in sequence order; they are submitted as soon as fewer than `concurrency` are in flight.',
    tags: ['campaigns'],
    security: 'client',
    params: campaignIdParams,
    body: campaignNextBody,
    responses: {
      200: { description: 'Released', schema: campaignNextResponse },
      400: { description: 'Invalid id; the campaign has auto_submit true; or it has ended' },
      404: idErrors[404],
      503: { description: 'queue service unavailable (nothing was released)' },
    },
    handler: async (ctx, { params, body }) => {
      const { released, pendingRemaining } = await service.next(clientIdOf(ctx), params.id, body.count);
      ctx.body = { success: true, campaign_id: params.id.toLowerCase(), released, pending_remaining: pendingRemaining };
    },
  });

  api.add({
    method: 'post',
    path: '/api/v1/campaigns/{id}/cancel',
    operationId: 'cancelCampaign',
    summary: 'Cancel a running campaign',
    description:
      'At once: the campaign is cancelled, its pending locations skipped and its queued and processing jobs cancelled; ' +
      "then its workflow and the jobs' workflows are cancelled through Temporal, stopping their work within seconds. " +
      '`campaign.terminal` follows. A campaign that has ended answers 400.',
    tags: ['campaigns'],
    security: 'client',
    params: campaignIdParams,
    responses: {
      200: { description: 'The cancelled campaign', schema: campaignRecord },
      400: { description: 'Invalid id, or the campaign has already ended' },
      404: idErrors[404],
    },
    handler: async (ctx, { params }) => {
      ctx.body = await service.record(await service.cancel(clientIdOf(ctx), params.id));
    },
  });

  api.add({
    method: 'get',
    path: '/api/v1/jobs/crawlMaps/campaigns/{campaign_id}/jobs',
    operationId: 'listCampaignJobs',
    summary: "A campaign's locations and their jobs (spec §4.3)",
    tags: ['campaigns'],
    security: 'client',
    params: campaignJobsParams,
    query: campaignJobsQuery,
    responses: {
      200: { description: 'A page of campaign job items, in sequence order', schema: campaignJobsResponse },
      ...idErrors,
    },
    handler: async (ctx, { params, query }) => {
      ctx.body = await service.jobs(clientIdOf(ctx), params.campaign_id, query);
    },
  });

  api.add({
    method: 'get',
    path: '/api/v1/campaigns/{id}/workflow-results',
    operationId: 'getCampaignWorkflowResults',
    summary: 'Campaign-wide maps -> site -> verify results: sums over every location job, one line per job',
    description:
      "Per-business entries are at each job's GET /api/v1/jobs/{job_id}/workflow-results, or in the campaign export.",
    tags: ['campaigns'],
    security: 'client',
    params: campaignIdParams,
    responses: {
      200: { description: 'The aggregate', schema: campaignWorkflowResults },
      400: { description: 'invalid campaign id format, expected UUID; or campaign without workflow configuration' },
      404: idErrors[404],
    },
    handler: async (ctx, { params }) => {
      ctx.body = await service.workflowResults(clientIdOf(ctx), params.id);
    },
  });
}
