import { createHash, randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { sniff } from '../../lib/media/formats';
import { sanitizeSvg } from '../../lib/media/svg';
import { bearer, startTestApi, testConfig, type TestApi } from '../support/api';
import { caller, type Caller } from '../support/jobs';
import { imageFixtures, PDF, SVG_HOSTILE, type Fixtures } from '../support/media-fixtures';

// Media uploads (spec §4.8) and the IDAP media proxy through the real API, on the real Postgres
// and MinIO. The files are real images of the ten formats (test/support/media-fixtures.ts).

const SMALL_LIMIT = 256 * 1024;

let api: TestApi;
let small: TestApi;
let files: Fixtures;
let c: Caller & { clientId: string };
beforeAll(async () => {
  files = await imageFixtures();
  api = await startTestApi({ RATE_LIMIT_ENABLED: 'false' });
  small = await startTestApi({ RATE_LIMIT_ENABLED: 'false', MEDIA_MAX_UPLOAD_BYTES: String(SMALL_LIMIT) });
  c = await newCaller(api);
});
afterAll(async () => {
  await Promise.allSettled([api?.close(), small?.close()]);
});

async function newCaller(on: TestApi): Promise<Caller & { clientId: string }> {
  const creds = await on.newClient();
  return { ...caller(on, bearer(creds)), clientId: creds.client_id };
}

interface Uploaded {
  success: true;
  file_id: string;
  idap_ref: string;
  bucket: string;
  key: string;
  url: string;
  size: number;
  content_type: string;
  detected_format: string | null;
  original_filename: string | null;
  corrected_filename: string;
  format_corrected: boolean;
}

async function upload(
  who: Caller,
  path: 'images' | 'files',
  file: Buffer,
  filename: string,
  folder?: string,
  on: TestApi = api,
): Promise<Response> {
  const form = new FormData();
  if (folder !== undefined) form.set('folder', folder);
  form.set('file', new Blob([new Uint8Array(file)], { type: 'application/octet-stream' }), filename);
  return fetch(`${on.url}/api/v1/media/${path}/upload`, {
    method: 'POST',
    headers: { authorization: who.auth },
    body: form,
  });
}

async function uploadOk(
  who: Caller,
  path: 'images' | 'files',
  file: Buffer,
  filename: string,
  folder?: string,
): Promise<Uploaded> {
  const res = await upload(who, path, file, filename, folder);
  const body = (await res.json()) as Uploaded;
  if (res.status !== 201) throw new Error(`upload answered ${res.status}: ${JSON.stringify(body)}`);
  return body;
}

/** The public object behind `url` (the client's bucket is publicly readable). */
async function publicBytes(url: string): Promise<Buffer> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

const proxy = (who: Caller, id: string, headers: Record<string, string> = {}) =>
  fetch(`${api.url}/api/v1/idap/media/${id}`, { headers: { authorization: who.auth, ...headers } });

async function objectsIn(on: TestApi, bucket: string, prefix = ''): Promise<string[]> {
  const minio = on.deps.storage.minio;
  if (!(await minio.bucketExists(bucket))) return [];
  const names: string[] = [];
  for await (const o of minio.listObjectsV2(bucket, prefix, true))
    if ((o as { name?: string }).name) names.push((o as { name: string }).name);
  return names;
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('image upload: ten real formats', () => {
  const NAMES: Record<string, string> = {
    jpeg: 'photo.jpg',
    png: 'logo.png',
    webp: 'banner.webp',
    gif: 'anim.gif',
    bmp: 'scan.bmp',
    ico: 'favicon.ico',
    tiff: 'print.tiff',
    avif: 'hero.avif',
    heic: 'phone.heic',
    svg: 'icon.svg',
  };
  const TYPES: Record<string, string> = {
    jpeg: 'image/jpeg',
    png: 'image/png',
    webp: 'image/webp',
    gif: 'image/gif',
    bmp: 'image/bmp',
    ico: 'image/x-icon',
    tiff: 'image/tiff',
    avif: 'image/avif',
    heic: 'image/heic',
    svg: 'image/svg+xml',
  };

  test.each(Object.keys(NAMES))(
    '%s: stored with every §4.8 field, the stored object is that format, the proxy serves it',
    async (format) => {
      const bytes = files[format as keyof Fixtures];
      const name = NAMES[format] as string;
      const body = await uploadOk(c, 'images', bytes, name, 'gallery');
      expect(body).toEqual({
        success: true,
        file_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        idap_ref: `idap://media/${body.file_id}`,
        bucket: api.deps.storage.bucketFor(c.clientId),
        key: `media/gallery/${name}`,
        url: api.deps.storage.urlFor(body.bucket, `media/gallery/${name}`),
        size: expect.any(Number),
        content_type: TYPES[format],
        detected_format: format,
        original_filename: name,
        corrected_filename: name,
        format_corrected: false,
      });
      const stored = await publicBytes(body.url);
      expect(stored.length).toBe(body.size);
      if (format === 'svg') {
        // SVG is text: sniffed as a candidate and confirmed by parsing it back.
        expect((await sniff(stored)).format).toBe('svg-candidate');
        expect(sanitizeSvg(stored.toString('utf8')).svg).toContain('<svg');
      } else {
        expect(stored.equals(bytes)).toBe(true);
        expect((await sniff(stored)).format).toBe(format);
      }
      const served = await proxy(c, body.file_id);
      expect(served.status).toBe(200);
      expect(served.headers.get('content-type')).toBe(TYPES[format]);
      expect(Buffer.from(await served.arrayBuffer()).equals(stored)).toBe(true);
    },
  );
});

describe('spoofed extensions are corrected from the content', () => {
  test.each([
    ['jpeg', 'holiday.png', 'holiday.jpg'],
    ['png', 'avatar.gif', 'avatar.png'],
    ['webp', 'blob', 'blob.webp'],
    ['heic', 'IMG_0001.JPG', 'IMG_0001.heic'],
    ['svg', 'vector.png', 'vector.svg'],
  ] as const)('%s bytes named %s -> %s', async (format, name, corrected) => {
    const body = await uploadOk(c, 'images', files[format], name, 'spoofed');
    expect(body.detected_format).toBe(format);
    expect(body.original_filename).toBe(name);
    expect(body.corrected_filename).toBe(corrected);
    expect(body.format_corrected).toBe(true);
    expect(body.key).toBe(`media/spoofed/${corrected}`);
    const res = await fetch(body.url);
    expect(res.headers.get('content-type')).toBe(body.content_type);
  });

  test("content that is no image is refused with the spec's error, whatever its name, and nothing is stored", async () => {
    const who = await newCaller(api);
    for (const [bytes, name, mentions] of [
      [PDF, 'invoice.png', 'application/pdf'],
      [
        Buffer.from('<!doctype html><html><body><svg onload="alert(1)"></svg></body></html>'),
        'page.svg',
        'not a recognised image',
      ],
      [Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><rect></svg>'), 'broken.svg', 'well-formed'],
      [Buffer.alloc(0), 'empty.png', 'empty'],
    ] as const) {
      const res = await upload(who, 'images', bytes, name);
      const body = (await res.json()) as { success: boolean; error: string; detail: string };
      expect(res.status).toBe(400);
      expect(body.success).toBe(false);
      expect(body.error).toBe('Invalid image format');
      expect(body.detail).toContain(mentions);
    }
    expect(await objectsIn(api, api.deps.storage.bucketFor(who.clientId))).toEqual([]);
  });
});

test('a script-bearing SVG is stored and served without scripts, handlers or external references', async () => {
  const body = await uploadOk(c, 'images', Buffer.from(SVG_HOSTILE), 'hostile.svg');
  expect(body.detected_format).toBe('svg');
  for (const text of [(await publicBytes(body.url)).toString('utf8'), await (await proxy(c, body.file_id)).text()]) {
    for (const gone of ['<script', 'alert(', 'onload', 'onclick', 'tracker.example', 'foreignObject', 'javascript:'])
      expect(text).not.toContain(gone);
    expect(text).toContain('<rect');
  }
  const served = await proxy(c, body.file_id);
  expect(served.headers.get('content-security-policy')).toContain("default-src 'none'");
  expect(served.headers.get('x-content-type-options')).toBe('nosniff');
});

test('an SVG nested too deep to parse safely is refused with 400 (not a 500) and nothing is stored', async () => {
  const who = await newCaller(api);
  const deep = `<svg xmlns="http://www.w3.org/2000/svg">${'<g>'.repeat(10_000)}${'</g>'.repeat(10_000)}</svg>`;
  const res = await upload(who, 'images', Buffer.from(deep), 'deep.svg');
  const body = (await res.json()) as { success: boolean; error: string; detail: string };
  expect(res.status).toBe(400);
  expect(body).toEqual({
    success: false,
    error: 'Invalid image format',
    detail: expect.stringContaining('nested deeper than 256'),
  });
  expect(await objectsIn(api, api.deps.storage.bucketFor(who.clientId))).toEqual([]);
});

describe('folders and names', () => {
  test.each(['../other-client', 'a/../../b', 'x\\..\\..\\y', '%2e%2e/up'])(
    'folder %j is refused with 400 and nothing stored',
    async (folder) => {
      const who = await newCaller(api);
      const res = await upload(who, 'images', files.png, 'x.png', folder);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({
        success: false,
        error: 'Invalid folder',
        detail: expect.stringContaining('..'),
      });
      expect(await objectsIn(api, api.deps.storage.bucketFor(who.clientId))).toEqual([]);
    },
  );

  test("odd folders and filenames are normalised into the client's media prefix", async () => {
    const body = await uploadOk(c, 'images', files.png, '../../etc/pass wd.png', '/Blog//2026/./Cover Art/');
    expect(body.key).toBe('media/Blog/2026/Cover-Art/pass-wd.png');
    expect(body.original_filename).toBe('../../etc/pass wd.png');
    expect(body.corrected_filename).toBe('pass-wd.png');
    expect((await publicBytes(body.url)).equals(files.png)).toBe(true);
  });

  test('a folder field that comes after the file in the body is honoured (and still checked)', async () => {
    const res = await streamUpload(api, c.auth, 'images', files.webp, 'late.webp', { folder: 'late/folder' });
    expect(res.status).toBe(201);
    const body = JSON.parse(res.body) as Uploaded;
    expect(body.key).toBe('media/late/folder/late.webp');
    expect((await publicBytes(body.url)).equals(files.webp)).toBe(true);
    const who = await newCaller(api);
    const refused = await streamUpload(api, who.auth, 'images', files.webp, 'late.webp', { folder: '../escape' });
    expect(refused.status).toBe(400);
    expect(await objectsIn(api, api.deps.storage.bucketFor(who.clientId))).toEqual([]);
    expect(await objectsIn(api, api.deps.storage.resultsBucket, 'media-staging/')).toEqual([]);
  });

  test("uploads in flight that an API crash leaves behind expire: the results bucket gets a one-day staging rule beside the operator's", async () => {
    // A fresh API process: its storage has not set the rule yet. The operator's own rule is there first.
    const fresh = await startTestApi({ RATE_LIMIT_ENABLED: 'false' });
    try {
      const { minio, resultsBucket } = fresh.deps.storage;
      await fresh.deps.storage.ensureBucket(resultsBucket, false);
      const operatorRule = {
        ID: 'operator-exports',
        Status: 'Enabled',
        Filter: { Prefix: 'exports/' },
        Expiration: { Days: 30 },
      };
      await minio.setBucketLifecycle(resultsBucket, { Rule: [operatorRule] });
      const who = await newCaller(fresh);
      expect((await upload(who, 'images', files.png, 'x.png', undefined, fresh)).status).toBe(201);
      const rules = [(await minio.getBucketLifecycle(resultsBucket))?.Rule ?? []].flat();
      const summary = rules.map((r) => ({
        id: r.ID,
        prefix: r.Filter?.Prefix,
        days: Number(r.Expiration?.Days),
        status: r.Status,
      }));
      expect(summary).toEqual(
        expect.arrayContaining([
          { id: 'operator-exports', prefix: 'exports/', days: 30, status: 'Enabled' },
          { id: 'leadjobs-expire-staging', prefix: 'media-staging/', days: 1, status: 'Enabled' },
        ]),
      );
      expect(summary).toHaveLength(2);
    } finally {
      await fresh.close();
    }
  });

  test('the same name twice in one folder: both kept, the second under a suffixed key', async () => {
    const other = Buffer.concat([files.png, Buffer.from('second')]);
    const first = await uploadOk(c, 'images', files.png, 'same.png', 'dupes');
    const second = await uploadOk(c, 'images', other, 'same.png', 'dupes');
    expect(first.key).toBe('media/dupes/same.png');
    expect(second.key).toBe(`media/dupes/same-${second.file_id.slice(0, 8)}.png`);
    expect(second.corrected_filename).toBe(`same-${second.file_id.slice(0, 8)}.png`);
    expect((await publicBytes(first.url)).equals(files.png)).toBe(true);
    expect((await publicBytes(second.url)).equals(other)).toBe(true);
  });
});

describe('size limit (MEDIA_MAX_UPLOAD_BYTES)', () => {
  test('defaults to 25 MB', () => {
    expect(testConfig().MEDIA_MAX_UPLOAD_BYTES).toBe(25 * 1024 * 1024);
  });

  test('an oversized stream (no Content-Length) gets 413 with a clear detail and nothing is stored', async () => {
    const who = await newCaller(small);
    const big = Buffer.concat([files.png, randomBytes(SMALL_LIMIT * 4)]);
    const res = await streamUpload(small, who.auth, 'images', big, 'huge.png');
    expect(res.status).toBe(413);
    const body = JSON.parse(res.body) as { success: boolean; error: string; detail: string };
    expect(body.success).toBe(false);
    expect(body.detail).toContain(`${SMALL_LIMIT} bytes`);
    expect(body.detail).toContain('MEDIA_MAX_UPLOAD_BYTES');
    expect(await objectsIn(small, small.deps.storage.bucketFor(who.clientId))).toEqual([]);
    // The staging object of the refused upload is gone as well.
    expect(await objectsIn(small, small.deps.storage.resultsBucket, 'media-staging/')).toEqual([]);
  });

  test('an announced Content-Length over the limit is refused before the body is read', async () => {
    const who = await newCaller(small);
    const res = await upload(who, 'files', randomBytes(SMALL_LIMIT * 2), 'big.bin', undefined, small);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { detail: string }).detail).toContain('MEDIA_MAX_UPLOAD_BYTES');
  });

  test('a file just under the limit is stored whole', async () => {
    const who = await newCaller(small);
    const bytes = Buffer.concat([files.png, randomBytes(SMALL_LIMIT - files.png.length - 1)]);
    const res = await upload(who, 'images', bytes, 'fits.png', undefined, small);
    expect(res.status).toBe(201);
    const body = (await res.json()) as Uploaded;
    expect(body.size).toBe(bytes.length);
    expect(sha256(await publicBytes(body.url))).toBe(sha256(bytes));
  });

  test('a 12 MB file streams through in several parts and arrives intact', async () => {
    const bytes = Buffer.concat([files.jpeg, randomBytes(12 * 1024 * 1024)]);
    const res = await streamUpload(api, c.auth, 'files', bytes, 'video-raw.bin');
    expect(res.status).toBe(201);
    const body = JSON.parse(res.body) as Uploaded;
    expect(body.size).toBe(bytes.length);
    const served = await proxy(c, body.file_id);
    expect(served.headers.get('etag')).toBe(`"${sha256(bytes)}"`);
    expect(sha256(Buffer.from(await served.arrayBuffer()))).toBe(sha256(bytes));
  });
});

test('files endpoint: any file, no validation or correction, served as an attachment', async () => {
  const body = await uploadOk(c, 'files', PDF, 'Quarterly report.png', 'docs');
  expect(body).toMatchObject({
    key: 'media/docs/Quarterly-report.png',
    original_filename: 'Quarterly report.png',
    corrected_filename: 'Quarterly-report.png',
    format_corrected: false,
    detected_format: null,
    size: PDF.length,
  });
  const served = await proxy(c, body.file_id);
  expect(served.status).toBe(200);
  expect(served.headers.get('content-disposition')).toContain('attachment');
  // The public address serves it as an attachment too (an uploaded HTML page downloads, it does not render).
  expect((await fetch(body.url)).headers.get('content-disposition')).toContain('attachment');
  expect(Buffer.from(await served.arrayBuffer()).equals(PDF)).toBe(true);
});

test('files endpoint: a part type with parameters is kept (text/html; charset=utf-8), not replaced by octet-stream', async () => {
  const form = new FormData();
  form.set('file', new Blob(['<p>hi</p>'], { type: 'text/html; charset=utf-8' }), 'page.html');
  const res = await fetch(`${api.url}/api/v1/media/files/upload`, {
    method: 'POST',
    headers: { authorization: c.auth },
    body: form,
  });
  const body = (await res.json()) as Uploaded;
  expect([res.status, body.content_type]).toEqual([201, 'text/html; charset=utf-8']);
  expect((await proxy(c, body.file_id)).headers.get('content-type')).toBe('text/html; charset=utf-8');
});

test('files endpoint: an empty file is stored too (size 0), and served back empty', async () => {
  // It answered 500: MinIO refuses a multipart upload of no part, and an empty body streamed as one.
  const body = await uploadOk(c, 'files', Buffer.alloc(0), 'empty.txt');
  expect(body).toMatchObject({ size: 0, original_filename: 'empty.txt', corrected_filename: 'empty.txt' });
  const served = await proxy(c, body.file_id);
  expect(served.status).toBe(200);
  expect((await served.arrayBuffer()).byteLength).toBe(0);
});

describe('GET /api/v1/idap/media/{media_id}', () => {
  let file: Uploaded;
  beforeAll(async () => {
    file = await uploadOk(c, 'images', files.tiff, 'range.tiff');
  });

  test('ranges: first bytes, a suffix, an open end; 416 past the end', async () => {
    const first = await proxy(c, file.file_id, { range: 'bytes=0-9' });
    expect(first.status).toBe(206);
    expect(first.headers.get('content-range')).toBe(`bytes 0-9/${files.tiff.length}`);
    expect(Buffer.from(await first.arrayBuffer()).equals(files.tiff.subarray(0, 10))).toBe(true);
    const suffix = await proxy(c, file.file_id, { range: 'bytes=-5' });
    expect(suffix.status).toBe(206);
    expect(Buffer.from(await suffix.arrayBuffer()).equals(files.tiff.subarray(-5))).toBe(true);
    const open = await proxy(c, file.file_id, { range: 'bytes=100-' });
    expect(Buffer.from(await open.arrayBuffer()).equals(files.tiff.subarray(100))).toBe(true);
    const past = await proxy(c, file.file_id, { range: `bytes=${files.tiff.length + 10}-` });
    expect(past.status).toBe(416);
    expect(past.headers.get('content-range')).toBe(`bytes */${files.tiff.length}`);
  });

  test('ETag and caching headers; If-None-Match -> 304', async () => {
    const res = await proxy(c, file.file_id);
    expect(res.headers.get('etag')).toBe(`"${sha256(files.tiff)}"`);
    expect(res.headers.get('cache-control')).toContain('private');
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    expect(Number(res.headers.get('content-length'))).toBe(files.tiff.length);
    // As a browser revalidates (fetch adds `Cache-Control: no-cache` to conditional requests otherwise, which asks for the whole object).
    const again = await proxy(c, file.file_id, {
      'if-none-match': res.headers.get('etag') as string,
      'cache-control': 'max-age=0',
    });
    expect(again.status).toBe(304);
  });

  test('media stats and resolve stay 400, as for the other media types', async () => {
    for (const path of ['/api/v1/idap/media/stats', '/api/v1/idap/media/resolve', '/api/v1/idap/media']) {
      const res = await c.get(path);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { detail: string }).detail).toContain('/api/v1/idap/media/{media_id}');
    }
  });

  test("another client's media id, an unknown id and a malformed id are 404 resource_not_found", async () => {
    const other = await newCaller(api);
    for (const id of [file.file_id, '00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const res = await proxy(other, id);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ detail: 'resource_not_found' });
    }
  });
});

