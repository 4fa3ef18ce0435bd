import { z } from 'zod';
import type { AuthorRow, CategoryRow, ContentRepository, PostInput, PostRow, PostState, SiteRow, TagRow } from '../../db/repositories/content';
import { AppError, notFound, ValidationError } from '../../lib/errors';
import { lookupTxt, missingRecord, siteVerificationRecord } from '../../lib/domain-proof';
import { InvalidDocumentError, parseDocument, readingTime, renderDocument } from '../../lib/rich-text';
import { clientIdOf, type AppContext } from '../context';
import type { ApiRouter } from '../routing';
import {
  authorCreateBody,
  authorIdParams,
  authorListResponse,
  authorPatchBody,
  categoryCreateBody,
  categoryIdParams,
  categoryListResponse,
  categoryPatchBody,
  contentDomainHeaders,
  contentPageQuery,
  dashboardAuthorListResponse,
  dashboardAuthorResponse,
  dashboardCategoryResponse,
  postCreateBody,
  postIdParams,
  postListQuery,
  postListResponse,
  postPatchBody,
  postResponse,
  postSlugParams,
  publicPostListQuery,
  siteCreateBody,
  siteIdParams,
  siteListResponse,
  siteResponse,
  tagCreateBody,
  tagIdParams,
  tagListResponse,
  tagPatchBody,
  tagResponse,
} from '../schemas/content';
import { validate } from '../validation';
import { iso } from '../../lib/dates';


const siteView = (s: SiteRow) => ({
  id: s.id,
  domain: s.domain,
  verified: s.verified_at !== null,
  verified_at: iso(s.verified_at),
  verification: { type: 'dns_txt' as const, name: s.domain, value: siteVerificationRecord(s.verification_token) },
  created_at: new Date(s.created_at).toISOString(),
});

/** Spec §2.11 Author (what the public sees). */
export const authorView = (a: AuthorRow) => ({
  id: a.id,
  full_name: a.full_name,
  slug: a.slug,
  avatar_url: a.avatar_url,
  bio: a.bio,
  email: a.email,
  role: a.role,
  agent_type: a.agent_type,
  country: a.country,
  city: a.city,
});
const dashboardAuthorView = (a: AuthorRow) => ({ ...authorView(a), is_active: a.is_active, created_at: new Date(a.created_at).toISOString(), updated_at: new Date(a.updated_at).toISOString() });
const categoryView = (c: CategoryRow) => ({ id: c.id, name: c.name, slug: c.slug });
const dashboardCategoryView = (c: CategoryRow) => ({ ...categoryView(c), description: c.description, created_at: new Date(c.created_at).toISOString(), updated_at: new Date(c.updated_at).toISOString() });
const tagView = (t: TagRow & { post_count?: number }) => ({ id: t.id, name: t.name, slug: t.slug, ...(t.post_count === undefined ? {} : { post_count: t.post_count }), created_at: new Date(t.created_at).toISOString() });

const relatedView = (p: PostRow) => ({ id: p.id, slug: p.slug, title: p.title, excerpt: p.excerpt, cover_image_url: p.cover_image_url, published_at: iso(p.published_at), reading_time: p.reading_time });

function postSummaryView(p: Omit<PostState, 'related'>) {
  return {
    id: p.id,
    slug: p.slug,
    title: p.title,
    excerpt: p.excerpt,
    tldr_summary: p.tldr_summary,
    cover_image_url: p.cover_image_url,
    featured_image_alt: p.featured_image_alt,
    status: p.status,
    published_at: iso(p.published_at),
    author: p.author && { id: p.author.id, full_name: p.author.full_name, slug: p.author.slug, avatar_url: p.author.avatar_url, bio: p.author.bio },
    tags: p.tags,
    categories: p.categories.map(categoryView),
    reading_time: p.reading_time,
    view_count: Number(p.view_count),
    is_featured: p.is_featured,
    seo_title: p.seo_title,
    seo_description: p.seo_description,
    og_image_url: p.og_image_url,
    created_at: new Date(p.created_at).toISOString(),
    updated_at: new Date(p.updated_at).toISOString(),
  };
}

/** Spec §2.11 Post: every field, the body as its JSON document and as sanitised HTML. */
export const postView = (p: PostState) => ({ ...postSummaryView(p), body: p.body, body_html: p.body_html, related_posts: p.related.map(relatedView) });

/** The body checked against the document schema (400 naming the problem), rendered and timed. */
function document(body: Record<string, unknown>): NonNullable<PostInput['document']> {
  try {
    const doc = parseDocument(body);
    // Stored as the schema reads it: attributes the editor's schema does not have are not kept.
    return { body: doc.toJSON() as Record<string, unknown>, html: renderDocument(doc), readingTime: readingTime(doc) };
  } catch (err) {
    if (err instanceof InvalidDocumentError) throw new AppError(400, `body: invalid rich-text document: ${err.message}`, 'bad_request');
    throw err;
  }
}

