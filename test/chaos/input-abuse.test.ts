import { mkdirSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { startServer } from '../../api/server';
import { bearer, ownQueues, testConfig } from '../support/api';
import { ClientRepository } from '../../db/repositories/clients';
import { createDb, type Db } from '../../db';

// Hostile input (issue 17 item 9) against the real API process (api/server.ts): invalid UTF-8,
// foreign charsets, compressed bodies and a zip bomb, huge query strings and headers, and a
// slow-loris client. Each must get a clear 4xx and store nothing. Prints its figures and writes
// JSON to bench/results/.
jest.setTimeout(60_000);

let server: Awaited<ReturnType<typeof startServer>>;
let base: string;
let port: number;
let auth: string;
let db: Db;
const figures: Record<string, unknown> = {};

beforeAll(async () => {
  const config = testConfig({
    RATE_LIMIT_ENABLED: 'false',
    PORT: '0',
    HTTP_HEADERS_TIMEOUT_MS: '2000',
    ...ownQueues('abuse'),
  });
  db = createDb(config);
  server = await startServer(config);
  const address = server.server.address();
  port = typeof address === 'object' && address ? address.port : 0;
  base = `http://127.0.0.1:${port}`;
  auth = bearer(await new ClientRepository(db).create('abuse'));
});

afterAll(async () => {
  await server?.close();
  await db?.destroy();
  process.stdout.write(`input abuse\n${JSON.stringify(figures, null, 2)}\n`);
  const dir = path.join(__dirname, '../../bench/results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, 'input-abuse.json'),
    `${JSON.stringify({ at: new Date().toISOString(), figures }, null, 2)}\n`,
  );
});

/** A webhook create: a small JSON body that stores a row when it gets through. */
const post = (body: Buffer | string, headers: Record<string, string>) =>
  fetch(`${base}/api/v1/webhooks`, {
    method: 'POST',
    headers: { authorization: auth, ...headers },
    body: typeof body === 'string' ? body : new Uint8Array(body),
  });

async function webhookCount(): Promise<number> {
  const [row] = await db('webhooks').count<{ count: string }[]>('* as count');
  return Number(row?.count ?? 0);
}

describe('encodings', () => {
  test('invalid UTF-8 is a 422 saying so, and stores nothing', async () => {
    const before = await webhookCount();
    // "caf\xe9" in Latin-1 inside a JSON string: not UTF-8.
    const body = Buffer.concat([
      Buffer.from('{"url":"http://hooks.example/caf'),
      Buffer.from([0xe9]),
      Buffer.from('","events":["job.completed"]}'),
    ]);
    const res = await post(body, { 'content-type': 'application/json' });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({
      detail: [{ type: 'utf8_invalid', loc: ['body'], msg: 'request body is not valid UTF-8' }],
    });
    // An overlong encoding of "/" and a lone surrogate are refused the same way.
    for (const bad of [
      [0xc0, 0xaf],
      [0xed, 0xa0, 0x80],
    ]) {
      const r = await post(Buffer.concat([Buffer.from('{"url":"'), Buffer.from(bad), Buffer.from('"}')]), {
        'content-type': 'application/json',
      });
      expect(r.status).toBe(422);
    }
    expect(await webhookCount()).toBe(before);
    figures.invalid_utf8 = 'refused 422 (3 forms)';
  });

  test('a charset other than UTF-8 is a 415; UTF-8 with a BOM is read', async () => {
    const latin1 = await post(Buffer.from('{"url":"http://hooks.example/caf\xe9"}', 'latin1'), {
      'content-type': 'application/json; charset=iso-8859-1',
    });
    expect(latin1.status).toBe(415);
    expect(((await latin1.json()) as { detail: string }).detail).toContain("unsupported charset 'iso-8859-1'");
    const bom = await post(
      Buffer.concat([
        Buffer.from([0xef, 0xbb, 0xbf]),
        Buffer.from(JSON.stringify({ url: 'https://hooks.example/bom', events: ['job.completed'] })),
      ]),
      { 'content-type': 'application/json; charset=UTF-8' },
    );
    expect(bom.status).toBe(201);
  });

  test('gzip bodies are read; a gzip bomb stops at the size limit (413) and a broken stream is a 400', async () => {
    const ok = await post(gzipSync(JSON.stringify({ url: 'https://hooks.example/gz', events: ['job.completed'] })), {
      'content-type': 'application/json',
      'content-encoding': 'gzip',
    });
    expect(ok.status).toBe(201);
    const before = await webhookCount();
    // 100 MB of spaces in a JSON string compress to about 100 KB.
    const bomb = gzipSync(
      Buffer.concat([
        Buffer.from('{"url":"https://hooks.example/'),
        Buffer.alloc(100 * 1024 * 1024, 0x61),
        Buffer.from('"}'),
      ]),
    );
    const started = Date.now();
    const res = await post(bomb, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { detail: string }).detail).toBe('request body is larger than 2mb');
    figures.gzip_bomb = {
      compressed_bytes: bomb.length,
      inflated_bytes: 100 * 1024 * 1024,
      status: res.status,
      ms: Date.now() - started,
    };
    const broken = await post(Buffer.from('not gzip at all'), {
      'content-type': 'application/json',
      'content-encoding': 'gzip',
    });
    expect(broken.status).toBe(400);
    const br = await post(Buffer.from('x'), { 'content-type': 'application/json', 'content-encoding': 'compress' });
    expect(br.status).toBe(415);
    expect(await webhookCount()).toBe(before);
  });
});

