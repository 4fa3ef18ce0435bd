import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BlockedAddressError, OutboundClient, OutboundError, ResponseTooLargeError } from '../../lib/outbound';
import { freePort } from '../support/processes';

/** A local site on 127.0.0.1 with the pages the tests ask for; counts the connections it accepts. */
async function startSite() {
  let connections = 0;
  const hanging: Promise<void>[] = [];
  const requested: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '/';
    requested.push(path);
    const loop = /^\/loop\/(\d+)$/.exec(path);
    if (path === '/hello') {
      res.writeHead(200, { 'content-type': 'text/plain', 'x-stand-in': 'yes' }).end('hello there');
    } else if (path === '/latin1') {
      res.writeHead(200, { 'content-type': 'text/html; charset=iso-8859-1' }).end(Buffer.from('<p>café</p>', 'latin1'));
    } else if (path === '/meta-charset') {
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(Buffer.from('<meta charset="windows-1252"><p>naïve</p>', 'latin1'));
    } else if (path === '/json') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, n: 3 }));
    } else if (path === '/echo') {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () =>
        res.writeHead(200).end(
          JSON.stringify({
            method: req.method,
            body,
            authorization: req.headers.authorization ?? null,
            ua: req.headers['user-agent'],
          }),
        ),
      );
    } else if (path === '/r1') {
      res.writeHead(301, { location: '/r2' }).end();
    } else if (path === '/r2') {
      res.writeHead(302, { location: `http://127.0.0.1:${port()}/final` }).end();
    } else if (path === '/final') {
      res.writeHead(200).end('arrived');
    } else if (path === '/post-303') {
      res.writeHead(303, { location: '/echo' }).end();
    } else if (path === '/to-localhost') {
      res.writeHead(307, { location: `http://localhost:${port()}/echo` }).end();
    } else if (path.startsWith('/to?')) {
      res.writeHead(302, { location: new URLSearchParams(path.slice(4)).get('u') ?? '/' }).end();
    } else if (loop) {
      res.writeHead(302, { location: `/loop/${Number(loop[1]) + 1}` }).end();
    } else if (path === '/big') {
      res.writeHead(200, { 'content-length': '5000' }).end(Buffer.alloc(5000, 'a'));
    } else if (path === '/big-chunked') {
      // No Content-Length: only counting the streamed bytes can catch this one.
      res.writeHead(200);
      for (let i = 0; i < 50; i++) res.write(Buffer.alloc(100, 'b'));
      res.end();
    } else if (path === '/hang') {
      // Never answers; resolves when the client gives up and the connection closes.
      hanging.push(new Promise((resolve) => req.socket.once('close', () => resolve())));
    } else {
      res.writeHead(404).end('no such page');
    }
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = () => (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port()}`,
    port: port(),
    connections: () => connections,
    requested,
    hanging,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function failure(promise: Promise<unknown>): Promise<OutboundError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof OutboundError)) throw new Error(`expected an OutboundError, got ${String(err)}`);
  return err;
}

let site: Awaited<ReturnType<typeof startSite>>;
beforeAll(async () => {
  site = await startSite();
});
afterAll(async () => {
  await site.close();
});

describe('OutboundClient with an empty allow-list', () => {
  let client: OutboundClient;
  beforeAll(() => {
    client = new OutboundClient({ allowHosts: [], userAgent: 'leadjobs-test' });
  });
  afterAll(async () => {
    await client.close();
  });

  test('refuses loopback, private and metadata addresses, literal or resolved, without connecting', async () => {
    const before = site.connections();
    const cases: [string, string, string][] = [
      [`${site.url}/hello`, '127.0.0.1', 'loopback address'],
      ['http://10.0.0.1/', '10.0.0.1', 'private address'],
      ['http://169.254.169.254/latest/meta-data/', '169.254.169.254', 'link-local address'],
      [`http://[::1]:${site.port}/hello`, '::1', 'loopback address'],
      ['http://[fd00:ec2::254]/latest/meta-data/', 'fd00:ec2::254', 'unique local address'],
      [`http://localhost:${site.port}/hello`, '', 'loopback address'],
    ];
    for (const [url, address, reason] of cases) {
      // A 'blocked' failure is the guard's, raised before any connect: an unroutable address tried would fail as a timeout instead.
      const err = await failure(client.fetch(url));
      expect(err).toBeInstanceOf(BlockedAddressError);
      expect(err).toMatchObject({ kind: 'blocked', url: new URL(url).href, reason });
      if (address) expect((err as BlockedAddressError).address).toBe(address);
      // The message a job or webhook shows says the target is not allowed, not which private address or range it resolved to.
      expect(err.message).toBe(
        `the target of ${new URL(url).href} is not allowed (only public internet hosts can be reached)`,
      );
      expect(err.message).not.toContain(reason);
    }
    expect(site.connections()).toBe(before);
  });

  test('refuses schemes other than http and https', async () => {
    for (const url of ['file:///etc/passwd', 'ftp://example.com/x', 'gopher://127.0.0.1:6379/_INFO']) {
      const err = await failure(client.fetch(url));
      expect(err.kind).toBe('protocol');
      expect(err.message).toMatch(/unsupported URL scheme ".+:".*only http and https/);
    }
  });
});