/**
 * Spec §4.11: a missing or malformed field of a new post is a 400 whose detail names each problem.
 * A field is missing when the request has no such key; a value of the wrong type is named with the
 * type it has.
 */
function parse400<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  // With each issue's input, as validate() asks for it: none means the key is absent.
  const result = schema.safeParse(value ?? {}, { reportInput: true });
  if (result.success) return result.data;
  const problems = result.error.issues.map((i) => {
    // The post has a field called `body`, so a problem with the whole document says "request body".
    const at = i.path.join('.') || 'request body';
    if (i.code === 'unrecognized_keys') return `unknown field(s): ${i.keys.join(', ')}`;
    if (i.code === 'invalid_type') {
      if (i.input === undefined) return `${at}: field required`;
      // A rich-text document is a z.record, which the caller knows as an object.
      return `${at}: expected ${i.expected === 'record' ? 'object' : i.expected}, received ${jsonType(i.input)}`;
    }
    return `${at}: ${i.message}`;
  });
  throw new AppError(400, problems.join('; '), 'bad_request');
}

const jsonType = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

const toPostInput = (b: z.output<typeof postPatchBody>): PostInput => {
  const { body, ...rest } = b;
  return { ...rest, ...(body === undefined ? {} : { document: document(body) }) };
};

export interface ContentDeps {
  repo: ContentRepository;
  /** Resolvers for the sites' DNS proof (DNS_SERVERS; empty: the system's). */
  dnsServers: readonly string[];
}

