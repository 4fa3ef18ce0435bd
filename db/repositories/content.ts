import { randomBytes, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Model, ModelObject, QueryBuilder } from 'objection';
import slugify from 'slugify';
import { isUniqueViolation, type Db } from '..';
import { conflict, invalid } from '../../lib/errors';
import { UUID } from '../../lib/ids';
import {
  ContentAuthorModel,
  ContentCategoryModel,
  ContentPostModel,
  ContentSiteModel,
  ContentTagModel,
} from '../models/content';

/** The rows as the models declare them (db/models/content.ts), without the loaded relations. */
export type SiteRow = ModelObject<ContentSiteModel>;
export type AuthorRow = ModelObject<ContentAuthorModel>;
export type CategoryRow = ModelObject<ContentCategoryModel>;
export type TagRow = ModelObject<ContentTagModel>;
export type PostRow = Omit<ModelObject<ContentPostModel>, 'author' | 'tagModels' | 'categories' | 'relatedPosts'>;

/** A post with what it refers to: its author, tag names, categories and related posts. */
export interface PostState extends PostRow {
  author: AuthorRow | null;
  tags: string[];
  categories: CategoryRow[];
  related: PostRow[];
}

export type AuthorInput = Partial<
  Pick<
    AuthorRow,
    'full_name' | 'slug' | 'avatar_url' | 'bio' | 'email' | 'role' | 'agent_type' | 'country' | 'city' | 'is_active'
  >
>;
export type CategoryInput = Partial<Pick<CategoryRow, 'name' | 'slug' | 'description'>>;

/** The post's own columns a request may set, plus what it refers to (resolved here). */
export interface PostInput {
  slug?: string;
  title?: string;
  /** Already checked against the document schema, with its rendering and reading time. */
  document?: { body: Record<string, unknown>; html: string; readingTime: number };
  excerpt?: string | null;
  tldr_summary?: string | null;
  cover_image_url?: string | null;
  featured_image_alt?: string | null;
  is_featured?: boolean;
  seo_title?: string | null;
  seo_description?: string | null;
  og_image_url?: string | null;
  author_id?: string | null;
  author_name?: string;
  tags?: string[];
  tag_ids?: string[];
  category_ids?: string[];
  related_post_ids?: string[];
}

export interface Page<T> {
  total: number;
  items: T[];
}

export interface PostFilter {
  status?: 'draft' | 'published';
  tag?: string;
  category?: string;
  author?: string;
  featured?: boolean;
  page: number;
  pageSize: number;
}

/** Related posts a public read shows at most (the editor's first, then posts sharing tags or categories). */
export const RELATED_LIMIT = 3;

/** The longest slug: the API accepts none longer (api/schemas/content.ts), and a generated one stays within it. */
export const SLUG_MAX = 120;

/** URL slug of a name: lower-case ASCII words joined by hyphens ('' when nothing is left). */
export function slugOf(name: string): string {
  return cutSlug(slugify(name, { lower: true, strict: true, trim: true }), SLUG_MAX);
}

/** The slug's first `max` characters, without a hyphen left at the end. */
const cutSlug = (slug: string, max: number) => slug.slice(0, max).replace(/-+$/, '');

/** The n-th slug to try for `base`: base itself, then base-2, base-3, ... with base shortened to keep within SLUG_MAX. */
function numberedSlug(base: string, n: number): string {
  if (n === 1) return cutSlug(base, SLUG_MAX);
  const suffix = `-${n}`;
  return `${cutSlug(base, SLUG_MAX - suffix.length)}${suffix}`;
}

/**
 * Inserts with a generated slug are tried again when a concurrent one took the slug first. Each
 * lost attempt means another insert got its slug, so N at once need at most N attempts.
 */
const SLUG_ATTEMPTS = 50;
/** Slugs freeSlug looks up at once. */
const SLUG_BATCH = 20;

const isUuid = (v: string) => UUID.test(v);

/**
 * Blog content of one client (every query scoped by the client id); the public side first finds
 * the client from a site's domain. Writes of a post and its links (tags, categories, related posts,
 * an author created by name) happen in one transaction.
 */
