import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { OutboundClient, OutboundError } from '../../lib/outbound';
import { bearer, ownQueues, startTestApi, testConfig, type TestApi } from '../support/api';
import { caller, waitForStatus, type Caller } from '../support/jobs';
import { startTestWorker, type TestWorker } from '../support/worker';

// The SSRF matrix (issue 17 item 6): every spelling of a loopback, private, metadata or otherwise
// non-public target, and every non-http scheme, against the guarded client all outbound traffic uses
// (lib/outbound.ts: the crawler, providers, webhooks, LLM base URLs, Chromium's routed requests),
// then through the API where a client can name a URL: an LLM integration's base URL, a crawlSite
// start page, a crawlLanding page (Chromium). Sentinel servers on 127.0.0.1 and 127.0.0.2 count
// any connection that gets through. Prints its figures and writes JSON to bench/results/.
jest.setTimeout(180_000);

interface Sentinel {
  port: number;
  connections: () => number;
  reset: () => void;
  close: () => Promise<void>;
}

async function sentinel(host: string, port = 0, handler?: Parameters<typeof createServer>[1]): Promise<Sentinel> {
  let connections = 0;
  const server: Server = createServer(
    handler ?? ((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<title>reached</title>')),
  );
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    reset: () => {
      connections = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Targets on the loopback sentinel's port P, each a different spelling of a refused address. */
function loopbackForms(p: number): [string, string][] {
  return [
    ['plain', `http://127.0.0.1:${p}/`],
    ['decimal', `http://2130706433:${p}/`],
    ['hex', `http://0x7f000001:${p}/`],
    ['octal', `http://0177.0.0.1:${p}/`],
    ['mixed hex octets', `http://0x7f.0.0.1:${p}/`],
    ['short form', `http://127.1:${p}/`],
    ['IPv4-mapped IPv6', `http://[::ffff:127.0.0.1]:${p}/`],
    ['IPv4-mapped IPv6, hex', `http://[::ffff:7f00:1]:${p}/`],
    ['IPv4-compatible IPv6', `http://[::127.0.0.1]:${p}/`],
    ['NAT64 of loopback', `http://[64:ff9b::7f00:1]:${p}/`],
    ['IPv6 loopback', `http://[::1]:${p}/`],
    ['unspecified 0.0.0.0', `http://0.0.0.0:${p}/`],
    ['unspecified 0', `http://0:${p}/`],
    ['unspecified ::', `http://[::]:${p}/`],
    ['localhost', `http://localhost:${p}/`],
    ['localhost, upper case with trailing dot', `http://LOCALHOST.:${p}/`],
    ['userinfo before the host', `http://public.example@127.0.0.1:${p}/`],
    ['backslash userinfo trick', `http://127.0.0.1:${p}\\@public.example/`],
    ['ideographic full stops', `http://127\u30020\u30020\u30021:${p}/`],
    ['fullwidth digits', `http://\uff11\uff12\uff17.\uff10.\uff10.\uff11:${p}/`],
    ['IDN homograph of localhost (U+217C)', `http://\u217Cocalhost:${p}/`],
  ];
}

const OTHER_FORMS: [string, string][] = [
  ['cloud metadata 169.254.169.254', 'http://169.254.169.254/latest/meta-data/'],
  ['metadata, decimal', 'http://2852039166/latest/meta-data/'],
  ['AWS IPv6 metadata', 'http://[fd00:ec2::254]/latest/meta-data/'],
  ['Alibaba metadata (CGNAT range)', 'http://100.100.100.200/latest/meta-data/'],
  ['private 10/8', 'http://10.0.0.1/'],
  ['private 172.16/12', 'http://172.16.0.1/'],
  ['private 192.168/16', 'http://192.168.1.1/'],
  ['IETF protocol assignments', 'http://192.0.0.192/'],
  ['broadcast', 'http://255.255.255.255/'],
  ['multicast', 'http://224.0.0.1/'],
  ['link-local IPv6', 'http://[fe80::1]/'],
  ['6to4 of a private address', 'http://[2002:a00:1::]/'],
];

const SCHEMES: [string, string][] = [
  ['file', 'file:///etc/passwd'],
  ['ftp', 'ftp://127.0.0.1/x'],
  ['gopher', 'gopher://127.0.0.1:6379/_INFO'],
  ['dict', 'dict://127.0.0.1:11211/stat'],
  ['ldap', 'ldap://127.0.0.1/'],
  ['data', 'data:text/plain,hello'],
  ['javascript', 'javascript:alert(1)'],
  ['ws', 'ws://127.0.0.1/'],
];

const figures: Record<string, { cases: number; refused: number; connections: number }> = {};
function record(name: string, cases: number, refused: number, connections: number) {
  figures[name] = { cases, refused, connections };
}

let loop: Sentinel;
let loop2: Sentinel;
let redirector: Sentinel;

beforeAll(async () => {
  loop = await sentinel('127.0.0.1');
  // The same port on 127.0.0.2, so "127.0.0.1 allowed" cannot be confused with reaching another loopback host.
  loop2 = await sentinel('127.0.0.2');
  redirector = await sentinel('127.0.0.1', 0, (req, res) => {
    const to = new URL(req.url ?? '/', 'http://x').searchParams.get('to') ?? '/';
    res.writeHead(302, { location: to }).end();
  });
});

afterAll(async () => {
  await Promise.all([loop.close(), loop2.close(), redirector.close()]);
  const lines = Object.entries(figures).map(
    ([k, v]) => `${k}: ${v.refused}/${v.cases} refused, ${v.connections} connections got through`,
  );
  process.stdout.write(`SSRF matrix\n${lines.join('\n')}\n`);
  const dir = path.join(__dirname, '../../bench/results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, 'ssrf-matrix.json'),
    `${JSON.stringify({ at: new Date().toISOString(), figures }, null, 2)}\n`,
  );
});

async function refusal(client: OutboundClient, url: string): Promise<OutboundError | undefined> {
  return client.fetch(url, { timeoutMs: 3000 }).then(
    () => undefined,
    (e: unknown) => (e instanceof OutboundError ? e : undefined),
  );
}

describe('the guarded client (every outbound request)', () => {
  test('every spelling of a loopback, private or metadata address and every other scheme is refused without a connection', async () => {
    const client = new OutboundClient({ allowHosts: [], userAgent: 'leadjobs-ssrf-matrix' });
    try {
      const cases = [...loopbackForms(loop.port), ...OTHER_FORMS, ...SCHEMES];
      const outcomes: { name: string; kind?: string; message?: string }[] = [];
      for (const [name, url] of cases) {
        const err = await refusal(client, url);
        outcomes.push({ name, kind: err?.kind, message: err?.message });
      }
      // Each is refused by the guard (blocked address, unsupported scheme), or its name does not resolve at all.
      expect(outcomes.filter((o) => !['blocked', 'protocol', 'dns'].includes(o.kind ?? ''))).toEqual([]);
      expect({ loopback: loop.connections(), loopback2: loop2.connections() }).toEqual({ loopback: 0, loopback2: 0 });
      record(
        'guarded client',
        cases.length,
        outcomes.filter((o) => o.kind).length,
        loop.connections() + loop2.connections(),
      );
    } finally {
      await client.close();
    }
  });

  test('a redirect to any of those spellings is refused at the hop (only 127.0.0.1 itself allowed)', async () => {
    const client = new OutboundClient({ allowHosts: ['127.0.0.1'], userAgent: 'leadjobs-ssrf-matrix' });
    try {
      const p = loop2.port;
      const targets: [string, string][] = [
        ['127.0.0.2', `http://127.0.0.2:${p}/`],
        ['127.0.0.2 decimal', `http://2130706434:${p}/`],
        ['127.0.0.2 hex', `http://0x7f000002:${p}/`],
        ['127.0.0.2 octal', `http://0177.0.0.2:${p}/`],
        ['127.0.0.2 mapped', `http://[::ffff:127.0.0.2]:${p}/`],
        ['127.0.0.2 userinfo', `http://public.example@127.0.0.2:${p}/`],
        ...OTHER_FORMS,
        ...SCHEMES,
      ];
      const through: string[] = [];
      for (const [name, to] of targets) {
        const err = await refusal(client, `http://127.0.0.1:${redirector.port}/?to=${encodeURIComponent(to)}`);
        if (!err || !['blocked', 'protocol', 'dns'].includes(err.kind))
          through.push(`${name}: ${err?.kind ?? 'fetched'}`);
      }
      expect(through).toEqual([]);
      expect(loop2.connections()).toBe(0);
      record('redirect hops', targets.length, targets.length - through.length, loop2.connections());
    } finally {
      await client.close();
    }
  });
});

describe("the operator's endpoints and clients' URLs have separate allow-lists (issue 38 item 9)", () => {
  // The operator lists an in-house host (an LLM server) in OUTBOUND_ALLOW_HOSTS; that must not let
  // every client's crawl, capture, webhook, import or mailbox reach it (USER_URL_ALLOW_HOSTS does).
  const operatorOnly = { OUTBOUND_ALLOW_HOSTS: '127.0.0.1', USER_URL_ALLOW_HOSTS: '' };

  test('the two guarded clients of one process: client URLs refused, the endpoints reach the listed host', async () => {
    const config = testConfig(operatorOnly);
    const users = OutboundClient.fromConfig(config);
    const endpoints = OutboundClient.forEndpoints(config);
    try {
      expect((await refusal(users, `http://127.0.0.1:${loop.port}/`))?.kind).toBe('blocked');
      expect(loop.connections()).toBe(0);
      expect((await endpoints.fetch(`http://127.0.0.1:${loop.port}/`)).status).toBe(200);
      expect(loop.connections()).toBe(1);
    } finally {
      await Promise.all([users.close(), endpoints.close()]);
      loop.reset();
    }
  });

  test("through the API: a mailbox on the operator's host is refused, an LLM integration's base URL on it is called", async () => {
    const api = await startTestApi({
      RATE_LIMIT_ENABLED: 'false',
      INTEGRATIONS_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
      ...operatorOnly,
    });
    try {
      const c = caller(api, bearer(await api.newClient('allow-list split')));
      const server = { host: '127.0.0.1', port: loop.port, secure: false, username: 'box@mail.test', password: 'x' };
      const created = await c.post('/api/v1/mail/mailboxes', { address: 'box@mail.test', smtp: server, imap: server });
      expect(created.status).toBe(201);
      const { mailbox } = await c.json<{ mailbox: { id: number } }>(created);
      const checked = await c.json<{ smtp: { ok: boolean; error: string }; imap: { ok: boolean; error: string } }>(
        await c.post(`/api/v1/mail/mailboxes/${mailbox.id}/test`, {}),
      );
      expect(checked.smtp).toMatchObject({
        ok: false,
        error: expect.stringContaining('is not allowed as a mail server'),
      });
      expect(checked.imap).toMatchObject({
        ok: false,
        error: expect.stringContaining('is not allowed as a mail server'),
      });
      expect(loop.connections()).toBe(0);
      const integration = await c.post('/api/v1/integrations', {
        provider_name: 'openai_compatible',
        credentials: { api_key: `sk-split-${Math.random()}`, base_url: `http://127.0.0.1:${loop.port}/v1`, model: 'm' },
      });
      expect(integration.status).toBe(201);
      const { integration: row } = await c.json<{ integration: { id: number } }>(integration);
      await c.post(`/api/v1/integrations/${row.id}/test`, {});
      // The sentinel is no LLM (the check fails), but the endpoint's request reached it.
      expect(loop.connections()).toBeGreaterThan(0);
    } finally {
      await api.close();
      loop.reset();
    }
  });
});

describe('what a refusal says (issue 38 item 14)', () => {
  // A refusal reaches the client (a job's error_message, a webhook's delivery log): it names the URL
  // the client gave or was redirected to, never the address a name resolved to nor that address's
  // range, which would let anyone map the internal network by submitting internal names.
  const RANGE_WORDS = /loopback|private|link-local|reserved|unique local|carrier-grade|refusing to connect/i;

  test('a name that resolves to a refused address: the message says the target is not allowed, without the address', async () => {
    const client = new OutboundClient({ allowHosts: [], userAgent: 'leadjobs-ssrf-matrix' });
    // A redirector on 127.0.0.2, the only address this client allows: localhost (127.0.0.1, ::1) is not.
    const hop = new OutboundClient({ allowHosts: ['127.0.0.2'], userAgent: 'leadjobs-ssrf-matrix' });
    const redirector2 = await sentinel('127.0.0.2', 0, (req, res) => {
      res.writeHead(302, { location: new URL(req.url ?? '/', 'http://x').searchParams.get('to') ?? '/' }).end();
    });
    try {
      // localhost, and its IDN homograph (which URL parsing turns into localhost); "localhost." does not resolve here.
      const named = loopbackForms(loop.port).filter(([name]) => name === 'localhost' || name.includes('homograph'));
      const said: { name: string; message: string }[] = [];
      for (const [name, url] of named) said.push({ name, message: (await refusal(client, url))?.message ?? 'fetched' });
      // The same names as redirect hops from an allowed host.
      for (const [name, to] of named)
        said.push({
          name: `redirect to ${name}`,
          message:
            (await refusal(hop, `http://127.0.0.2:${redirector2.port}/?to=${encodeURIComponent(new URL(to).href)}`))
              ?.message ?? 'fetched',
        });
      for (const { name, message } of said) {
        expect({ name, message }).toEqual({
          name,
          message: expect.stringMatching(/^the target of http:\/\/localhost:\d+\/ is not allowed/),
        });
        expect({ name, leaks: message.match(/127\.0\.0\.1|::1|::ffff/) }).toEqual({ name, leaks: null });
        expect({ name, leaks: message.match(RANGE_WORDS) }).toEqual({ name, leaks: null });
      }
      expect(loop.connections()).toBe(0);
    } finally {
      await Promise.all([client.close(), hop.close(), redirector2.close()]);
    }
  });
});

describe('through the API, where a client names the URL', () => {
  let api: TestApi;
  let worker: TestWorker;
  let c: Caller;
  // Nothing allowed: the settings of production.
  const settings = {
    RATE_LIMIT_ENABLED: 'false',
    USER_URL_ALLOW_HOSTS: '',
    INTEGRATIONS_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
    ...ownQueues('ssrf-matrix'),
  };
  beforeAll(async () => {
    api = await startTestApi(settings);
    worker = await startTestWorker({
      types: ['crawlSite', 'crawlLanding'],
      identity: 'ssrf-matrix-worker',
      overrides: settings,
    });
    c = caller(api, bearer(await api.newClient('ssrf matrix')));
  });
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
  });

  test("an LLM integration's base URL: the live check refuses every spelling, nothing connects", async () => {
    const forms = loopbackForms(loop.port).filter(([name]) => !name.includes('backslash'));
    let refused = 0;
    for (const [name, url] of [...forms, ...OTHER_FORMS.slice(0, 4)]) {
      const created = await c.post('/api/v1/integrations', {
        provider_name: 'openai_compatible',
        credentials: { api_key: `sk-${name.replace(/\W/g, '')}-${Math.random()}`, base_url: `${url}v1` },
      });
      if (created.status !== 201) {
        // Refused at creation (not a valid URL) is as good as refused at the call.
        expect(created.status).toBeLessThan(500);
        refused++;
        continue;
      }
      const { integration } = await c.json<{ integration: { id: number } }>(created);
      const res = await c.post(`/api/v1/integrations/${integration.id}/test`, {});
      const body = await c.json<{ test?: { ok: boolean; error: string | null } }>(res);
      expect(res.status).toBeLessThan(500);
      expect({ name, ok: body.test?.ok ?? false }).toEqual({ name, ok: false });
      refused++;
    }
    expect(loop.connections()).toBe(0);
    record('LLM base URL', forms.length + 4, refused, loop.connections());
  });

  test("a crawlSite start page and a crawlLanding page (Chromium) in those spellings fail with the guard's reason", async () => {
    const p = loop.port;
    const forms: string[] = [
      `http://2130706433:${p}/`,
      `http://[::ffff:127.0.0.1]:${p}/`,
      `http://0x7f.0.0.1:${p}/`,
      `http://127\u30020\u30020\u30021:${p}/`,
      'http://169.254.169.254/latest/meta-data/',
    ];
    const jobs: string[] = [];
    const submit = (type: string, url: string) =>
      c.post(`/api/v1/jobs/${type}/submit`, {
        payload: { url, ...(type === 'crawlLanding' ? { options: { capture_full_page: false } } : {}) },
      });
    for (const url of forms) {
      for (const type of ['crawlSite', 'crawlLanding']) {
        const res = await submit(type, url);
        expect(res.status).toBe(201);
        jobs.push((await c.json<{ job_id: string }>(res)).job_id);
      }
    }
    // Credentials in a URL hide its host from a reader: refused as input, never run.
    for (const type of ['crawlSite', 'crawlLanding']) {
      const res = await submit(type, `http://public.example@127.0.0.1:${p}/`);
      expect(res.status).toBe(422);
      expect(JSON.stringify(await res.json())).toContain('url must not contain credentials');
    }
    const ends = await Promise.all(jobs.map((id) => waitForStatus(c, id, ['completed', 'failed'], 90_000)));
    expect(
      ends
        .filter(
          (e) => e.status !== 'failed' || !/refusing to connect|refused|not allowed/i.test(String(e.error_message)),
        )
        .map((e) => [e.type, e.error_message]),
    ).toEqual([]);
    expect(loop.connections()).toBe(0);
    record('crawlSite + crawlLanding', forms.length * 2, ends.length, loop.connections());
  });
});