describe('OutboundClient with USER_URL_ALLOW_HOSTS=127.0.0.1', () => {
  let client: OutboundClient;
  beforeAll(() => {
    client = new OutboundClient({ allowHosts: ['127.0.0.1'], userAgent: 'leadjobs-test', maxRedirects: 3 });
  });
  afterAll(async () => {
    await client.close();
  });

  test('fetches the page: status, lower-cased headers, body and text', async () => {
    const res = await client.fetch(`${site.url}/hello`);
    expect(res).toMatchObject({ url: `${site.url}/hello`, status: 200, redirectChain: [`${site.url}/hello`] });
    expect(res.headers['x-stand-in']).toBe('yes');
    expect(res.headers['content-type']).toBe('text/plain');
    expect(res.body.toString()).toBe('hello there');
    expect(res.text()).toBe('hello there');

    const missing = await client.fetch(`${site.url}/nope`);
    expect(missing.status).toBe(404);
    expect((await client.fetch(`${site.url}/json`)).json()).toEqual({ ok: true, n: 3 });
  });

  test('decodes text with the charset of Content-Type, or of an HTML meta tag', async () => {
    const latin1 = await client.fetch(`${site.url}/latin1`);
    expect(latin1.body.length).toBe('<p>café</p>'.length);
    expect(latin1.text()).toBe('<p>café</p>');
    expect((await client.fetch(`${site.url}/meta-charset`)).text()).toContain('naïve');
  });

  test('sends the user agent, method and body', async () => {
    const res = await client.fetch(`${site.url}/echo`, {
      method: 'POST',
      body: 'a=1',
      headers: { 'Content-Type': 'text/plain' },
    });
    expect(res.json()).toEqual({ method: 'POST', body: 'a=1', authorization: null, ua: 'leadjobs-test' });
  });

  test('follows a relative 301 then an absolute 302, listing every URL', async () => {
    const res = await client.fetch(`${site.url}/r1`);
    expect(res.redirectChain).toEqual([`${site.url}/r1`, `${site.url}/r2`, `${site.url}/final`]);
    expect(res).toMatchObject({ url: `${site.url}/final`, status: 200 });
    expect(res.text()).toBe('arrived');
  });

  test("redirect: 'manual' returns the redirect itself", async () => {
    const res = await client.fetch(`${site.url}/r1`, { redirect: 'manual' });
    expect(res).toMatchObject({ status: 301, url: `${site.url}/r1`, redirectChain: [`${site.url}/r1`] });
    expect(res.headers.location).toBe('/r2');
  });

  test('a 303 after POST becomes a GET without body; credentials stay on their origin', async () => {
    const seeOther = await client.fetch(`${site.url}/post-303`, { method: 'POST', body: 'x' });
    expect(seeOther.json()).toMatchObject({ method: 'GET', body: '' });
    // localhost resolves to 127.0.0.1 (allowed by IP) but is another origin: the token is dropped.
    const moved = await client.fetch(`${site.url}/to-localhost`, {
      method: 'POST',
      body: 'kept',
      headers: { authorization: 'Bearer secret' },
    });
    expect(moved.redirectChain).toEqual([`${site.url}/to-localhost`, `http://localhost:${site.port}/echo`]);
    expect(moved.json()).toMatchObject({ method: 'POST', body: 'kept', authorization: null });
  });

  test('a redirect from the allowed server to a private or metadata address is refused', async () => {
    for (const [target, reason] of [
      ['http://10.0.0.1/', 'private address'],
      ['http://169.254.169.254/latest/meta-data/', 'link-local address'],
      ['http://[::ffff:169.254.169.254]/', 'link-local address'],
    ]) {
      // A 'blocked' failure is the guard's, raised before any connect: an unroutable address tried
      // would fail as a timeout instead (after 20 s).
      const err = await failure(client.fetch(`${site.url}/to?u=${encodeURIComponent(target as string)}`));
      expect(err).toBeInstanceOf(BlockedAddressError);
      expect(err).toMatchObject({ kind: 'blocked', url: new URL(target as string).href, reason });
    }
    const toFile = await failure(client.fetch(`${site.url}/to?u=${encodeURIComponent('file:///etc/passwd')}`));
    expect(toFile.kind).toBe('protocol');
  });

  test('more redirects than maxRedirects is an error', async () => {
    const err = await failure(client.fetch(`${site.url}/loop/0`));
    expect(err.kind).toBe('protocol');
    expect(err.message).toBe(`too many redirects (more than 3) starting at ${site.url}/loop/0`);
  });

  test('onRedirect is told of each hop before it is requested; its error refuses the hop, stop ends at the 3xx, maxRedirects applies per fetch', async () => {
    const hops: unknown[] = [];
    const followed = await client.fetch(`${site.url}/r1`, { onRedirect: (hop) => void hops.push(hop) });
    expect(followed.text()).toBe('arrived');
    expect(hops).toEqual([
      { from: `${site.url}/r1`, to: `${site.url}/r2`, status: 301, hop: 1 },
      { from: `${site.url}/r2`, to: `${site.url}/final`, status: 302, hop: 2 },
    ]);

    const refusal = new Error('not on this crawl');
    site.requested.length = 0;
    await expect(
      client.fetch(`${site.url}/r1`, {
        onRedirect: ({ hop }) => {
          if (hop === 2) throw refusal;
        },
      }),
    ).rejects.toBe(refusal);
    expect(site.requested).toEqual(['/r1', '/r2']);

    site.requested.length = 0;
    const stopped = await client.fetch(`${site.url}/r1`, { onRedirect: () => 'stop' });
    expect([stopped.status, stopped.url, stopped.headers.location, stopped.redirectChain]).toEqual([
      301,
      `${site.url}/r1`,
      '/r2',
      [`${site.url}/r1`],
    ]);
    expect(site.requested).toEqual(['/r1']);

    const err = await failure(client.fetch(`${site.url}/loop/0`, { maxRedirects: 1 }));
    expect(err.message).toBe(`too many redirects (more than 1) starting at ${site.url}/loop/0`);
  });

  test('a body over maxBytes is refused, by Content-Length or by counting', async () => {
    for (const path of ['/big', '/big-chunked']) {
      const err = await failure(client.fetch(`${site.url}${path}`, { maxBytes: 1000 }));
      expect(err).toBeInstanceOf(ResponseTooLargeError);
      expect(err.kind).toBe('too_large');
      expect(err.message).toBe(`response from ${site.url}${path} is larger than the limit of 1000 bytes`);
      expect((await client.fetch(`${site.url}${path}`, { maxBytes: 5000 })).body.length).toBe(5000);
    }
  });

  test('a connection refused and a failed DNS lookup are told apart', async () => {
    const port = await freePort();
    const refused = await failure(client.fetch(`http://127.0.0.1:${port}/`));
    expect(refused).toMatchObject({
      kind: 'refused',
      code: 'ECONNREFUSED',
      message: `connection refused by 127.0.0.1:${port}`,
    });

    const dns = await failure(client.fetch('http://nosuchhost.invalid/'));
    expect(dns.kind).toBe('dns');
    expect(dns.message).toMatch(/^DNS lookup failed for nosuchhost\.invalid \(E[A-Z_]+\)$/);
  });
});