/** Rolls verifySite's transaction back when the site to verify no longer exists. */
class SiteGone extends Error {}

export class ContentRepository {
  constructor(private readonly db: Db) {}

  // ---- sites ------------------------------------------------------------------------------------

  /**
   * A site waiting for its DNS proof. Any client may register any domain, once: registering grants
   * nothing (a squatter cannot lock the owner out), and a domain another client has verified can
   * pass to whoever controls its DNS later (verifySite).
   */
  async createSite(clientId: string, domain: string): Promise<SiteRow> {
    try {
      const token = randomBytes(16).toString('hex');
      const [row] = (await this.db('content_sites')
        .insert({ id: randomUUID(), client_id: clientId, domain, verification_token: token })
        .returning('*')) as SiteRow[];
      if (!row) throw new Error('site insert returned nothing');
      return row;
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict(`the domain ${domain} is already registered for this client`);
      throw err;
    }
  }

  async getSite(clientId: string, id: string): Promise<SiteRow | undefined> {
    if (!isUuid(id)) return undefined;
    return await ContentSiteModel.forClient(this.db, clientId).where({ id }).first();
  }

  /** The other client's verified site of the domain, if any (the one that answers X-Content-Domain). */
  async verifiedElsewhere(clientId: string, domain: string): Promise<SiteRow | undefined> {
    const site = await this.verifiedSite(domain);
    return site && site.client_id !== clientId ? site : undefined;
  }

  /**
   * The verified site of a domain, whoever's it is: at most one (content_sites_verified_domain_uniq).
   * tenancy: crosses tenants on purpose: the public side has no client yet and the verified domain
   * picks it; a client's own verification asks whether another client holds the domain.
   */
  private async verifiedSite(domain: string): Promise<SiteRow | undefined> {
    return (await this.db('content_sites').where({ domain }).whereNotNull('verified_at').first()) as
      SiteRow | undefined;
  }

  /**
   * Marks the site verified (its DNS proof was found; the caller checked that the site verified
   * before it, `previous`, no longer has its record published). That site, if still verified, is
   * verified no more: the domain changed hands. A site verified already stays as it was. Another
   * verification of the domain in between (not `previous`) is a 409.
   */
  async verifySite(clientId: string, id: string, previous: SiteRow | undefined): Promise<SiteRow | undefined> {
    try {
      return await this.db.transaction(async (trx) => {
        if (previous)
          await trx('content_sites')
            .where({ id: previous.id })
            .whereNotNull('verified_at')
            .update({ verified_at: null });
        const [row] = (await ContentSiteModel.forClient(trx, clientId)
          .where({ id })
          .patch({ verified_at: trx.raw('coalesce(verified_at, now())') as unknown as Date })
          .returning('*')) as unknown as SiteRow[];
        // Deleted meanwhile: the previous site keeps the domain (the rollback undoes its unverifying).
        if (!row) throw new SiteGone();
        return row;
      });
    } catch (err) {
      if (err instanceof SiteGone) return undefined;
      if (isUniqueViolation(err)) {
        const site = await this.getSite(clientId, id);
        throw conflict(`the domain ${site?.domain ?? ''} is already verified by another client`);
      }
      throw err;
    }
  }

  async listSites(clientId: string): Promise<SiteRow[]> {
    return await ContentSiteModel.forClient(this.db, clientId).orderBy('domain');
  }

  async deleteSite(clientId: string, id: string): Promise<boolean> {
    return isUuid(id) && (await ContentSiteModel.forClient(this.db, clientId).where({ id }).delete()) > 0;
  }

  /** The client whose verified site answers to this domain. */
  async clientOfDomain(domain: string): Promise<string | undefined> {
    return (await this.verifiedSite(domain))?.client_id;
  }

  // ---- authors ----------------------------------------------------------------------------------

  async createAuthor(clientId: string, input: AuthorInput & { full_name: string }): Promise<AuthorRow> {
    return this.insertAuthor(this.db, clientId, input, input.slug === undefined);
  }

