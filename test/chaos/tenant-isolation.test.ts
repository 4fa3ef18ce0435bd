import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { bearer, ownQueues, startTestApi, type TestApi } from '../support/api';
import { caller, type Caller } from '../support/jobs';
import { PDF } from '../support/media-fixtures';

// The tenant isolation sweep (issue 17 item 5): every operation of the OpenAPI document, called by
// client B with client A's ids, cursors and filters, answers 404 (or an empty result), never A's data;
// and A's resources are unchanged afterwards. A creates one of each kind of resource through the API
// (no worker: a queued job and a pending campaign are enough). Every path-parameter operation is
// either swept or listed in SKIPPED with its reason, so a new route without an entry fails here.
// Prints its figures and writes JSON to bench/results/.
jest.setTimeout(240_000);

const settings = {
  RATE_LIMIT_ENABLED: 'false',
  USER_URL_ALLOW_HOSTS: '127.0.0.1',
  INTEGRATIONS_ENCRYPTION_KEY: Buffer.alloc(32, 11).toString('base64'),
  UNSUBSCRIBE_SIGNING_KEY: Buffer.alloc(32, 13).toString('base64'),
  // An event stream's first heartbeat follows its replay: streamText reads up to it (1 s, not 30 s, after the replay).
  SSE_HEARTBEAT_SECONDS: '1',
  ...ownQueues('tenant'),
};

type Json = Record<string, unknown>;
type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
interface Operation {
  method: Method;
  path: string;
  pathParams: string[];
  queryParams: string[];
}

/** A marker of its own for each thing A writes, so B's answers can be searched for any of A's data. */
const token = () => `t${randomBytes(6).toString('hex')}`;
const mk = {
  campaign: token(),
  webhook: token(),
  integration: token(),
  business: token(),
  business2: token(),
  media: token(),
  author: token(),
  category: token(),
  tag: token(),
  post: token(),
  mailbox: token(),
  template: token(),
  subject: token(),
  list: token(),
  dedupe: token(),
};

/** A's ids, by kind. */
interface Owned {
  job: string;
  /** A's canonical record (de-duplication store). */
  canonical: string;
  campaign: string;
  webhook: string;
  integration: string;
  idapType: string;
  idap: string;
  idapCursor: string;
  media: string;
  site: string;
  siteDomain: string;
  author: string;
  category: string;
  tag: string;
  post: string;
  postSlug: string;
  mailbox: string;
  mailboxAddress: string;
  message: string;
  thread: string;
  template: string;
  unsubscribeToken: string;
  unsubscribeEmail: string;
  /** A time before everything A made (sync filters: everything since then). */
  since: string;
}

/** Path parameter -> the kind of A's id it is filled with (the sweep's mapping). `id` depends on the path. */
const PATH_PARAM_KINDS: Record<string, (p: string) => keyof Owned | undefined> = {
  id: (p) =>
    p.startsWith('/api/v1/campaigns/')
      ? 'campaign'
      : p.startsWith('/api/v1/dedupe/canonical/')
        ? 'canonical'
        : undefined,
  job_id: () => 'job',
  campaign_id: () => 'campaign',
  webhook_id: () => 'webhook',
  integration_id: () => 'integration',
  resource_type: () => 'idapType',
  resource_id: () => 'idap',
  media_id: () => 'media',
  site_id: () => 'site',
  author_id: () => 'author',
  category_id: () => 'category',
  tag_id: () => 'tag',
  post_id: () => 'post',
  mailbox_id: () => 'mailbox',
  message_id: () => 'message',
  thread_id: () => 'thread',
  template_id: () => 'template',
};
/** Parameters that name a type, not an owner's id: an operation with only these is a listing of the caller's own. */
const TYPE_PARAMS = new Set(['resource_type']);

/** Query parameters of listings filled with A's values (owner-scoped filters and cursors). */
const QUERY_KINDS: Record<string, (keyof Owned)[]> = {
  job_id: ['job'],
  campaign_id: ['campaign'],
  mailbox_id: ['mailbox'],
  email: ['mailboxAddress', 'unsubscribeEmail'],
  cursor: ['idapCursor'],
  thread_id: ['thread'],
  site_id: ['site'],
  since: ['since'],
};

