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
    expect(body).toMatchObject({ status: 'healthy', database: 'connected', queue: 'connected', search: 'connected', storage: 'connected' });
    expect(Date.parse(body.timestamp as string)).toBeGreaterThan(Date.now() - 60000);

    await minio.stop();
    const down = await fetch(`${api.url}/api/v1/system/health`, { headers: { authorization: auth } });
    expect(down.status).toBe(503);
    expect(await down.json()).toMatchObject({ status: 'unhealthy', database: 'connected', queue: 'connected', search: 'connected', storage: 'unavailable' });
  });
});
