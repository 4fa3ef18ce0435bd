import { notFound } from '../../../lib/errors';
import { clientIdOf } from '../../context';
import type { ApiRouter } from '../../routing';
import {
  categoryCreateBody,
  categoryIdParams,
  categoryListResponse,
  categoryPatchBody,
  dashboardCategoryResponse,
  tagCreateBody,
  tagIdParams,
  tagListResponse,
  tagPatchBody,
  tagResponse,
} from '../../schemas/content';
import { dashboardCategoryView, tagView } from '../../presenters/content';
import { dash, type ContentDeps } from './shared';

/** The client's categories and tags (dashboard). */
export function taxonomyRoutes(api: ApiRouter, { repo }: ContentDeps): void {
  api.add({
    ...dash,
    method: 'post',
    path: '/api/v1/dashboard/content/categories',
    operationId: 'createCategory',
    summary: 'Create a category',
    body: categoryCreateBody,
    responses: {
      201: { description: 'Created', schema: dashboardCategoryResponse },
      400: { description: 'No slug given and the name gives none (e.g. only symbols)' },
      409: { description: 'The slug exists' },
    },
    handler: async (ctx, { body }) => {
      ctx.status = 201;
      ctx.body = dashboardCategoryView(await repo.createCategory(clientIdOf(ctx), body));
    },
  });

  api.add({
    ...dash,
    method: 'get',
    path: '/api/v1/dashboard/content/categories',
    operationId: 'listCategories',
    summary: "The client's categories",
    responses: { 200: { description: 'Categories by name', schema: categoryListResponse } },
    handler: async (ctx) => {
      const rows = await repo.listCategories(clientIdOf(ctx));
      ctx.body = { categories: rows.map(dashboardCategoryView), total: rows.length };
    },
  });

  api.add({
    ...dash,
    method: 'get',
    path: '/api/v1/dashboard/content/categories/{category_id}',
    operationId: 'getCategory',
    summary: 'One category',
    params: categoryIdParams,
    responses: {
      200: { description: 'The category', schema: dashboardCategoryResponse },
      404: { description: 'No such category for this client' },
    },
    handler: async (ctx, { params }) => {
      const row = await repo.findCategory(clientIdOf(ctx), params.category_id);
      if (!row) throw notFound('category not found');
      ctx.body = dashboardCategoryView(row);
    },
  });

  api.add({
    ...dash,
    method: 'patch',
    path: '/api/v1/dashboard/content/categories/{category_id}',
    operationId: 'updateCategory',
    summary: 'Rename a category or change its slug',
    params: categoryIdParams,
    body: categoryPatchBody,
    responses: {
      200: { description: 'The updated category', schema: dashboardCategoryResponse },
      404: { description: 'No such category for this client' },
      409: { description: 'The slug exists' },
    },
    handler: async (ctx, { params, body }) => {
      const row = await repo.updateCategory(clientIdOf(ctx), params.category_id, body);
      if (!row) throw notFound('category not found');
      ctx.body = dashboardCategoryView(row);
    },
  });

  api.add({
    ...dash,
    method: 'delete',
    path: '/api/v1/dashboard/content/categories/{category_id}',
    operationId: 'deleteCategory',
    summary: 'Delete a category (posts lose it)',
    params: categoryIdParams,
    responses: { 204: { description: 'Deleted' }, 404: { description: 'No such category for this client' } },
    handler: async (ctx, { params }) => {
      if (!(await repo.deleteCategory(clientIdOf(ctx), params.category_id))) throw notFound('category not found');
      ctx.status = 204;
    },
  });

  api.add({
    ...dash,
    method: 'post',
    path: '/api/v1/dashboard/content/tags',
    operationId: 'createTag',
    summary: 'Create a tag (posts also create tags by name)',
    body: tagCreateBody,
    description:
      'A tag is its name, in any case. Without `slug` the name gives one, made free (`c`, `c-2`; `tag` for a name without Latin letters).',
    responses: {
      201: { description: 'Created', schema: tagResponse },
      409: { description: 'A tag of this name (in any case) or of the given slug exists' },
    },
    handler: async (ctx, { body }) => {
      ctx.status = 201;
      ctx.body = tagView(await repo.createTag(clientIdOf(ctx), body.name, body.slug));
    },
  });

  api.add({
    ...dash,
    method: 'get',
    path: '/api/v1/dashboard/content/tags',
    operationId: 'listTags',
    summary: "The client's tags with their post counts",
    responses: { 200: { description: 'Tags by name', schema: tagListResponse } },
    handler: async (ctx) => {
      const rows = await repo.listTags(clientIdOf(ctx));
      ctx.body = { tags: rows.map(tagView), total: rows.length };
    },
  });

  api.add({
    ...dash,
    method: 'get',
    path: '/api/v1/dashboard/content/tags/{tag_id}',
    operationId: 'getTag',
    summary: 'One tag',
    params: tagIdParams,
    responses: {
      200: { description: 'The tag', schema: tagResponse },
      404: { description: 'No such tag for this client' },
    },
    handler: async (ctx, { params }) => {
      const row = await repo.findTag(clientIdOf(ctx), params.tag_id);
      if (!row) throw notFound('tag not found');
      ctx.body = tagView(row);
    },
  });

  api.add({
    ...dash,
    method: 'patch',
    path: '/api/v1/dashboard/content/tags/{tag_id}',
    operationId: 'updateTag',
    summary: 'Rename a tag or change its slug',
    params: tagIdParams,
    body: tagPatchBody,
    responses: {
      200: { description: 'The updated tag', schema: tagResponse },
      404: { description: 'No such tag for this client' },
      409: { description: 'The slug exists' },
    },
    handler: async (ctx, { params, body }) => {
      const row = await repo.updateTag(clientIdOf(ctx), params.tag_id, body);
      if (!row) throw notFound('tag not found');
      ctx.body = tagView(row);
    },
  });

  api.add({
    ...dash,
    method: 'delete',
    path: '/api/v1/dashboard/content/tags/{tag_id}',
    operationId: 'deleteTag',
    summary: 'Delete a tag (posts lose it)',
    params: tagIdParams,
    responses: { 204: { description: 'Deleted' }, 404: { description: 'No such tag for this client' } },
    handler: async (ctx, { params }) => {
      if (!(await repo.deleteTag(clientIdOf(ctx), params.tag_id))) throw notFound('tag not found');
      ctx.status = 204;
    },
  });
}
