import { domainToASCII } from 'node:url';
import { isFQDN } from 'validator';
import { z } from 'zod';
import { SLUG_MAX } from '../../db/repositories/content';
import { HTTP_URL_PATTERN, isHttpUrl, trimmedEmail, trimmedPattern } from '../../jobs/fields';
import { uuidParam } from './params';

// ---- requests -------------------------------------------------------------------------------

const slug = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'must be a slug: lower-case letters and digits joined by single hyphens')
  .max(SLUG_MAX);
const text = (max: number) => z.string().trim().max(max);
const optionalText = (max: number) => text(max).nullable().optional();
const httpUrl = z
  .string()
  .trim()
  .max(2000)
  .refine(isHttpUrl, 'must be an http:// or https:// URL')
  .meta({ pattern: HTTP_URL_PATTERN });
const optionalUrl = httpUrl.nullable().optional();
const uuid = z.string().uuid();

// A domain name as domainName accepts one, for the OpenAPI document (isFQDN is code): labels of
// letters, digits, hyphens and non-ASCII characters, at least two, the last one two letters or more
// (or an xn-- label, or any label with a non-ASCII character), any case; a trailing dot and a port;
// whitespace around. Every accepted name
// matches; a match may still be refused (a label too long or starting with a hyphen).
const LABEL_CHAR = '[^\\u0000-\\u002c\\u002e\\u002f\\u003a-\\u0040\\u005b-\\u0060\\u007b-\\u007f]';
const NON_ASCII = '[^\\u0000-\\u007f]';
// An internationalised last label (any label with a non-ASCII character) is taken in its punycode form.
const TLD = `(?:[^\\u0000-\\u0040\\u005b-\\u0060\\u007b-\\u007f]{2,}|[Xx][Nn]${LABEL_CHAR}{2,}|${LABEL_CHAR}*${NON_ASCII}${LABEL_CHAR}*)`;
const DOMAIN_PATTERN = trimmedPattern(
  `(?:[Ll][Oo][Cc][Aa][Ll][Hh][Oo][Ss][Tt]|(?:${LABEL_CHAR}+\\.)+${TLD})\\.?(?::[0-9]+)?`,
);

/**
 * Each label with a non-ASCII character in its punycode form (UTS #46, as browsers map it), when
 * every label maps to one non-empty label; else the name as it is (isFQDN then judges it). Label by
 * label, so that characters UTS #46 maps to a dot (U+3002) or to nothing (U+00AD) change no label's
 * bounds, and only names of visible characters (the URL parser drops a tab or newline inside one).
 */
function asciiDomain(name: string): string {
  if (/^[ -~]*$/.test(name) || !/^[^\s\p{Cc}]+$/u.test(name)) return name;
  const labels = name.split('.').map((label) => (/^[ -~]*$/.test(label) ? label : domainToASCII(label)));
  return labels.every((label) => label !== '' && !label.includes('.')) ? labels.join('.') : name;
}

/**
 * A host name as a browser sends it in Host: lower-cased, a trailing dot and a port dropped, and an
 * internationalised name in its ASCII (punycode) form, as browsers send it (`bücher.example` is
 * `xn--bcher-kva.example`: one site, whichever form it was registered in).
 */
export const domainName = z
  .string()
  .min(1)
  .max(260)
  .trim()
  .toLowerCase()
  .transform((v) => v.replace(/:\d+$/, '').replace(/\.$/, ''))
  .transform(asciiDomain)
  .refine(
    (v) => v === 'localhost' || isFQDN(v, { require_tld: true, allow_underscores: false }),
    'must be a domain name such as blog.example.com',
  )
  .meta({ pattern: DOMAIN_PATTERN });

export const siteCreateBody = z.strictObject({
  domain: domainName.describe('the domain the site is served from; the public endpoints take it in X-Content-Domain'),
});
export const siteIdParams = z.object({ site_id: uuidParam('site id (UUID)') });

export const contentPageQuery = z.object({
  page: z.coerce.number().int().min(1).default(1),
  page_size: z.coerce.number().int().min(1).max(100).default(20),
});

/** The public endpoints' site: X-Content-Domain (spec §4.11), required. */
export const contentDomainHeaders = z.object({
  'x-content-domain': domainName.describe("the domain of one of the client's sites (X-Content-Domain)"),
});