/** Listings where A's own call shows A's items: B's same call is searched for them. */
const OWNER_LISTINGS = [
  '/api/v1/jobs/list',
  '/api/v1/campaigns',
  '/api/v1/webhooks',
  '/api/v1/integrations',
  '/api/v1/dashboard/content/sites',
  '/api/v1/dashboard/content/authors',
  '/api/v1/dashboard/content/categories',
  '/api/v1/dashboard/content/tags',
  '/api/v1/dashboard/content/posts',
  '/api/v1/mail/mailboxes',
  '/api/v1/mail/messages',
  '/api/v1/mail/templates',
  '/api/v1/events/stream',
  '/api/v1/dedupe/canonical',
  '/api/v1/unsubscribe/preferences',
];

/** Operations with path parameters the sweep does not call, each with its reason. */
const SKIPPED: Record<string, string> = {
  'GET /api/v1/locations/{id}': 'shared reference data (GeoNames places), owned by no client',
  'GET /api/v1/media/videos/{video_id}':
    'a video needs PeerTube accepting an import (stand-in + settings); not created in this sweep',
  'GET /u/{token}':
    'public by design: the signed token is the credential (no client authentication); covered by unsubscribe.test.ts',
  'POST /u/{token}':
    'public by design: the signed token is the credential (no client authentication); covered by unsubscribe.test.ts',
  'GET /api/v1/content/posts/{slug}':
    "public by design: addressed by X-Content-Domain, never by client; A's post is a draft, which is never served",
  'GET /api/v1/captures/{client_id}/landings/{job_id}/page.html':
    "public by design, as the media bucket's URL of the same object: the address (the client's bucket and the job's random UUID) is the capability; reads one object, no row; covered by landing-hostile.test.ts and input-abuse.test.ts",
  'POST /api/v1/idap/{resource_type}/import':
    "creates in the caller's own scope; swept separately: B importing A's natural key makes its own resource",
};

/** B's own canonical record, which B's merge calls name beside A's id. */
let intruderCanonical = 0;

/** A record A adds to its canonical store. */
const dedupeRecord = {
  record_type: 'business',
  record: { company_name: mk.dedupe, email: `info@${mk.dedupe}.test`, city: 'Leeds' },
};

/** Harmless valid bodies for B's writes (a valid body so the id lookup is what answers). */
const future = new Date(Date.now() + 3600_000).toISOString();
function bodyFor(op: Operation): { body: string; type: string } | undefined {
  if (op.method === 'get' || op.method === 'delete') return undefined;
  const json = (b: unknown) => ({ body: JSON.stringify(b), type: 'application/json' });
  const key = `${op.method.toUpperCase()} ${op.path}`;
  const bodies: Record<string, () => { body: string; type: string }> = {
    'PATCH /api/v1/dashboard/content/authors/{author_id}': () => json({ bio: 'intruder' }),
    'PATCH /api/v1/dashboard/content/categories/{category_id}': () => json({ name: 'intruder' }),
    'PATCH /api/v1/dashboard/content/tags/{tag_id}': () => json({ name: 'intruder' }),
    'PATCH /api/v1/dashboard/content/posts/{post_id}': () => json({ title: 'intruder' }),
    'PATCH /api/v1/integrations/{integration_id}': () => json({ key_label: 'intruder' }),
    'PATCH /api/v1/idap/{resource_type}/{resource_id}': () => json({ add: ['rejected'] }),
    'PATCH /api/v1/mail/mailboxes/{mailbox_id}': () => json({ display_name: 'intruder' }),
    'PATCH /api/v1/mail/messages/{message_id}': () => json({ is_read: true, folder: 'Trash' }),
    'PATCH /api/v1/mail/templates/{template_id}': () => json({ name: 'intruder' }),
    'POST /api/v1/campaigns/{id}/next': () => json({ count: 1 }),
    // B merging its own record into A's, and unmerging it: A's id must be unknown to B either way.
    'POST /api/v1/dedupe/canonical/{id}/merge': () => json({ record_ids: [intruderCanonical] }),
    'POST /api/v1/dedupe/canonical/{id}/unmerge': () => json({ record_ids: [intruderCanonical] }),
    'POST /api/v1/mail/messages/{message_id}/snooze': () => json({ snoozed_until: future }),
    'POST /api/v1/mail/mailboxes/{mailbox_id}/import': () => ({
      body: rfc822(`<intruder-${token()}@example.com>`, 'intruder'),
      type: 'message/rfc822',
    }),
  };
  return (bodies[key] ?? (() => json({})))();
}

