import { isIP } from 'node:net';
import { z } from 'zod';

/**
 * The service's configuration, parsed once from the environment by a composition root
 * (api/server.ts, workers/main.ts, db/cli.ts) and passed down. Nothing else reads process.env.
 * Secrets (MinIO keys, API keys) have no defaults: a missing required one fails at start and names the variable.
 */
const csv = z
  .string()
  .default('')
  .transform((s) =>
    s
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean),
  );
const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');
const int = (def: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce.number().int().min(min).max(max).default(def);

/** A 32-byte key written as base64 (`openssl rand -base64 32`). */
const base64Key = z
  .string()
  .refine(
    (v) => /^[A-Za-z0-9+/]+={0,2}$/.test(v) && Buffer.from(v, 'base64').length === 32,
    'must be 32 bytes, base64-encoded (openssl rand -base64 32)',
  );
/** A signing key written as base64, at least 32 bytes (`openssl rand -base64 32`). */
const base64SigningKey = z
  .string()
  .refine(
    (v) => /^[A-Za-z0-9+/]+={0,2}$/.test(v) && Buffer.from(v, 'base64').length >= 32,
    'must be at least 32 bytes, base64-encoded (openssl rand -base64 32)',
  );
const llmPrices = z.record(z.string().min(1), z.strictObject({ input: z.number().min(0), output: z.number().min(0) }));

/** `ip`, `ip:port`, `[ipv6]:port` or a bare IPv6 address: what dns.Resolver#setServers takes. */
function isResolverAddress(v: string): boolean {
  const m = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(v) ?? /^([\d.]+)(?::(\d{1,5}))?$/.exec(v);
  if (m) return isIP(m[1] ?? '') !== 0 && (m[2] === undefined || Number(m[2]) <= 65535);
  return isIP(v) === 6;
}

/** Settings that only make sense over TLS: any of them turns TEMPORAL_TLS on unless it is set. */
const temporalTlsSettings = [
  'TEMPORAL_TLS_CERT_PATH',
  'TEMPORAL_TLS_KEY_PATH',
  'TEMPORAL_TLS_CA_PATH',
  'TEMPORAL_TLS_SERVER_NAME',
] as const;

export const dbConfigSchema = z.object({
  /** The Postgres database, as a connection URL. */
  DATABASE_URL: z.string().url().default('postgres://postgres@127.0.0.1:5432/leadjobs'),
  /** Postgres schema the service's tables live in (tests give each run its own). */
  DATABASE_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/)
    .default('public'),
  /** Postgres connections per process (the pool's largest size). */
  DATABASE_POOL_MAX: int(10, 1, 200),
});

