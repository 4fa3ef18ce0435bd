import { z } from 'zod';
import { notFound } from '../../../lib/errors';
import { clientIdOf } from '../../context';
import type { ApiRouter } from '../../routing';
import {
  postCreateBody,
  postIdParams,
  postListQuery,
  postListResponse,
  postPatchBody,
  postResponse,
} from '../../schemas/content';
import { postSummaryView, postView } from '../../presenters/content';
import { dash, parse400, postDocument, toPostInput, type ContentDeps } from './shared';

/** The client's posts (dashboard): drafts, edits, publishing. */
export function postsRoutes(api: ApiRouter, { repo }: ContentDeps): void {
  api.add({
    ...dash,
    method: 'post',
    path: '/api/v1/dashboard/content/posts',
    operationId: 'createPost',
    summary: 'Create a post (status draft)',
    description:
      'The body is a rich-text JSON document checked against the TipTap StarterKit schema (plus images); an unknown node or mark, or content a node does not allow, is a 400. ' +
      "author_id takes precedence over author_name (found by name, else created); tags are created by name; reading_time comes from the body's words.",
    body: z.unknown(),
    bodyDoc: postCreateBody,
    // Spec §4.11: "400 missing fields or invalid body", so a body that does not parse is a 400 too.
    bodyErrors: 'bad_request',
    responses: {
      201: { description: 'The new draft', schema: postResponse },
      400: {
        description:
          "Missing fields, a field of the wrong type, an invalid body document, an id that is not the client's, or a body that is not JSON or YAML",
      },
      409: { description: 'The slug exists for this client' },
    },
    handler: async (ctx, { body: raw }) => {
      const body = parse400(postCreateBody, raw);
      const { body: doc, ...rest } = body;
      const post = await repo.createPost(clientIdOf(ctx), { ...rest, document: postDocument(doc) });
      ctx.status = 201;
      ctx.body = postView(post);
    },
  });

  api.add({
    ...dash,
    method: 'get',
    path: '/api/v1/dashboard/content/posts',
    operationId: 'listPosts',
    summary: "The client's posts, drafts included, newest first",
    query: postListQuery,
    responses: { 200: { description: 'A page of posts (without bodies)', schema: postListResponse } },
    handler: async (ctx, { query }) => {
      const page = await repo.listPosts(clientIdOf(ctx), { ...query, page: query.page, pageSize: query.page_size });
      ctx.body = {
        posts: page.items.map(postSummaryView),
        total: page.total,
        page: query.page,
        page_size: query.page_size,
      };
    },
  });

  api.add({
    ...dash,
    method: 'get',
    path: '/api/v1/dashboard/content/posts/{post_id}',
    operationId: 'getPost',
    summary: 'One post, with its body and the related posts its editor chose',
    params: postIdParams,
    responses: {
      200: { description: 'The post', schema: postResponse },
      404: { description: 'No such post for this client' },
    },
    handler: async (ctx, { params }) => {
      const post = await repo.findPost(clientIdOf(ctx), params.post_id);
      if (!post) throw notFound('post not found');
      ctx.body = postView(post);
    },
  });

  api.add({
    ...dash,
    method: 'patch',
    path: '/api/v1/dashboard/content/posts/{post_id}',
    operationId: 'updatePost',
    summary: 'Change a post',
    description:
      'Fields given replace the current ones; tags/tag_ids, category_ids and related_post_ids replace the whole set. A new body is checked and rendered like on create.',
    params: postIdParams,
    body: postPatchBody,
    responses: {
      200: { description: 'The updated post', schema: postResponse },
      400: { description: "An invalid body document, or an id that is not the client's" },
      404: { description: 'No such post for this client' },
      409: { description: 'The new slug exists for this client' },
    },
    handler: async (ctx, { params, body }) => {
      const post = await repo.updatePost(clientIdOf(ctx), params.post_id, toPostInput(body));
      if (!post) throw notFound('post not found');
      ctx.body = postView(post);
    },
  });

  for (const action of ['publish', 'unpublish'] as const) {
    api.add({
      ...dash,
      method: 'post',
      path: `/api/v1/dashboard/content/posts/{post_id}/${action}`,
      operationId: `${action}Post`,
      summary:
        action === 'publish'
          ? 'Publish a post (published_at now; public from then on)'
          : 'Take a post back to draft (no longer public)',
      params: postIdParams,
      responses: {
        200: { description: 'The post', schema: postResponse },
        404: { description: 'No such post for this client' },
      },
      handler: async (ctx, { params }) => {
        const post = await repo.setPublished(clientIdOf(ctx), params.post_id, action === 'publish');
        if (!post) throw notFound('post not found');
        ctx.body = postView(post);
      },
    });
  }

  api.add({
    ...dash,
    method: 'delete',
    path: '/api/v1/dashboard/content/posts/{post_id}',
    operationId: 'deletePost',
    summary: 'Delete a post',
    params: postIdParams,
    responses: { 204: { description: 'Deleted' }, 404: { description: 'No such post for this client' } },
    handler: async (ctx, { params }) => {
      if (!(await repo.deletePost(clientIdOf(ctx), params.post_id))) throw notFound('post not found');
      ctx.status = 204;
    },
  });
}