function rfc822(messageId: string, subject: string): string {
  return [
    'From: Sender <sender@example.com>',
    'To: someone@example.com',
    `Subject: ${subject}`,
    `Date: ${new Date().toUTCString()}`,
    `Message-ID: ${messageId}`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Hello.',
    '',
  ].join('\r\n');
}

let api: TestApi;
let a: Caller;
let b: Caller;
let owned: Owned;
const operations: Operation[] = [];
const figures = {
  operations_in_document: 0,
  path_param_operations: 0,
  swept: 0,
  skipped: 0,
  listings_checked: 0,
  calls_as_intruder: 0,
  calls_as_owner: 0,
  listings_with_owner_data: 0,
  leaks: 0,
  streams_read_to_heartbeat: 0,
};
const leaks: string[] = [];
/** What B got for each swept operation (written to the results file). */
const outcomes: Record<string, number> = {};
/** Listings whose owner's call showed A's data. */
const ownerSees = new Set<string>();

async function send(
  who: Caller,
  method: Method,
  url: string,
  body?: { body: string; type: string },
  signal?: AbortSignal,
): Promise<Response> {
  if (who === b) figures.calls_as_intruder++;
  else figures.calls_as_owner++;
  return fetch(`${api.url}${url}`, {
    method: method.toUpperCase(),
    headers: { authorization: who.auth, ...(body ? { 'content-type': body.type } : {}) },
    body: body?.body,
    signal,
  });
}

async function created<T = Json>(res: Response, what: string): Promise<T> {
  const json = (await res.json()) as T;
  if (res.status !== 201 && res.status !== 200)
    throw new Error(`${what} answered ${res.status}: ${JSON.stringify(json)}`);
  return json;
}

/** Every marker and string id of A's; an answer to B containing one (other than what B itself sent) is a leak. */
function aMarkers(): string[] {
  const ids = [
    owned.job,
    owned.campaign,
    owned.idap,
    owned.media,
    owned.site,
    owned.author,
    owned.category,
    owned.tag,
    owned.post,
    owned.thread,
    owned.idapCursor,
  ];
  return [...Object.values(mk), ...ids.filter((v) => v.length >= 8)];
}
function leaked(text: string, sent: string): string[] {
  return aMarkers().filter((m) => text.includes(m) && !sent.includes(m));
}

/** A's view of each of its resources, to compare before and after the sweep. */
async function ownerView(): Promise<Record<string, unknown>> {
  const read = async (p: string) => {
    const res = await send(a, 'get', p);
    const text = await res.text();
    return {
      status: res.status,
      body: text.startsWith('{') || text.startsWith('[') ? (JSON.parse(text) as unknown) : text.length,
    };
  };
  const e = encodeURIComponent;
  return {
    job: await read(`/api/v1/jobs/${owned.job}/status`),
    campaign: await read(`/api/v1/campaigns/${owned.campaign}`),
    webhook: await read(`/api/v1/webhooks/${owned.webhook}`),
    integration: await read(`/api/v1/integrations/${owned.integration}`),
    idap: await read(`/api/v1/idap/${owned.idapType}/${owned.idap}`),
    media: await read(`/api/v1/idap/media/${owned.media}`),
    sites: await read('/api/v1/dashboard/content/sites'),
    author: await read(`/api/v1/dashboard/content/authors/${owned.author}`),
    category: await read(`/api/v1/dashboard/content/categories/${owned.category}`),
    tag: await read(`/api/v1/dashboard/content/tags/${owned.tag}`),
    post: await read(`/api/v1/dashboard/content/posts/${owned.post}`),
    mailbox: await read(`/api/v1/mail/mailboxes/${owned.mailbox}`),
    message: await read(`/api/v1/mail/messages/${owned.message}`),
    thread: await read(`/api/v1/mail/threads/${e(owned.thread)}`),
    templates: await read('/api/v1/mail/templates'),
  };
}

