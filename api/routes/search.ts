import type { IcpRow } from '../../db/repositories/icp-profiles';
import { AppError, badRequest } from '../../lib/errors';
import type { Logger } from '../../lib/logger';
import { searchRefusal, type SearchClient } from '../../search/client';
import { leadAggregations, MAX_RESULT_WINDOW, searchLeads } from '../../search/leads';
import { clientIdOf } from '../context';
import type { IcpService } from '../icp-service';
import type { ApiRouter } from '../routing';
import {
  icpBody,
  icpResponse,
  leadAggregationsQuery,
  leadAggregationsResponse,
  leadSearchQuery,
  leadSearchResponse,
} from '../schemas/search';

export interface SearchRouteDeps {
  icp: IcpService;
  search: SearchClient;
  indexPrefix: string;
  logger: Logger;
}

const icpView = (row: IcpRow) => ({
  industries: row.industries,
  countries: row.countries,
  updated_at: row.updated_at ? new Date(row.updated_at).toISOString() : null,
});

const unavailable = () =>
  new AppError(503, 'search service unavailable', 'search_unavailable', { 'retry-after': '30' });

/** Lead search (spec §4.7) over the client's leads in Elasticsearch, and the client's ICP. */
export function searchRoutes(api: ApiRouter, deps: SearchRouteDeps): void {
  const esCall = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      const refusal = searchRefusal(err);
      if (refusal) throw badRequest(`the search was refused: ${refusal}`);
      deps.logger.warn({ err }, 'elasticsearch request failed');
      throw unavailable();
    }
  };

  api.add({
    method: 'get',
    path: '/api/v1/search/leads',
    operationId: 'searchLeads',
    summary: "Search the client's leads",
    description:
      'Full-text search over name, description and site compendium with filters; facets count categories over all matches. ' +
      `Pages reach ${MAX_RESULT_WINDOW} hits deep (page x per_page); every response's next_cursor continues at any depth (cursor=). 503 while Elasticsearch is unavailable.`,
    tags: ['search'],
    security: 'client',
    query: leadSearchQuery,
    responses: {
      200: { description: 'A page of hits', schema: leadSearchResponse },
      400: {
        description:
          'Elasticsearch refused the search as built (its reason in detail); retrying the same request will not help',
      },
      503: { description: 'Elasticsearch is unavailable (Retry-After)' },
    },
    handler: async (ctx, { query }) => {
      const { nextCursor, ...result } = await esCall(() =>
        searchLeads(deps.search, deps.indexPrefix, {
          clientId: clientIdOf(ctx),
          query: query.query || undefined,
          emailVerified: query.email_verified,
          minIcpScore: query.min_icp_score,
          industry: query.industry,
          page: query.page,
          perPage: query.per_page,
          sortBy: query.sort_by,
          after: query.after,
        }),
      );
      ctx.body = {
        success: true,
        ...result,
        page: query.after ? null : query.page,
        per_page: query.per_page,
        next_cursor: nextCursor,
      };
    },
  });

  api.add({
    method: 'get',
    path: '/api/v1/search/aggregations',
    operationId: 'leadAggregations',
    summary: "Statistics over the client's leads",
    tags: ['search'],
    security: 'client',
    query: leadAggregationsQuery,
    responses: {
      200: {
        description: 'Counts by job type, category and country; ratings; indexing over time',
        schema: leadAggregationsResponse,
      },
    },
    handler: async (ctx, { query }) => {
      const aggs = await esCall(() => leadAggregations(deps.search, deps.indexPrefix, clientIdOf(ctx), query.job_type));
      ctx.body = { success: true, ...aggs, error: null };
    },
  });

  api.add({
    method: 'get',
    path: '/api/v1/search/icp',
    operationId: 'getIcp',
    summary: "The client's ideal-customer profile (icp_score measures leads against it)",
    tags: ['search'],
    security: 'client',
    responses: { 200: { description: 'The profile; empty lists when none is set', schema: icpResponse } },
    handler: async (ctx) => {
      const row = await deps.icp.get(clientIdOf(ctx));
      ctx.body = icpView(row);
    },
  });

  api.add({
    method: 'put',
    path: '/api/v1/search/icp',
    operationId: 'putIcp',
    summary: 'Set the ideal-customer profile; every lead is re-scored in the background',
    tags: ['search'],
    security: 'client',
    body: icpBody,
    responses: { 200: { description: 'The stored profile', schema: icpResponse } },
    handler: async (ctx, { body }) => {
      const { row, requeued } = await deps.icp.put(clientIdOf(ctx), {
        industries: [...new Set(body.industries)],
        countries: [...new Set(body.countries)],
      });
      ctx.body = { ...icpView(row), requeued };
    },
  });
}
