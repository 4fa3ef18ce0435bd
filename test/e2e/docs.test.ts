import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { startTestApi, type TestApi } from '../support/api';
import { launchOptions } from '../../lib/browser';

let api: TestApi;
let browser: Browser;
beforeAll(async () => {
  api = await startTestApi();
  browser = await chromium.launch(launchOptions(process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'));
});
afterAll(async () => {
  await browser.close();
  await api.close();
});

describe('API documentation', () => {
  test('/openapi.json is OpenAPI 3.1 with version 2.10.0 and documents the health route', async () => {
    const res = await fetch(`${api.url}/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as {
      openapi: string;
      info: { version: string };
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('2.10.0');
    const health = doc.paths['/api/v1/system/health']?.get;
    expect(Object.keys(health?.responses ?? {})).toEqual(expect.arrayContaining(['200', '401', '403', '429', '503']));
    const results = doc.paths['/api/v1/jobs/{job_id}/results']?.get;
    expect(Object.keys(results?.responses ?? {})).toEqual(expect.arrayContaining(['200', '202', '400', '404', '410']));
    // Every reference resolves inside this document.
    const schemas = (doc as unknown as { components: { schemas: Record<string, unknown> } }).components.schemas;
    const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? [];
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) expect(Object.keys(schemas)).toContain(ref.split('/').pop()?.replace('"', ''));
  });

  test('/docs renders in headless Chromium', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${api.url}/docs`);
    expect(await page.title()).toBe('leadjobs API reference');
    // Swagger UI fetched /openapi.json and rendered the title and the health operation from it.
    await page.getByText('leadjobs — asynchronous lead-data job service').first().waitFor({ timeout: 20000 });
    await page
      .locator('.opblock-summary-path', { hasText: '/api/v1/system/health' })
      .first()
      .waitFor({ timeout: 20000 });
    const dir = path.join(__dirname, '../../.stack/artifacts');
    mkdirSync(dir, { recursive: true });
    const shot = await page.screenshot({ path: path.join(dir, 'docs.png'), fullPage: false });
    expect(shot.length).toBeGreaterThan(20000);
    await page.close();
  });
});