describe('deadlines and cancellation', () => {
  test('a server that never answers times out after timeoutMs, and the connection is closed', async () => {
    const client = new OutboundClient({ allowHosts: ['127.0.0.1'], userAgent: 'leadjobs-test', timeoutMs: 500 });
    try {
      const started = Date.now();
      const err = await failure(client.fetch(`${site.url}/hang`));
      expect(err).toMatchObject({ kind: 'timeout', message: `request to ${site.url}/hang timed out after 500 ms` });
      // It waited (the lower bound); the message names the 500 ms it waited for (timeoutMs ignored
      // would say the default 20,000 ms).
      expect(Date.now() - started).toBeGreaterThanOrEqual(450);
      await Promise.all(site.hanging);
    } finally {
      await client.close();
    }
  });

  test("aborting the caller's signal stops the fetch at once with the signal's reason", async () => {
    const client = new OutboundClient({ allowHosts: ['127.0.0.1'], userAgent: 'leadjobs-test' });
    try {
      const controller = new AbortController();
      const cancelled = new Error('activity cancelled');
      const pending = client.fetch(`${site.url}/hang`, { signal: controller.signal });
      await new Promise((resolve) => setTimeout(resolve, 200));
      controller.abort(cancelled);
      // The signal's own reason: a fetch the abort did not stop would end in the client's time-out
      // error instead; and the server sees the hanging connection closed.
      await expect(pending).rejects.toBe(cancelled);
      await Promise.all(site.hanging);

      await expect(client.fetch(`${site.url}/hello`, { signal: controller.signal })).rejects.toBe(cancelled);
    } finally {
      await client.close();
    }
  });
});

