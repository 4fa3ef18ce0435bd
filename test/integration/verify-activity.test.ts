import { CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createVerifyActivities } from '../../activities/verify/crawl-verify';
import { createDb, type Db } from '../../db';
import { createLogger } from '../../lib/logger';
import { OutboundClient } from '../../lib/outbound';
import { Storage } from '../../lib/storage';
import { createSearchClient, type SearchClient } from '../../search/client';
import { testConfig } from '../support/api';
import { failure } from '../support/failure';
import { startDnsStandIn, type DnsStandIn } from '../stand-ins/dns';
import { startSmtpStandIn, type SmtpStandIn } from '../stand-ins/smtp';

// The crawlVerify activity in Temporal's MockActivityEnvironment: heartbeats, the per-server session
// limit against a mail server that never answers, and cancel.
let dns: DnsStandIn;
let smtp: SmtpStandIn;
let db: Db;
let search: SearchClient;
let http: OutboundClient;

beforeAll(async () => {
  smtp = await startSmtpStandIn({ catchAllDomain: 'catchall.test' });
  dns = await startDnsStandIn({
    'silent.test': { mx: [{ exchange: 'mx.silent.test', priority: 10 }] },
    'mx.silent.test': { a: [smtp.silentAddress] },
  });
  const config = testConfig();
  db = createDb(config);
  search = createSearchClient(config);
  http = OutboundClient.fromConfig(config);
});
afterAll(async () => {
  await Promise.allSettled([db.destroy(), search.close(), http.close()]);
  await Promise.all([dns.close(), smtp.close()]);
});

test('heartbeats every second, holds a silent server to two sessions, and a cancel closes every socket at once', async () => {
  const config = testConfig({
    DNS_SERVERS: dns.server,
    SMTP_PROBE_PORT: String(smtp.port),
    USER_URL_ALLOW_HOSTS: '127.0.0.0/8',
    VERIFY_CONCURRENCY_PER_DOMAIN: '2',
  });
  const { crawlVerify } = createVerifyActivities({
    config,
    db,
    storage: Storage.fromConfig(config),
    search,
    logger: createLogger('silent'),
    http,
    workerId: 'mock',
  });
  const env = new MockActivityEnvironment();
  const beats: { verified: number; of: number }[] = [];
  env.on('heartbeat', (d: { verified: number; of: number }) => beats.push(d));
  const emails = ['a', 'b', 'c', 'd', 'e'].map((l) => `${l}@silent.test`);
  const running = env.run(crawlVerify, {
    jobId: '00000000-0000-0000-0000-000000000000',
    clientId: 'cli_mock',
    payload: { emails, timeout_seconds: 60 },
  });
  await new Promise((r) => setTimeout(r, 2500));
  // One at the start and one per second since.
  expect(beats.length).toBeGreaterThanOrEqual(3);
  expect(beats.at(-1)).toEqual({ verified: 0, of: 5 });
  // Five addresses at one mail server that never greets: two sessions, the rest wait their turn.
  expect(smtp.silent).toHaveLength(2);
  expect(smtp.silent.every((s) => s.closedAt === undefined)).toBe(true);
  const cancelledAt = Date.now();
  env.cancel();
  expect(await failure(running)).toBeInstanceOf(CancelledFailure);
  await new Promise((r) => setTimeout(r, 200));
  for (const s of smtp.silent) expect((s.closedAt ?? Infinity) - cancelledAt).toBeLessThan(1000);
  // Nothing more was opened after the cancel.
  await new Promise((r) => setTimeout(r, 500));
  expect(smtp.silent).toHaveLength(2);
});
