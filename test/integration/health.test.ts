import { bearer, startTestApi, type TestApi } from '../support/api';
import { startScratchMinio, type ScratchMinio } from '../support/processes';

let minio: ScratchMinio;
let api: TestApi;
beforeAll(async () => {
  minio = await startScratchMinio();
  api = await startTestApi({
    RATE_LIMIT_ENABLED: 'false',
    MINIO_ENDPOINT: minio.endpoint,
    MINIO_ACCESS_KEY: minio.accessKey,
    MINIO_SECRET_KEY: minio.secretKey,
    HEALTH_TIMEOUT_MS: '1500',
  });
});
afterAll(async () => {
  await api.close();
  await minio.stop();
});

describe('GET /api/v1/system/health', () => {
  test('reports each dependency, and 503 naming the one that stopped', async () => {
    const auth = bearer(await api.newClient());
    const up = await fetch(`${api.url}/api/v1/system/health`, { headers: { authorization: auth } });
    expect(up.status).toBe(200);
    const body = (await up.json()) as Record<string, string>;
    expect(body).toMatchObject({
      status: 'healthy',
      database: 'connected',
      queue: 'connected',
      search: 'connected',
      storage: 'connected',
    });
    expect(Date.parse(body.timestamp as string)).toBeGreaterThan(Date.now() - 60000);

    await minio.stop();
    const down = await fetch(`${api.url}/api/v1/system/health`, { headers: { authorization: auth } });
    expect(down.status).toBe(503);
    expect(await down.json()).toMatchObject({
      status: 'unhealthy',
      database: 'connected',
      queue: 'connected',
      search: 'connected',
      storage: 'unavailable',
    });
  });

  test('a media upload while storage is down is 503 with Retry-After, never 500, and stores nothing', async () => {
    const scratch = await startScratchMinio();
    const on = await startTestApi({
      RATE_LIMIT_ENABLED: 'false',
      MINIO_ENDPOINT: scratch.endpoint,
      MINIO_ACCESS_KEY: scratch.accessKey,
      MINIO_SECRET_KEY: scratch.secretKey,
    });
    try {
      const creds = await on.newClient();
      const png = Buffer.from(
        '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a5e0fa6b0000000049454e44ae426082',
        'hex',
      );
      const send = () => {
        const form = new FormData();
        form.set('file', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'dot.png');
        return fetch(`${on.url}/api/v1/media/images/upload`, {
          method: 'POST',
          headers: { authorization: bearer(creds) },
          body: form,
        });
      };
      expect((await send()).status).toBe(201);
      await scratch.stop();
      const down = await send();
      expect(down.status).toBe(503);
      expect(Number(down.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await on.deps.db('media_files').where({ client_id: creds.client_id }).count('* as n').first()).toEqual({
        n: '1',
      });
    } finally {
      await on.close();
      await scratch.stop();
    }
  });
});