describe('a keep-alive connection the server closes as it is reused', () => {
  // The race behind a worker-kills failure ("other side closed", UND_ERR_SOCKET): the server drops an
  // idle keep-alive connection just as the client sends its next request on it. Here every
  // connection serves one request, says keep-alive, and is destroyed when a second arrives.
  async function startDroppingServer() {
    const { createServer: createTcpServer } = await import('node:net');
    let connections = 0;
    const methods: string[] = [];
    const server = createTcpServer((socket) => {
      connections++;
      let served = 0;
      socket.on('data', (chunk: Buffer) => {
        const text = chunk.toString('latin1');
        if (!text.includes('\r\n\r\n')) return;
        methods.push(text.split(' ')[0] ?? '');
        if (served++ > 0) return void socket.destroy();
        socket.write(
          'HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\nconnection: keep-alive\r\nkeep-alive: timeout=30\r\n\r\nok',
        );
      });
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return {
      url,
      methods,
      connections: () => connections,
      close: () => new Promise<void>((r) => server.close(() => r())),
    };
  }

  test('a GET is sent again once on a new connection; a POST is not (it may have been acted on)', async () => {
    const server = await startDroppingServer();
    const client = new OutboundClient({ allowHosts: ['127.0.0.1'], userAgent: 'leadjobs-test' });
    try {
      const idle = () => new Promise((r) => setTimeout(r, 50)); // the first connection back in the pool
      expect((await client.fetch(`${server.url}/one`)).text()).toBe('ok');
      await idle();
      expect((await client.fetch(`${server.url}/two`)).text()).toBe('ok');
      await idle();
      expect(server.connections()).toBe(2);
      expect(server.methods).toEqual(['GET', 'GET', 'GET']);

      const err = await failure(client.fetch(`${server.url}/three`, { method: 'POST', body: 'x' }));
      expect(err.kind).toBe('network');
      expect(server.methods.slice(3)).toEqual(['POST']);
    } finally {
      await client.close();
      await server.close();
    }
  });
});