export function contentRoutes(api: ApiRouter, { repo, dnsServers }: ContentDeps): void {
  const dash = { tags: ['content'], security: 'client' as const };
  const pub = { tags: ['content'], security: 'none' as const, headers: contentDomainHeaders };

  /**
   * The client of X-Content-Domain. A header that is missing, malformed or names no verified site
   * is a 422 on the header: spec §4.11 gives the public author list 200 and 422 only, and the
   * public post routes answer the same.
   */
  const siteClient = async (ctx: AppContext): Promise<string> => {
    const headers = validate(contentDomainHeaders, { 'x-content-domain': ctx.get('x-content-domain') || undefined }, ['header']);
    const domain = headers['x-content-domain'];
    const clientId = await repo.clientOfDomain(domain);
    if (!clientId) throw new ValidationError([{ type: 'site_not_found', loc: ['header', 'x-content-domain'], msg: `no verified site is registered for the domain '${domain}'` }]);
    return clientId;
  };

  // ---- sites -------------------------------------------------------------------------------------

  api.add({
    ...dash,
    method: 'post',
    path: '/api/v1/dashboard/content/sites',
    operationId: 'createContentSite',
    summary: 'Register a domain whose public content endpoints serve this client\'s posts',
    description:
      'The site answers X-Content-Domain once verified: publish the TXT record the answer gives (`verification`) on the domain, then call POST /api/v1/dashboard/content/sites/{site_id}/verify. Any client may register any domain (registering grants nothing): one verified by another client passes to this one when it verifies with that client\'s record gone from the domain.',
    body: siteCreateBody,
    responses: { 201: { description: 'Registered, not verified yet', schema: siteResponse }, 409: { description: 'This client has registered the domain already' } },
    handler: async (ctx, { body }) => {
      ctx.status = 201;
      ctx.body = siteView(await repo.createSite(clientIdOf(ctx), body.domain));
    },
  });

  api.add({
    ...dash,
    method: 'get',
    path: '/api/v1/dashboard/content/sites',
    operationId: 'listContentSites',
    summary: 'The client\'s sites',
    responses: { 200: { description: 'Every site of the client', schema: siteListResponse } },
    handler: async (ctx) => {
      const sites = await repo.listSites(clientIdOf(ctx));
      ctx.body = { sites: sites.map(siteView), total: sites.length };
    },
  });

  api.add({
    ...dash,
    method: 'post',
    path: '/api/v1/dashboard/content/sites/{site_id}/verify',
    operationId: 'verifyContentSite',
    summary: 'Check the site\'s DNS TXT record and, when found, verify the site',
    description:
      'Looks up the TXT records of the domain for `verification.value`. Found: the site is verified and answers X-Content-Domain. A domain another client has verified moves to this site when that client\'s record is no longer among them (the domain changed hands; the other site becomes unverified and its posts are no longer served); while it is, the answer is 409. Verifying an already verified site changes nothing.',
    params: siteIdParams,
    responses: {
      200: { description: 'Verified', schema: siteResponse },
      404: { description: 'No such site for this client' },
      409: { description: 'Another client has verified the domain and its TXT record is still published' },
      422: { description: 'The TXT record was not found (the reason says what the lookup gave)' },
    },
    handler: async (ctx, { params }) => {
      const clientId = clientIdOf(ctx);
      const site = await repo.getSite(clientId, params.site_id);
      if (!site) throw notFound('site not found');
      let previous: SiteRow | undefined;
      if (site.verified_at === null) {
        const record = siteVerificationRecord(site.verification_token);
        const txt = await lookupTxt(site.domain, dnsServers);
        const missing = missingRecord(site.domain, txt, record);
        if (missing) throw new ValidationError([{ type: 'domain_not_verified', loc: ['path', 'site_id'], msg: `${missing}: publish the TXT record "${record}" on ${site.domain} and try again` }]);
        // A domain another client verified passes to this one once that client's record is gone from
        // its DNS (the domain changed hands); while it is published, the domain stays where it is.
        previous = await repo.verifiedElsewhere(clientId, site.domain);
        if (previous && missingRecord(site.domain, txt, siteVerificationRecord(previous.verification_token)) === null) {
          throw new AppError(409, `${site.domain} is verified by another client, whose TXT record is still published; it passes to you once that record is removed`, 'conflict');
        }
      }
      const verified = await repo.verifySite(clientId, site.id, previous);
      if (!verified) throw notFound('site not found');
      ctx.body = siteView(verified);
    },
  });

  api.add({
    ...dash,
    method: 'delete',
    path: '/api/v1/dashboard/content/sites/{site_id}',
    operationId: 'deleteContentSite',
    summary: 'Remove a site (the public endpoints then answer 422 for its domain)',
    params: siteIdParams,
    responses: { 204: { description: 'Removed' }, 404: { description: 'No such site for this client' } },
    handler: async (ctx, { params }) => {
      if (!(await repo.deleteSite(clientIdOf(ctx), params.site_id))) throw notFound('site not found');
      ctx.status = 204;
    },
  });

  // ---- authors ------------------------------------------------------------------------------------

  api.add({
    ...dash,
    method: 'post',
    path: '/api/v1/dashboard/content/authors',
    operationId: 'createAuthor',
    summary: 'Create an author',
    body: authorCreateBody,
    responses: { 201: { description: 'Created', schema: dashboardAuthorResponse }, 409: { description: 'The slug exists' } },
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
      const page = await repo.listAuthors(clientIdOf(ctx), { activeOnly: false, page: query.page, pageSize: query.page_size });
      ctx.body = { authors: page.items.map(dashboardAuthorView), total: page.total, page: query.page, page_size: query.page_size };
    },
  });

  api.add({
    ...dash,
    method: 'get',
    path: '/api/v1/dashboard/content/authors/{author_id}',
    operationId: 'getAuthor',
    summary: 'One author',
    params: authorIdParams,
    responses: { 200: { description: 'The author', schema: dashboardAuthorResponse }, 404: { description: 'No such author for this client' } },
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
    responses: { 200: { description: 'The updated author', schema: dashboardAuthorResponse }, 404: { description: 'No such author for this client' }, 409: { description: 'The slug exists' } },
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

  // ---- categories and tags ------------------------------------------------------------------------

  api.add({
    ...dash,
    method: 'post',
    path: '/api/v1/dashboard/content/categories',
    operationId: 'createCategory',
    summary: 'Create a category',
    body: categoryCreateBody,
    responses: { 201: { description: 'Created', schema: dashboardCategoryResponse }, 400: { description: 'No slug given and the name gives none (e.g. only symbols)' }, 409: { description: 'The slug exists' } },
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
    summary: 'The client\'s categories',
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
    responses: { 200: { description: 'The category', schema: dashboardCategoryResponse }, 404: { description: 'No such category for this client' } },
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
    responses: { 200: { description: 'The updated category', schema: dashboardCategoryResponse }, 404: { description: 'No such category for this client' }, 409: { description: 'The slug exists' } },
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
    description: 'A tag is its name, in any case. Without `slug` the name gives one, made free (`c`, `c-2`; `tag` for a name without Latin letters).',
    responses: { 201: { description: 'Created', schema: tagResponse }, 409: { description: 'A tag of this name (in any case) or of the given slug exists' } },
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
    summary: 'The client\'s tags with their post counts',
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
    responses: { 200: { description: 'The tag', schema: tagResponse }, 404: { description: 'No such tag for this client' } },
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
    responses: { 200: { description: 'The updated tag', schema: tagResponse }, 404: { description: 'No such tag for this client' }, 409: { description: 'The slug exists' } },
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

  // ---- posts (dashboard) ----------------------------------------------------------------------------

  api.add({
    ...dash,
    method: 'post',
    path: '/api/v1/dashboard/content/posts',
    operationId: 'createPost',
    summary: 'Create a post (status draft)',
    description:
      'The body is a rich-text JSON document checked against the TipTap StarterKit schema (plus images); an unknown node or mark, or content a node does not allow, is a 400. ' +
      'author_id takes precedence over author_name (found by name, else created); tags are created by name; reading_time comes from the body\'s words.',
    body: z.unknown(),
    bodyDoc: postCreateBody,
    // Spec §4.11: "400 missing fields or invalid body", so a body that does not parse is a 400 too.
    bodyErrors: 'bad_request',
    responses: {
      201: { description: 'The new draft', schema: postResponse },
      400: { description: 'Missing fields, a field of the wrong type, an invalid body document, an id that is not the client\'s, or a body that is not JSON or YAML' },
      409: { description: 'The slug exists for this client' },
    },
    handler: async (ctx, { body: raw }) => {
      const body = parse400(postCreateBody, raw);
      const { body: doc, ...rest } = body;
      const post = await repo.createPost(clientIdOf(ctx), { ...rest, document: document(doc) });
      ctx.status = 201;
      ctx.body = postView(post);
    },
  });

  api.add({
    ...dash,
    method: 'get',
    path: '/api/v1/dashboard/content/posts',
    operationId: 'listPosts',
    summary: 'The client\'s posts, drafts included, newest first',
    query: postListQuery,
    responses: { 200: { description: 'A page of posts (without bodies)', schema: postListResponse } },
    handler: async (ctx, { query }) => {
      const page = await repo.listPosts(clientIdOf(ctx), { ...query, page: query.page, pageSize: query.page_size });
      ctx.body = { posts: page.items.map(postSummaryView), total: page.total, page: query.page, page_size: query.page_size };
    },
  });

  api.add({
    ...dash,
    method: 'get',
    path: '/api/v1/dashboard/content/posts/{post_id}',
    operationId: 'getPost',
    summary: 'One post, with its body and the related posts its editor chose',
    params: postIdParams,
    responses: { 200: { description: 'The post', schema: postResponse }, 404: { description: 'No such post for this client' } },
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
    description: 'Fields given replace the current ones; tags/tag_ids, category_ids and related_post_ids replace the whole set. A new body is checked and rendered like on create.',
    params: postIdParams,
    body: postPatchBody,
    responses: {
      200: { description: 'The updated post', schema: postResponse },
      400: { description: 'An invalid body document, or an id that is not the client\'s' },
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
      summary: action === 'publish' ? 'Publish a post (published_at now; public from then on)' : 'Take a post back to draft (no longer public)',
      params: postIdParams,
      responses: { 200: { description: 'The post', schema: postResponse }, 404: { description: 'No such post for this client' } },
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

  // ---- public (X-Content-Domain) ------------------------------------------------------------------

  api.add({
    ...pub,
    method: 'get',
    path: '/api/v1/content/authors',
    operationId: 'listAuthors',
    summary: 'The site\'s active authors',
    description: 'No credential: X-Content-Domain names one of a client\'s sites.',
    query: contentPageQuery,
    responses: { 200: { description: 'A page of active authors', schema: authorListResponse }, 422: { description: 'X-Content-Domain missing, malformed, or naming no registered site' } },
    handler: async (ctx, { query }) => {
      const page = await repo.listAuthors(await siteClient(ctx), { activeOnly: true, page: query.page, pageSize: query.page_size });
      ctx.body = { authors: page.items.map(authorView), total: page.total, page: query.page, page_size: query.page_size };
    },
  });

  api.add({
    ...pub,
    method: 'get',
    path: '/api/v1/content/posts',
    operationId: 'listPublishedPosts',
    summary: 'The site\'s published posts, newest first',
    query: publicPostListQuery,
    responses: { 200: { description: 'A page of published posts (without bodies)', schema: postListResponse }, 422: { description: 'X-Content-Domain missing, malformed, or naming no registered site' } },
    handler: async (ctx, { query }) => {
      const page = await repo.listPosts(await siteClient(ctx), { ...query, status: 'published', page: query.page, pageSize: query.page_size });
      ctx.body = { posts: page.items.map(postSummaryView), total: page.total, page: query.page, page_size: query.page_size };
    },
  });

  api.add({
    ...pub,
    method: 'get',
    path: '/api/v1/content/posts/{slug}',
    operationId: 'getPublishedPost',
    summary: 'One published post by slug (counts a view)',
    description: 'Each request adds one to view_count. related_posts: the editor\'s choice, then posts sharing the most tags and categories (3 in all, published only).',
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
