import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { bearer, ownQueues, startTestApi, type TestApi } from '../support/api';
import { caller, waitForStatus, type Caller } from '../support/jobs';
import { freePort } from '../support/processes';
import { startTestWorker, type TestWorker } from '../support/worker';
import { LONG_PATHS, startWebsite, TOO_LONG_PATH, type Website } from '../stand-ins/website';

// The real API and a real worker running the real crawlSite activity against a stand-in website on
// 127.0.0.1 (allowed by USER_URL_ALLOW_HOSTS, as a customer's site on the internet would be).
const UA = 'leadjobs-crawler/1.0 (+https://github.com/leadjobs/leadjobs)';
// The page timeout is short so that the page that never answers fails quickly, but not so short that
// a Chromium render (render_js) misses it on a CI machine running the whole suite: 3 s did once.
const PAGE_TIMEOUT_MS = 8000;
const workerEnv = {
  ...ownQueues('site'),
  USER_URL_ALLOW_HOSTS: '127.0.0.1',
  SITE_DELAY_MS: '0',
  SITE_PAGE_TIMEOUT_MS: String(PAGE_TIMEOUT_MS),
  SITE_USER_AGENT: UA,
};
let api: TestApi;
let worker: TestWorker;
let c: Caller;
let site: Website;

beforeAll(async () => {
  site = await startWebsite();
  api = await startTestApi({ RATE_LIMIT_ENABLED: 'false', ...ownQueues('site') });
  worker = await startTestWorker({ types: ['crawlSite'], identity: 'site-test-worker', overrides: workerEnv });
  c = caller(api, bearer(await api.newClient()));
});
afterAll(async () => {
  await worker.stop();
  await api.close();
  await site.close();
});

async function submit(payload: Record<string, unknown>): Promise<string> {
  const res = await c.post('/api/v1/jobs/crawlSite/submit', { payload });
  expect(res.status).toBe(201);
  return (await c.json<{ job_id: string }>(res)).job_id;
}

async function results(jobId: string, status = 'completed', timeoutMs = 60000): Promise<Record<string, unknown>> {
  const done = await waitForStatus(
    c,
    jobId,
    [status, ...['completed', 'failed', 'cancelled'].filter((s) => s !== status)],
    timeoutMs,
  );
  if (done.status !== status) throw new Error(`job ended ${String(done.status)}: ${String(done.error_message)}`);
  return c.json(await c.get(`/api/v1/jobs/${jobId}/results`));
}

