import { notFound } from '../../../lib/errors';
import type { ApiRouter } from '../../routing';
import {
  authorListResponse,
  contentPageQuery,
  postListResponse,
  postResponse,
  postSlugParams,
  publicPostListQuery,
} from '../../schemas/content';
import { authorView, postSummaryView, postView } from '../../presenters/content';
import { pub, siteClientOf, type ContentDeps } from './shared';

/** What a verified site's visitors read (X-Content-Domain, no key). */
export function publicRoutes(api: ApiRouter, { repo }: ContentDeps): void {
  const siteClient = siteClientOf(repo);

  api.add({
    ...pub,
    method: 'get',
    path: '/api/v1/content/authors',
    operationId: 'listAuthors',
    summary: "The site's active authors",
    description: "No credential: X-Content-Domain names one of a client's sites.",
    query: contentPageQuery,
    responses: {
      200: { description: 'A page of active authors', schema: authorListResponse },
      422: { description: 'X-Content-Domain missing, malformed, or naming no registered site' },
    },
    handler: async (ctx, { query }) => {
      const page = await repo.listAuthors(await siteClient(ctx), {
        activeOnly: true,
        page: query.page,
        pageSize: query.page_size,
      });
      ctx.body = {
        authors: page.items.map(authorView),
        total: page.total,
        page: query.page,
        page_size: query.page_size,
      };
    },
  });

  api.add({
    ...pub,
    method: 'get',
    path: '/api/v1/content/posts',
    operationId: 'listPublishedPosts',
    summary: "The site's published posts, newest first",
    query: publicPostListQuery,
    responses: {
      200: { description: 'A page of published posts (without bodies)', schema: postListResponse },
      422: { description: 'X-Content-Domain missing, malformed, or naming no registered site' },
    },
    handler: async (ctx, { query }) => {
      const page = await repo.listPosts(await siteClient(ctx), {
        ...query,
        status: 'published',
        page: query.page,
        pageSize: query.page_size,
      });
      ctx.body = {
        posts: page.items.map(postSummaryView),
        total: page.total,
        page: query.page,
        page_size: query.page_size,
      };
    },
  });

  api.add({
    ...pub,
    method: 'get',
    path: '/api/v1/content/posts/{slug}',
    operationId: 'getPublishedPost',
    summary: 'One published post by slug (counts a view)',
    description:
      "Each request adds one to view_count. related_posts: the editor's choice, then posts sharing the most tags and categories (3 in all, published only).",
    params: postSlugParams,
    responses: {
      200: { description: 'The post with body_html', schema: postResponse },
      404: { description: 'No published post of the site has this slug' },
      422: { description: 'X-Content-Domain missing, malformed, or naming no registered site' },
    },
    handler: async (ctx, { params }) => {
      const post = await repo.readPublished(await siteClient(ctx), params.slug);
      if (!post) throw notFound('post not found');
      ctx.body = postView(post);
    },
  });
}