describe('sizes', () => {
  test('a huge query string or header is refused with a 4xx before any handler runs', async () => {
    const res = await fetch(`${base}/api/v1/jobs/list?status_filter=${'q'.repeat(100_000)}`, {
      headers: { authorization: auth },
    });
    expect(res.status).toBe(431);
    const header = await fetch(`${base}/api/v1/jobs/list`, {
      headers: { authorization: auth, 'x-junk': 'j'.repeat(64 * 1024) },
    });
    expect(header.status).toBe(431);
    // A long but legal query is validated like any other.
    const long = await fetch(`${base}/api/v1/jobs/list?status_filter=${'q'.repeat(4000)}`, {
      headers: { authorization: auth },
    });
    expect(long.status).toBe(422);
    figures.huge_query = { query_bytes: 100_000, status: res.status };
  });
});

describe('slow clients', () => {
  test('a slow-loris client that never finishes its headers is answered 408 and disconnected after HTTP_HEADERS_TIMEOUT_MS', async () => {
    const started = Date.now();
    const outcome = await new Promise<{ data: string; closedAfterMs: number }>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      let data = '';
      socket.setEncoding('utf8');
      socket.on('data', (d: string) => (data += d));
      socket.once('error', reject);
      socket.once('close', () => {
        clearInterval(drip);
        resolve({ data, closedAfterMs: Date.now() - started });
      });
      socket.write('GET /api/v1/system/health HTTP/1.1\r\nHost: x\r\n');
      // One header byte every 500 ms: never done.
      const drip = setInterval(() => socket.write('X'), 500);
    });
    expect(outcome.data).toMatch(/^HTTP\/1\.1 408/);
    // 2 s allowed, checked every second.
    expect(outcome.closedAfterMs).toBeLessThan(10_000);
    figures.slow_loris = { headers_timeout_ms: 2000, closed_after_ms: outcome.closedAfterMs };
  });
});