describe('crawlSite against a company website', () => {
  let envelope: Record<string, unknown>;
  let data: Record<string, unknown>;
  beforeAll(async () => {
    const jobId = await submit({
      url: `${site.baseUrl}/`,
      max_pages: 20,
      compendium: { enabled: true, cleanup_level: 'fit' },
    });
    envelope = await results(jobId);
    data = envelope.data as Record<string, unknown>;
  });
  const base = () => site.baseUrl;

  test('every page once: robots.txt, sitemap and links followed; disallowed, duplicate and non-page URLs not fetched', async () => {
    expect(envelope).toMatchObject({
      success: true,
      status: 'completed',
      worker_id: 'site-test-worker',
      error_message: null,
    });
    expect(data.url).toBe(`${base()}/`);
    expect(data.final_url).toBe(`${base()}/`);
    expect(data.pages_crawled).toBe(8);
    const status = await c.json(await c.get(`/api/v1/jobs/${String(envelope.job_id)}/status`));
    expect(status.results_count).toBe(8);

    expect(data.pages).toEqual([
      { url: `${base()}/`, final_url: `${base()}/`, status: 200, title: 'Acme Widgets Ltd | Precision widgets' },
      { url: `${base()}/about/`, final_url: `${base()}/about/`, status: 200, title: 'About us | Acme Widgets' },
      { url: `${base()}/contact`, final_url: `${base()}/contact`, status: 200, title: 'Contact | Acme Widgets' },
      { url: `${base()}/impressum`, final_url: `${base()}/impressum`, status: 200, title: 'Impressum | Acme Widgets' },
      { url: `${base()}/js-only`, final_url: `${base()}/js-only`, status: 200, title: 'Careers | Acme Widgets' },
      {
        url: `${base()}/news`,
        final_url: `${base()}/blog/widget-news`,
        status: 200,
        title: 'News | Acme Widgets',
        redirect_chain: [`${base()}/news`, `${base()}/blog/widget-news`],
      },
      { url: `${base()}/services`, final_url: `${base()}/services`, status: 200, title: 'Services | Acme Widgets' },
      { url: `${base()}/team`, final_url: `${base()}/team`, status: 200, title: 'Our team | Acme Widgets' },
    ]);
    expect(site.count('/robots.txt')).toBe(1);
    expect(site.count('/sitemap.xml')).toBe(1);
    for (const page of ['/', '/team', '/contact', '/news']) expect(site.count(page)).toBe(1);
    // /index.html is the home page; /old-crew redirects twice to /team, crawled already: that last hop is not requested.
    expect(site.count('/index.html')).toBe(0);
    expect([site.count('/old-crew'), site.count('/crew-2019')]).toEqual([1, 1]);
    expect(site.count('/private/secret') + site.count('/private/hidden-page')).toBe(0);
    expect(site.count('/files/brochure.pdf')).toBe(0);
    expect([...site.userAgents]).toEqual([UA]);

    const errors = data.errors as { url: string | null; error: string }[];
    expect(errors).toEqual(
      expect.arrayContaining([
        {
          url: `${base()}/private/secret`,
          error: `not fetched: robots.txt of ${base()} disallows it for leadjobs-crawler`,
        },
        {
          url: `${base()}/private/hidden-page`,
          error: `not fetched: robots.txt of ${base()} disallows it for leadjobs-crawler`,
        },
        {
          url: `${base()}/go-private`,
          error: `redirect from ${base()}/go-private to http://169.254.169.254/latest/meta-data/ not followed: it leads off the site`,
        },
      ]),
    );
  });

  test('emails: plain, obfuscated, Cloudflare-protected, mailto and JSON-LD; junk and placeholders dropped', () => {
    expect(data.emails).toEqual([
      'support@acme-widgets.co.uk',
      'press@acme-widgets.co.uk',
      'sales@acme-widgets.co.uk',
      'ada@acme-widgets.co.uk',
      'grace@acme-widgets.co.uk',
    ]);
  });

  test('phones in British, German and US formats, read in the site region (GB)', () => {
    expect(data.phones).toEqual([
      { raw: '0161 496 0123', e164: '+441614960123', national: '0161 496 0123', type: 'FIXED_LINE', valid: true },
      { raw: '08081570192', e164: '+448081570192', national: '0808 157 0192', type: 'TOLL_FREE', valid: true },
      { raw: '+49 30 901820', e164: '+4930901820', national: '030 901820', type: 'FIXED_LINE', valid: true },
      {
        raw: '+1 (415) 555-2671',
        e164: '+14155552671',
        national: '(415) 555-2671',
        type: 'FIXED_LINE_OR_MOBILE',
        valid: true,
      },
    ]);
  });

  test('social profiles as top-level keys and as social_media; share buttons ignored', () => {
    const social = {
      proflink: 'https://www.linkedin.com/company/acme-widgets',
      microblog: 'https://x.com/acmewidgets',
      socialnet: 'https://www.facebook.com/acmewidgets',
      instagram: 'https://www.instagram.com/acmewidgets',
      youtube: 'https://www.youtube.com/@acmewidgets',
      tiktok: null,
      pinterest: null,
      github: 'https://github.com/acme-widgets',
    };
    expect(data).toMatchObject(social);
    expect(data.social_media).toEqual(social);
  });

  test('company info from JSON-LD, and key services from the services page', () => {
    expect(data.company_info).toEqual({
      name: 'Acme Widgets Ltd',
      description: 'Precision widgets for manufacturers since 1901.',
      industry: 'Industrial manufacturing',
      key_services: ['Custom widget design', 'Widget repair', 'Certification'],
      target_audience: 'Manufacturers and engineering firms',
      address: '1 Mill Lane, M1 1AA Manchester, GB',
      logo_url: 'https://acme-widgets.co.uk/img/logo.png',
    });
  });

  test('team members from JSON-LD Person and the team page cards, merged by name', () => {
    expect(data.team_members).toEqual([
      {
        name: 'Ada Lovelace',
        position: 'Chief Technology Officer',
        email: 'ada@acme-widgets.co.uk',
        proflink_url: 'https://www.linkedin.com/in/ada-lovelace',
        photo_url: `${base()}/img/ada.jpg`,
      },
      {
        name: 'Grace Hopper',
        position: 'Head of Engineering',
        email: 'grace@acme-widgets.co.uk',
        proflink_url: 'https://www.linkedin.com/in/grace-hopper',
        photo_url: `${base()}/img/grace.jpg`,
      },
      {
        name: 'Alan Turing',
        position: 'Research Lead',
        email: null,
        proflink_url: null,
        photo_url: `${base()}/img/alan.jpg`,
      },
    ]);
  });

  test('the compendium is stored in the client media bucket; its bytes match the object description', async () => {
    const comp = data.compendium as Record<string, unknown>;
    const hash = String(comp.content_hash);
    expect(comp).toEqual({
      available: true,
      chars: expect.any(Number),
      cleanup_level: 'fit',
      storage_location: expect.stringMatching(
        new RegExp(`^s3://[a-z0-9-]+/compendium/${hash}/127\\.0\\.0\\.1-compendium\\.md$`),
      ),
      download_url: expect.stringMatching(new RegExp(`/compendium/${hash}/127\\.0\\.0\\.1-compendium\\.md$`)),
      filename: '127.0.0.1-compendium.md',
      size_bytes: expect.any(Number),
      content_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      estimated_tokens: Math.ceil(Number(comp.chars) / 4),
    });
    // Public media URL: fetched without credentials, as a user would.
    const res = await fetch(String(comp.download_url));
    expect(res.status).toBe(200);
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.length).toBe(comp.size_bytes);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(hash);
    const markdown = bytes.toString('utf8');
    expect(markdown.length).toBe(comp.chars);

    expect(markdown.startsWith('# Acme Widgets Ltd: website compendium')).toBe(true);
    for (const title of [
      'Acme Widgets Ltd | Precision widgets',
      'Contact | Acme Widgets',
      'Our team | Acme Widgets',
      'Services | Acme Widgets',
    ])
      expect(markdown).toContain(`## ${title}`);
    expect(markdown).toContain('Four generations of widget makers in Manchester.');
    expect(markdown).toContain('Geschäftsführer: Jürgen Müller'); // Latin-1 page decoded
    expect(markdown).toContain('### Grace Hopper');
    // fit: navigation, cookie banner and footer are gone.
    for (const boilerplate of ['Staff only', 'We use cookies', 'registered in England and Wales', 'Share on Facebook'])
      expect(markdown).not.toContain(boilerplate);
  });

  test('raw keeps the whole page; the same crawl again stores the same object (key from the content hash)', async () => {
    const raw = await results(
      await submit({ url: `${site.baseUrl}/`, max_pages: 20, compendium: { enabled: true, cleanup_level: 'raw' } }),
    );
    const comp = (raw.data as Record<string, Record<string, unknown>>).compendium as Record<string, unknown>;
    expect(comp.cleanup_level).toBe('raw');
    const markdown = await (await fetch(String(comp.download_url))).text();
    expect(markdown).toContain('registered in England and Wales');
    expect(markdown).toContain('We use cookies');
    const again = await results(
      await submit({
        url: `${site.baseUrl}/`,
        max_pages: 20,
        compendium: { enabled: true, cleanup_level: 'raw' },
        exclude_paths: ['/nothing'],
      }),
    );
    expect((again.data as Record<string, Record<string, unknown>>).compendium).toEqual(comp);
  });
});