beforeAll(async () => {
  api = await startTestApi(settings);
  a = caller(api, bearer(await api.newClient('tenant A (owner)')));
  b = caller(api, bearer(await api.newClient('tenant B (intruder)')));
  const post = (who: Caller, p: string, body: unknown, type = 'application/json') =>
    send(who, 'post', p, { body: typeof body === 'string' ? body : JSON.stringify(body), type });

  const job = await created<{ job_id: string }>(
    await post(a, '/api/v1/jobs/crawlSite/submit', { payload: { url: 'https://example.com/' } }),
    'job',
  );
  const campaign = await created<{ campaign_id: string }>(
    await post(a, '/api/v1/campaigns', {
      name: mk.campaign,
      search_terms: ['bakery'],
      locations: [{ city: 'Leeds', country: 'GB' }],
    }),
    'campaign',
  );
  const webhook = await created<Json>(
    await post(a, '/api/v1/webhooks', {
      url: 'http://127.0.0.1:9/tenant-hook',
      events: ['job.completed'],
      description: mk.webhook,
    }),
    'webhook',
  );
  const integration = await created<{ integration: { id: number } }>(
    await post(a, '/api/v1/integrations', {
      provider_name: 'openai',
      credentials: { api_key: 'sk-proj-9f8e7d6c5b4a3210a1B2' },
      key_label: mk.integration,
    }),
    'integration',
  );
  const imported = await created<{ items: { resource_id: string }[] }>(
    await post(a, '/api/v1/idap/businesses/import', {
      records: [
        {
          data: { place_id: mk.business, name: mk.business, address: '1 High St', website: 'https://acme-tenant.test' },
        },
        { data: { place_id: mk.business2, name: mk.business2, address: '2 High St' } },
      ],
    }),
    'IDAP import',
  );
  const firstPage = (await (await send(a, 'get', '/api/v1/idap/businesses?limit=1')).json()) as {
    next_cursor: string | null;
  };
  const form = new FormData();
  form.set('file', new Blob([new Uint8Array(PDF)], { type: 'application/octet-stream' }), `${mk.media}.pdf`);
  figures.calls_as_owner++;
  const media = await created<{ file_id: string }>(
    await fetch(`${api.url}/api/v1/media/files/upload`, {
      method: 'POST',
      headers: { authorization: a.auth },
      body: form,
    }),
    'media upload',
  );

  const siteDomain = `blog-${token()}.example.com`;
  const site = await created<{ id: string }>(
    await post(a, '/api/v1/dashboard/content/sites', { domain: siteDomain }),
    'content site',
  );
  const author = await created<{ id: string }>(
    await post(a, '/api/v1/dashboard/content/authors', { full_name: `Ada ${mk.author}` }),
    'content author',
  );
  const category = await created<{ id: string }>(
    await post(a, '/api/v1/dashboard/content/categories', { name: mk.category }),
    'content category',
  );
  const tag = await created<{ id: string }>(
    await post(a, '/api/v1/dashboard/content/tags', { name: mk.tag }),
    'content tag',
  );
  const postSlug = `post-${mk.post}`;
  const contentPost = await created<{ id: string }>(
    await post(a, '/api/v1/dashboard/content/posts', {
      slug: postSlug,
      title: mk.post,
      body: { type: 'doc', content: [{ type: 'paragraph', content: [{ type: 'text', text: `Body ${mk.post}` }] }] },
    }),
    'content post',
  );

  const address = `${mk.mailbox}@mail.test`;
  const mailbox = await created<{ mailbox: { id: number } }>(
    await post(a, '/api/v1/mail/mailboxes', {
      address,
      display_name: mk.mailbox,
      smtp: { host: '127.0.0.1', port: 9, secure: false, username: address, password: 'secret-password' },
    }),
    'mailbox',
  );
  const template = await created<{ template: { id: number } }>(
    await post(a, '/api/v1/mail/templates', {
      name: mk.template,
      template_type: 'full',
      html_source: '<p>Hi {{first_name}}</p>',
      variables: ['first_name'],
    }),
    'template',
  );
  const message = await created<{ message: { id: number; thread_id: string } }>(
    await post(
      a,
      `/api/v1/mail/mailboxes/${mailbox.mailbox.id}/import`,
      rfc822(`<${mk.subject}@example.com>`, mk.subject),
      'message/rfc822',
    ),
    'raw import',
  );
  const unsubscribeEmail = `recipient-${token()}@example.com`;
  const link = await created<{ token: string }>(
    await post(a, '/api/v1/unsubscribe/links', { email: unsubscribeEmail, list: mk.list }),
    'unsubscribe link',
  );
  // The recipient unsubscribes on the public page: A now has a preference for that address.
  const unsubscribed = await fetch(`${api.url}/u/${link.token}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'List-Unsubscribe=One-Click',
  });
  expect(unsubscribed.status).toBeLessThan(400);
  const canonical = await created<{ canonical_id: number }>(
    await post(a, '/api/v1/dedupe/check', dedupeRecord),
    'dedupe check',
  );
  intruderCanonical = (
    await created<{ canonical_id: number }>(
      await post(b, '/api/v1/dedupe/check', {
        record_type: 'business',
        record: { company_name: `intruder ${token()}` },
      }),
      'B dedupe check',
    )
  ).canonical_id;

  owned = {
    job: job.job_id,
    canonical: String(canonical.canonical_id),
    campaign: campaign.campaign_id,
    webhook: String((webhook.webhook as Json | undefined)?.id ?? webhook.id ?? webhook.webhook_id),
    integration: String(integration.integration.id),
    idapType: 'businesses',
    idap: imported.items[0]?.resource_id as string,
    idapCursor: firstPage.next_cursor as string,
    media: media.file_id,
    site: site.id,
    siteDomain,
    author: author.id,
    category: category.id,
    tag: tag.id,
    post: contentPost.id,
    postSlug,
    mailbox: String(mailbox.mailbox.id),
    mailboxAddress: address,
    message: String(message.message.id),
    thread: message.message.thread_id,
    template: String(template.template.id),
    unsubscribeToken: link.token,
    unsubscribeEmail,
    since: '2000-01-01T00:00:00Z',
  };
  expect(Object.entries(owned).filter(([, v]) => !v || v === 'undefined')).toEqual([]);

  const doc = (await (await fetch(`${api.url}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>>;
  };
  for (const [p, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const params = op.parameters ?? [];
      operations.push({
        method: method as Method,
        path: p,
        pathParams: [...p.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string),
        queryParams: params.filter((x) => x.in === 'query').map((x) => x.name),
      });
    }
  }
  figures.operations_in_document = operations.length;
});

