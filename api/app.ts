import Koa from 'koa';
import { pingDatabase, type Db } from '../db';
import { ClientCache } from '../db/client-cache';
import { EventListener } from '../db/event-listener';
import { ContentRepository } from '../db/repositories/content';
import { DedupeRepository } from '../db/repositories/dedupe';
import { ExportRepository } from '../db/repositories/exports';
import { IntegrationRepository } from '../db/repositories/integrations';
import { JobResultStore } from '../db/repositories/job-results';
import { LocationRepository } from '../db/repositories/locations';
import { UnsubscribeRepository } from '../db/repositories/unsubscribe';
import { WebhookRepository } from '../db/repositories/webhooks';
import { AVAILABLE_JOB_TYPES, type JobType } from '../jobs';
import { webhooksTaskQueue } from '../jobs/queues';
import type { Config } from '../lib/config';
import { MailRepository } from '../db/repositories/mail';
import { CredentialCipher } from '../lib/cipher';
import type { Logger } from '../lib/logger';
import { AllowList, OutboundClient } from '../lib/outbound';
import type { Storage } from '../lib/storage';
import { unsubscribeSigningKey } from '../lib/unsubscribe';
import { pingTemporal, type Temporal } from '../lib/temporal';
import { pingSearch, type SearchClient } from '../search/client';
import { CampaignService } from './campaign-service';
import type { AppState } from './context';
import { EventService } from './event-service';
import { IcpService } from './icp-service';
import { IdapService } from './idap-service';
import { JobService } from './job-service';
import { ApiMetrics, metricsRoute } from './metrics';
import { QueueStatsService } from './queue-stats';
import { TemporalCalls } from './temporal-calls';
import { LeadIndexTrigger } from './lead-index';
import { AuthFailureLimit, bearerAuth, tokenAuth } from './middleware/auth';
import { requestBody } from './middleware/body';
import { errorHandler } from './middleware/errors';
import { methodNotAllowed } from './middleware/methods';
import { formatCheck, responseFormat } from './middleware/format';
import { rateLimit } from './middleware/rate-limit';
import { requestContext } from './middleware/request-id';
import { buildOpenApi } from './openapi';
import { ApiRouter } from './routing';
import { campaignRoutes } from './routes/campaigns';
import { captureRoutes } from './routes/captures';
import { contentRoutes } from './routes/content';
import { dedupeRoutes } from './routes/dedupe';
import { docsRoutes } from './routes/docs';
import { idapRoutes } from './routes/idap';
import { MEDIA_UPLOAD_PATHS, mediaRoutes } from './routes/media';
import { MediaUploads } from './media-upload';
import { MediaRepository } from '../db/repositories/media';
import { PeerTubeClient, peerTubeSettings } from '../lib/peertube';
import { integrationRoutes } from './routes/integrations';
import { eventRoutes } from './routes/events';
import { StreamTickets } from '../db/repositories/stream-tickets';
import { exportRoutes } from './routes/exports';
import { jobRoutes } from './routes/jobs';
import { locationRoutes } from './routes/locations';
import { MAIL_IMPORT_PATH, mailRoutes } from './routes/mail';
import { MailWorkflows } from './mail-service';
import { searchRoutes } from './routes/search';
import { systemRoutes } from './routes/system';
import { isUnsubscribePagePath, unsubscribeRoutes } from './routes/unsubscribe';
import { webhookRoutes } from './routes/webhooks';
import { WorkflowResultsService } from './workflow-results';
import { workflowResultRoutes } from './routes/workflow-results';

export interface AppDeps {
  config: Config;
  db: Db;
  temporal: Temporal;
  search: SearchClient;
  storage: Storage;
  logger: Logger;
  /** Job types with a worker implementation; defaults to the catalog's AVAILABLE_JOB_TYPES. */
  availableJobTypes?: readonly JobType[];
}