describe('request errors', () => {
  test('without a file part: 422 in the media error shape; JSON body: 415; no credential: 401', async () => {
    const form = new FormData();
    form.set('folder', 'x');
    const missing = await fetch(`${api.url}/api/v1/media/images/upload`, {
      method: 'POST',
      headers: { authorization: c.auth },
      body: form,
    });
    expect(missing.status).toBe(422);
    const body = (await missing.json()) as { success: boolean; detail: { loc: unknown[] }[] };
    expect(body.success).toBe(false);
    expect(body.detail[0]?.loc).toEqual(['body', 'file']);
    const json = await c.post('/api/v1/media/images/upload', { file: 'x' });
    expect(json.status).toBe(415);
    expect(((await json.json()) as { success: boolean }).success).toBe(false);
    const anon = await fetch(`${api.url}/api/v1/media/files/upload`, { method: 'POST', body: form });
    expect(anon.status).toBe(401);
  });

  test('the upload routes and the media proxy are in the OpenAPI document', async () => {
    const doc = (await (await fetch(`${api.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, unknown> } }>>;
    };
    expect(Object.keys(doc.paths['/api/v1/media/images/upload']?.post?.requestBody?.content ?? {})).toEqual([
      'multipart/form-data',
    ]);
    expect(doc.paths['/api/v1/media/files/upload']?.post).toBeDefined();
    expect(doc.paths['/api/v1/idap/media/{media_id}']?.get).toBeDefined();
  });
});

/** A multipart upload sent in chunks without Content-Length; the answer may come before the body ends. */
function streamUpload(
  on: TestApi,
  auth: string,
  path: 'images' | 'files',
  file: Buffer,
  filename: string,
  fieldsAfter: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  const boundary = `----media${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const after = Object.entries(fieldsAfter)
    .map(([k, v]) => `\r\n--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}`)
    .join('');
  const tail = Buffer.from(`${after}\r\n--${boundary}--\r\n`);
  const url = new URL(`${on.url}/api/v1/media/${path}/upload`);
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: {
          authorization: auth,
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'transfer-encoding': 'chunked',
        },
      },
      (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    // The server may close the connection once it has answered 413.
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    void (async () => {
      const chunks: Buffer[] = [head];
      for (let i = 0; i < file.length; i += 64 * 1024) chunks.push(file.subarray(i, i + 64 * 1024));
      chunks.push(tail);
      for (const chunk of chunks) {
        if (answered || req.destroyed) return;
        if (!req.write(chunk)) await new Promise((r) => req.once('drain', r));
      }
      req.end();
    })();
  });
}