  /**
   * With `autoSlug`, a taken slug gets a -2, -3, ... suffix (also when another request takes the free
   * one first: the insert then does nothing and the next free one is tried); otherwise it is a 409.
   */
  private async insertAuthor(
    db: Knex,
    clientId: string,
    input: AuthorInput & { full_name: string },
    autoSlug: boolean,
  ): Promise<AuthorRow> {
    const base = input.slug ?? (slugOf(input.full_name) || 'author');
    if (autoSlug) {
      for (let attempt = 0; attempt < SLUG_ATTEMPTS; attempt += 1) {
        const slug = await this.freeSlug(db, ContentAuthorModel, clientId, base);
        const [row] = (await db('content_authors')
          .insert({ ...input, id: randomUUID(), client_id: clientId, slug })
          .onConflict(['client_id', 'slug'])
          .ignore()
          .returning('*')) as AuthorRow[];
        if (row) return row;
      }
      throw new Error(`author ${JSON.stringify(input.full_name)}: no free slug after ${SLUG_ATTEMPTS} attempts`);
    }
    return conflictAs409(`an author with slug '${base}' already exists`, async () => {
      const [row] = (await db('content_authors')
        .insert({ ...input, id: randomUUID(), client_id: clientId, slug: base })
        .returning('*')) as AuthorRow[];
      if (!row) throw new Error('author insert returned nothing');
      return row;
    });
  }

  /** The first of base, base-2, base-3, ... (numberedSlug: within SLUG_MAX) that no row of the client's in `table` has. */
  private async freeSlug(
    db: Knex,
    model: typeof ContentAuthorModel | typeof ContentTagModel,
    clientId: string,
    base: string,
  ): Promise<string> {
    for (let first = 1; ; first += SLUG_BATCH) {
      const candidates = Array.from({ length: SLUG_BATCH }, (_, i) => numberedSlug(base, first + i));
      // Both models have a slug column; the cast only picks one of the two forClient signatures.
      const rows = await (model as typeof ContentTagModel)
        .forClient(db, clientId)
        .whereIn('slug', candidates)
        .select('slug');
      const taken = new Set(rows.map((r) => r.slug));
      const free = candidates.find((slug) => !taken.has(slug));
      if (free !== undefined) return free;
    }
  }

  async listAuthors(
    clientId: string,
    opts: { activeOnly: boolean; page: number; pageSize: number },
  ): Promise<Page<AuthorRow>> {
    const base = ContentAuthorModel.forClient(this.db, clientId);
    if (opts.activeOnly) void base.where({ is_active: true });
    return paged<AuthorRow>(base.orderBy([{ column: 'full_name' }, { column: 'id' }]), opts);
  }

  async findAuthor(clientId: string, id: string): Promise<AuthorRow | undefined> {
    if (!isUuid(id)) return undefined;
    return await ContentAuthorModel.forClient(this.db, clientId).where({ id }).first();
  }

  async updateAuthor(clientId: string, id: string, input: AuthorInput): Promise<AuthorRow | undefined> {
    if (!isUuid(id)) return undefined;
    return conflictAs409(`an author with slug '${input.slug ?? ''}' already exists`, async () => {
      const [row] = (await ContentAuthorModel.forClient(this.db, clientId)
        .where({ id })
        .update({ ...input, updated_at: this.db.fn.now() })
        .returning('*')) as AuthorRow[];
      return row;
    });
  }

  /** Deletes the author; their posts keep going without one. */
  async deleteAuthor(clientId: string, id: string): Promise<boolean> {
    return isUuid(id) && (await ContentAuthorModel.forClient(this.db, clientId).where({ id }).delete()) > 0;
  }

  // ---- categories and tags ----------------------------------------------------------------------

  async createCategory(clientId: string, input: CategoryInput & { name: string }): Promise<CategoryRow> {
    const slug = input.slug ?? slugOf(input.name);
    if (!slug) throw invalid('slug: the name gives no slug; send one');
    return conflictAs409(`a category with slug '${slug}' already exists`, async () => {
      const [row] = (await this.db('content_categories')
        .insert({ ...input, id: randomUUID(), client_id: clientId, slug })
        .returning('*')) as CategoryRow[];
      if (!row) throw new Error('category insert returned nothing');
      return row;
    });
  }

