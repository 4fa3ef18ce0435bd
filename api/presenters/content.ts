import type { AuthorRow, CategoryRow, PostRow, PostState, SiteRow, TagRow } from '../../db/repositories/content';
import { siteVerificationRecord } from '../../lib/domain-proof';
import { iso } from '../../lib/dates';

// The blog content API's views of its rows (spec §2.11): what the dashboard and the public read.

export const siteView = (s: SiteRow) => ({
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
export const dashboardAuthorView = (a: AuthorRow) => ({
  ...authorView(a),
  is_active: a.is_active,
  created_at: new Date(a.created_at).toISOString(),
  updated_at: new Date(a.updated_at).toISOString(),
});
export const categoryView = (c: CategoryRow) => ({ id: c.id, name: c.name, slug: c.slug });
export const dashboardCategoryView = (c: CategoryRow) => ({
  ...categoryView(c),
  description: c.description,
  created_at: new Date(c.created_at).toISOString(),
  updated_at: new Date(c.updated_at).toISOString(),
});
export const tagView = (t: TagRow & { post_count?: number }) => ({
  id: t.id,
  name: t.name,
  slug: t.slug,
  ...(t.post_count === undefined ? {} : { post_count: t.post_count }),
  created_at: new Date(t.created_at).toISOString(),
});

export const relatedView = (p: PostRow) => ({
  id: p.id,
  slug: p.slug,
  title: p.title,
  excerpt: p.excerpt,
  cover_image_url: p.cover_image_url,
  published_at: iso(p.published_at),
  reading_time: p.reading_time,
});

export function postSummaryView(p: Omit<PostState, 'related'>) {
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
    author: p.author && {
      id: p.author.id,
      full_name: p.author.full_name,
      slug: p.author.slug,
      avatar_url: p.author.avatar_url,
      bio: p.author.bio,
    },
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
export const postView = (p: PostState) => ({
  ...postSummaryView(p),
  body: p.body,
  body_html: p.body_html,
  related_posts: p.related.map(relatedView),
});