/** Builds the Koa app from its dependencies; it does not listen (api/server.ts does). */
export function createApp(deps: AppDeps): {
  app: Koa<AppState>;
  api: ApiRouter;
  metrics: ApiMetrics;
  close: () => Promise<void>;
} {
  const { config, db } = deps;
  const app = new Koa<AppState>();
  // The source address of the per-address limits and the unsubscribe audit: the socket's, or
  // X-Forwarded-For's when a trusted reverse proxy sets it. Koa reads the left-most entry, which the
  // caller writes; maxIpsCount keeps only the entries the trusted proxies appended (ips.slice(-n)[0]).
  app.proxy = config.TRUST_PROXY;
  app.silent = true; // errors are logged by errorHandler with the request id
  app.maxIpsCount = config.TRUSTED_PROXY_HOPS;

  const limiter = config.RATE_LIMIT_ENABLED
    ? [
        rateLimit(db, {
          perMinute: config.RATE_LIMIT_PER_MINUTE,
          burst: config.RATE_LIMIT_BURST,
          schema: config.DATABASE_SCHEMA,
        }),
      ]
    : [];
  const authFailures = config.RATE_LIMIT_ENABLED
    ? new AuthFailureLimit(db, {
        perMinute: config.AUTH_FAILURES_PER_MINUTE,
        blockSeconds: config.AUTH_FAILURE_BLOCK_SECONDS,
        schema: config.DATABASE_SCHEMA,
      })
    : undefined;
  // Client rows for authentication, kept in memory and dropped on the clients table's NOTIFY.
  const clientCache = new ClientCache(
    db,
    {
      connectionString: config.DATABASE_URL,
      schema: config.DATABASE_SCHEMA,
      maxAgeMs: config.AUTH_CACHE_SECONDS * 1000,
      maxEntries: 10_000,
    },
    deps.logger,
  );
  void clientCache
    .ensureListening()
    .catch((err: unknown) =>
      deps.logger.warn({ err: String(err) }, 'client cache could not listen yet; clients are read from the database'),
    );
  const streamTickets = new StreamTickets(db);
  const api = new ApiRouter(
    {
      client: [bearerAuth(clientCache, authFailures), ...limiter],
      token: [tokenAuth(clientCache, authFailures, streamTickets), ...limiter],
      none: config.RATE_LIMIT_ENABLED
        ? [
            rateLimit(db, {
              perMinute: config.PUBLIC_RATE_LIMIT_PER_MINUTE,
              burst: config.PUBLIC_RATE_LIMIT_BURST,
              schema: config.DATABASE_SCHEMA,
              per: 'address',
            }),
          ]
        : [],
    },
    [
      formatCheck(),
      // Routes that read their bodies themselves: the unsubscribe pages (HTML form posts and RFC 8058
      // one-click bodies), the media uploads (multipart, streamed: api/media-upload.ts) and the raw
      // mail import (message/rfc822: api/routes/mail/shared.ts readRawMessage).
      requestBody({
        limit: '2mb',
        skip: (path) => isUnsubscribePagePath(path) || MEDIA_UPLOAD_PATHS.includes(path) || MAIL_IMPORT_PATH.test(path),
      }),
    ],
  );

  const queueCalls = new TemporalCalls(deps.temporal);
  systemRoutes(
    api,
    {
      database: () => pingDatabase(db),
      queue: () => pingTemporal(deps.temporal, config.HEALTH_TIMEOUT_MS),
      search: () => pingSearch(deps.search),
      storage: () => deps.storage.ping(),
    },
    config.HEALTH_TIMEOUT_MS,
    new QueueStatsService(db, deps.temporal, queueCalls, config),
  );

  const metrics = new ApiMetrics(db);
  const jobs = new JobService(db, deps.storage, deps.temporal, config, deps.logger);
  jobRoutes(api, jobs, {
    availableTypes: deps.availableJobTypes ?? AVAILABLE_JOB_TYPES,
    onCreated: (type) => metrics.jobSubmitted(type),
  });
  const listener = new EventListener(config.DATABASE_URL, config.DATABASE_SCHEMA, db, deps.logger, {
    gapWaitMs: config.SSE_GAP_WAIT_MS,
  });
  eventRoutes(api, new EventService(db), listener, {
    heartbeatSeconds: config.SSE_HEARTBEAT_SECONDS,
    maxStreamsPerClient: config.SSE_MAX_STREAMS_PER_CLIENT,
    tickets: streamTickets,
  });
  dedupeRoutes(api, new DedupeRepository(db), {
    enabled: config.DEDUPE_ENABLED,
    mergeUndoDays: config.DEDUPE_MERGE_UNDO_DAYS,
  });
  const leadIndex = new LeadIndexTrigger(deps.temporal, config.TASK_QUEUE_PREFIX, deps.logger);
  // Calls to client-supplied URLs (video import URLs' redirects) go through the SSRF guard with
  // USER_URL_ALLOW_HOSTS, like the workers'; the integrations' live check calls an LLM base URL,
  // an endpoint the operator may allow in OUTBOUND_ALLOW_HOSTS (an in-house model server).
  const outbound = OutboundClient.fromConfig(config);
  // Before the IDAP routes: GET /api/v1/idap/media/{id} is the media proxy, not an IDAP fetch.
  const mediaRepo = new MediaRepository(db);
  const endpoints = OutboundClient.forEndpoints(config);
  const peertube = peerTubeSettings(config);
  mediaRoutes(api, {
    uploads: new MediaUploads(deps.storage, mediaRepo, {
      maxBytes: config.MEDIA_MAX_UPLOAD_BYTES,
      maxSvgBytes: config.MEDIA_MAX_SVG_BYTES,
      svgTimeoutMs: config.MEDIA_SVG_TIMEOUT_MS,
    }),
    repo: mediaRepo,
    storage: deps.storage,
    maxUploadBytes: config.MEDIA_MAX_UPLOAD_BYTES,
    peertube: 'missing' in peertube ? peertube : new PeerTubeClient(peertube),
    allowHosts: config.USER_URL_ALLOW_HOSTS,
    http: outbound,
  });
  captureRoutes(api, deps.storage);
  idapRoutes(api, new IdapService(db, leadIndex));
  searchRoutes(api, {
    icp: new IcpService(db, leadIndex),
    search: deps.search,
    indexPrefix: config.ES_INDEX_PREFIX,
    logger: deps.logger,
  });
  locationRoutes(api, new LocationRepository(db));
  // LLM keys, mailbox passwords and webhook secrets at rest; without a key the first two APIs answer 503.
  const cipher = CredentialCipher.fromConfig(config);
  webhookRoutes(
    api,
    new WebhookRepository(db, config.DATABASE_SCHEMA, cipher),
    webhooksTaskQueue(config.TASK_QUEUE_PREFIX),
    deps.logger,
  );
  const campaigns = new CampaignService(db, deps.temporal, config, deps.logger);
  campaignRoutes(api, campaigns);
  const workflowResults = new WorkflowResultsService(db, config, campaigns);
  workflowResultRoutes(api, workflowResults);
  exportRoutes(
    api,
    { exports: new ExportRepository(db), results: new JobResultStore(db, deps.storage) },
    { workflowResults, campaigns },
  );
  integrationRoutes(api, {
    repo: cipher ? new IntegrationRepository(db, cipher, config.DATABASE_SCHEMA) : undefined,
    http: endpoints,
    breaker: { failures: config.LLM_BREAKER_FAILURES, cooldownSeconds: config.LLM_BREAKER_COOLDOWN_SECONDS },
    timeoutMs: config.LLM_TIMEOUT_MS,
    prices: config.LLM_PRICES,
  });
  const mailWorkflows = new MailWorkflows(deps.temporal, config, deps.logger);
  mailRoutes(api, {
    repo: cipher ? new MailRepository(db, cipher) : undefined,
    workflows: mailWorkflows,
    suppressions: new UnsubscribeRepository(db),
    allowHosts: new AllowList(config.USER_URL_ALLOW_HOSTS),
    timeoutMs: config.MAIL_TIMEOUT_MS,
    maxMessageBytes: config.MAIL_MAX_MESSAGE_BYTES,
  });

  contentRoutes(api, { repo: new ContentRepository(db), dnsServers: config.DNS_SERVERS });
  unsubscribeRoutes(api, {
    repo: new UnsubscribeRepository(db),
    key: unsubscribeSigningKey(config),
    publicBaseUrl: config.PUBLIC_BASE_URL,
  });

  const docs = docsRoutes(() => buildOpenApi(api.routes, config.PUBLIC_BASE_URL));

  app.use(metrics.middleware());
  app.use(requestContext(deps.logger));
  app.use(responseFormat((path) => api.ownsFormat(path)));
  app.use(errorHandler());
  app.use(docs.routes());
  // On the main listener only for the operator's token, and only unless METRICS_PORT gives them a
  // listener of their own (api/server.ts); with neither, /metrics is a 404 here.
  if (config.METRICS_PORT === undefined && config.METRICS_TOKEN !== undefined)
    app.use(metricsRoute(metrics, config.METRICS_TOKEN));
  app.use(api.methodGuard());
  app.use(api.router.routes());
  app.use(methodNotAllowed());
  app.use(api.router.allowedMethods({ throw: false }));
  // Before the dependencies close: stop listening and let Temporal calls in flight finish.
  const close = async () => {
    await Promise.all([
      listener.close(),
      clientCache.close(),
      jobs.drain(),
      campaigns.drain(),
      queueCalls.drain(),
      mailWorkflows.drain(),
    ]);
    await Promise.all([outbound.close(), endpoints.close()]);
  };
  return { app, api, metrics, close };
}