  async listCategories(clientId: string): Promise<CategoryRow[]> {
    return await ContentCategoryModel.forClient(this.db, clientId).orderBy('name');
  }

  async findCategory(clientId: string, id: string): Promise<CategoryRow | undefined> {
    if (!isUuid(id)) return undefined;
    return await ContentCategoryModel.forClient(this.db, clientId).where({ id }).first();
  }

  async updateCategory(clientId: string, id: string, input: CategoryInput): Promise<CategoryRow | undefined> {
    if (!isUuid(id)) return undefined;
    return conflictAs409(`a category with slug '${input.slug ?? ''}' already exists`, async () => {
      const [row] = (await ContentCategoryModel.forClient(this.db, clientId)
        .where({ id })
        .update({ ...input, updated_at: this.db.fn.now() })
        .returning('*')) as CategoryRow[];
      return row;
    });
  }

  async deleteCategory(clientId: string, id: string): Promise<boolean> {
    return isUuid(id) && (await ContentCategoryModel.forClient(this.db, clientId).where({ id }).delete()) > 0;
  }

  /**
   * A new tag: 409 when a tag of this name (any case) or of the given slug exists; a slug made from
   * the name is a free one (the next one when another request takes it first).
   */
  async createTag(clientId: string, name: string, slug?: string): Promise<TagRow> {
    const insert = async (s: string) =>
      conflictAs409(`a tag named '${name}' or with slug '${s}' already exists`, async () => {
        const [row] = (await this.db('content_tags')
          .insert({ id: randomUUID(), client_id: clientId, name, slug: s })
          .returning('*')) as TagRow[];
        if (!row) throw new Error('tag insert returned nothing');
        return row;
      });
    if (slug !== undefined) return insert(slug);
    for (let attempt = 0; ; attempt += 1) {
      const s = await this.freeSlug(this.db, ContentTagModel, clientId, slugOf(name) || 'tag');
      // A clash on the slug alone is a race for a free slug: try the next one. A clash on the name is the 409.
      if (attempt === SLUG_ATTEMPTS - 1 || (await this.tagIdByName(this.db, clientId, name))) return insert(s);
      const [row] = (await this.db('content_tags')
        .insert({ id: randomUUID(), client_id: clientId, name, slug: s })
        .onConflict(['client_id', 'slug'])
        .ignore()
        .returning('*')) as TagRow[];
      if (row) return row;
    }
  }

  /** Every tag with the number of posts carrying it. */
  async listTags(clientId: string): Promise<(TagRow & { post_count: number })[]> {
    const rows = await ContentTagModel.query(this.db)
      .alias('t')
      .modify('forClient', clientId)
      .select(
        't.*',
        this.db.raw('(SELECT count(*) FROM content_post_tags pt WHERE pt.tag_id = t.id)::int AS post_count'),
      )
      .orderBy('t.name');
    return rows as unknown as (TagRow & { post_count: number })[];
  }

  async findTag(clientId: string, id: string): Promise<TagRow | undefined> {
    if (!isUuid(id)) return undefined;
    return await ContentTagModel.forClient(this.db, clientId).where({ id }).first();
  }

  async updateTag(clientId: string, id: string, input: { name?: string; slug?: string }): Promise<TagRow | undefined> {
    if (!isUuid(id)) return undefined;
    // Nothing to change: the tag as it is (knex refuses an empty update).
    if (input.name === undefined && input.slug === undefined) return this.findTag(clientId, id);
    const taken = [
      input.name !== undefined && `named '${input.name}'`,
      input.slug !== undefined && `with slug '${input.slug}'`,
    ]
      .filter(Boolean)
      .join(' or ');
    return conflictAs409(`a tag ${taken} already exists`, async () => {
      const [row] = (await ContentTagModel.forClient(this.db, clientId)
        .where({ id })
        .update(input)
        .returning('*')) as TagRow[];
      return row;
    });
  }

