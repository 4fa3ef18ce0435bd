import { randomUUID } from 'node:crypto';
import { domainToASCII } from 'node:url';
import { ContentRepository } from '../../db/repositories/content';
import { startDnsStandIn, type DnsStandIn } from '../stand-ins/dns';
import { bearer, startTestApi, type TestApi } from '../support/api';
import { caller, type Caller } from '../support/jobs';

// Blog content (spec §2.11, §4.11) through the real API on the real Postgres: a client registers its
// site, writes posts in the dashboard, publishes them, and the site reads them without a credential.

let api: TestApi;
// The authoritative DNS of the clients' domains: a site is verified by a TXT record published here.
let dns: DnsStandIn;
beforeAll(async () => {
  dns = await startDnsStandIn({});
  api = await startTestApi({ RATE_LIMIT_ENABLED: 'false', DNS_SERVERS: dns.server });
});
afterAll(async () => {
  await api?.close();
  await dns?.close();
});

type Json = Record<string, unknown>;
type Client = Caller & { clientId: string; patch(path: string, body: unknown): Promise<Response> };
type Post = Json & {
  id: string;
  slug: string;
  status: string;
  tags: string[];
  author: Json | null;
  related_posts: Json[];
  view_count: number;
  body_html: string;
};

async function newClient(): Promise<Client> {
  const creds = await api.newClient();
  const c = caller(api, bearer(creds));
  const patch = (path: string, body: unknown) =>
    fetch(`${api.url}${path}`, {
      method: 'PATCH',
      headers: { authorization: c.auth, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  return { ...c, clientId: creds.client_id, patch };
}

/** A site of its own for each test: domains are unique across clients. */
const newDomain = () => `blog-${randomUUID().slice(0, 8)}.example.com`;

type Site = Json & {
  id: string;
  domain: string;
  verified: boolean;
  verification: { type: string; name: string; value: string };
};

/** Registers the domain, publishes its TXT record and verifies it: the site then answers X-Content-Domain. */
async function registerSite(c: Client, domain: string): Promise<Site> {
  const created = await c.json<Site>(await c.post('/api/v1/dashboard/content/sites', { domain }));
  dns.set(domain, { txt: ['v=spf1 -all', created.verification.value] });
  const verified = await c.post(`/api/v1/dashboard/content/sites/${created.id}/verify`, {});
  if (verified.status !== 200) throw new Error(`verify answered ${verified.status}: ${await verified.text()}`);
  return c.json<Site>(verified);
}

/** The public side: no credential, only the site's domain. */
const site = (domain: string | undefined) => (path: string) =>
  fetch(`${api.url}${path}`, { headers: domain === undefined ? {} : { 'x-content-domain': domain } });

const paragraph = (words: number, word = 'lead') => ({
  type: 'paragraph',
  content: [{ type: 'text', text: Array.from({ length: words }, () => word).join(' ') }],
});
const richBody = {
  type: 'doc',
  content: [
    { type: 'heading', attrs: { level: 2 }, content: [{ type: 'text', text: 'Cold leads' }] },
    {
      type: 'paragraph',
      content: [
        { type: 'text', text: 'See ' },
        { type: 'text', text: 'our guide', marks: [{ type: 'link', attrs: { href: 'https://example.com/guide' } }] },
        { type: 'text', text: ' <now>.', marks: [{ type: 'bold' }] },
      ],
    },
    paragraph(450),
  ],
};

async function createPost(c: Client, body: Json): Promise<Post> {
  const res = await c.post('/api/v1/dashboard/content/posts', body);
  const json = await c.json<Post>(res);
  if (res.status !== 201) throw new Error(`create post answered ${res.status}: ${JSON.stringify(json)}`);
  return json;
}
const publish = async (c: Client, id: string) =>
  c.json<Post>(await c.post(`/api/v1/dashboard/content/posts/${id}/publish`, {}));

describe('content', () => {
  test('the whole flow: site, post with an author by name and new tags, 409 on its slug, publish, public read', async () => {
    const c = await newClient();
    const domain = newDomain();
    const siteRes = await c.post('/api/v1/dashboard/content/sites', { domain: domain.toUpperCase() });
    expect(siteRes.status).toBe(201);
    const created = await c.json<Site>(siteRes);
    expect(created).toMatchObject({
      domain,
      id: expect.any(String),
      verified: false,
      verified_at: null,
      verification: {
        type: 'dns_txt',
        name: domain,
        value: expect.stringMatching(/^leadjobs-site-verification=[0-9a-f]{32}$/),
      },
    });
    dns.set(domain, { txt: [created.verification.value] });
    expect(await c.json(await c.post(`/api/v1/dashboard/content/sites/${created.id}/verify`, {}))).toMatchObject({
      id: created.id,
      verified: true,
      verified_at: expect.any(String),
    });

    const category = await c.json<Json & { id: string }>(
      await c.post('/api/v1/dashboard/content/categories', { name: 'Sales Ops' }),
    );
    expect(category).toMatchObject({ name: 'Sales Ops', slug: 'sales-ops' });

    const post = await createPost(c, {
      slug: 'cold-leads',
      title: 'Why leads go cold',
      body: richBody,
      excerpt: 'Speed matters.',
      cover_image_url: 'https://cdn.example.com/cover.png',
      featured_image_alt: 'A thermometer',
      tldr_summary: 'Answer within an hour.',
      author_name: 'Ada Lovelace',
      tags: ['Lead Gen', 'Sales'],
      category_ids: [category.id],
      is_featured: true,
      seo_title: 'Cold leads | Blog',
      seo_description: 'How to keep leads warm',
    });
    // Every §2.11 field, the new post a draft.
    expect(post).toMatchObject({
      slug: 'cold-leads',
      title: 'Why leads go cold',
      body: richBody,
      excerpt: 'Speed matters.',
      tldr_summary: 'Answer within an hour.',
      cover_image_url: 'https://cdn.example.com/cover.png',
      featured_image_alt: 'A thermometer',
      status: 'draft',
      published_at: null,
      author: { full_name: 'Ada Lovelace', slug: 'ada-lovelace', avatar_url: null, bio: null },
      tags: ['Lead Gen', 'Sales'],
      categories: [{ id: category.id, name: 'Sales Ops', slug: 'sales-ops' }],
      related_posts: [],
      reading_time: 3, // 455 words at 200 a minute
      view_count: 0,
      is_featured: true,
      seo_title: 'Cold leads | Blog',
      seo_description: 'How to keep leads warm',
      og_image_url: null,
    });
    for (const field of ['id', 'created_at', 'updated_at']) expect(typeof post[field]).toBe('string');

    // The author and the tags now exist for the client.
    const authors = await c.json<{ authors: Json[] }>(await c.get('/api/v1/dashboard/content/authors'));
    expect(authors.authors.map((a) => a.full_name)).toEqual(['Ada Lovelace']);
    const tags = await c.json<{ tags: Json[] }>(await c.get('/api/v1/dashboard/content/tags'));
    expect(tags.tags.map((t) => [t.name, t.slug, t.post_count])).toEqual([
      ['Lead Gen', 'lead-gen', 1],
      ['Sales', 'sales', 1],
    ]);

    // Same slug again: 409; a second post by the same author name reuses the author.
    const dup = await c.post('/api/v1/dashboard/content/posts', { slug: 'cold-leads', title: 'Again', body: richBody });
    expect(dup.status).toBe(409);
    expect(((await dup.json()) as Json).detail).toMatch(/cold-leads/);
    // Posts by a new author name at the same time: one author.
    const parallel = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        createPost(c, {
          slug: `parallel-${i}`,
          title: `P${i}`,
          body: { type: 'doc', content: [paragraph(3)] },
          author_name: 'Grace Hopper',
          tags: ['new-tag'],
        }),
      ),
    );
    expect(new Set(parallel.map((p) => p.author?.id)).size).toBe(1);
    for (const p of parallel) await c.del(`/api/v1/dashboard/content/posts/${p.id}`);
    const second = await createPost(c, {
      slug: 'warm-leads',
      title: 'Warm leads',
      body: { type: 'doc', content: [paragraph(10)] },
      author_name: 'ada lovelace',
      tags: ['sales'],
    });
    expect(second.author?.id).toBe(post.author?.id);
    expect(second.tags).toEqual(['Sales']);

    // A draft is not public.
    const pub = site(domain);
    expect((await pub('/api/v1/content/posts/cold-leads')).status).toBe(404);
    expect(await (await pub('/api/v1/content/posts')).json()).toMatchObject({ posts: [], total: 0 });

    const published = await publish(c, post.id);
    expect(published.status).toBe('published');
    expect(Date.now() - Date.parse(String(published.published_at))).toBeLessThan(60000);

    // Public read: sanitised HTML, the view counted once per request.
    const read1 = (await (await pub('/api/v1/content/posts/cold-leads')).json()) as Post;
    expect(read1).toMatchObject({
      id: post.id,
      status: 'published',
      view_count: 1,
      reading_time: 3,
      tags: ['Lead Gen', 'Sales'],
    });
    expect(read1.body_html).toContain('<h2>Cold leads</h2>');
    expect(read1.body_html).toContain('<strong> &lt;now&gt;.</strong>');
    expect(read1.body_html).toContain('href="https://example.com/guide"');
    const read2 = (await (await site(domain.toUpperCase())('/api/v1/content/posts/cold-leads')).json()) as Post;
    expect(read2.view_count).toBe(2);
    const { view_count } = (await api.deps.db('content_posts').where({ id: post.id }).first('view_count')) as {
      view_count: string;
    };
    expect(Number(view_count)).toBe(2);
    // Lists do not count views.
    const list = (await (await pub('/api/v1/content/posts')).json()) as {
      posts: Post[];
      total: number;
      page: number;
      page_size: number;
    };
    expect(list).toMatchObject({ total: 1, page: 1, page_size: 20 });
    expect(list.posts.map((p) => [p.slug, p.view_count])).toEqual([['cold-leads', 2]]);
    expect(list.posts[0]).not.toHaveProperty('body');

    // Unpublish: gone from the public side again.
    const draft = await c.json<Post>(await c.post(`/api/v1/dashboard/content/posts/${post.id}/unpublish`, {}));
    expect(draft).toMatchObject({ status: 'draft', published_at: null });
    expect((await pub('/api/v1/content/posts/cold-leads')).status).toBe(404);
  });

  test('POST posts: missing fields and invalid documents are 400 naming the problem; foreign ids are 400; no credential is 401', async () => {
    const c = await newClient();
    const cases: [Json, RegExp][] = [
      [{ title: 'x', body: richBody }, /slug: field required/],
      [{ slug: 'a', body: richBody }, /title: field required/],
      [{ slug: 'a', title: 'x' }, /body: field required/],
      [
        { slug: 'a', title: 'x', body: { type: 'doc', content: [{ type: 'video', attrs: { src: 'x' } }] } },
        /Unknown node type: video/,
      ],
      [
        {
          slug: 'a',
          title: 'x',
          body: {
            type: 'doc',
            content: [{ type: 'paragraph', content: [{ type: 'text', text: 'x', marks: [{ type: 'blink' }] }] }],
          },
        },
        /mark type blink/,
      ],
      [{ slug: 'a', title: 'x', body: { type: 'paragraph' } }, /type "doc"/],
      [
        {
          slug: 'a',
          title: 'x',
          body: {
            type: 'doc',
            content: [
              {
                type: 'paragraph',
                content: [
                  { type: 'text', text: 'x', marks: [{ type: 'link', attrs: { href: 'java\tscript:alert(1)' } }] },
                ],
              },
            ],
          },
        },
        /link href must be an http, https, mailto or relative URL/,
      ],
      [
        {
          slug: 'a',
          title: 'x',
          body: { type: 'doc', content: [{ type: 'image', attrs: { src: 'javascript:alert(2)' } }] },
        },
        /image src must be an http, https or relative URL/,
      ],
      [{ slug: 'Not A Slug', title: 'x', body: richBody }, /slug/],
      [{ slug: 'a', title: 'x', body: richBody, colour: 'red' }, /unknown field\(s\): colour/],
      [{ slug: 'a', title: 'x', body: richBody, author_id: randomUUID() }, /author_id: no author/],
      [{ slug: 'a', title: 'x', body: richBody, tag_ids: [randomUUID()] }, /tag_ids: not found/],
      [{ slug: 'a', title: 'x', body: richBody, related_post_ids: [randomUUID()] }, /related_post_ids: not found/],
      // 30,000 paragraphs (1.8 MB): checking and rendering them held the API's thread over a second.
      [
        {
          slug: 'a',
          title: 'x',
          body: {
            type: 'doc',
            content: Array.from({ length: 30_000 }, () => ({
              type: 'paragraph',
              content: [{ type: 'text', text: 'a' }],
            })),
          },
        },
        /body: invalid rich-text document: the document has more than 20000 nodes and marks/,
      ],
    ];
    for (const [body, detail] of cases) {
      const res = await c.post('/api/v1/dashboard/content/posts', body);
      expect([res.status, JSON.stringify(body).slice(0, 300)]).toEqual([400, JSON.stringify(body).slice(0, 300)]);
      expect(String(((await res.json()) as Json).detail)).toMatch(detail);
    }
    // Nothing half-written: the failed posts left no author, tag or post behind.
    expect((await c.json<{ total: number }>(await c.get('/api/v1/dashboard/content/posts'))).total).toBe(0);
    const noAuth = await fetch(`${api.url}/api/v1/dashboard/content/posts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ slug: 'a', title: 'x', body: richBody }),
    });
    expect(noAuth.status).toBe(401);
  });

  test("the JSON body a site may render itself is the checked document: attributes the editor's schema lacks are not kept", async () => {
    const c = await newClient();
    const link = { type: 'link', attrs: { href: 'https://example.com/guide', onclick: 'alert(1)' } };
    const sent = {
      type: 'doc',
      content: [
        { type: 'paragraph', content: [{ type: 'text', text: 'guide', marks: [link] }] },
        { type: 'image', attrs: { src: '/chart.png', onerror: 'alert(2)' } },
      ],
    };
    const post = await createPost(c, { slug: 'attrs', title: 'Attributes', body: sent });
    for (const stored of [post, await c.json<Post>(await c.get(`/api/v1/dashboard/content/posts/${post.id}`))]) {
      const body = JSON.stringify(stored.body);
      expect(body).toContain('"href":"https://example.com/guide"');
      expect(body).toContain('"src":"/chart.png"');
      expect(body).not.toMatch(/onclick|onerror/);
    }
  });

  test('POST posts: a field of the wrong type is a 400 naming the type it expected, not "field required"', async () => {
    const c = await newClient();
    const doc = { type: 'doc', content: [paragraph(3)] };
    const cases: [unknown, string][] = [
      [{ slug: 'a', title: 123, body: doc }, 'title: expected string, received number'],
      [{ slug: 'a', title: 'x', body: doc, tags: 'alpha' }, 'tags: expected array, received string'],
      [{ slug: 'a', title: 'x', body: doc, tags: ['alpha', 7] }, 'tags.1: expected string, received number'],
      [{ slug: 'a', title: 'x', body: doc, is_featured: 'yes' }, 'is_featured: expected boolean, received string'],
      [{ slug: 'a', title: 'x', body: 'text' }, 'body: expected object, received string'],
      [{ slug: 'a', title: null, body: doc }, 'title: expected string, received null'],
      [{ slug: 'a', body: [] }, 'title: field required; body: expected object, received array'],
      [[1], 'request body: expected object, received array'],
      [JSON.stringify('str'), 'request body: expected object, received string'],
    ];
    for (const [body, detail] of cases) {
      const res = await c.post('/api/v1/dashboard/content/posts', body);
      expect([res.status, await res.json(), JSON.stringify(body)]).toEqual([400, { detail }, JSON.stringify(body)]);
    }
    expect((await c.json<{ total: number }>(await c.get('/api/v1/dashboard/content/posts'))).total).toBe(0);
  });

  test('POST posts: a body that does not parse, or is not JSON or YAML, is a 400 with a string detail (spec §4.11 "400 invalid body")', async () => {
    const c = await newClient();
    const url = '/api/v1/dashboard/content/posts';
    const cases: [string, string, RegExp][] = [
      ['application/json', '{bad json', /^JSON decode error: /],
      ['text/yaml', 'slug: [unclosed\n', /^YAML decode error: /],
      ['application/json', `{"slug":"a","body":${'['.repeat(70)}${']'.repeat(70)}}`, /nests deeper than 64 levels/],
      ['text/plain', 'slug: a', /^unsupported content type 'text\/plain'/],
      ['application/json; charset=latin1', '{}', /^unsupported charset 'latin1'/],
      ['application/json', JSON.stringify({ slug: 'a', title: 'x\u0000y', body: richBody }), /^title: NUL characters/],
    ];
    for (const [type, body, detail] of cases) {
      const res = await c.post(url, body, type);
      const json = (await res.json()) as Json;
      expect([res.status, typeof json.detail, type, body.slice(0, 40)]).toEqual([
        400,
        'string',
        type,
        body.slice(0, 40),
      ]);
      expect(String(json.detail)).toMatch(detail);
    }
    // Valid YAML is still accepted, and nothing of the refused bodies was stored.
    expect(
      (
        await c.post(
          url,
          'slug: from-yaml\ntitle: Y\nbody: {type: doc, content: [{type: paragraph, content: [{type: text, text: hi}]}]}\n',
          'text/yaml',
        )
      ).status,
    ).toBe(201);
    expect((await c.json<{ total: number }>(await c.get('/api/v1/dashboard/content/posts'))).total).toBe(1);
    // Routes without that spec line keep the common answer: 422 in the validation shape.
    const category = await c.post('/api/v1/dashboard/content/categories', '{bad json');
    expect(category.status).toBe(422);
    expect(await category.json()).toMatchObject({ detail: [{ type: 'json_invalid', loc: ['body'] }] });
  });

  test('public authors: X-Content-Domain required (422), a domain of no site 422 (spec: 200, 422 only), active authors only', async () => {
    const c = await newClient();
    const domain = newDomain();
    await registerSite(c, domain);
    const ada = await c.json<Json & { id: string }>(
      await c.post('/api/v1/dashboard/content/authors', {
        full_name: 'Ada Lovelace',
        role: 'editor',
        country: 'GB',
        city: 'London',
        email: 'ada@example.com',
        bio: 'Analyst',
      }),
    );
    const bot = await c.json<Json & { id: string }>(
      await c.post('/api/v1/dashboard/content/authors', { full_name: 'Writer Bot', agent_type: 'llm', country: 'US' }),
    );
    const gone = await c.json<Json & { id: string }>(
      await c.post('/api/v1/dashboard/content/authors', { full_name: 'Old Hand' }),
    );
    expect((await c.patch(`/api/v1/dashboard/content/authors/${gone.id}`, { is_active: false })).status).toBe(200);

    const missing = await site(undefined)('/api/v1/content/authors');
    expect(missing.status).toBe(422);
    expect(JSON.stringify(await missing.json())).toContain('x-content-domain');
    // A domain no site has is the header's validation error, on every public route that reads it.
    const nobody = newDomain();
    for (const path of ['/api/v1/content/authors', '/api/v1/content/posts', '/api/v1/content/posts/some-post']) {
      const unknown = await site(nobody.toUpperCase())(path);
      expect([path, unknown.status]).toEqual([path, 422]);
      expect(await unknown.json()).toEqual({
        detail: [
          {
            type: 'site_not_found',
            loc: ['header', 'x-content-domain'],
            msg: `no verified site is registered for the domain '${nobody}'`,
          },
        ],
      });
    }

    const res = await site(domain)('/api/v1/content/authors?page_size=1');
    expect(res.status).toBe(200);
    const page1 = (await res.json()) as { authors: Json[]; total: number; page: number; page_size: number };
    expect(page1).toMatchObject({ total: 2, page: 1, page_size: 1 });
    expect(page1.authors).toEqual([
      {
        id: ada.id,
        full_name: 'Ada Lovelace',
        slug: 'ada-lovelace',
        avatar_url: null,
        bio: 'Analyst',
        email: 'ada@example.com',
        role: 'editor',
        agent_type: null,
        country: 'GB',
        city: 'London',
      },
    ]);
    const page2 = (await (await site(domain)('/api/v1/content/authors?page=2&page_size=1')).json()) as {
      authors: Json[];
    };
    expect(page2.authors).toEqual([
      expect.objectContaining({ id: bot.id, agent_type: 'llm', role: 'contributor', city: null }),
    ]);

    // The verified site belongs to one client: another may register the domain (to take it over once
    // it controls the DNS) but is not served, and sees nothing of this one's.
    const other = await newClient();
    expect(await other.json(await other.post('/api/v1/dashboard/content/sites', { domain }))).toMatchObject({
      domain,
      verified: false,
    });
    expect((await other.get(`/api/v1/dashboard/content/authors/${ada.id}`)).status).toBe(404);
    expect((await other.patch(`/api/v1/dashboard/content/authors/${ada.id}`, { bio: 'mine' })).status).toBe(404);
    expect((await other.del(`/api/v1/dashboard/content/authors/${ada.id}`)).status).toBe(404);
  });

  test("related posts: the editor's choice first, then published posts sharing tags or categories; drafts never", async () => {
    const c = await newClient();
    const domain = newDomain();
    await registerSite(c, domain);
    const body = { type: 'doc', content: [paragraph(20)] };
    const chosen = await createPost(c, { slug: 'chosen', title: 'Chosen', body, tags: ['unrelated'] });
    const sharesTwo = await createPost(c, { slug: 'shares-two', title: 'Shares two', body, tags: ['crm', 'email'] });
    const sharesOne = await createPost(c, { slug: 'shares-one', title: 'Shares one', body, tags: ['crm'] });
    const draft = await createPost(c, { slug: 'draft-shares', title: 'Draft', body, tags: ['crm', 'email'] });
    await createPost(c, { slug: 'nothing-shared', title: 'Nothing', body, tags: ['other'] });
    const main = await createPost(c, {
      slug: 'main',
      title: 'Main',
      body,
      tags: ['crm', 'email'],
      related_post_ids: [chosen.id, draft.id],
    });
    expect(main.related_posts.map((p) => p.slug)).toEqual(['chosen', 'draft-shares']);
    for (const p of [chosen, sharesTwo, sharesOne, main]) await publish(c, p.id);
    for (const p of await c
      .json<{ posts: Post[] }>(await c.get('/api/v1/dashboard/content/posts?status=draft'))
      .then((r) => r.posts)) {
      if (p.slug === 'nothing-shared') await publish(c, p.id);
    }

    const read = (await (await site(domain)('/api/v1/content/posts/main')).json()) as Post;
    expect(read.related_posts.map((p) => p.slug)).toEqual(['chosen', 'shares-two', 'shares-one']);
    expect(read.related_posts[0]).toEqual({
      id: chosen.id,
      slug: 'chosen',
      title: 'Chosen',
      excerpt: null,
      cover_image_url: null,
      published_at: expect.any(String),
      reading_time: 1,
    });
    // Only the read post's own count went up.
    expect(
      (
        await api.deps
          .db('content_posts')
          .where({ client_id: c.clientId })
          .whereNot({ id: main.id })
          .sum('view_count as n')
          .first()
      )?.n,
    ).toBe('0');
  });

  test('PATCH, tags/categories CRUD, filters and delete', async () => {
    const c = await newClient();
    const domain = newDomain();
    await registerSite(c, domain);
    const cat = await c.json<Json & { id: string }>(
      await c.post('/api/v1/dashboard/content/categories', { name: 'Guides', description: 'How-tos' }),
    );
    const tag = await c.json<Json & { id: string }>(await c.post('/api/v1/dashboard/content/tags', { name: 'B2B' }));
    expect(tag).toMatchObject({ name: 'B2B', slug: 'b2b' });
    expect((await c.post('/api/v1/dashboard/content/tags', { name: 'b2b' })).status).toBe(409);
    expect((await c.post('/api/v1/dashboard/content/categories', { name: 'guides' })).status).toBe(409);

    const post = await createPost(c, {
      slug: 'one',
      title: 'One',
      body: { type: 'doc', content: [paragraph(5)] },
      tag_ids: [tag.id],
    });
    await createPost(c, { slug: 'two', title: 'Two', body: { type: 'doc', content: [paragraph(5)] } });
    expect((await c.patch(`/api/v1/dashboard/content/posts/${post.id}`, { slug: 'two' })).status).toBe(409);
    const bad = await c.patch(`/api/v1/dashboard/content/posts/${post.id}`, {
      body: { type: 'doc', content: [{ type: 'table' }] },
    });
    expect(bad.status).toBe(400);

    const patched = await c.json<Post>(
      await c.patch(`/api/v1/dashboard/content/posts/${post.id}`, {
        title: 'One, revised',
        body: { type: 'doc', content: [paragraph(401)] },
        tags: ['Outbound'],
        category_ids: [cat.id],
        og_image_url: 'https://cdn.example.com/og.png',
      }),
    );
    expect(patched).toMatchObject({
      title: 'One, revised',
      reading_time: 3,
      tags: ['Outbound'],
      categories: [{ id: cat.id, name: 'Guides', slug: 'guides' }],
      og_image_url: 'https://cdn.example.com/og.png',
    });
    expect(Date.parse(String(patched.updated_at))).toBeGreaterThan(Date.parse(String(post.updated_at)));

    // Rename the tag and category: the post shows the new names.
    const outbound = (
      await c.json<{ tags: (Json & { id: string })[] }>(await c.get('/api/v1/dashboard/content/tags'))
    ).tags.find((t) => t.slug === 'outbound');
    expect((await c.patch(`/api/v1/dashboard/content/tags/${outbound?.id}`, { name: 'Outbound sales' })).status).toBe(
      200,
    );
    expect(await c.json(await c.get(`/api/v1/dashboard/content/tags/${outbound?.id}`))).toMatchObject({
      name: 'Outbound sales',
      slug: 'outbound',
    });
    expect((await (await newClient()).get(`/api/v1/dashboard/content/tags/${outbound?.id}`)).status).toBe(404);
    expect(
      (await c.patch(`/api/v1/dashboard/content/categories/${cat.id}`, { name: 'Playbooks', slug: 'playbooks' }))
        .status,
    ).toBe(200);
    expect(await c.json(await c.get(`/api/v1/dashboard/content/categories/${cat.id}`))).toMatchObject({
      name: 'Playbooks',
      slug: 'playbooks',
      description: 'How-tos',
    });
    await publish(c, post.id);
    const filtered = (await (await site(domain)('/api/v1/content/posts?category=playbooks&tag=outbound')).json()) as {
      posts: Post[];
    };
    expect(filtered.posts.map((p) => [p.slug, p.tags, (p.categories as Json[])[0]?.name])).toEqual([
      ['one', ['Outbound sales'], 'Playbooks'],
    ]);
    expect(((await (await site(domain)('/api/v1/content/posts?tag=b2b')).json()) as { total: number }).total).toBe(0);

    // Deleting the category removes it from the post; deleting the post makes it 404 everywhere.
    expect((await c.del(`/api/v1/dashboard/content/categories/${cat.id}`)).status).toBe(204);
    expect((await c.json<Post>(await c.get(`/api/v1/dashboard/content/posts/${post.id}`))).categories).toEqual([]);
    const other = await newClient();
    expect((await other.get(`/api/v1/dashboard/content/posts/${post.id}`)).status).toBe(404);
    expect((await other.del(`/api/v1/dashboard/content/posts/${post.id}`)).status).toBe(404);
    expect((await other.post(`/api/v1/dashboard/content/posts/${post.id}/publish`, {})).status).toBe(404);
    expect((await c.del(`/api/v1/dashboard/content/posts/${post.id}`)).status).toBe(204);
    expect((await c.get(`/api/v1/dashboard/content/posts/${post.id}`)).status).toBe(404);
    expect((await site(domain)('/api/v1/content/posts/one')).status).toBe(404);
    expect((await c.get('/api/v1/dashboard/content/posts/not-a-uuid')).status).toBe(404);

    // Removing the site: its domain answers 422 (no site registered for it).
    const sites = await c.json<{ sites: { id: string; domain: string }[] }>(
      await c.get('/api/v1/dashboard/content/sites'),
    );
    expect(sites.sites.map((s) => s.domain)).toEqual([domain]);
    expect((await c.del(`/api/v1/dashboard/content/sites/${sites.sites[0]?.id}`)).status).toBe(204);
    const removed = await site(domain)('/api/v1/content/posts');
    expect(removed.status).toBe(422);
    expect(await removed.json()).toMatchObject({
      detail: [{ type: 'site_not_found', loc: ['header', 'x-content-domain'] }],
    });
  });

  test('an internationalised domain is one site in either form, kept as browsers send it (punycode)', async () => {
    const c = await newClient();
    const unicode = `bücher-${randomUUID().slice(0, 8)}.example`;
    const ascii = domainToASCII(unicode);
    expect(ascii).toMatch(/^xn--/);
    const res = await c.post('/api/v1/dashboard/content/sites', { domain: unicode.toUpperCase() });
    expect(res.status).toBe(201);
    expect((await c.json<Site>(res)).domain).toBe(ascii);
    // The same domain in its ASCII form: the same site, not a second one.
    expect((await c.post('/api/v1/dashboard/content/sites', { domain: ascii })).status).toBe(409);
  });

  test('a site answers X-Content-Domain only once its DNS TXT record is found; a record that is missing, wrong or unreadable is a 422 saying so', async () => {
    const c = await newClient();
    const domain = newDomain();
    const created = await c.json<Site>(await c.post('/api/v1/dashboard/content/sites', { domain }));
    await createPost(c, { slug: 'hello', title: 'Hello', body: { type: 'doc', content: [paragraph(5)] } }).then((p) =>
      publish(c, p.id),
    );
    const unverified = await site(domain)('/api/v1/content/posts');
    expect(unverified.status).toBe(422);
    expect(await unverified.json()).toEqual({
      detail: [
        {
          type: 'site_not_found',
          loc: ['header', 'x-content-domain'],
          msg: `no verified site is registered for the domain '${domain}'`,
        },
      ],
    });

    const verify = () => c.post(`/api/v1/dashboard/content/sites/${created.id}/verify`, {});
    const refusal = async (): Promise<string> => {
      const res = await verify();
      expect(res.status).toBe(422);
      const body = await c.json<{ detail: { type: string; loc: string[]; msg: string }[] }>(res);
      expect(body.detail).toEqual([
        {
          type: 'domain_not_verified',
          loc: ['path', 'site_id'],
          msg: expect.stringContaining(`publish the TXT record "${created.verification.value}" on ${domain}`),
        },
      ]);
      return body.detail[0]?.msg ?? '';
    };
    // The name does not exist yet, then it has other records only, then its server fails.
    expect((await refusal()).startsWith(`${domain} has no TXT record (the name does not exist): `)).toBe(true);
    dns.set(domain, { txt: ['v=spf1 -all', 'leadjobs-site-verification=0000'] });
    expect(await refusal()).toMatch(/^none of the 2 TXT record\(s\) of .* is leadjobs-site-verification=/);
    dns.set(domain, { servfail: true });
    expect(await refusal()).toMatch(/the DNS lookup of .* failed \(ESERVFAIL\); try again later/);
    expect(
      await c
        .json<{ sites: Site[] }>(await c.get('/api/v1/dashboard/content/sites'))
        .then((r) => r.sites.map((x) => x.verified)),
    ).toEqual([false]);

    // Published as two character-strings (a long record is split so): read joined.
    const value = created.verification.value;
    dns.set(domain, { txt: [[value.slice(0, 20), value.slice(20)]] });
    const ok = await verify();
    expect(ok.status).toBe(200);
    const verifiedSite = await c.json<Site>(ok);
    expect(verifiedSite).toMatchObject({ id: created.id, verified: true });
    expect(dns.queries).toContain(`TXT ${domain}`);
    expect((await site(domain)('/api/v1/content/posts')).status).toBe(200);
    // Verifying again changes nothing, even with the record gone.
    dns.set(domain, {});
    expect(await c.json(await verify())).toMatchObject({ verified: true, verified_at: verifiedSite.verified_at });
  });

  test('nobody can squat a domain: registrations before verification block no one, the first verification wins, the others stay unserved', async () => {
    const owner = await newClient();
    const squatter = await newClient();
    const domain = newDomain();
    // The squatter registers first, with posts of its own, but cannot publish DNS for the domain.
    const squat = await squatter.json<Site>(await squatter.post('/api/v1/dashboard/content/sites', { domain }));
    await createPost(squatter, {
      slug: 'fake',
      title: 'Fake news',
      body: { type: 'doc', content: [paragraph(5)] },
    }).then((p) => publish(squatter, p.id));
    expect((await squatter.post('/api/v1/dashboard/content/sites', { domain })).status).toBe(409);

    // The owner still registers it, and verifies it with its own token (the squatter's is a different one).
    const own = await owner.json<Site>(await owner.post('/api/v1/dashboard/content/sites', { domain }));
    expect(own.verification.value).not.toBe(squat.verification.value);
    dns.set(domain, { txt: [own.verification.value] });
    expect((await squatter.post(`/api/v1/dashboard/content/sites/${squat.id}/verify`, {})).status).toBe(422);
    expect((await owner.post(`/api/v1/dashboard/content/sites/${own.id}/verify`, {})).status).toBe(200);
    await createPost(owner, { slug: 'real', title: 'Real news', body: { type: 'doc', content: [paragraph(5)] } }).then(
      (p) => publish(owner, p.id),
    );
    const served = (await (await site(domain)('/api/v1/content/posts')).json()) as { posts: Post[] };
    expect(served.posts.map((p) => p.slug)).toEqual(['real']);

    // Now taken: the squatter's registration cannot be verified while the owner's record is published,
    // even with its own record beside it.
    dns.set(domain, { txt: [own.verification.value, squat.verification.value] });
    const late = await squatter.post(`/api/v1/dashboard/content/sites/${squat.id}/verify`, {});
    expect(late.status).toBe(409);
    expect(JSON.stringify(await late.json())).toContain(
      `${domain} is verified by another client, whose TXT record is still published`,
    );
    const third = await newClient();
    expect((await (await site(domain)('/api/v1/content/posts')).json()) as { posts: Post[] }).toMatchObject({
      posts: [expect.objectContaining({ slug: 'real' })],
    });
    // Another client's site id is a 404 to verify, as everywhere.
    expect((await third.post(`/api/v1/dashboard/content/sites/${own.id}/verify`, {})).status).toBe(404);
  });

  test('a domain that changes hands: its new owner publishes its record, the old one is gone, and verifying moves the domain', async () => {
    const before = await newClient();
    const after = await newClient();
    const domain = newDomain();
    const old = await registerSite(before, domain);
    await createPost(before, {
      slug: 'old-owner',
      title: 'Old owner',
      body: { type: 'doc', content: [paragraph(5)] },
    }).then((p) => publish(before, p.id));
    // The buyer registers the domain; while the seller's record is published it cannot take it.
    const bought = await after.json<Site>(await after.post('/api/v1/dashboard/content/sites', { domain }));
    expect(bought).toMatchObject({ verified: false });
    dns.set(domain, { txt: [old.verification.value, bought.verification.value] });
    expect((await after.post(`/api/v1/dashboard/content/sites/${bought.id}/verify`, {})).status).toBe(409);
    expect(
      ((await (await site(domain)('/api/v1/content/posts')).json()) as { posts: Post[] }).posts.map((p) => p.slug),
    ).toEqual(['old-owner']);

    // The new DNS carries only the buyer's record: verifying moves the domain to the buyer.
    dns.set(domain, { txt: [bought.verification.value] });
    const moved = await after.post(`/api/v1/dashboard/content/sites/${bought.id}/verify`, {});
    expect(moved.status).toBe(200);
    expect(await moved.json()).toMatchObject({ id: bought.id, verified: true });
    await createPost(after, {
      slug: 'new-owner',
      title: 'New owner',
      body: { type: 'doc', content: [paragraph(5)] },
    }).then((p) => publish(after, p.id));
    expect(
      ((await (await site(domain)('/api/v1/content/posts')).json()) as { posts: Post[] }).posts.map((p) => p.slug),
    ).toEqual(['new-owner']);
    // The seller's site is unverified (its posts are kept, no longer served), and cannot take the domain back without the DNS.
    const sellers = await before.json<{ sites: Site[] }>(await before.get('/api/v1/dashboard/content/sites'));
    expect(sellers.sites).toEqual([expect.objectContaining({ id: old.id, verified: false, verified_at: null })]);
    const back = await before.post(`/api/v1/dashboard/content/sites/${old.id}/verify`, {});
    expect(back.status).toBe(422);
    expect(
      (await before.json<{ posts: Post[] }>(await before.get('/api/v1/dashboard/content/posts'))).posts.map(
        (p) => p.slug,
      ),
    ).toEqual(['old-owner']);
  });

  test("a buyer's site deleted while it was being verified leaves the domain with its owner", async () => {
    const owner = await newClient();
    const buyer = await newClient();
    const domain = newDomain();
    await registerSite(owner, domain);
    await createPost(owner, { slug: 'kept', title: 'Kept', body: { type: 'doc', content: [paragraph(5)] } }).then((p) =>
      publish(owner, p.id),
    );
    // The route found the owner's record gone and the buyer's site; the site is deleted before the update.
    const repo = new ContentRepository(api.deps.db);
    const previous = await repo.verifiedElsewhere(buyer.clientId, domain);
    expect(previous).toMatchObject({ domain, client_id: owner.clientId });
    expect(await repo.verifySite(buyer.clientId, randomUUID(), previous)).toBeUndefined();
    expect(
      ((await (await site(domain)('/api/v1/content/posts')).json()) as { posts: Post[] }).posts.map((p) => p.slug),
    ).toEqual(['kept']);
  });

  test('the routes and the X-Content-Domain header are in /openapi.json', async () => {
    const doc = (await (await fetch(`${api.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { parameters: Json[]; responses: Record<string, unknown> }>>;
    };
    const authors = doc.paths['/api/v1/content/authors']?.get;
    expect(authors?.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'x-content-domain', in: 'header', required: true })]),
    );
    // Spec §4.11: 200 and 422 (a domain of no site is the header's 422), no 404.
    expect(Object.keys(authors?.responses ?? {})).toEqual(expect.arrayContaining(['200', '422']));
    expect(authors?.responses).not.toHaveProperty('404');
    expect(Object.keys(doc.paths['/api/v1/dashboard/content/posts/{post_id}'] ?? {}).sort()).toEqual([
      'delete',
      'get',
      'patch',
    ]);
    expect(Object.keys(doc.paths['/api/v1/dashboard/content/posts']?.post?.responses ?? {})).toEqual(
      expect.arrayContaining(['201', '400', '401', '409']),
    );
    expect(doc.paths['/api/v1/dashboard/content/posts/{post_id}/publish']?.post).toBeDefined();
    expect(doc.paths['/api/v1/content/posts/{slug}']?.get).toBeDefined();
  });
});