afterAll(async () => {
  await api?.close();
  process.stdout.write(
    `Tenant isolation sweep\noperations in the document: ${figures.operations_in_document}; with path parameters: ${figures.path_param_operations} ` +
      `(swept ${figures.swept}, skipped ${figures.skipped}); listings checked: ${figures.listings_checked}; ` +
      `calls as the intruder: ${figures.calls_as_intruder}, as the owner: ${figures.calls_as_owner}; leaks found: ${figures.leaks}\n`,
  );
  const dir = path.join(__dirname, '../../bench/results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, 'tenant-isolation.json'),
    `${JSON.stringify({ at: new Date().toISOString(), figures, leaks, outcomes, listings_with_owner_data: [...ownerSees], skipped: SKIPPED, path_param_kinds: Object.keys(PATH_PARAM_KINDS), query_kinds: QUERY_KINDS }, null, 2)}\n`,
  );
});

const opKey = (op: Operation) => `${op.method.toUpperCase()} ${op.path}`;
const ownerIdParams = (op: Operation) => op.pathParams.filter((n) => !TYPE_PARAMS.has(n));

describe('every operation of the OpenAPI document, called by another client', () => {
  let before: Record<string, unknown>;
  beforeAll(async () => {
    before = await ownerView();
  });

  test('every path-parameter operation is swept or skipped with a reason, and no skip is stale', () => {
    const withParams = operations.filter((op) => op.pathParams.length > 0);
    expect(withParams.length).toBeGreaterThan(40);
    const unmapped = withParams
      .filter((op) => !(opKey(op) in SKIPPED))
      .flatMap((op) =>
        op.pathParams.filter((n) => PATH_PARAM_KINDS[n]?.(op.path) === undefined).map((n) => `${opKey(op)}: {${n}}`),
      );
    expect(unmapped).toEqual([]);
    const keys = new Set(operations.map(opKey));
    expect(Object.keys(SKIPPED).filter((k) => !keys.has(k))).toEqual([]);
  });

  test("A's ids in every path: 404 (or a format refusal the owner does not get), never 2xx, never A's data", async () => {
    const problems: string[] = [];
    const withParams = operations.filter((op) => op.pathParams.length > 0);
    figures.path_param_operations = withParams.length;
    for (const op of withParams) {
      if (opKey(op) in SKIPPED) {
        figures.skipped++;
        continue;
      }
      const url = op.path.replace(/\{([^}]+)\}/g, (_m, name: string) =>
        encodeURIComponent(owned[PATH_PARAM_KINDS[name]?.(op.path) as keyof Owned]),
      );
      if (ownerIdParams(op).length === 0) {
        // Only a type in the path (/idap/{resource_type}, /stats, /resolve): B's own listing, which must hold none of A's.
        const res = await send(b, op.method, `${url}${listingQuery(op)}`, bodyFor(op));
        const text = await res.text();
        outcomes[opKey(op)] = res.status;
        figures.listings_checked++;
        figures.swept++;
        const found = leaked(text, url);
        if (found.length) problems.push(`LEAK ${opKey(op)} -> ${res.status} contains ${found.join(', ')}`);
        if (res.status >= 500) problems.push(`${opKey(op)} -> ${res.status}`);
        continue;
      }
      figures.swept++;
      const res = await send(b, op.method, url, bodyFor(op));
      const text = await res.text();
      outcomes[opKey(op)] = res.status;
      const found = leaked(text, url);
      if (found.length) problems.push(`LEAK ${opKey(op)} -> ${res.status} contains ${found.join(', ')}`);
      if (res.status >= 200 && res.status < 300)
        problems.push(`LEAK ${opKey(op)} -> ${res.status} for another client's id`);
      else if (res.status === 400 || res.status === 422) {
        // Refused before the lookup: only if the owner's same read is not refused (the id's format was right).
        if (op.method !== 'get')
          problems.push(
            `${opKey(op)} -> ${res.status} for a write: the sweep's body must be valid (${text.slice(0, 200)})`,
          );
        else {
          const mine = await send(a, 'get', url);
          if (mine.status === 400 || mine.status === 422)
            problems.push(`${opKey(op)} -> ${mine.status} for the owner too: the sweep's id is malformed`);
        }
      } else if (res.status !== 404)
        problems.push(`${opKey(op)} -> ${res.status}, expected 404 (${text.slice(0, 200)})`);
    }
    figures.leaks += problems.filter((p) => p.startsWith('LEAK')).length;
    leaks.push(...problems.filter((p) => p.startsWith('LEAK')));
    expect(problems).toEqual([]);
  });

  test("listings and searches with A's filters and cursors: empty or refused, never A's items", async () => {
    const problems: string[] = [];
    const listings = operations.filter((op) => op.method === 'get' && op.pathParams.length === 0);
    for (const op of listings)
      for (const query of listingQueries(op)) {
        const url = `${op.path}${query}`;
        figures.listings_checked++;
        if (op.path === '/api/v1/events/stream') {
          // A stream: read all it replays from the start (up to its first heartbeat), then hang up.
          const replayed = `${url}${url.includes('?') ? '&' : '?'}last_event_id=0`;
          const found = leaked(await streamText(b, replayed), url);
          if (found.length) problems.push(`LEAK ${opKey(op)} -> contains ${found.join(', ')}`);
          if (leaked(await streamText(a, replayed), url).length > 0) ownerSees.add(op.path);
          continue;
        }
        const res = await send(b, 'get', url);
        const text = await res.text();
        const found = leaked(text, url);
        if (found.length)
          problems.push(`LEAK ${opKey(op)}${url.slice(op.path.length)} -> ${res.status} contains ${found.join(', ')}`);
        if (res.status >= 500) problems.push(`${opKey(op)} -> ${res.status}`);
        // The same call by the owner shows A's data, so the search above is a search for something that is there.
        if (leaked(await (await send(a, 'get', url)).text(), url).length > 0) ownerSees.add(op.path);
      }
    figures.listings_with_owner_data = ownerSees.size;
    expect(OWNER_LISTINGS.filter((p) => !ownerSees.has(p))).toEqual([]);
    figures.leaks += problems.filter((p) => p.startsWith('LEAK')).length;
    leaks.push(...problems.filter((p) => p.startsWith('LEAK')));
    expect(problems).toEqual([]);
  });

  test("B importing A's natural keys makes B's own resource; A's is untouched", async () => {
    const res = await send(b, 'post', '/api/v1/idap/businesses/import', {
      body: JSON.stringify({ records: [{ data: { place_id: mk.business, name: 'intruder', address: '9 Low St' } }] }),
      type: 'application/json',
    });
    const body = (await res.json()) as { created: number; items: { resource_id: string }[] };
    expect(res.status).toBe(200);
    expect(body.created).toBe(1);
    expect(body.items[0]?.resource_id).not.toBe(owned.idap);
  });

  test("B checking A's record against the canonical store: unique for B, never a duplicate of A's", async () => {
    const res = await send(b, 'post', '/api/v1/dedupe/check', {
      body: JSON.stringify(dedupeRecord),
      type: 'application/json',
    });
    const body = (await res.json()) as { is_duplicate: boolean; matched_record_id: number | null };
    expect(res.status).toBe(200);
    expect(body).toMatchObject({ is_duplicate: false, matched_record_id: null });
  });

  // Issue 38 item 16: a sealed credential is bound to its row and client. Copied (by a bug or an
  // attacker with write access to one column) into another client's row, it does not open there.
  test("A's sealed credential copied into B's integration does not open for B: B's check fails saying so, and A's key is nowhere in the answer", async () => {
    const mine = await created<{ integration: { id: number } }>(
      await b.post('/api/v1/integrations', {
        provider_name: 'openai',
        credentials: { api_key: 'sk-proj-intruder00000000000000' },
        key_label: 'intruder',
      }),
      'integration',
    );
    const [aRow] = (await api.deps
      .db('llm_integrations')
      .where({ id: Number(owned.integration) })
      .select('credentials_sealed')) as { credentials_sealed: string }[];
    expect(aRow?.credentials_sealed).toMatch(/^v2\./);
    await api.deps
      .db('llm_integrations')
      .where({ id: mine.integration.id })
      .update({ credentials_sealed: aRow?.credentials_sealed });

    const res = await b.post(`/api/v1/integrations/${mine.integration.id}/test`, {});
    const text = await res.text();
    expect(res.status).toBe(200);
    const body = JSON.parse(text) as { test: { ok: boolean; error: string | null } };
    expect(body.test.ok).toBe(false);
    expect(body.test.error).toMatch(/does not open: damaged, or sealed for another row or client/);
    expect(text).not.toContain('sk-proj-9f8e7d6c5b4a3210a1B2');
    expect(leaked(text, '')).toEqual([]);
  });

  test("afterwards every one of A's resources reads back unchanged for A", async () => {
    const after = await ownerView();
    expect(Object.entries(after).filter(([, v]) => (v as { status: number }).status !== 200)).toEqual([]);
    expect(after).toEqual(before);
  });
});