  async deleteTag(clientId: string, id: string): Promise<boolean> {
    return isUuid(id) && (await ContentTagModel.forClient(this.db, clientId).where({ id }).delete()) > 0;
  }

  // ---- posts ------------------------------------------------------------------------------------

  /** A new draft. 409 when the slug is taken; 400 when an id it refers to is not this client's. */
  async createPost(
    clientId: string,
    input: PostInput & { slug: string; title: string; document: NonNullable<PostInput['document']> },
  ): Promise<PostState> {
    const id = randomUUID();
    await this.db.transaction(async (trx) => {
      const authorId = await this.resolveAuthor(trx, clientId, input);
      await conflictAs409(`a post with slug '${input.slug}' already exists`, () =>
        trx('content_posts').insert({
          id,
          client_id: clientId,
          status: 'draft',
          ...postColumns(input),
          author_id: authorId ?? null,
        }),
      );
      await this.writeLinks(trx, clientId, id, input);
    });
    const post = await this.findPost(clientId, id);
    if (!post) throw new Error('post vanished after insert');
    return post;
  }

  async updatePost(clientId: string, id: string, input: PostInput): Promise<PostState | undefined> {
    if (!isUuid(id)) return undefined;
    const found = await this.db.transaction(async (trx) => {
      const current = await ContentPostModel.forClient(trx, clientId).where({ id }).select('id').first().forUpdate();
      if (!current) return false;
      const authorId = await this.resolveAuthor(trx, clientId, input);
      const columns: Record<string, unknown> = { ...postColumns(input), updated_at: trx.fn.now() };
      if (authorId !== undefined) columns.author_id = authorId;
      await conflictAs409(`a post with slug '${input.slug ?? ''}' already exists`, async () =>
        ContentPostModel.forClient(trx, clientId).where({ id }).update(columns),
      );
      await this.writeLinks(trx, clientId, id, input, true);
      return true;
    });
    return found ? this.findPost(clientId, id) : undefined;
  }

  /** publish: status published, published_at now; unpublish: back to draft, published_at null. */
  async setPublished(clientId: string, id: string, published: boolean): Promise<PostState | undefined> {
    if (!isUuid(id)) return undefined;
    const now = this.db.fn.now() as unknown as Date;
    const n = await ContentPostModel.forClient(this.db, clientId)
      .where({ id })
      .patch(
        published
          ? { status: 'published', published_at: now, updated_at: now }
          : { status: 'draft', published_at: null, updated_at: now },
      );
    return n > 0 ? this.findPost(clientId, id) : undefined;
  }

  async deletePost(clientId: string, id: string): Promise<boolean> {
    return isUuid(id) && (await ContentPostModel.forClient(this.db, clientId).where({ id }).delete()) > 0;
  }

  async findPost(clientId: string, id: string): Promise<PostState | undefined> {
    if (!isUuid(id)) return undefined;
    const row = await ContentPostModel.forClient(this.db, clientId).where({ id }).first();
    if (!row) return undefined;
    const [post] = await this.withLinks(clientId, [row]);
    return post && { ...post, related: await this.chosenRelated(clientId, row.id, false) };
  }

  /**
   * A published post by slug for the public: its view count goes up by one in the same statement
   * that reads it (once per request). Related posts: the editor's (published ones), then published
   * posts sharing the most tags and categories, RELATED_LIMIT in all.
   */
  async readPublished(clientId: string, slug: string): Promise<PostState | undefined> {
    const [row] = (await ContentPostModel.forClient(this.db, clientId)
      .where({ slug, status: 'published' })
      .increment('view_count', 1)
      .returning('*')) as unknown as PostRow[];
    if (!row) return undefined;
    const [post] = await this.withLinks(clientId, [row]);
    if (!post) return undefined;
    const chosen = (await this.chosenRelated(clientId, row.id, true)).slice(0, RELATED_LIMIT);
    const more =
      chosen.length >= RELATED_LIMIT
        ? []
        : await this.similar(clientId, row.id, [row.id, ...chosen.map((p) => p.id)], RELATED_LIMIT - chosen.length);
    return { ...post, related: [...chosen, ...more] };
  }