describe('crawlSite options', () => {
  test('max_pages, include/exclude globs and no compendium', async () => {
    const r = await results(
      await submit({
        url: `${site.baseUrl}/`,
        max_pages: 3,
        include_paths: ['/contact', '/team', '/about'],
        extract_team: false,
      }),
    );
    const data = r.data as Record<string, unknown>;
    expect(data.pages_crawled).toBe(3);
    // Contact-like pages first, in link order: /about/ and /team (/contact is the fourth).
    expect((data.pages as { url: string }[]).map((p) => p.url)).toEqual([
      `${site.baseUrl}/`,
      `${site.baseUrl}/about/`,
      `${site.baseUrl}/team`,
    ]);
    expect(data.team_members).toEqual([]);
    expect(data).not.toHaveProperty('compendium');
  });

  test('a redirect into a path that exclude_paths or include_paths leaves out is not followed, and is listed in errors', async () => {
    const base = site.baseUrl;
    // /old-crew (in the sitemap) redirects to /crew-2019, which redirects to /team.
    const teamRequests = site.count('/team');
    const r = await results(await submit({ url: `${base}/`, max_pages: 20, exclude_paths: ['/team'] }));
    const data = r.data as Record<string, unknown>;
    expect((data.pages as { final_url: string }[]).map((p) => p.final_url)).not.toContain(`${base}/team`);
    expect(data.team_members).toEqual([]);
    expect(data.emails).not.toContain('ada@acme-widgets.co.uk');
    expect(data.emails).not.toContain('grace@acme-widgets.co.uk');
    expect(data.errors).toContainEqual({
      url: `${base}/old-crew`,
      error: `redirect from ${base}/crew-2019 to ${base}/team not followed: its path matches exclude_paths "/team"`,
    });
    expect(site.count('/team')).toBe(teamRequests);

    const included = await results(
      await submit({ url: `${base}/`, max_pages: 20, include_paths: ['/old-crew', '/crew-2019'] }),
    );
    const inc = included.data as Record<string, unknown>;
    expect((inc.pages as { url: string }[]).map((p) => p.url)).toEqual([`${base}/`]);
    expect(inc.team_members).toEqual([]);
    expect(inc.errors).toContainEqual({
      url: `${base}/old-crew`,
      error: `redirect from ${base}/crew-2019 to ${base}/team not followed: its path matches none of include_paths`,
    });
    expect(site.count('/team')).toBe(teamRequests);
  });

  test('render_js: a page that Chromium ends up on is checked against exclude_paths and include_paths', async () => {
    const base = site.baseUrl;
    // /history links /crew-js, whose script moves the browser on to /team.
    const excluded = await results(
      await submit({
        url: `${base}/history`,
        max_pages: 5,
        render_js: true,
        include_paths: ['/crew-js'],
        exclude_paths: ['/team'],
      }),
    );
    const data = excluded.data as Record<string, unknown>;
    expect((data.pages as { url: string }[]).map((p) => p.url)).toEqual([`${base}/history`]);
    expect(data.team_members).toEqual([]);
    expect(data.emails).toEqual([]);
    expect(data.errors).toEqual([
      { url: `${base}/crew-js`, error: `redirect to ${base}/team not used: its path matches exclude_paths "/team"` },
    ]);

    const included = await results(
      await submit({ url: `${base}/history`, max_pages: 5, render_js: true, include_paths: ['/crew-js'] }),
    );
    const inc = included.data as Record<string, unknown>;
    expect((inc.pages as { url: string }[]).map((p) => p.url)).toEqual([`${base}/history`]);
    expect(inc.team_members).toEqual([]);
    expect(inc.errors).toEqual([
      { url: `${base}/crew-js`, error: `redirect to ${base}/team not used: its path matches none of include_paths` },
    ]);
  });

  test('render_js: pages reached through HTTP redirects are rendered, with their chain; a hop the filters leave out is refused', async () => {
    const base = site.baseUrl;
    // The start page redirects (/old-crew -> /crew-2019 -> /team): it is rendered where it ends.
    const r = await results(await submit({ url: `${base}/old-crew`, max_pages: 1, render_js: true }));
    const data = r.data as Record<string, unknown>;
    expect(data.final_url).toBe(`${base}/team`);
    expect(data.pages).toEqual([
      expect.objectContaining({
        url: `${base}/old-crew`,
        final_url: `${base}/team`,
        redirect_chain: [`${base}/old-crew`, `${base}/crew-2019`, `${base}/team`],
      }),
    ]);
    expect((data.team_members as { name: string }[]).map((m) => m.name)).toContain('Ada Lovelace');
    expect(data.errors).toEqual([]);

    // A frontier page's hop into an excluded path is refused before it is requested, as without render_js.
    const teamRequests = site.count('/team');
    const excluded = await results(
      await submit({ url: `${base}/`, max_pages: 20, render_js: true, exclude_paths: ['/team'] }),
    );
    const ex = excluded.data as Record<string, unknown>;
    expect(ex.errors).toContainEqual({
      url: `${base}/old-crew`,
      error: `redirect from ${base}/crew-2019 to ${base}/team not followed: its path matches exclude_paths "/team"`,
    });
    expect(ex.team_members).toEqual([]);
    expect(site.count('/team')).toBe(teamRequests);
  });

  test('render_js: a page built by script is crawled in Chromium, whose own requests go through the SSRF guard', async () => {
    // A second listener on IPv6 loopback, which USER_URL_ALLOW_HOSTS=127.0.0.1 does not allow.
    let probes = 0;
    const v6 = createServer((_req, res) => {
      probes++;
      res.writeHead(200, { 'access-control-allow-origin': '*' }).end('ok');
    });
    const port = await freePort();
    await new Promise<void>((resolve) => v6.listen(port, '::1', resolve));
    try {
      const url = `${site.baseUrl}/js-only?probe=${encodeURIComponent(`http://[::1]:${port}/probe`)}`;
      const plain = await results(await submit({ url, max_pages: 1 }));
      expect((plain.data as Record<string, unknown>).emails).toEqual([]);

      const before = site.count('/api/careers.json');
      const rendered = await results(
        await submit({ url, max_pages: 1, render_js: true, compendium: { enabled: true, cleanup_level: 'raw' } }),
      );
      const data = rendered.data as Record<string, unknown>;
      expect(data.emails).toEqual(['jobs@acme-widgets.co.uk']);
      expect((data.phones as { e164: string }[]).map((p) => p.e164)).toEqual(['+441614960999']);
      expect(site.count('/api/careers.json')).toBe(before + 1);
      const markdown = await (await fetch(String((data.compendium as Record<string, unknown>).download_url))).text();
      expect(markdown).toContain('probe refused');
      expect(probes).toBe(0);
    } finally {
      await new Promise((r) => v6.close(r));
    }
  });
});

