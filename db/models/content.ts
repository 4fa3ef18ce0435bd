import type { RelationMappings } from 'objection';
import { TenantModel } from './tenant';

/**
 * Blog content (db/migrations/20261125000310_content.ts and its follow-ups): a client's sites,
 * authors, categories, tags and posts. Every query starts from `forClient` (db/models/tenant.ts);
 * db/repositories/content.ts holds the queries. The join tables (content_post_tags,
 * content_post_categories, content_post_related) have no client_id: a link is the client's when
 * its post is.
 */

/** A domain the client's public blog answers on, once its DNS TXT proof was found. */
export class ContentSiteModel extends TenantModel {
  static override tableName = 'content_sites';

  id!: string;
  domain!: string;
  /** The value of the DNS TXT record that proves the client controls the domain. */
  verification_token!: string;
  /** Set once proven; only a verified site answers X-Content-Domain. */
  verified_at!: Date | null;
  created_at!: Date;
}

export class ContentAuthorModel extends TenantModel {
  static override tableName = 'content_authors';

  id!: string;
  full_name!: string;
  slug!: string;
  avatar_url!: string | null;
  bio!: string | null;
  email!: string | null;
  role!: string;
  agent_type!: string | null;
  country!: string | null;
  city!: string | null;
  is_active!: boolean;
  created_at!: Date;
  updated_at!: Date;
}

export class ContentCategoryModel extends TenantModel {
  static override tableName = 'content_categories';

  id!: string;
  name!: string;
  slug!: string;
  description!: string | null;
  created_at!: Date;
  updated_at!: Date;
}

export class ContentTagModel extends TenantModel {
  static override tableName = 'content_tags';

  id!: string;
  name!: string;
  slug!: string;
  created_at!: Date;
}

export class ContentPostModel extends TenantModel {
  static override tableName = 'content_posts';

  id!: string;
  slug!: string;
  title!: string;
  body!: Record<string, unknown>;
  body_html!: string;
  excerpt!: string | null;
  tldr_summary!: string | null;
  cover_image_url!: string | null;
  featured_image_alt!: string | null;
  status!: 'draft' | 'published';
  published_at!: Date | null;
  author_id!: string | null;
  reading_time!: number;
  // bigint: pg hands it over as a string.
  view_count!: string | number;
  is_featured!: boolean;
  seo_title!: string | null;
  seo_description!: string | null;
  og_image_url!: string | null;
  created_at!: Date;
  updated_at!: Date;

  author?: ContentAuthorModel | null;
  tagModels?: ContentTagModel[];
  categories?: ContentCategoryModel[];
  relatedPosts?: ContentPostModel[];

  static override relationMappings = (): RelationMappings => ({
    author: {
      relation: TenantModel.BelongsToOneRelation,
      modelClass: ContentAuthorModel,
      join: { from: 'content_posts.author_id', to: 'content_authors.id' },
    },
    tagModels: {
      relation: TenantModel.ManyToManyRelation,
      modelClass: ContentTagModel,
      join: {
        from: 'content_posts.id',
        through: { from: 'content_post_tags.post_id', to: 'content_post_tags.tag_id' },
        to: 'content_tags.id',
      },
    },
    categories: {
      relation: TenantModel.ManyToManyRelation,
      modelClass: ContentCategoryModel,
      join: {
        from: 'content_posts.id',
        through: { from: 'content_post_categories.post_id', to: 'content_post_categories.category_id' },
        to: 'content_categories.id',
      },
    },
    // The editor's choice, in the order given (position); read with `.orderBy('position')`.
    relatedPosts: {
      relation: TenantModel.ManyToManyRelation,
      modelClass: ContentPostModel,
      join: {
        from: 'content_posts.id',
        through: {
          from: 'content_post_related.post_id',
          to: 'content_post_related.related_post_id',
          extra: ['position'],
        },
        to: 'content_posts.id',
      },
    },
  });
}