  async listPosts(clientId: string, filter: PostFilter): Promise<Page<PostState>> {
    const base = ContentPostModel.query(this.db).alias('p').modify('forClient', clientId);
    if (filter.status) void base.where('p.status', filter.status);
    if (filter.featured !== undefined) void base.where('p.is_featured', filter.featured);
    // The tag, category and author are the post's own (links only join a client's rows to its posts).
    // The post is linked (through `links`) to a row of `table` with this slug.
    const linkedTo = (links: string, table: string, column: string, slug: string) =>
      this.db(`${links} as l`)
        .join(`${table} as x`, 'x.id', `l.${column}`)
        .whereRaw('l.post_id = p.id')
        .where('x.slug', slug)
        .select(1);
    if (filter.tag) void base.whereExists(linkedTo('content_post_tags', 'content_tags', 'tag_id', filter.tag));
    if (filter.category)
      void base.whereExists(linkedTo('content_post_categories', 'content_categories', 'category_id', filter.category));
    if (filter.author)
      void base.whereExists(
        this.db('content_authors as a').whereRaw('a.id = p.author_id').where('a.slug', filter.author).select(1),
      );
    const order =
      filter.status === 'published'
        ? [
            { column: 'p.published_at', order: 'desc' as const },
            { column: 'p.id', order: 'desc' as const },
          ]
        : [
            { column: 'p.created_at', order: 'desc' as const },
            { column: 'p.id', order: 'desc' as const },
          ];
    const page = await paged<PostRow>(base.select('p.*').orderBy(order), filter);
    return {
      total: page.total,
      items: (await this.withLinks(clientId, page.items)).map((p) => ({ ...p, related: [] })),
    };
  }

  // ---- helpers ----------------------------------------------------------------------------------