export const configSchema = dbConfigSchema
  .extend({
    /**
     * `production` requires INTEGRATIONS_ENCRYPTION_KEY and UNSUBSCRIBE_SIGNING_KEY at start; in `development`
     * and `test` they may be unset (the APIs that need them then say so).
     */
    NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
    /** Address the API listens on. */
    HOST: z.string().default('127.0.0.1'),
    /** Port the API listens on. */
    PORT: int(8080, 0, 65535),
    /**
     * `fatal`…`trace` or `silent`; JSON logs with a request id per line. The worker writes the Temporal SDK's
     * lines in the same JSON (`component: "temporal-sdk"`); the SDK's INFO lines show at `debug` only.
     */
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /**
     * Prometheus metrics of the API: set, served at GET /metrics only on this port (on METRICS_HOST, no token),
     * so the public listener does not expose them; unset, on PORT and only with METRICS_TOKEN.
     */
    METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
    /** Address the METRICS_PORT listener binds to. */
    METRICS_HOST: z.string().default('127.0.0.1'),
    /**
     * The operator's token for GET /metrics on PORT (a secret, at least 16 characters: no default), sent as
     * `Authorization: Bearer <token>` (Prometheus: `authorization.credentials`); wrong or missing: 401. With
     * METRICS_PORT unset and no token, PORT does not serve metrics at all (404): they name every route, queue
     * depth and outbox lag, which no client of a public listener should read. The METRICS_PORT listener needs no token.
     */
    METRICS_TOKEN: z.string().min(16, 'at least 16 characters (openssl rand -hex 16)').optional(),
    /** The worker's Prometheus exporter (Temporal SDK metrics plus the service's own), host:port; unset: none. */
    WORKER_METRICS_ADDRESS: z
      .string()
      .regex(/^[^:\s]+:\d{1,5}$/, 'host:port, e.g. 127.0.0.1:9464')
      .optional(),
    /**
     * Public base URL of the API, shown in the OpenAPI `servers` list and used in the links it prints and
     * documents (unsubscribe links: `{PUBLIC_BASE_URL}/u/{token}`), and by workers in the links they store:
     * unsubscribe links and crawlLanding's html_bundle_url (set it on workers too). Unset: the API's links use
     * the address the request came to (scheme and `Host`), the workers' `http://HOST:PORT`.
     */
    PUBLIC_BASE_URL: z.string().url().optional(),

    /** The Temporal frontend, host:port. */
    TEMPORAL_ADDRESS: z.string().default('127.0.0.1:7233'),
    /** The Temporal namespace. */
    TEMPORAL_NAMESPACE: z.string().default('default'),
    /** Temporal Web UI address, printed for operators. */
    TEMPORAL_UI_URL: z.string().url().default('http://127.0.0.1:8233'),
    /**
     * TLS to the Temporal frontend (`true`/`false`). Unset: on when any TEMPORAL_TLS_* setting or TEMPORAL_API_KEY
     * is set, else off; `false` with any of them set is a config error.
     */
    TEMPORAL_TLS: bool.optional(),
    /** mTLS client certificate (PEM file, read at start), with its private key in TEMPORAL_TLS_KEY_PATH; set both or neither. */
    TEMPORAL_TLS_CERT_PATH: z.string().optional(),
    /** Private key of the mTLS client certificate TEMPORAL_TLS_CERT_PATH (PEM file, read at start); set both or neither. */
    TEMPORAL_TLS_KEY_PATH: z.string().optional(),
    /** CA that signed the server's certificate (PEM file; self-hosted clusters); unset: the system's trusted CAs. */
    TEMPORAL_TLS_CA_PATH: z.string().optional(),
    /** Name the server's certificate must carry (also sent as SNI), when it is not TEMPORAL_ADDRESS's host; unset: that host. */
    TEMPORAL_TLS_SERVER_NAME: z.string().optional(),
    /** Temporal Cloud API key, a secret: no default. Sent as `Authorization: Bearer`, so only over TLS (it turns TEMPORAL_TLS on). */
    TEMPORAL_API_KEY: z.string().optional(),
    /** Prefix of every task queue name (`<prefix>-crawl-site`, …), so several deployments (or test runs) can share one Temporal. */
    TASK_QUEUE_PREFIX: z
      .string()
      .regex(/^[a-z0-9-]*$/)
      .default('leadjobs'),
    /** The worker's identity, recorded as a job's `worker_id`; default `<hostname>:<pid>`. */
    WORKER_ID: z.string().min(1).optional(),

    /** The Elasticsearch URL. */
    ELASTICSEARCH_URL: z.string().url().default('http://127.0.0.1:9200'),
    /** Prefix of every Elasticsearch index name. */
    ES_INDEX_PREFIX: z
      .string()
      .regex(/^[a-z0-9_-]+$/)
      .default('leadjobs'),

    /** MinIO / S3 endpoint. */
    MINIO_ENDPOINT: z.string().url().default('http://127.0.0.1:9000'),
    /** MinIO access key, a secret: no default, required. */
    MINIO_ACCESS_KEY: z.string().min(1),
    /** MinIO secret key, a secret: no default, required. */
    MINIO_SECRET_KEY: z.string().min(1),
    /** Bucket region. */
    MINIO_REGION: z.string().default('us-east-1'),
    /**
     * Media buckets are named `<prefix>-<client id>`, the id in lower case and `_` as `-` (`leadjobs-cli-abc…`),
     * at most 63 characters; results go to `<prefix>-results` (private). Tests use their own prefix.
     */
    MINIO_BUCKET_PREFIX: z
      .string()
      .regex(/^[a-z0-9-]+$/)
      .default('leadjobs'),
    /** Public address of hosted media: `{MEDIA_PUBLIC_URL}/{bucket}/{key}`. Defaults to MINIO_ENDPOINT. */
    MEDIA_PUBLIC_URL: z.string().url().optional(),

    // Media uploads (spec §4.8; api/routes/media.ts): the MEDIA_* settings.
    /**
     * Largest upload of POST /api/v1/media/images/upload and /files/upload; larger ones get 413 and nothing is
     * stored (uploads stream, one 5 MiB part in memory).
     */
    MEDIA_MAX_UPLOAD_BYTES: int(25 * 1024 * 1024, 1, 5 * 1024 ** 3),
    /** Largest SVG image: an SVG is parsed and sanitised in memory (binary formats stream through). */
    MEDIA_MAX_SVG_BYTES: int(5 * 1024 * 1024, 1024, 64 * 1024 * 1024),
    /** Deadline of sanitising one SVG (in a worker thread, off the API's event loop); past it the upload is a 413 and nothing is stored. */
    MEDIA_SVG_TIMEOUT_MS: int(10_000, 100, 120_000),

    // PeerTube video import (spec §4.8, §2.14): the PEERTUBE_* settings. Unset: the video routes answer 503 naming what is missing.
    /**
     * The PeerTube instance videos are imported into, e.g. https://videos.example.org (there is no public default
     * instance): its own public address, as PeerTube hands out its OAuth client only to that Host. Unset, like any
     * PEERTUBE_* setting: the video routes answer 503 naming what is missing.
     */
    PEERTUBE_BASE_URL: z.string().url().optional(),
    /** The account videos are imported as (password grant). */
    PEERTUBE_USERNAME: z.string().min(1).optional(),
    /** The password of PEERTUBE_USERNAME (password grant). A secret: no default. */
    PEERTUBE_PASSWORD: z.string().min(1).optional(),
    /** The channel imported videos are published in (numeric id, as the import API takes it). */
    PEERTUBE_CHANNEL_ID: z.coerce.number().int().min(1).optional(),
    /** Deadline of one video route's calls to PeerTube (token, import, video), together; past it 503. */
    PEERTUBE_TIMEOUT_MS: int(20000, 1000, 120000),

    /**
     * Comma-separated hosts, IPs or CIDRs that the operator's own endpoints may reach although private or loopback
     * (SSRF guard): the provider base URLs (SEC_*, COMPANIES_HOUSE_BASE_URL, VIES_BASE_URL, GOOGLE_PLACES_BASE_URL,
     * NOMINATIM_BASE_URL, OVERPASS_BASE_URL, SOCIAL_BASE_URL) and LLM integrations' base URLs (an
     * in-house model server). Until issue 38 this one list also let every client's crawls, captures,
     * webhooks, imports and mailboxes reach these hosts; now those follow USER_URL_ALLOW_HOSTS only.
     */
    OUTBOUND_ALLOW_HOSTS: csv,
    /**
     * Comma-separated hosts, IPs or CIDRs that URLs and hosts a client names may reach although private or loopback:
     * crawlSite and crawlLanding pages (and what they load), webhook URLs, video import URLs, mailbox
     * servers and the mail servers crawlVerify probes. Empty in production; whatever is listed here
     * every tenant can reach (the operator's endpoints too). Test stand-ins on 127.0.0.1 go here.
     */
    USER_URL_ALLOW_HOSTS: csv,
    /**
     * Browser for Playwright, launched with its sandbox on (never `--no-sandbox`). A worker running as root points
     * it at dev/chromium-sandboxed, which starts Chromium as the unprivileged user `leadjobs-browser` with an empty
     * environment; dev/stack writes that into .stack/env (see dev/README.md).
     */
    CHROMIUM_PATH: z.string().default('/usr/bin/chromium'),

    // Website crawler (activities/site: the SITE_* settings).
    /** crawlSite's declared agent, with a URL that says who crawls; robots.txt groups are matched against its product token. */
    SITE_USER_AGENT: z.string().min(1).default('leadjobs-crawler/1.0 (+https://github.com/leadjobs/leadjobs)'),
    /** crawlSite requests in flight to one site at a time. */
    SITE_CONCURRENCY_PER_HOST: int(2, 1, 32),
    /** Politeness pause between the starts of two requests to one site (robots.txt Crawl-delay raises it, up to 5 s). */
    SITE_DELAY_MS: int(250, 0, 60000),
    /** Largest page read (after decompression); larger ones are skipped and listed in the result's errors. */
    SITE_MAX_PAGE_BYTES: int(5 * 1024 * 1024, 1024, 64 * 1024 * 1024),
    /** Deadline for one page (connect, redirects, body; with render_js the whole render). */
    SITE_PAGE_TIMEOUT_MS: int(15000, 1000, 120000),
    /**
     * Worker threads that read crawled pages (the parse, every extractor and the compendium's Markdown,
     * a few ms of CPU a page), shared by the worker's crawls, so that fetching and heartbeats never wait
     * for a page being read. 0: pages are read on the activity's own event loop.
     */
    SITE_PAGE_THREADS: int(1, 0, 64),

    // Landing-page capture (activities/landing: the LANDING_* settings).
    /** crawlLanding: how long the worker's Chromium stays up with no capture running; the next capture after that launches it again. */
    LANDING_BROWSER_IDLE_MS: int(30000, 0, 3600000),
    /** crawlLanding: largest response one page request may read (documents, images, scripts); larger ones fail in the page. */
    LANDING_MAX_RESOURCE_BYTES: int(10 * 1024 * 1024, 1024, 64 * 1024 * 1024),
    /** crawlLanding: largest self-contained HTML bundle; past it, images stay links and the error is listed. */
    LANDING_MAX_BUNDLE_BYTES: int(20 * 1024 * 1024, 64 * 1024, 128 * 1024 * 1024),
    /**
     * Sub-resources (images, stylesheets, fonts, scripts) one capture reads at once; the page's further
     * requests wait their turn. With LANDING_MAX_RESOURCE_BYTES it bounds what one capture holds in
     * memory (a hostile page asked for 40 large images at once: issue 38 item 10).
     */
    LANDING_MAX_CONCURRENT_SUBRESOURCES: int(16, 1, 256),
    /**
     * Bytes one capture reads over the network in all: the page, its sub-resources and the bundle's own
     * fetches. Past it the page's further requests fail and the result's errors say so.
     */
    LANDING_MAX_CAPTURE_BYTES: int(64 * 1024 * 1024, 1024 * 1024, 1024 * 1024 * 1024),

    /** Requests one client may make per minute. */
    RATE_LIMIT_PER_MINUTE: int(100, 1),
    /** Requests one client may make per second. */
    RATE_LIMIT_BURST: int(20, 1),
    /** `false` turns the limiters off: per client, per address and for failed authentications (tests of other features). */
    RATE_LIMIT_ENABLED: bool.default(true),
    /**
     * The routes without credentials (unsubscribe pages `/u/{token}`, the public content API): requests per minute
     * from one source address, all API processes together; past it (or PUBLIC_RATE_LIMIT_BURST) 429 with `Retry-After`.
     */
    PUBLIC_RATE_LIMIT_PER_MINUTE: int(300, 1),
    /** The routes without credentials: requests per second from one source address, all API processes together. */
    PUBLIC_RATE_LIMIT_BURST: int(30, 1),
    /**
     * Behind a reverse proxy that sets X-Forwarded-For: take the client address from it (Koa's app.proxy), otherwise
     * the socket's. The per-address limits, failed-authentication limits and unsubscribe audit rows then use the
     * address it names. Leave it off when clients reach the API directly, or they could pick their own address.
     */
    TRUST_PROXY: bool.default(false),
    /**
     * With TRUST_PROXY: how many reverse proxies in a row append to X-Forwarded-For in front of the API (a CDN in
     * front of a load balancer is 2). The client address is the entry that many from the right (1: the last one,
     * written by the proxy that talks to the API); anything further left was written by the caller and is ignored.
     */
    TRUSTED_PROXY_HOPS: int(1, 1, 20),
    /** Failed authentications (401) one source address may make per minute, counted by all API processes together. */
    AUTH_FAILURES_PER_MINUTE: int(10, 1),
    /** Past that limit the address's failing requests get 429 (with `Retry-After`) for this long; valid credentials always pass. */
    AUTH_FAILURE_BLOCK_SECONDS: int(300, 1, 86400),
    /**
     * How long the API may authenticate a client from its in-memory copy of the client row (key and
     * secret hashes, active flag) before reading it again; changes reach every process at once by
     * LISTEN/NOTIFY regardless. 0 reads the row on every request.
     */
    AUTH_CACHE_SECONDS: int(300, 0, 86400),

    /** Spec §8 queue capacity: most queued crawlMaps jobs on its task queue, across all clients; more -> 503. */
    QUEUE_CAPACITY_CRAWL_MAPS: int(10000, 1),
    /** Spec §8 queue capacity: most queued crawlSite jobs on its task queue, across all clients; more -> 503. */
    QUEUE_CAPACITY_CRAWL_SITE: int(5000, 1),
    /**
     * Event-stream keep-alive interval (spec §6: every 30 s); a stream whose client has not taken what was written
     * for two intervals is closed.
     */
    SSE_HEARTBEAT_SECONDS: z.coerce.number().min(0.05).max(300).default(30),
    /** Event streams one client may hold open on one API process (1-10000); more -> 429. */
    SSE_MAX_STREAMS_PER_CLIENT: int(20, 1, 10000),
    /**
     * Events are streamed in id order: one waits for a concurrent writer that holds a lower id to
     * commit or roll back, but no longer than this (0-60000); an event of a writer held open longer comes late,
     * after later ones.
     */
    SSE_GAP_WAIT_MS: int(5000, 0, 60000),
    /** Campaigns one client may have running at once (1-10000; each holds a workflow for up to 30 days); more -> 429 and nothing is stored. */
    CAMPAIGN_MAX_RUNNING_PER_CLIENT: int(20, 1, 10000),

    // Company registries (crawlCompanyData). Base URLs default to the real services; tests point them at stand-ins.
    /** US SEC EDGAR's main host, for the ticker files (crawlCompanyData, country US). */
    SEC_BASE_URL: z.string().url().default('https://www.sec.gov'),
    /** US SEC EDGAR's data host, for the submissions (crawlCompanyData, country US). */
    SEC_DATA_BASE_URL: z.string().url().default('https://data.sec.gov'),
    /** US SEC EDGAR's full-text search host (crawlCompanyData, country US; not used yet). */
    SEC_EFTS_BASE_URL: z.string().url().default('https://efts.sec.gov'),
    /** SEC's required declared agent `"<Company> <contact email>"`. Unset: US jobs fail and say so. */
    SEC_USER_AGENT: z
      .string()
      .regex(/\S+\s+\S+@\S+/, 'must be "<Company> <contact email>"')
      .optional(),
    /** SEC fair access: at most this many requests per second across all workers (the SEC queue runs at 40% of it). */
    SEC_REQUESTS_PER_SECOND: z.coerce.number().gt(0).max(10).default(10),
    /** UK Companies House API (crawlCompanyData, country GB). */
    COMPANIES_HOUSE_BASE_URL: z.string().url().default('https://api.company-information.service.gov.uk'),
    /** Companies House REST key. A secret: no default. Unset: GB jobs fail and say so. */
    COMPANIES_HOUSE_API_KEY: z.string().min(1).optional(),
    /** Companies House allows 600 requests per 5 minutes per key, across all workers. */
    COMPANIES_HOUSE_REQUESTS_PER_5_MIN: int(600, 1, 600),
    /** EU VIES VAT check REST API. */
    VIES_BASE_URL: z.string().url().default('https://ec.europa.eu/taxation_customs/vies/rest-api'),
    /** How long registry answers are reused (spec: 24 hours). */
    REGISTRY_CACHE_TTL_SECONDS: int(86400, 0),

    // E-mail verification (activities/verify: the DNS_SERVERS, SMTP_* and VERIFY_* settings).
    /**
     * Resolvers for crawlVerify's MX and A lookups (and the mail servers' addresses) and for the content sites'
     * TXT verification: comma-separated `ip[:port]` (`[ipv6]:port`); unset: the system's resolver (/etc/resolv.conf).
     */
    DNS_SERVERS: csv.pipe(
      z.array(
        z
          .string()
          .refine(
            isResolverAddress,
            'each entry must be an IP address with an optional port: 1.1.1.1, 1.1.1.1:53, [2606:4700::1111]:53',
          ),
      ),
    ),
    /** Port of the mail servers' SMTP probe by crawlVerify (25 everywhere outside tests). */
    SMTP_PROBE_PORT: int(25, 1, 65535),
    /**
     * Name sent in EHLO; mail servers reject probes whose name does not resolve back, so set it to the worker's
     * public host name (with matching reverse DNS).
     */
    SMTP_HELO_NAME: z.string().min(1).default('localhost'),
    /** Envelope sender of the probe (MAIL FROM); a real mailbox of the operator's domain is best received. */
    SMTP_FROM: z.string().min(3).default('verify@localhost'),
    /** SMTP sessions to one mail server at a time, per worker, so that a provider is not hammered. */
    VERIFY_CONCURRENCY_PER_DOMAIN: int(2, 1, 50),

    // Maps listings (crawlMaps). Base URLs default to the real services; tests point them at stand-ins.
    /** Google Places API (New), for crawlMaps. */
    GOOGLE_PLACES_BASE_URL: z.string().url().default('https://places.googleapis.com'),
    /**
     * Places API key. A secret: no default. Set: crawlMaps uses Google unless a job asks for `osm`; unset:
     * OpenStreetMap, and jobs that ask for `provider: google_places` fail saying so.
     */
    GOOGLE_PLACES_API_KEY: z.string().min(1).optional(),
    /** OpenStreetMap's Nominatim (crawlMaps, provider `osm`): text search and lookup. */
    NOMINATIM_BASE_URL: z.string().url().default('https://nominatim.openstreetmap.org'),
    /** OpenStreetMap's Overpass API (crawlMaps, provider `osm`): a category in a named area ("bakery in Leeds"). */
    OVERPASS_BASE_URL: z.string().url().default('https://overpass-api.de'),
    /** Nominatim's usage policy requires an agent that identifies the application: set it to one naming your deployment and a contact. */
    OSM_USER_AGENT: z.string().min(1).default('leadjobs/1.0 (+https://github.com/leadjobs/leadjobs)'),

    // Public social profiles (crawlPublicSocial: the SOCIAL_* settings, activities/social).
    /** crawlPublicSocial's public profile API host (`GET /api/v1/users/web_profile_info/?username=`); tests point it at a stand-in. */
    SOCIAL_BASE_URL: z.string().url().default('https://i.instagram.com'),
    /** The web app id the profile API expects in `x-ig-app-id` (it refuses requests without it). */
    SOCIAL_APP_ID: z.string().regex(/^\d+$/).default('936619743392459'),
    /** Browser User-Agent of the profile requests (a desktop Chrome one by default): the profile API answers only browser agents. */
    SOCIAL_USER_AGENT: z
      .string()
      .min(1)
      .default(
        'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
      ),
    /** Spec §8: about 200 profile requests per hour per IP, enforced for all workers together (Temporal task-queue rate limit). */
    SOCIAL_REQUESTS_PER_HOUR: z.coerce.number().gt(0).max(36000).default(200),
    /** Shortest randomised pause between two profile requests of any worker (spec §8: a pause of 3-10 s). */
    SOCIAL_DELAY_MIN_MS: int(3000, 0, 60000),
    /** Longest randomised pause between two profile requests of any worker; not below SOCIAL_DELAY_MIN_MS. */
    SOCIAL_DELAY_MAX_MS: int(10000, 0, 60000),
    /**
     * How long a throttled profile (401 `require_login`, 429) is retried with backoff before the job fails saying
     * when to retry; never past the job's 10-minute deadline minus a minute.
     */
    SOCIAL_RETRY_WINDOW_SECONDS: int(600, 0, 600),
    /** Outbound `http(s)://` proxy for the profile requests (a mobile or residential one when the platform blocks the worker's address); still SSRF-guarded. */
    PROXY_URL: z
      .string()
      .url()
      .refine((v) => /^https?:\/\//i.test(v), 'must be an http(s):// proxy URL')
      .optional(),

    // The maps -> site -> verify pipeline of crawlMaps jobs with `workflow` (campaigns). Spec §8: site
    // stage 5 min per business, verify stage 2 min per business, overall 10 min. They apply to the
    // pipeline only, never to ordinary jobs; shorter values are how tests reach `partial`.
    /**
     * The maps -> site -> verify pipeline (crawlMaps jobs with `workflow`): limit of one business's site stage
     * (spec §8: 5 min, also the maximum). The pipeline only, never ordinary jobs; the worker that starts a pipeline decides it.
     */
    WORKFLOW_SITE_TIMEOUT_SECONDS: int(300, 1, 300),
    /**
     * The pipeline's limit of one business's verify stage (spec §8: 2 min, also the maximum). The pipeline only,
     * never ordinary jobs; the worker that starts a pipeline decides it.
     */
    WORKFLOW_VERIFY_TIMEOUT_SECONDS: int(120, 1, 120),
    /**
     * The pipeline's limit of the whole workflow, from the maps job's start (spec §8: 10 min, also the maximum).
     * The pipeline only, never ordinary jobs; the worker that starts a pipeline decides it.
     */
    WORKFLOW_OVERALL_TIMEOUT_SECONDS: int(600, 1, 600),
    /** Businesses of one job whose site (then verify) stage runs at once. */
    WORKFLOW_BUSINESS_CONCURRENCY: int(5, 1, 50),

    /** Record de-duplication (spec §4.6); false: checks answer skipped with reason dedupe_not_configured. */
    DEDUPE_ENABLED: bool.default(true),
    /** Days during which a merge of canonical records (POST /api/v1/dedupe/canonical/{id}/merge) can be undone with .../unmerge. */
    DEDUPE_MERGE_UNDO_DAYS: int(30, 1, 3650),

    // A completed job's projection into IDAP and the lead index (issue 38 item 8; workers/projection-sweep.ts,
    // docs/security.md): runJob's own attempts first, then each worker's sweeper until the job is too old.
    /** Attempts runJob makes at projecting a completed job (1 s doubling, at most 30 s apart: 10 is about 3 minutes). */
    PROJECTION_ATTEMPTS: int(10, 1, 100),
    /** Seconds after a job completes before the sweepers may retry its projection: past runJob's own attempts, so the two rarely overlap (both are idempotent). */
    PROJECTION_SWEEP_AFTER_SECONDS: int(300, 0, 86400),
    /** How often each worker retries the projections due; also the first retry's backoff, doubling per failure up to an hour. */
    PROJECTION_SWEEP_INTERVAL_MS: int(30000, 100, 3600000),
    /**
     * How long after a job completed its projection is retried (jobs are kept indefinitely; this is
     * how long a completed job's leads are owed to IDAP). Past it the projection is given up: logged,
     * counted (leadjobs_projection_given_up, the queue statistics' `projection.given_up`), kept in the outbox.
     */
    PROJECTION_RETRY_HOURS: int(168, 1, 24 * 365),

    /** Webhooks: failed attempts in a row (any of the webhook's deliveries) after which a webhook is disabled (and `webhook.disabled` stored). */
    WEBHOOK_DISABLE_AFTER_FAILURES: int(20, 1, 10000),
    /** Webhooks: the delay before a delivery's second attempt; each further one doubles, up to an hour, for 24 h in all. */
    WEBHOOK_RETRY_INITIAL_SECONDS: z.coerce.number().min(0.1).max(3600).default(10),
    /** Webhooks: how often each worker starts the deliveries waiting in the webhook outbox. */
    WEBHOOK_DISPATCH_INTERVAL_MS: int(1000, 50, 60000),

    // LLM provider integrations (spec §2.12/§4.9; activities/llm, lib/llm): the LLM_* and INTEGRATIONS_* settings.
    /**
     * AES-256-GCM key of the clients' LLM provider keys, mailbox passwords and webhook signing secrets: 32 bytes,
     * base64 (`openssl rand -base64 32`). A secret: no default; required in production (dev/stack generates one into
     * .stack/env). Unset outside production: the integrations and mail APIs answer 503, AI extraction says no
     * integration is usable, and new webhook secrets are stored in plaintext (the API and workers warn at start).
     */
    INTEGRATIONS_ENCRYPTION_KEY: base64Key.optional(),
    /** Former keys (comma-separated, base64), still accepted for decryption during a rotation (docs/api.md "Key rotation"). */
    INTEGRATIONS_PREVIOUS_KEYS: csv.pipe(z.array(base64Key)),
    /** Failed calls in a row after which a key is `unhealthy` (skipped) until its cool-down is over. */
    LLM_BREAKER_FAILURES: int(3, 1, 100),
    /** How long an unhealthy key is skipped before one call re-tests it. */
    LLM_BREAKER_COOLDOWN_SECONDS: int(60, 1, 86400),
    /** Deadline of one provider call, and of crawlSite's whole AI extraction (which may try several keys); at most 120000. */
    LLM_TIMEOUT_MS: int(60000, 1000, 120000),
    /** Prices over the built-in table: JSON `{"<model>": {"input": <USD per 1M tokens>, "output": <USD per 1M tokens>}}`. */
    LLM_PRICES: z
      .string()
      .default('{}')
      .transform((s, ctx) => {
        const parsed = llmPrices.safeParse(
          (() => {
            try {
              return JSON.parse(s) as unknown;
            } catch {
              return undefined;
            }
          })(),
        );
        if (!parsed.success) {
          ctx.addIssue({
            code: 'custom',
            message: 'must be JSON {"<model>": {"input": <USD per 1M tokens>, "output": <USD per 1M tokens>}}',
          });
          return z.NEVER;
        }
        return parsed.data;
      }),

    // Unsubscribe pages (spec §4.12; lib/unsubscribe.ts). Links use PUBLIC_BASE_URL, else the API's own address.
    /**
     * HMAC-SHA256 key of the unsubscribe tokens (docs/api.md "Unsubscribe"): at least 32 bytes, base64 (`openssl rand
     * -base64 32`). A secret: no default; required in production (dev/stack generates one into .stack/env, and adds it
     * to an older env file on the next `up`). Changing it invalidates every link already sent. Unset outside
     * production: the unsubscribe API answers 503 and `/u/{token}` pages say unsubscribing is unavailable.
     */
    UNSUBSCRIBE_SIGNING_KEY: base64SigningKey.optional(),

    // Mail (spec §2.13/§4.10; activities/mail, lib/mail): mailbox passwords are sealed with INTEGRATIONS_ENCRYPTION_KEY.
    /** How often each mailbox with IMAP settings syncs its INBOX (a Temporal schedule per mailbox; `POST .../sync` syncs at once). */
    MAIL_SYNC_INTERVAL_SECONDS: int(300, 10, 86400),
    /** Connect, greeting and socket-idle deadline of one SMTP or IMAP session (sending, sync, `POST .../test`). */
    MAIL_TIMEOUT_MS: int(30000, 1000, 300000),
    /**
     * Largest message accepted by raw import (message/rfc822; 413 beyond) and downloaded by IMAP sync: larger ones
     * are left on the server and counted as skipped, whether by the size the server lists or, when it sends more than
     * it listed, by what arrives (the download stops there).
     */
    MAIL_MAX_MESSAGE_BYTES: int(10 * 1024 * 1024, 1024, 50 * 1024 * 1024),
    /**
     * Attempts to hand a message to the mailbox's SMTP server (backoff 5 s doubling, at most 10 min) before it is
     * marked failed (`send_status` `failed`).
     */
    MAIL_SEND_MAX_ATTEMPTS: int(8, 1, 50),
    /**
     * How often each worker starts the send workflow of an outbound message left queued without one,
     * and the sync schedule of a mailbox with IMAP left without one (the API stores the row, then
     * starts the workflow: an API that dies in between leaves them so; workers/mail-reconcile.ts).
     */
    MAIL_RECONCILE_INTERVAL_MS: int(30000, 100, 3600000),

    /** How long a health probe waits for one dependency before calling it down. */
    HEALTH_TIMEOUT_MS: int(2000, 100, 60000),
    /** How long SIGTERM waits for in-flight requests. */
    SHUTDOWN_GRACE_MS: int(10000, 0, 120000),
    /** A client must finish sending its request headers within this time (slow-loris), else 408 and the socket closes. */
    HTTP_HEADERS_TIMEOUT_MS: int(10000, 1000, 120000),
    /** A client must finish sending its whole request, body included, within this time, else 408 and the socket closes (a 25 MB upload on a slow link fits in the default). */
    HTTP_REQUEST_TIMEOUT_MS: int(120000, 1000, 3600000),
    /**
     * How long an idle keep-alive connection stays open for the client's next request. Longer than
     * the idle timeouts of common clients (Node's fetch 4 s) and load balancers (60 s), so that the
     * client or proxy always closes first: with Node's 5 s default the API closed sockets just as a
     * client reused them (UND_ERR_SOCKET on a POST, issue 37). Node 20 starts the headers timeout at
     * a request's first byte, so an idle connection is not cut by HTTP_HEADERS_TIMEOUT_MS.
     */
    HTTP_KEEP_ALIVE_TIMEOUT_MS: int(65000, 1000, 600000),
  })
  .superRefine((c, ctx) => {
    // A certificate without its key (or the reverse) would fail later inside the gRPC layer with a
    // message that names neither variable.
    if (c.TEMPORAL_TLS_CERT_PATH && !c.TEMPORAL_TLS_KEY_PATH) {
      ctx.addIssue({
        code: 'custom',
        path: ['TEMPORAL_TLS_KEY_PATH'],
        message: 'required when TEMPORAL_TLS_CERT_PATH is set (the client certificate needs its key)',
      });
    }
    if (c.TEMPORAL_TLS_KEY_PATH && !c.TEMPORAL_TLS_CERT_PATH) {
      ctx.addIssue({
        code: 'custom',
        path: ['TEMPORAL_TLS_CERT_PATH'],
        message: 'required when TEMPORAL_TLS_KEY_PATH is set (the key needs its client certificate)',
      });
    }
    // Without it no integration can be stored or used; outside production the integrations API says so instead.
    if (c.NODE_ENV === 'production' && !c.INTEGRATIONS_ENCRYPTION_KEY) {
      ctx.addIssue({
        code: 'custom',
        path: ['INTEGRATIONS_ENCRYPTION_KEY'],
        message: 'required in production (32 bytes, base64: openssl rand -base64 32)',
      });
    }
    // Without it no unsubscribe link can be made or honoured; outside production the unsubscribe API says so instead.
    if (c.NODE_ENV === 'production' && !c.UNSUBSCRIBE_SIGNING_KEY) {
      ctx.addIssue({
        code: 'custom',
        path: ['UNSUBSCRIBE_SIGNING_KEY'],
        message: 'required in production (at least 32 bytes, base64: openssl rand -base64 32)',
      });
    }
    if (c.SOCIAL_DELAY_MIN_MS > c.SOCIAL_DELAY_MAX_MS) {
      ctx.addIssue({
        code: 'custom',
        path: ['SOCIAL_DELAY_MIN_MS'],
        message: `must not exceed SOCIAL_DELAY_MAX_MS (${c.SOCIAL_DELAY_MAX_MS})`,
      });
    }
    if (c.TEMPORAL_TLS === false) {
      // The key would travel in clear text; the SDK refuses call credentials on a plain channel anyway.
      if (c.TEMPORAL_API_KEY)
        ctx.addIssue({
          code: 'custom',
          path: ['TEMPORAL_TLS'],
          message: 'must not be false when TEMPORAL_API_KEY is set (an API key is only sent over TLS)',
        });
      for (const name of temporalTlsSettings) {
        if (c[name]) ctx.addIssue({ code: 'custom', path: ['TEMPORAL_TLS'], message: `is false but ${name} is set` });
      }
    }
  });

export type DbConfig = z.infer<typeof dbConfigSchema>;
export type Config = Omit<z.infer<typeof configSchema>, 'MEDIA_PUBLIC_URL' | 'TEMPORAL_TLS'> & {
  MEDIA_PUBLIC_URL: string;
  /** Whether the Temporal connection uses TLS, explicit or implied by the other TEMPORAL_TLS_* / API key settings. */
  TEMPORAL_TLS: boolean;
};

export class ConfigError extends Error {}

function parseWith<S extends z.ZodType>(schema: S, env: Record<string, string | undefined>): z.infer<S> {
  // Empty strings mean "unset", as in most shells' `VAR= cmd`.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = schema.safeParse(cleaned);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  return result.data;
}

export function parseConfig(env: Record<string, string | undefined>): Config {
  const parsed = parseWith(configSchema, env);
  return {
    ...parsed,
    MEDIA_PUBLIC_URL: (parsed.MEDIA_PUBLIC_URL ?? parsed.MINIO_ENDPOINT).replace(/\/+$/, ''),
    TEMPORAL_TLS:
      parsed.TEMPORAL_TLS ??
      (Boolean(parsed.TEMPORAL_API_KEY) || temporalTlsSettings.some((name) => Boolean(parsed[name]))),
  };
}

/** What the `integrations:reseal` command needs besides the database: the current and former keys. */
export const integrationKeysSchema = z.object({
  INTEGRATIONS_ENCRYPTION_KEY: base64Key,
  INTEGRATIONS_PREVIOUS_KEYS: csv.pipe(z.array(base64Key)),
});
export const loadIntegrationKeys = (): z.infer<typeof integrationKeysSchema> =>
  parseWith(integrationKeysSchema, process.env);

export function parseDbConfig(env: Record<string, string | undefined>): DbConfig {
  return parseWith(dbConfigSchema, env);
}

/** The process environment, read here and nowhere else. */
export const loadConfig = (): Config => parseConfig(process.env);
export const loadDbConfig = (): DbConfig => parseDbConfig(process.env);

/** For entrypoints: the configuration, or a message naming the bad variables and exit code 1. */
export function loadConfigOrExit(): Config {
  try {
    return loadConfig();
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(1);
  }
}