const authorFields = {
  slug: slug.optional().describe('default: from full_name (a taken one gets -2, -3, ...)'),
  avatar_url: optionalUrl,
  bio: optionalText(5000),
  email: trimmedEmail().nullable().optional().describe('public contact'),
  role: text(50).min(1).optional().describe('e.g. editor, contributor (default), admin'),
  agent_type: optionalText(100).describe('non-null marks an AI author'),
  country: optionalText(100),
  city: optionalText(100),
  is_active: z.boolean().optional().describe('inactive authors are not listed publicly (default true)'),
};
export const authorCreateBody = z.strictObject({ full_name: text(200).min(1), ...authorFields });
export const authorPatchBody = z.strictObject({ full_name: text(200).min(1).optional(), ...authorFields });
export const authorIdParams = z.object({ author_id: uuidParam('author id (UUID)') });

export const categoryCreateBody = z.strictObject({
  name: text(200).min(1),
  slug: slug.optional().describe('default: from the name'),
  description: optionalText(2000),
});
export const categoryPatchBody = z.strictObject({
  name: text(200).min(1).optional(),
  slug: slug.optional(),
  description: optionalText(2000),
});
export const categoryIdParams = z.object({ category_id: uuidParam('category id (UUID)') });

export const tagCreateBody = z.strictObject({
  name: text(100).min(1),
  slug: slug.optional().describe('default: from the name'),
});
export const tagPatchBody = z.strictObject({ name: text(100).min(1).optional(), slug: slug.optional() });
export const tagIdParams = z.object({ tag_id: uuidParam('tag id (UUID)') });

const postFields = {
  excerpt: optionalText(2000),
  cover_image_url: optionalUrl,
  author_name: text(200).min(1).optional().describe('the author of this name, created if not found'),
  author_id: uuid.nullable().optional().describe('takes precedence over author_name'),
  tags: z.array(text(100).min(1)).max(50).optional().describe('tag names, created if missing'),
  tag_ids: z.array(uuid).max(50).optional(),
  category_ids: z.array(uuid).max(50).optional(),
  is_featured: z.boolean().optional().describe('default false'),
  featured_image_alt: optionalText(500),
  tldr_summary: optionalText(2000),
  related_post_ids: z.array(uuid).max(20).optional().describe('shown first among related posts, in this order'),
  seo_title: optionalText(300),
  seo_description: optionalText(1000),
  og_image_url: optionalUrl,
};
const richText = z
  .record(z.string(), z.unknown())
  .meta({ required: ['type'], properties: { type: { const: 'doc' } } })
  .describe(
    'rich-text JSON document (ProseMirror/TipTap): {"type": "doc", "content": [...]}; nodes: paragraph, text, heading, blockquote, bulletList, orderedList, listItem, codeBlock, hardBreak, horizontalRule, image; marks: bold, italic, strike, underline, code, link',
  );

/** Spec §4.11; checked by the handler so that a missing field is the spec's 400 (not a 422). */
export const postCreateBody = z.strictObject({
  slug: slug.describe('unique per client'),
  title: text(300).min(1),
  body: richText,
  ...postFields,
});
export const postPatchBody = z.strictObject({
  slug: slug.optional(),
  title: text(300).min(1).optional(),
  body: richText.optional(),
  ...postFields,
});
export const postIdParams = z.object({ post_id: uuidParam('post id (UUID)') });
export const postSlugParams = z.object({ slug: z.string().describe("the post's slug") });

export const postListQuery = contentPageQuery.extend({
  status: z.enum(['draft', 'published']).optional(),
  tag: z.string().max(SLUG_MAX).optional().describe('tag slug'),
  category: z.string().max(SLUG_MAX).optional().describe('category slug'),
  author: z.string().max(SLUG_MAX).optional().describe('author slug'),
  featured: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional(),
});
export const publicPostListQuery = postListQuery.omit({ status: true });

// ---- responses ------------------------------------------------------------------------------