describe('crawlSite against a hostile robots.txt', () => {
  test('512 KiB of costly wildcard rules: long paths are checked quickly and its plain Disallow holds; URLs over 2,048 characters are not fetched', async () => {
    // The audit's file: `Disallow: /*a*a*...*ab` lines up to 512 KiB (robots-parser's own matcher took about
    // 4.5 s to check one 2,000-character path against them), after an ordinary rule.
    const line = `Disallow: /${'*a'.repeat(200)}b\n`;
    let robotsTxt = 'User-agent: *\nDisallow: /private/\n';
    while (robotsTxt.length + line.length < 512 * 1024) robotsTxt += line;
    const hostile = await startWebsite({ robotsTxt });
    try {
      const base = hostile.baseUrl;
      // /long-links links six pages with 1,990-character paths: checks of seconds each would hit the 20 s limit.
      const r = await results(await submit({ url: `${base}/long-links`, max_pages: 30, timeout_seconds: 20 }));
      const data = r.data as Record<string, unknown>;
      const errors = data.errors as { url: string | null; error: string }[];
      expect(errors.filter((e) => e.url === null)).toEqual([]);
      for (const path of LONG_PATHS)
        expect(data.pages).toContainEqual(expect.objectContaining({ url: `${base}${path}`, status: 200 }));
      expect(hostile.count('/private/hidden-page') + hostile.count('/private/secret')).toBe(0);
      expect(errors).toContainEqual({
        url: `${base}/private/hidden-page`,
        error: `not fetched: robots.txt of ${base} disallows it for leadjobs-crawler`,
      });

      // Longer than 2,048 characters: a link is left out without a note (as off-site links are), a redirect there is refused and listed.
      expect(hostile.count(TOO_LONG_PATH)).toBe(0);
      expect(errors.filter((e) => e.url === `${base}${TOO_LONG_PATH}`)).toEqual([]);
      expect(errors).toContainEqual({
        url: `${base}/long-redirect`,
        error: `redirect from ${base}/long-redirect to ${base}${TOO_LONG_PATH} not followed: its URL is longer than 2,048 characters`,
      });
    } finally {
      await hostile.close();
    }
  });
});

