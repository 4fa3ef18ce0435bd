/**
 * API composition root: parses config once, opens one connection to each dependency, listens,
 * and drains on SIGTERM/SIGINT (stop accepting, finish in-flight requests, close connections).
 */
import { createServer, type Server } from 'node:http';
import { createDb } from '../db';
import { loadConfigOrExit, type Config } from '../lib/config';
import type { JobType } from '../jobs';
import { createLogger } from '../lib/logger';
import { Storage } from '../lib/storage';
import { connectTemporalLazy } from '../lib/temporal';
import { createSearchClient } from '../search/client';
import { createApp } from './app';
import type { ApiMetrics } from './metrics';

export async function startServer(
  config: Config,
  availableJobTypes?: readonly JobType[],
): Promise<{ server: Server; close: () => Promise<void> }> {
  const logger = createLogger(config.LOG_LEVEL, 'api');
  const db = createDb(config);
  const temporal = connectTemporalLazy(config);
  const search = createSearchClient(config);
  const storage = Storage.fromConfig(config);
  const {
    app,
    metrics,
    close: closeApp,
  } = createApp({ config, db, temporal, search, storage, logger, availableJobTypes });
  const metricsServer =
    config.METRICS_PORT === undefined
      ? undefined
      : await listenMetrics(metrics, config.METRICS_HOST, config.METRICS_PORT);
  if (metricsServer)
    logger.info({ url: `http://${config.METRICS_HOST}:${config.METRICS_PORT}/metrics` }, 'metrics listening');
  else if (config.METRICS_TOKEN === undefined)
    logger.info(
      'metrics are not served: set METRICS_PORT (a listener of their own) or METRICS_TOKEN (GET /metrics on PORT with that bearer token)',
    );

  const server = await new Promise<Server>((resolve, reject) => {
    // Slow clients (slow-loris) are cut off: headers and whole requests have deadlines, checked every second.
    const s = createServer(
      {
        headersTimeout: config.HTTP_HEADERS_TIMEOUT_MS,
        requestTimeout: config.HTTP_REQUEST_TIMEOUT_MS,
        keepAliveTimeout: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
        connectionsCheckingInterval: 1000,
      },
      app.callback(),
    );
    s.listen(config.PORT, config.HOST, () => resolve(s));
    s.once('error', reject);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  logger.info({ url: `http://${config.HOST}:${port}`, docs: `http://${config.HOST}:${port}/docs` }, 'api listening');

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      logger.info('api draining');
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Keep-alive sockets would hold close() open; end idle ones now and the rest after the grace period.
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), config.SHUTDOWN_GRACE_MS).unref();
      });
      if (metricsServer) await new Promise((resolve) => metricsServer.close(resolve));
      await closeApp();
      await Promise.allSettled([db.destroy(), temporal.connection.close(), search.close()]);
      logger.info('api stopped');
    })());
  return { server, close };
}

/** The metrics on a listener of their own (METRICS_PORT): GET /metrics, anything else 404. */
async function listenMetrics(metrics: ApiMetrics, host: string, port: number): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ detail: 'not found' }));
      return;
    }
    metrics.render().then(
      ({ contentType, body }) => res.writeHead(200, { 'content-type': contentType }).end(body),
      () =>
        res
          .writeHead(500, { 'content-type': 'application/json' })
          .end(JSON.stringify({ detail: 'metrics could not be collected' })),
    );
  });
  return new Promise<Server>((resolve, reject) => {
    server.listen(port, host, () => resolve(server));
    server.once('error', reject);
  });
}

if (require.main === module) {
  startServer(loadConfigOrExit()).then(
    ({ close }) => {
      for (const signal of ['SIGTERM', 'SIGINT'] as const) {
        process.once(signal, () => {
          close().then(
            () => process.exit(0),
            () => process.exit(1),
          );
        });
      }
    },
    (err: unknown) => {
      process.stderr.write(`api failed to start: ${(err as Error).message}\n`);
      process.exit(1);
    },
  );
}