/**
 * What an event stream sends up to its first heartbeat: the whole of its replay (from Last-Event-ID
 * 0, every stored event the stream may send), however slowly the server writes it, since the
 * heartbeat only starts once the replay has been written (api/routes/events.ts). A refusal (not
 * 200) is its answer's text. No heartbeat within STREAM_READ_MS fails: the replay was not read whole.
 */
const STREAM_READ_MS = 60_000;
async function streamText(who: Caller, url: string): Promise<string> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), STREAM_READ_MS);
  let text = '';
  try {
    const res = await send(who, 'get', url, undefined, controller.signal);
    if (res.status !== 200 || !res.body) return `${res.status} ${await res.text()}`;
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    while (!/(^|\n)event: heartbeat\n/.test(text)) {
      const chunk = await reader.read();
      if (chunk.done)
        throw new Error(
          `${url}: the stream ended before its first heartbeat, so its replay may be cut short: ${JSON.stringify(text.slice(0, 300))}`,
        );
      text += decoder.decode(chunk.value, { stream: true });
    }
    figures.streams_read_to_heartbeat++;
    return text;
  } catch (err) {
    if (!controller.signal.aborted) throw err;
    throw new Error(
      `${url}: no heartbeat within ${STREAM_READ_MS} ms, so its replay was not read whole: ${JSON.stringify(text.slice(0, 300))}`,
      { cause: err },
    );
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
}

/** A listing's query with A's values in each owner-scoped filter or cursor it accepts (variant n of a filter with several). */
function listingQuery(op: Operation, variant = 0): string {
  const q = new URLSearchParams();
  for (const name of op.queryParams) {
    const kinds = QUERY_KINDS[name];
    if (kinds) q.set(name, owned[kinds[variant % kinds.length] as keyof Owned]);
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** The queries a listing is called with: no filter at all, then each variant of A's filters. */
function listingQueries(op: Operation): string[] {
  const variants = Math.max(1, ...op.queryParams.map((n) => QUERY_KINDS[n]?.length ?? 1));
  return [...new Set(['', ...Array.from({ length: variants }, (_, i) => listingQuery(op, i))])];
}
