import { notFound } from '../../../lib/errors';
import { clientIdOf } from '../../context';
import type { ApiRouter } from '../../routing';
import {
  authorCreateBody,
  authorIdParams,
  authorPatchBody,
  contentPageQuery,
  dashboardAuthorListResponse,
  dashboardAuthorResponse,
} from '../../schemas/content';
import { dashboardAuthorView } from '../../presenters/content';
import { dash, type ContentDeps } from './shared';

/** The client's authors (dashboard). */
export function authorsRoutes(api: ApiRouter, { repo }: ContentDeps): void {
  api.add({
    ...dash,
    method: 'post',
    path: '/api/v1/dashboard/content/authors',
    operationId: 'createAuthor',
    summary: 'Create an author',
    body: authorCreateBody,
    responses: {
      201: { description: 'Created', schema: dashboardAuthorResponse },
      409: { description: 'The slug exists' },
    },
    handler: async (ctx, { body }) => {
      ctx.status = 201;
      ctx.body = dashboardAuthorView(await repo.createAuthor(clientIdOf(ctx), body));
    },
  });

  api.add({
    ...dash,
    method: 'get',
    path: '/api/v1/dashboard/content/authors',
    operationId: 'listDashboardAuthors',
    summary: 'Every author of the client, active or not',
    query: contentPageQuery,
    responses: { 200: { description: 'Authors by name', schema: dashboardAuthorListResponse } },
    handler: async (ctx, { query }) => {
      const page = await repo.listAuthors(clientIdOf(ctx), {
        activeOnly: false,
        page: query.page,
        pageSize: query.page_size,
      });
      ctx.body = {
        authors: page.items.map(dashboardAuthorView),
        total: page.total,
        page: query.page,
        page_size: query.page_size,
      };
    },
  });

  api.add({
    ...dash,
    method: 'get',
    path: '/api/v1/dashboard/content/authors/{author_id}',
    operationId: 'getAuthor',
    summary: 'One author',
    params: authorIdParams,
    responses: {
      200: { description: 'The author', schema: dashboardAuthorResponse },
      404: { description: 'No such author for this client' },
    },
    handler: async (ctx, { params }) => {
      const author = await repo.findAuthor(clientIdOf(ctx), params.author_id);
      if (!author) throw notFound('author not found');
      ctx.body = dashboardAuthorView(author);
    },
  });

  api.add({
    ...dash,
    method: 'patch',
    path: '/api/v1/dashboard/content/authors/{author_id}',
    operationId: 'updateAuthor',
    summary: 'Change an author (is_active false hides them from the public list)',
    params: authorIdParams,
    body: authorPatchBody,
    responses: {
      200: { description: 'The updated author', schema: dashboardAuthorResponse },
      404: { description: 'No such author for this client' },
      409: { description: 'The slug exists' },
    },
    handler: async (ctx, { params, body }) => {
      const author = await repo.updateAuthor(clientIdOf(ctx), params.author_id, body);
      if (!author) throw notFound('author not found');
      ctx.body = dashboardAuthorView(author);
    },
  });

  api.add({
    ...dash,
    method: 'delete',
    path: '/api/v1/dashboard/content/authors/{author_id}',
    operationId: 'deleteAuthor',
    summary: 'Delete an author (their posts keep no author)',
    params: authorIdParams,
    responses: { 204: { description: 'Deleted' }, 404: { description: 'No such author for this client' } },
    handler: async (ctx, { params }) => {
      if (!(await repo.deleteAuthor(clientIdOf(ctx), params.author_id))) throw notFound('author not found');
      ctx.status = 204;
    },
  });
}