  /** author_id (must be the client's) wins over author_name (found by name, else created); undefined: neither given. */
  private async resolveAuthor(
    trx: Knex.Transaction,
    clientId: string,
    input: PostInput,
  ): Promise<string | null | undefined> {
    if (input.author_id !== undefined) {
      if (input.author_id === null) return null;
      const found =
        isUuid(input.author_id) &&
        (await ContentAuthorModel.forClient(trx, clientId).findById(input.author_id).select('id'));
      if (!found) throw invalid(`author_id: no author ${input.author_id}`);
      return input.author_id;
    }
    if (input.author_name === undefined) return undefined;
    const name = input.author_name.trim();
    // Posts written at once by the same new author would each create them: one at a time per client and name's slug.
    await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [
      `content-author:${clientId}:${slugOf(name) || name.toLowerCase()}`,
    ]);
    const existing = await ContentAuthorModel.forClient(trx, clientId)
      .whereRaw('lower(full_name) = lower(?)', [name])
      .orderBy('created_at')
      .select('id')
      .first();
    if (existing) return existing.id;
    return (await this.insertAuthor(trx, clientId, { full_name: name }, true)).id;
  }

  /** Replaces the post's tags, categories and related posts that the input names (all of them on create). */
  private async writeLinks(
    trx: Knex.Transaction,
    clientId: string,
    postId: string,
    input: PostInput,
    replace = false,
  ): Promise<void> {
    if (input.tags !== undefined || input.tag_ids !== undefined) {
      const ids = new Set<string>(await this.ownIds(trx, ContentTagModel, clientId, input.tag_ids ?? [], 'tag_ids'));
      for (const id of await this.tagsByName(trx, clientId, input.tags ?? [])) ids.add(id);
      await relink(trx, postId, 'tagModels', [...ids], replace);
    }
    if (input.category_ids !== undefined) {
      await relink(
        trx,
        postId,
        'categories',
        await this.ownIds(trx, ContentCategoryModel, clientId, input.category_ids, 'category_ids'),
        replace,
      );
    }
    if (input.related_post_ids !== undefined) {
      if (input.related_post_ids.includes(postId))
        throw invalid('related_post_ids: a post cannot be related to itself');
      const ids = await this.ownIds(trx, ContentPostModel, clientId, input.related_post_ids, 'related_post_ids');
      await relink(
        trx,
        postId,
        'relatedPosts',
        ids.map((id, position) => ({ id, position })),
        replace,
      );
    }
  }

  /** The ids (deduplicated, in order), each checked to be the client's: otherwise a 400 naming the field. */
  private async ownIds(
    trx: Knex.Transaction,
    model: typeof ContentTagModel | typeof ContentCategoryModel | typeof ContentPostModel,
    clientId: string,
    ids: string[],
    field: string,
  ): Promise<string[]> {
    const unique = [...new Set(ids)];
    if (unique.length === 0) return [];
    const bad = unique.find((id) => !isUuid(id));
    if (bad) throw invalid(`${field}: ${bad} is not an id`);
    // Each model has a uuid id; the cast only picks one of the forClient signatures.
    const found = new Set(
      (await (model as typeof ContentTagModel).forClient(trx, clientId).whereIn('id', unique).select('id')).map(
        (r) => r.id,
      ),
    );
    const missing = unique.filter((id) => !found.has(id));
    if (missing.length > 0) throw invalid(`${field}: not found: ${missing.join(', ')}`);
    return unique;
  }

  /**
   * The ids of the tags of these names, each created when missing. A tag is its name, trimmed and
   * in any case ('News' and 'news' are one tag; 'C#' and 'C++', both slug 'c', are two): found by
   * lower(name) as the unique index content_tags_client_name_uniq has it. A new tag is named as
   * given and gets a free slug (slugOf its name, else 'tag'; -2, -3, ... when taken).
   */
  private async tagsByName(trx: Knex.Transaction, clientId: string, names: string[]): Promise<string[]> {
    const wanted = [...new Set(names.map((n) => n.trim()))];
    if (wanted.some((n) => n === '')) throw invalid('tags: a tag name is empty');
    const ids: string[] = [];
    const missing: string[] = [];
    for (const name of wanted) {
      const id = await this.tagIdByName(trx, clientId, name);
      if (id) ids.push(id);
      else missing.push(name);
    }
    if (missing.length === 0) return ids;
    // Posts written at once with the same new tag would each create it: the client's posts create
    // tags one at a time. One lock per client, not per name: two posts with several new tags whose
    // slugs clash would otherwise each wait for the other's uncommitted slug (a deadlock).
    await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [`content-tags:${clientId}`]);
    for (const name of missing) ids.push(await this.createTagNamed(trx, clientId, name));
    return ids;
  }

  private async tagIdByName(db: Knex, clientId: string, name: string): Promise<string | undefined> {
    const row = await ContentTagModel.forClient(db, clientId)
      .whereRaw('lower(name) = lower(?)', [name])
      .select('id')
      .first();
    return row?.id;
  }

  /**
   * The tag of this name (the caller holds its lock), created with a free slug. Another post may
   * take that slug for a tag of another name meanwhile, or a tag of this name be created without
   * the lock (createTag, updateTag): the insert then does nothing, and it is tried again.
   */
  private async createTagNamed(trx: Knex.Transaction, clientId: string, name: string): Promise<string> {
    for (let attempt = 0; attempt < SLUG_ATTEMPTS; attempt += 1) {
      const existing = await this.tagIdByName(trx, clientId, name);
      if (existing) return existing;
      const slug = await this.freeSlug(trx, ContentTagModel, clientId, slugOf(name) || 'tag');
      const [row] = (await trx('content_tags')
        .insert({ id: randomUUID(), client_id: clientId, name, slug })
        .onConflict()
        .ignore()
        .returning('id')) as { id: string }[];
      if (row) return row.id;
    }
    throw new Error(`tag ${JSON.stringify(name)}: no free slug after ${SLUG_ATTEMPTS} attempts`);
  }

  /** The posts with their author, tag names and categories (by name), fetched through the model's relations. */
  private async withLinks(clientId: string, rows: PostRow[]): Promise<Omit<PostState, 'related'>[]> {
    if (rows.length === 0) return [];
    const posts = await ContentPostModel.fetchGraph(
      rows as ContentPostModel[],
      '[author(own), tagModels(own, byName), categories(own, byName)]',
      { transaction: this.db },
    ).modifiers({
      own: (q: QueryBuilder<Model>) => q.modify('forClient', clientId),
      byName: (q: QueryBuilder<Model>) => q.orderBy('name'),
    });
    return posts.map(({ author, tagModels, categories, ...row }) => ({
      ...row,
      author: author ?? null,
      tags: (tagModels ?? []).map((t) => t.name),
      categories: categories ?? [],
    }));
  }

  private async chosenRelated(clientId: string, postId: string, publishedOnly: boolean): Promise<PostRow[]> {
    const q = ContentPostModel.query(this.db)
      .alias('p')
      .modify('forClient', clientId)
      .join('content_post_related as r', 'r.related_post_id', 'p.id')
      .where('r.post_id', postId)
      .orderBy('r.position')
      .select('p.*');
    if (publishedOnly) void q.where('p.status', 'published');
    return (await q) as unknown as PostRow[];
  }

  /** Published posts sharing tags or categories with the post, most shared first, then newest. */
  private async similar(clientId: string, postId: string, exclude: string[], limit: number): Promise<PostRow[]> {
    return (await ContentPostModel.query(this.db)
      .alias('p')
      .modify('forClient', clientId)
      .select('p.*')
      .select(
        this.db.raw(
          `((SELECT count(*) FROM content_post_tags a JOIN content_post_tags b ON a.tag_id = b.tag_id WHERE a.post_id = p.id AND b.post_id = ?)
          + (SELECT count(*) FROM content_post_categories a JOIN content_post_categories b ON a.category_id = b.category_id WHERE a.post_id = p.id AND b.post_id = ?)) AS shared`,
          [postId, postId],
        ),
      )
      .where('p.status', 'published')
      .whereNotIn('p.id', exclude)
      .orderBy([
        { column: 'shared', order: 'desc' },
        { column: 'p.published_at', order: 'desc' },
      ])
      .limit(limit)
      .then((rows) =>
        (rows as unknown as (PostRow & { shared: string })[]).filter((r) => Number(r.shared) > 0),
      )) as PostRow[];
  }
}