describe('crawlSite failures', () => {
  const failed = async (payload: Record<string, unknown>) => {
    const done = await waitForStatus(c, await submit(payload), ['failed', 'completed'], 60000);
    expect(done.status).toBe('failed');
    return String(done.error_message);
  };

  test('robots.txt disallowing the start page, an HTTP error, a page that never answers', async () => {
    expect(await failed({ url: `${site.baseUrl}/private/secret` })).toBe(
      `${site.baseUrl}/private/secret may not be crawled: robots.txt of ${site.baseUrl} disallows it for leadjobs-crawler`,
    );
    expect(site.count('/private/secret')).toBe(0);
    expect(await failed({ url: `${site.baseUrl}/nope` })).toBe(
      `${site.baseUrl}/nope could not be crawled: the site answered HTTP 404`,
    );
    expect(await failed({ url: `${site.baseUrl}/hang` })).toBe(
      `${site.baseUrl}/hang could not be crawled: ${site.baseUrl}/hang did not answer within ${PAGE_TIMEOUT_MS} ms`,
    );
  });

  test('unreachable host, DNS failure, TLS error', async () => {
    const closed = await freePort();
    expect(await failed({ url: `http://127.0.0.1:${closed}/` })).toBe(
      `http://127.0.0.1:${closed}/ could not be crawled: connection refused by 127.0.0.1:${closed}`,
    );
    expect(await failed({ url: 'http://no-such-host.invalid/' })).toMatch(
      /^http:\/\/no-such-host\.invalid\/ could not be crawled: DNS lookup failed for no-such-host\.invalid \((ENOTFOUND|EAI_AGAIN)\)$/,
    );
    expect(await failed({ url: `https://127.0.0.1:${new URL(site.baseUrl).port}/` })).toMatch(
      /could not be crawled: TLS error: .+ for https:\/\/127\.0\.0\.1:\d+\/robots\.txt$/,
    );
  });

  test('a start page that redirects to a private address is refused by the SSRF guard', async () => {
    expect(await failed({ url: `${site.baseUrl}/go-private` })).toBe(
      `${site.baseUrl}/go-private could not be crawled: the target of http://169.254.169.254/latest/meta-data/ is not allowed (only public internet hosts can be reached)`,
    );
  });

  test('malformed, non-http(s) URLs and unknown keys are 422 with a clear detail', async () => {
    for (const url of ['not a url', 'ftp://acme.test/', 'javascript:alert(1)']) {
      const res = await c.post('/api/v1/jobs/crawlSite/submit', { payload: { url } });
      expect(res.status).toBe(422);
      expect(await res.json()).toEqual({
        detail: [{ type: 'custom', loc: ['body', 'payload', 'url'], msg: 'url must be a valid http(s) URL' }],
      });
    }
    const unknown = await c.post('/api/v1/jobs/crawlSite/submit', {
      payload: { url: 'https://acme.test/', max_depth: 3 },
    });
    expect(unknown.status).toBe(422);
    const tooMany = await c.post('/api/v1/jobs/crawlSite/submit', {
      payload: { url: 'https://acme.test/', max_pages: 101 },
    });
    expect(tooMany.status).toBe(422);
  });
});

describe('cancel', () => {
  test('cancelling a running crawl stops its requests within 3 s', async () => {
    const slow = await startWebsite({ mode: 'slow', pageDelayMs: 300 });
    try {
      const jobId = await submit({ url: `${slow.baseUrl}/p/0`, max_pages: 100 });
      await waitForStatus(c, jobId, ['processing']);
      const deadline = Date.now() + 20000;
      while (slow.count('/p/0') === 0 || slow.total() < 6) {
        if (Date.now() > deadline) throw new Error('crawl did not start');
        await new Promise((r) => setTimeout(r, 50));
      }
      const res = await c.del(`/api/v1/jobs/${jobId}`);
      expect(res.status).toBe(200);
      const cancelledAt = Date.now();
      await new Promise((r) => setTimeout(r, 4000));
      expect(slow.lastRequestAt() - cancelledAt).toBeLessThan(3000);
      const countAfter = slow.total();
      await new Promise((r) => setTimeout(r, 1000));
      expect(slow.total()).toBe(countAfter);
      expect((await waitForStatus(c, jobId, ['cancelled'])).status).toBe('cancelled');
      expect((await c.get(`/api/v1/jobs/${jobId}/results`)).status).toBe(410);
    } finally {
      await slow.close();
    }
  });
});
