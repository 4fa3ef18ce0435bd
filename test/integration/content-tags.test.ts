import { bearer, startTestApi, type TestApi } from '../support/api';
import { caller, type Caller } from '../support/jobs';

// Tags created by name when a post is written, and the slugs generated for tags and authors,
// through the real API on the real Postgres: a tag is its name (trimmed, any case), never its slug.

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ RATE_LIMIT_ENABLED: 'false' });
});
afterAll(async () => {
  await api?.close();
});

type Json = Record<string, unknown>;
type Client = Caller & { patch(path: string, body: unknown): Promise<Response> };
type Post = Json & { id: string; slug: string; tags: string[]; author: (Json & { slug: string }) | null };
type Tag = { id: string; name: string; slug: string; post_count: number };

async function newClient(): Promise<Client> {
  const c = caller(api, bearer(await api.newClient()));
  const patch = (path: string, body: unknown) =>
    fetch(`${api.url}${path}`, {
      method: 'PATCH',
      headers: { authorization: c.auth, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  return { ...c, patch };
}

const body = { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Some words.' }] }] };

async function createPost(c: Client, fields: Json): Promise<Post> {
  const res = await c.post('/api/v1/dashboard/content/posts', { title: 'A post', body, ...fields });
  const json = await c.json<Post>(res);
  if (res.status !== 201) throw new Error(`create post answered ${res.status}: ${JSON.stringify(json)}`);
  return json;
}

async function tagsOf(c: Client): Promise<Tag[]> {
  const res = await c.get('/api/v1/dashboard/content/tags');
  expect(res.status).toBe(200);
  return (await c.json<{ tags: Tag[] }>(res)).tags;
}

const postsTagged = async (c: Client, slug: string) =>
  (
    await c.json<{ posts: Post[] }>(await c.get(`/api/v1/dashboard/content/posts?tag=${encodeURIComponent(slug)}`))
  ).posts
    .map((p) => p.slug)
    .sort();

describe('content tags', () => {
  test('tags are their names: C# and C++ stay two tags with distinct slugs; News and news are one', async () => {
    const c = await newClient();
    const first = await createPost(c, { slug: 'first', tags: ['News', 'C++'] });
    expect(first.tags.sort()).toEqual(['C++', 'News']);
    // Both names slugify to 'c': the second gets a tag of its own, not the first's.
    const second = await createPost(c, { slug: 'second', tags: ['C#'] });
    expect(second.tags).toEqual(['C#']);
    // Same name in another case (and with spaces around): the existing tag, as it was named.
    const third = await createPost(c, { slug: 'third', tags: ['  news ', 'NEWS', 'c#'] });
    expect(third.tags.sort()).toEqual(['C#', 'News']);
    // Names that differ only in accents are two tags too.
    const fourth = await createPost(c, { slug: 'fourth', tags: ['Café', 'Cafe'] });
    expect(fourth.tags.sort()).toEqual(['Cafe', 'Café']);

    const tags = await tagsOf(c);
    expect(tags.map((t) => [t.name, t.post_count]).sort()).toEqual([
      ['C#', 2],
      ['C++', 1],
      ['Cafe', 1],
      ['Café', 1],
      ['News', 2],
    ]);
    const slugs = tags.map((t) => t.slug);
    expect(new Set(slugs).size).toBe(slugs.length);
    for (const slug of slugs) expect(slug).toMatch(/^[a-z0-9]+(?:-[a-z0-9]+)*$/);
    const slugOf = (name: string) => tags.find((t) => t.name === name)?.slug ?? '';
    expect(slugOf('C++')).toBe('c');
    expect(slugOf('C#')).toBe('c-2');
    expect(slugOf('News')).toBe('news');
    // Each slug filters to the posts of its own tag.
    expect(await postsTagged(c, slugOf('C++'))).toEqual(['first']);
    expect(await postsTagged(c, slugOf('C#'))).toEqual(['second', 'third']);
    expect(await postsTagged(c, slugOf('News'))).toEqual(['first', 'third']);
  });

  test('a tag name with no Latin transliteration is accepted, with slug tag, tag-2, ...', async () => {
    const c = await newClient();
    const post = await createPost(c, { slug: 'cjk', tags: ['日本語', 'Tag'] });
    expect(post.tags.sort()).toEqual(['Tag', '日本語'].sort());
    const other = await createPost(c, { slug: 'cjk-2', tags: ['中文'] });
    expect(other.tags).toEqual(['中文']);
    const again = await createPost(c, { slug: 'cjk-3', tags: ['日本語'] });
    expect(again.tags).toEqual(['日本語']);

    const tags = await tagsOf(c);
    expect(tags.map((t) => t.name).sort()).toEqual(['Tag', '中文', '日本語'].sort());
    expect(tags.map((t) => t.slug).sort()).toEqual(['tag', 'tag-2', 'tag-3']);
    const japanese = tags.find((t) => t.name === '日本語');
    expect(japanese?.post_count).toBe(2);
    expect(await postsTagged(c, japanese?.slug ?? '')).toEqual(['cjk', 'cjk-3']);
  });

  test('a generated slug stays within 120 characters and works as the author filter', async () => {
    const c = await newClient();
    const fullName = 'a'.repeat(120);
    const created = async () => {
      const res = await c.post('/api/v1/dashboard/content/authors', { full_name: fullName });
      expect(res.status).toBe(201);
      return c.json<Json & { id: string; slug: string }>(res);
    };
    const first = await created();
    const second = await created();
    expect(first.slug).toBe('a'.repeat(120));
    expect(second.slug).toBe(`${'a'.repeat(118)}-2`);

    await createPost(c, { slug: 'by-first', author_id: first.id });
    await createPost(c, { slug: 'by-second', author_id: second.id });
    const res = await c.get(`/api/v1/dashboard/content/posts?author=${second.slug}`);
    expect(res.status).toBe(200);
    expect((await c.json<{ posts: Post[] }>(res)).posts.map((p) => p.slug)).toEqual(['by-second']);
    // The API takes back the slug it gave.
    const patched = await c.patch(`/api/v1/dashboard/content/authors/${second.id}`, { slug: second.slug });
    expect(patched.status).toBe(200);

    // A long name cut at a hyphen leaves none at the end; and the same for tags.
    const words = `${'b'.repeat(117)} cc`;
    const author = await c.json<{ slug: string }>(
      await c.post('/api/v1/dashboard/content/authors', { full_name: words }),
    );
    expect(author.slug).toBe('b'.repeat(117) + '-cc');
    const cut = await c.json<{ slug: string }>(await c.post('/api/v1/dashboard/content/authors', { full_name: words }));
    expect(cut.slug).toBe(`${'b'.repeat(117)}-2`);
    // Tag names are at most 100 characters, but a ß gives 'ss': two names whose slugs both fill 120.
    await createPost(c, { slug: 'long-tags', tags: ['ß'.repeat(60), `${'ß'.repeat(59)}ss`] });
    const tags = await tagsOf(c);
    expect(tags.map((t) => t.slug).sort()).toEqual([`${'s'.repeat(118)}-2`, 's'.repeat(120)]);
    const longTag = await c.get(`/api/v1/dashboard/content/posts?tag=${'s'.repeat(118)}-2`);
    expect((await c.json<{ posts: Post[] }>(longTag)).posts.map((p) => p.slug)).toEqual(['long-tags']);
  });

  test('POST tags: the name is the tag (409 for it in any case); a slug made from the name is a free one', async () => {
    const c = await newClient();
    const create = (body: Record<string, unknown>) => c.post('/api/v1/dashboard/content/tags', body);
    expect(await c.json(await create({ name: 'C++' }))).toMatchObject({ name: 'C++', slug: 'c' });
    expect(await c.json(await create({ name: 'C#' }))).toMatchObject({ name: 'C#', slug: 'c-2' });
    expect(await c.json(await create({ name: '日本語' }))).toMatchObject({ name: '日本語', slug: 'tag' });
    expect((await create({ name: 'c#' })).status).toBe(409);
    // A slug given is the client's choice: taken is a 409.
    expect((await create({ name: 'C sharp', slug: 'c' })).status).toBe(409);
  });

  test('authors and tags created at once whose slugs clash each get a free slug (-2, -3, ...), not a 409', async () => {
    const c = await newClient();
    const authors = await Promise.all(
      Array.from({ length: 12 }, () => c.post('/api/v1/dashboard/content/authors', { full_name: 'Jane Doe' })),
    );
    expect(authors.map((r) => r.status)).toEqual(Array.from({ length: 12 }, () => 201));
    const authorSlugs = await Promise.all(authors.map(async (r) => (await c.json<{ slug: string }>(r)).slug));
    expect(authorSlugs.sort()).toEqual(
      ['jane-doe', ...Array.from({ length: 11 }, (_, i) => `jane-doe-${i + 2}`)].sort(),
    );
    // Names that differ but share the slug 'c' race for it; the same name twice is still a 409 (the name is the tag).
    const names = ['C#', 'C++', 'C!', 'C?', 'C*', 'C#'];
    const tags = await Promise.all(names.map((name) => c.post('/api/v1/dashboard/content/tags', { name })));
    expect(tags.map((r) => r.status).sort()).toEqual([201, 201, 201, 201, 201, 409]);
    expect((await tagsOf(c)).map((t) => t.slug).sort()).toEqual(['c', 'c-2', 'c-3', 'c-4', 'c-5']);
  });

  test('posts written at once with the same new tag make one tag (and names sharing a slug make two)', async () => {
    const c = await newClient();
    // Each post one new tag: 'C#' and 'C++' race for the slug 'c'; the CJK name for 'tag'; the
    // release notes in two cases for one tag.
    const tagsOfPost = (i: number) =>
      [['C#'], ['C++'], ['日本語'], [i % 2 === 0 ? 'Release Notes' : 'release notes']][i % 4] as string[];
    const posts = await Promise.all(
      Array.from({ length: 16 }, (_, i) => createPost(c, { slug: `at-once-${i}`, tags: tagsOfPost(i) })),
    );
    const tags = await tagsOf(c);
    expect(tags.map((t) => [t.name.toLowerCase(), t.post_count]).sort()).toEqual([
      ['c#', 4],
      ['c++', 4],
      ['release notes', 4],
      ['日本語', 4],
    ]);
    expect(tags.map((t) => t.slug).sort()).toEqual(['c', 'c-2', 'release-notes', 'tag']);
    const releaseNotes = tags.find((t) => t.name.toLowerCase() === 'release notes')?.name;
    posts.forEach((p, i) => expect(p.tags).toEqual(i % 4 === 3 ? [releaseNotes] : tagsOfPost(i)));
  });
});