describe('addresses with control characters (issue 38 item 3: SMTP command injection)', () => {
  // CR/LF command injection as a quoted local part (OWASP WSTG-INPV-11's mail-injection form), which
  // validator's isEmail accepts; the crawlVerify probe wrote it into RCPT TO as it was.
  const injected = '"x\r\nRCPT TO:<victim@target.example>\r\nDATA\r\n"@example.com';
  const msgs = async (res: Response) => ((await res.json()) as { detail: { msg: string }[] }).detail.map((d) => d.msg);

  test('a crawlVerify job and a de-duplication check with one are 422 naming control characters; no job is stored', async () => {
    const [before] = await db('jobs').count<{ count: string }[]>('* as count');
    const job = await fetch(`${base}/api/v1/jobs/submit`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'crawlVerify', payload: { emails: ['ok@example.com', injected] } }),
    });
    expect(job.status).toBe(422);
    expect(await msgs(job)).toContainEqual(expect.stringContaining('control characters'));
    const [after] = await db('jobs').count<{ count: string }[]>('* as count');
    expect(after?.count).toBe(before?.count);
    const dedupe = await fetch(`${base}/api/v1/dedupe/check`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: JSON.stringify({ record: { email: injected }, record_type: 'email' }),
    });
    expect(dedupe.status).toBe(422);
    expect(await msgs(dedupe)).toContainEqual(expect.stringContaining('control characters'));
    figures.address_control_characters = { crawl_verify_submit: job.status, dedupe_check: dedupe.status };
  });
});

describe('SVG attribute bombs (issue 38 item 1)', () => {
  test('an SVG element with 10,000 attributes (quadratic for jsdom and DOMPurify) is a 400 naming the limit, and nothing is stored', async () => {
    const attrs = Array.from({ length: 10_000 }, (_, i) => `a${i}="1"`).join(' ');
    const form = new FormData();
    form.set(
      'file',
      new Blob([`<svg xmlns="http://www.w3.org/2000/svg"><rect ${attrs}/></svg>`], { type: 'image/svg+xml' }),
      'bomb.svg',
    );
    const [before] = await db('media_files').count<{ count: string }[]>('* as count');
    const res = await fetch(`${base}/api/v1/media/images/upload`, {
      method: 'POST',
      headers: { authorization: auth },
      body: form,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { detail: string }).detail).toContain('more than 256 attributes');
    const [after] = await db('media_files').count<{ count: string }[]>('* as count');
    expect(after?.count).toBe(before?.count);
    figures.svg_attribute_bomb = { attributes: 10_000, status: res.status };
  });
});

describe('the public capture route (issue 38 item 5)', () => {
  test('hostile spellings of a capture address are a 404 in the error shape, and never reach another bucket', async () => {
    const { Storage } = await import('../../lib/storage');
    const config = testConfig({ ...ownQueues('abuse') });
    const storage = Storage.fromConfig(config);
    // A private object at a landing key of the results bucket: no address may serve it.
    const jobId = '5e1ec7ed-0000-4000-8000-00000000abcd';
    await storage.putPrivate(`landings/${jobId}/page.html`, '<p>private</p>', 'text/html');
    const bucket = storage.resultsBucket;
    const spellings = [
      `results/landings/${jobId}/page.html`,
      `cli_results/landings/${jobId}/page.html`,
      `..%2F${bucket}/landings/${jobId}/page.html`,
      `cli_x%2F..%2F..%2F${bucket}/landings/${jobId}/page.html`,
      `cli_x/landings/${jobId}%2F..%2F..%2Fpage.html/page.html`,
      `cli_x/landings/..%2F..%2F${bucket}%2Flandings%2F${jobId}/page.html`,
      `cli_x/landings/not-a-uuid/page.html`,
      `${'a'.repeat(5000)}/landings/${jobId}/page.html`,
    ];
    const statuses: number[] = [];
    try {
      for (const spelling of spellings) {
        const res = await fetch(`${base}/api/v1/captures/${spelling}`);
        statuses.push(res.status);
        const text = await res.text();
        expect([spelling, res.status]).toEqual([spelling, 404]);
        expect(text).not.toContain('private');
        expect(JSON.parse(text)).toEqual({ detail: expect.any(String) });
      }
    } finally {
      await storage.remove(bucket, `landings/${jobId}/page.html`);
    }
    figures.capture_route_spellings = { tried: spellings.length, statuses };
  });
});