/**
 * Links the post (already checked to be the client's, as are `targets`) to `targets` through the
 * relation's join table, first dropping its links there when `replace`. The join tables have no
 * client_id: a link is the client's when its post is.
 */
async function relink(
  trx: Knex.Transaction,
  postId: string,
  relation: 'tagModels' | 'categories' | 'relatedPosts',
  targets: (string | { id: string; position: number })[],
  replace: boolean,
): Promise<void> {
  if (replace) await ContentPostModel.relatedQuery(relation, trx).for(postId).unrelate();
  if (targets.length > 0) await ContentPostModel.relatedQuery(relation, trx).for(postId).relate(targets);
}

function postColumns(input: PostInput): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const keys = [
    'slug',
    'title',
    'excerpt',
    'tldr_summary',
    'cover_image_url',
    'featured_image_alt',
    'is_featured',
    'seo_title',
    'seo_description',
    'og_image_url',
  ] as const;
  for (const k of keys) if (input[k] !== undefined) out[k] = input[k];
  if (input.document) {
    // jsonb from a string: knex would send a JS object as a Postgres record literal otherwise.
    out.body = JSON.stringify(input.document.body);
    out.body_html = input.document.html;
    out.reading_time = input.document.readingTime;
  }
  return out;
}

async function conflictAs409<T>(detail: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(detail);
    throw err;
  }
}

/** One page of an ordered query (Objection's page: the rows and the count of all, in two queries). */
async function paged<T>(query: QueryBuilder<Model>, opts: { page: number; pageSize: number }): Promise<Page<T>> {
  const { total, results } = await query.page(opts.page - 1, opts.pageSize);
  return { total, items: results as unknown as T[] };
}