export const siteResponse = z
  .object({
    id: z.string(),
    domain: z.string(),
    verified: z
      .boolean()
      .describe('whether the client has shown it controls the domain; only a verified site answers X-Content-Domain'),
    verified_at: z.string().nullable(),
    verification: z
      .object({
        type: z.literal('dns_txt'),
        name: z.string().describe('the DNS name to put the TXT record on: the domain itself'),
        value: z.string().describe("the TXT record's value: leadjobs-site-verification=<token>"),
      })
      .describe('how to verify the domain: publish this TXT record, then POST .../verify'),
    created_at: z.string(),
  })
  .meta({ id: 'ContentSite' });
export const siteListResponse = z.object({ sites: z.array(siteResponse), total: z.number().int() });

/** Spec §2.11 Author. */
export const authorResponse = z
  .object({
    id: z.string(),
    full_name: z.string(),
    slug: z.string(),
    avatar_url: z.string().nullable(),
    bio: z.string().nullable(),
    email: z.string().nullable(),
    role: z.string(),
    agent_type: z.string().nullable(),
    country: z.string().nullable(),
    city: z.string().nullable(),
  })
  .meta({ id: 'Author' });
export const dashboardAuthorResponse = authorResponse
  .extend({ is_active: z.boolean(), created_at: z.string(), updated_at: z.string() })
  .meta({ id: 'DashboardAuthor' });
/** The paging fields of a paged listing: the items' total and the page shown. */
const paged = { total: z.number().int(), page: z.number().int(), page_size: z.number().int() };
export const authorListResponse = z.object({ authors: z.array(authorResponse), ...paged }).meta({ id: 'AuthorList' });
export const dashboardAuthorListResponse = z.object({ authors: z.array(dashboardAuthorResponse), ...paged });

export const categoryResponse = z
  .object({ id: z.string(), name: z.string(), slug: z.string() })
  .meta({ id: 'Category' });
export const dashboardCategoryResponse = categoryResponse
  .extend({ description: z.string().nullable(), created_at: z.string(), updated_at: z.string() })
  .meta({ id: 'DashboardCategory' });
export const categoryListResponse = z.object({
  categories: z.array(dashboardCategoryResponse),
  total: z.number().int(),
});
export const tagResponse = z
  .object({
    id: z.string(),
    name: z.string(),
    slug: z.string(),
    post_count: z.number().int().optional(),
    created_at: z.string(),
  })
  .meta({ id: 'Tag' });
export const tagListResponse = z.object({ tags: z.array(tagResponse), total: z.number().int() });

const postAuthor = z
  .object({
    id: z.string(),
    full_name: z.string(),
    slug: z.string(),
    avatar_url: z.string().nullable(),
    bio: z.string().nullable(),
  })
  .nullable();

const postSummaryFields = {
  id: z.string(),
  slug: z.string(),
  title: z.string(),
  excerpt: z.string().nullable(),
  tldr_summary: z.string().nullable(),
  cover_image_url: z.string().nullable(),
  featured_image_alt: z.string().nullable(),
  status: z.enum(['draft', 'published']),
  published_at: z.string().nullable(),
  author: postAuthor,
  tags: z.array(z.string()),
  categories: z.array(categoryResponse),
  reading_time: z.number().int().describe("minutes, from the body's words at 200 per minute"),
  view_count: z.number().int(),
  is_featured: z.boolean(),
  seo_title: z.string().nullable(),
  seo_description: z.string().nullable(),
  og_image_url: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
};
export const relatedPostResponse = z
  .object({
    id: z.string(),
    slug: z.string(),
    title: z.string(),
    excerpt: z.string().nullable(),
    cover_image_url: z.string().nullable(),
    published_at: z.string().nullable(),
    reading_time: z.number().int(),
  })
  .meta({ id: 'RelatedPost' });
export const postSummaryResponse = z.object(postSummaryFields).meta({ id: 'PostSummary' });
/** Spec §2.11 Post, with the body rendered as sanitised HTML. */
export const postResponse = z
  .object({
    ...postSummaryFields,
    body: z.record(z.string(), z.unknown()).describe('the rich-text JSON document'),
    body_html: z.string().describe('the body rendered to sanitised HTML'),
    related_posts: z.array(relatedPostResponse),
  })
  .meta({ id: 'Post' });
export const postListResponse = z.object({ posts: z.array(postSummaryResponse), ...paged }).meta({ id: 'PostList' });
