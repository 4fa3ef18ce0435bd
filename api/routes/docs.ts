import { createReadStream } from 'node:fs';
import path from 'node:path';
import Router from '@koa/router';
import type { AppState } from '../context';

const swaggerDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

export const DOCS_TITLE = 'leadjobs API reference';

const page = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>${DOCS_TITLE}</title>
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
  <div id="docs"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/assets/swagger-ui-standalone-preset.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

// Served as a file rather than inline, so the page works under a strict Content-Security-Policy.
const init = `window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#docs',
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: 'StandaloneLayout',
  persistAuthorization: true
});
`;

/** The OpenAPI document and an interactive reference page; Swagger UI is served from the package, no CDN. */
export function docsRoutes(openapi: () => Record<string, unknown>): Router<AppState> {
  const router = new Router<AppState>();
  let cached: Record<string, unknown> | undefined;
  router.get('/openapi.json', (ctx) => {
    ctx.body = cached ??= openapi();
  });
  router.get('/docs', (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = page;
  });
  router.get('/docs/init.js', (ctx) => {
    ctx.type = 'application/javascript; charset=utf-8';
    ctx.body = init;
  });
  router.get('/docs/assets/:file', (ctx) => {
    const file = ctx.params.file ?? '';
    const type = ASSETS[file];
    if (!type) return; // falls through to the 404 handler
    ctx.type = type;
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = createReadStream(path.join(swaggerDir, file));
  });
  return router;
}
