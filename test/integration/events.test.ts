import { request } from 'node:http';
import { connect, createServer, type AddressInfo } from 'node:net';
import { bearer, ownQueues, startTestApi, type TestApi } from '../support/api';
import { caller, waitForStatus, type Caller } from '../support/jobs';
import { SseReader } from '../support/sse';
import { startTestWorker, type TestWorker } from '../support/worker';
import { startLeadSites, type LeadSites } from '../stand-ins/lead-sites';
import type { IssuedCredentials } from '../../lib/credentials';
import { appendEvent, transactionWithEvents } from '../../db/repositories/events';
import { EventListener } from '../../db/event-listener';
import { createLogger } from '../../lib/logger';

let api: TestApi;
let worker: TestWorker;
let creds: IssuedCredentials;
let c: Caller;
let sites: LeadSites;
const readers: SseReader[] = [];
// Real crawlSite jobs against stand-in sites; crawlCompanyData jobs stay queued (no worker polls their queue here).
beforeAll(async () => {
  sites = await startLeadSites();
  api = await startTestApi({ RATE_LIMIT_ENABLED: 'false', SSE_HEARTBEAT_SECONDS: '0.3', ...ownQueues('events') });
  worker = await startTestWorker({
    types: ['crawlSite'],
    identity: 'events-test-worker',
    overrides: ownQueues('events'),
  });
  creds = await api.newClient();
  c = caller(api, bearer(creds));
});
afterAll(async () => {
  await Promise.all(readers.map((r) => r.close()));
  await worker.stop();
  await api.close();
  await sites.close();
});

const token = (x: IssuedCredentials) => `${x.client_id}:${x.api_key}:${x.api_secret}`;
async function stream(query: string, headers: Record<string, string> = {}) {
  const r = await new SseReader().open(`${api.url}/api/v1/events/stream?${query}`, headers);
  readers.push(r);
  return r;
}
const submit = async (query: Record<string, string | number> = {}) =>
  (
    await c.json<{ job_id: string }>(
      await c.post('/api/v1/jobs/crawlSite/submit', { payload: { url: sites.url(query) } }),
    )
  ).job_id;

describe('GET /api/v1/events/stream', () => {
  test('needs the token; a bad one is the spec 401', async () => {
    expect((await stream('')).status).toBe(401);
    const bad = await fetch(`${api.url}/api/v1/events/stream?token=${creds.client_id}:x:y`);
    expect(bad.status).toBe(401);
    expect(await bad.json()).toEqual({ detail: 'invalid client credentials' });
  });

  test('a stream ticket (POST /api/v1/events/tickets) opens one stream within a minute; used or expired it is a 401', async () => {
    const issue = async () => {
      const res = await c.post('/api/v1/events/tickets', {});
      expect(res.status).toBe(201);
      return c.json<{ ticket: string; expires_at: string; expires_in: number }>(res);
    };
    const first = await issue();
    expect(first).toEqual({
      ticket: expect.stringMatching(/^tkt_[A-Za-z0-9]{43}$/),
      expires_at: expect.any(String),
      expires_in: 60,
    });
    expect(Date.parse(first.expires_at) - Date.now()).toBeGreaterThan(50_000);
    // Nothing of the client's credential is in the URL a proxy logs.
    expect(first.ticket).not.toContain(creds.api_key);
    const r = await stream(`token=${first.ticket}`);
    expect(r.status).toBe(200);
    await r.waitFor((e) => e.event === 'connected');
    expect(r.events[0]).toMatchObject({ event: 'connected', data: { client_id: creds.client_id } });
    // One stream: the same ticket again (a replayed log line) is refused.
    const again = await fetch(`${api.url}/api/v1/events/stream?token=${first.ticket}`);
    expect(again.status).toBe(401);
    expect(await again.json()).toEqual({
      detail: 'invalid or expired stream ticket: ask POST /api/v1/events/tickets for a new one',
    });
    // A minute later (the clock moved on in the table): refused.
    const late = await issue();
    await api.deps.db('stream_tickets').update({ expires_at: new Date(Date.now() - 1000) });
    expect((await fetch(`${api.url}/api/v1/events/stream?token=${late.ticket}`)).status).toBe(401);
    // A ticket of a client deactivated since is a 403, as its credential would be.
    const gone = await api.newClient('ticket then deactivated');
    const goneCaller = caller(api, bearer(gone));
    const goneTicket = await goneCaller.json<{ ticket: string }>(await goneCaller.post('/api/v1/events/tickets', {}));
    await api.deps.db('clients').where({ id: gone.client_id }).update({ is_active: false });
    // Once this API process has heard of the change (the clients table's NOTIFY), as its credential is.
    for (let i = 0; i < 20 && (await goneCaller.get('/api/v1/jobs/list')).status !== 403; i++)
      await new Promise((res) => setTimeout(res, 100));
    expect((await fetch(`${api.url}/api/v1/events/stream?token=${goneTicket.ticket}`)).status).toBe(403);
    // The credential in token= still works as spec §5.4 has it; the OpenAPI document has the ticket operation.
    expect((await stream(`token=${encodeURIComponent(token(creds))}`)).status).toBe(200);
    const doc = (await (await fetch(`${api.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { operationId?: string }>>;
    };
    expect(doc.paths['/api/v1/events/tickets']?.post?.operationId).toBe('createStreamTicket');
  });

  test('follows one job: connected, queued, started, completed with processing_time and results_count, heartbeats', async () => {
    const other = await submit();
    const jobId = await submit({ delay_ms: 300 });
    const r = await stream(`token=${encodeURIComponent(token(creds))}&job_id=${jobId}&last_event_id=0`);
    expect(r.status).toBe(200);
    const completed = await r.waitFor((e) => e.event === 'job.completed');
    expect(completed.data).toMatchObject({ job_id: jobId, results_count: 1, processing_time: expect.any(Number) });
    await r.waitFor((e) => e.event === 'heartbeat');
    expect(r.events[0]).toMatchObject({ event: 'connected', data: { client_id: creds.client_id, job_id: jobId } });
    const names = r.events.filter((e) => e.event.startsWith('job.')).map((e) => e.event);
    expect(names).toEqual(['job.queued', 'job.started', 'job.completed']);
    expect(r.events.some((e) => e.data.job_id === other)).toBe(false);
    const ids = r.events.filter((e) => e.id !== undefined).map((e) => e.id as number);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
  });

  test('live events of the client only, including failures and cancellations', async () => {
    const r = await stream(`token=${encodeURIComponent(token(creds))}`);
    await r.waitFor((e) => e.event === 'connected');
    const intruder = await api.newClient('other');
    const theirs = await caller(api, bearer(intruder)).post('/api/v1/jobs/crawlSite/submit', {
      payload: { url: sites.url() },
    });
    const theirId = ((await theirs.json()) as { job_id: string }).job_id;
    const failing = await submit({ status: 502 });
    const failed = await r.waitFor((e) => e.event === 'job.failed' && e.data.job_id === failing);
    expect(failed.data.error_message).toMatch(/could not be crawled: the site answered HTTP 502$/);
    const queuedId = (
      await c.json<{ job_id: string }>(
        await c.post('/api/v1/jobs/crawlCompanyData/submit', {
          payload: { mode: 'vat', vat_number: `DE${Date.now() % 1e9}` },
        }),
      )
    ).job_id;
    await c.del(`/api/v1/jobs/${queuedId}`);
    await r.waitFor((e) => e.event === 'job.cancelled' && e.data.job_id === queuedId);
    await waitForStatus(caller(api, bearer(intruder)), theirId, ['completed']);
    await new Promise((res) => setTimeout(res, 300));
    expect(r.events.some((e) => e.data.job_id === theirId)).toBe(false);
  });

  test('Last-Event-ID replays what a reconnecting client missed, then continues live', async () => {
    const first = await stream(`token=${encodeURIComponent(token(creds))}`);
    const a = await submit();
    const seen = await first.waitFor((e) => e.event === 'job.completed' && e.data.job_id === a);
    await first.close();
    const b = await submit({ leads: 2 });
    await waitForStatus(c, b, ['completed']);
    const again = await stream(`token=${encodeURIComponent(token(creds))}`, { 'Last-Event-ID': String(seen.id) });
    const replayed = await again.waitFor((e) => e.event === 'job.completed' && e.data.job_id === b);
    expect(replayed.data.results_count).toBe(1);
    expect(again.events.filter((e) => e.id !== undefined && (e.id as number) <= (seen.id as number))).toEqual([]);
    const cId = await submit();
    await again.waitFor((e) => e.event === 'job.completed' && e.data.job_id === cId);
  });

  test('events reach an API process other than the one the job was submitted to', async () => {
    const second = await startTestApi({ RATE_LIMIT_ENABLED: 'false', ...ownQueues('events') });
    try {
      const r = await new SseReader().open(
        `${second.url}/api/v1/events/stream?token=${encodeURIComponent(token(creds))}`,
      );
      readers.push(r);
      await r.waitFor((e) => e.event === 'connected');
      const jobId = await submit();
      await r.waitFor((e) => e.event === 'job.completed' && e.data.job_id === jobId);
      const status = await caller(second, bearer(creds)).json(
        await caller(second, bearer(creds)).get('/api/v1/events/status'),
      );
      expect(status).toMatchObject({
        status: 'healthy',
        listening: true,
        active_subscriptions: 1,
        heartbeat_seconds: 30,
      });
      await r.close();
    } finally {
      await second.close();
    }
  });

  /** An API process whose every new Postgres connection takes 400 ms to open (through a proxy): its LISTEN is slow. */
  async function slowDatabaseApi(): Promise<{ slow: TestApi; close: () => Promise<void> }> {
    const target = new URL(api.deps.config.DATABASE_URL);
    const proxy = createServer((client) => {
      setTimeout(() => {
        const upstream = connect(Number(target.port || 5432), target.hostname);
        client.pipe(upstream).pipe(client);
        const end = () => {
          client.destroy();
          upstream.destroy();
        };
        client.on('error', end);
        upstream.on('error', end);
      }, 400);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const slowUrl = new URL(target);
    slowUrl.host = `127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const slow = await startTestApi({
      RATE_LIMIT_ENABLED: 'false',
      DATABASE_URL: slowUrl.toString(),
      ...ownQueues('events'),
    });
    return {
      slow,
      close: async () => {
        await slow.close();
        proxy.close();
      },
    };
  }

  test('`connected` comes once the process listens: an event committed right after it is delivered', async () => {
    // The handler writes `connected` before it subscribes, but Koa sends the stream only once the
    // handler returns, after LISTEN: a client that waits for `connected` misses nothing. A proxy that
    // takes 400 ms to open each Postgres connection makes LISTEN slow enough to see it otherwise.
    const { slow, close } = await slowDatabaseApi();
    try {
      const own = await slow.newClient();
      const r = await new SseReader().open(`${slow.url}/api/v1/events/stream?token=${encodeURIComponent(token(own))}`);
      readers.push(r);
      await r.waitFor((e) => e.event === 'connected');
      const { db, config } = api.deps;
      const stored = await transactionWithEvents(db, config.DATABASE_SCHEMA, (trx) =>
        appendEvent(trx, config.DATABASE_SCHEMA, {
          clientId: own.client_id,
          name: 'job.queued',
          data: { job_id: null, type: 'crawlSite', priority: 1 },
        }),
      );
      await r.waitFor((e) => e.id === stored.id, 5000);
      await r.close();
    } finally {
      await close();
    }
  });

  test('a client that hangs up before its stream has started (while it subscribes or replays) leaves no subscription behind', async () => {
    const { slow, close } = await slowDatabaseApi();
    try {
      const own = await slow.newClient();
      const as = caller(slow, bearer(own));
      const url = new URL(`${slow.url}/api/v1/events/stream?token=${encodeURIComponent(token(own))}`);
      // Each gives up while the handler waits on the slow LISTEN connection or the replay's query.
      await Promise.all(
        [50, 150, 300, 600].map(
          (ms) =>
            new Promise<void>((resolve) => {
              const req = request(url, { headers: { 'last-event-id': '0' } }, () => undefined);
              req.on('error', () => resolve());
              req.on('close', () => resolve());
              setTimeout(() => req.destroy(), ms);
              req.end();
            }),
        ),
      );
      let status: { active_subscriptions?: number } = {};
      for (let i = 0; i < 30; i++) {
        await new Promise((r) => setTimeout(r, 200));
        status = await as.json(await as.get('/api/v1/events/status'));
        if (status.active_subscriptions === 0) break;
      }
      expect(status).toMatchObject({ active_subscriptions: 0 });
    } finally {
      await close();
    }
  });

  test('a Last-Event-ID header that is no event id is a 400, and subscribes nothing', async () => {
    const own = await api.newClient();
    const as = caller(api, bearer(own));
    const before = (await as.json<{ active_subscriptions: number }>(await as.get('/api/v1/events/status')))
      .active_subscriptions;
    for (const header of ['999999999999999999999999999999', '12345678901234567', 'abc', '-1', '1.5']) {
      const res = await fetch(`${api.url}/api/v1/events/stream?token=${encodeURIComponent(token(own))}`, {
        headers: { 'last-event-id': header },
      });
      expect([header, res.status, await res.json()]).toEqual([
        header,
        400,
        { detail: 'invalid Last-Event-ID header: expected an event id (a non-negative integer)' },
      ]);
    }
    expect(
      (await as.json<{ active_subscriptions: number }>(await as.get('/api/v1/events/status'))).active_subscriptions,
    ).toBe(before);
  });

  const queuedEvent = (clientId: string, priority: number) => ({
    clientId,
    name: 'job.queued' as const,
    data: { job_id: null, type: 'crawlSite', priority },
  });
  const queuedIds = (r: SseReader) => r.events.filter((e) => e.event === 'job.queued').map((e) => e.id as number);
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  /** Appends and commits one event of the client. */
  const commitEvent = (clientId: string, priority: number) => {
    const { db, config } = api.deps;
    return transactionWithEvents(db, config.DATABASE_SCHEMA, (trx) =>
      appendEvent(trx, config.DATABASE_SCHEMA, queuedEvent(clientId, priority)),
    );
  };
  /** A writer (transactionWithEvents) that has appended an event, so holds its id, and stays open until committed or rolled back. */
  async function openWriter(clientId: string, priority: number) {
    const { db, config } = api.deps;
    const schema = config.DATABASE_SCHEMA;
    let end!: (commit: boolean) => void;
    const gate = new Promise<boolean>((resolve) => {
      end = resolve;
    });
    let id = 0;
    let done: Promise<unknown> = Promise.resolve();
    await new Promise<void>((inserted) => {
      done = transactionWithEvents(db, schema, async (trx) => {
        id = (await appendEvent(trx, schema, queuedEvent(clientId, priority))).id;
        inserted();
        if (!(await gate)) throw new Error('rolled back on purpose');
      }).catch(() => undefined);
    });
    return {
      id,
      commit: async () => {
        end(true);
        await done;
      },
      rollBack: async () => {
        end(false);
        await done;
      },
    };
  }

  test('events go out in id order: a later event waits for a concurrent writer that holds a lower id to commit', async () => {
    const own = await api.newClient();
    const r = await stream(`token=${encodeURIComponent(token(own))}`);
    await r.waitFor((e) => e.event === 'connected');
    const first = await openWriter(own.client_id, 1);
    try {
      const second = await commitEvent(own.client_id, 2);
      expect(second.id).toBeGreaterThan(first.id);
      await sleep(500);
      expect(queuedIds(r)).toEqual([]);
      await first.commit();
      await r.waitFor((e) => e.id === second.id, 5000);
      await sleep(300);
      expect(queuedIds(r)).toEqual([first.id, second.id]);
    } finally {
      await first.commit();
    }
  });

  test('a client that reconnects with the last id it got misses no event, even one whose writer commits after a later one', async () => {
    const own = await api.newClient();
    const first = await stream(`token=${encodeURIComponent(token(own))}`);
    await first.waitFor((e) => e.event === 'connected');
    const before = await commitEvent(own.client_id, 0);
    await first.waitFor((e) => e.id === before.id);
    const slow = await openWriter(own.client_id, 1);
    let again: SseReader | undefined;
    try {
      const later = await commitEvent(own.client_id, 2);
      await sleep(300);
      // The client goes away with what it got by now, and comes back after the slow writer has committed.
      await first.close();
      const lastId = first.events.filter((e) => e.id !== undefined).at(-1)?.id;
      await slow.commit();
      again = await stream(`token=${encodeURIComponent(token(own))}`, { 'Last-Event-ID': String(lastId) });
      await again.waitFor((e) => e.event === 'connected');
      const got = () => [...queuedIds(first), ...queuedIds(again as SseReader)].sort((a, b) => a - b);
      for (let i = 0; i < 40 && got().length < 3; i++) await sleep(50);
      expect(got()).toEqual([before.id, slow.id, later.id]);
    } finally {
      await slow.commit();
    }
  });

  test('the id of a rolled-back writer does not hold the stream back', async () => {
    const own = await api.newClient();
    const r = await stream(`token=${encodeURIComponent(token(own))}`);
    await r.waitFor((e) => e.event === 'connected');
    const doomed = await openWriter(own.client_id, 1);
    const later = await commitEvent(own.client_id, 2);
    await doomed.rollBack();
    await r.waitFor((e) => e.id === later.id, 1000);
    await sleep(300);
    expect(queuedIds(r)).toEqual([later.id]);
  });

  test('a writer held open beyond SSE_GAP_WAIT_MS holds later events back only that long; its event still comes when it commits', async () => {
    const gapped = await startTestApi({ RATE_LIMIT_ENABLED: 'false', SSE_GAP_WAIT_MS: '300', ...ownQueues('events') });
    try {
      const own = await gapped.newClient();
      const r = await new SseReader().open(
        `${gapped.url}/api/v1/events/stream?token=${encodeURIComponent(token(own))}`,
      );
      readers.push(r);
      await r.waitFor((e) => e.event === 'connected');
      const long = await openWriter(own.client_id, 1);
      try {
        const later = await commitEvent(own.client_id, 2);
        await sleep(100);
        expect(queuedIds(r)).toEqual([]);
        await r.waitFor((e) => e.id === later.id, 3000);
        await long.commit();
        await r.waitFor((e) => e.id === long.id, 3000);
        expect(queuedIds(r)).toEqual([later.id, long.id]);
      } finally {
        await long.commit();
      }
      await r.close();
    } finally {
      await gapped.close();
    }
  });

  test('a writer held open too long lets out the events that waited SSE_GAP_WAIT_MS, not a later one still waiting for its own lower id', async () => {
    const gapped = await startTestApi({ RATE_LIMIT_ENABLED: 'false', SSE_GAP_WAIT_MS: '2000', ...ownQueues('events') });
    try {
      const own = await gapped.newClient();
      const r = await new SseReader().open(
        `${gapped.url}/api/v1/events/stream?token=${encodeURIComponent(token(own))}`,
      );
      readers.push(r);
      await r.waitFor((e) => e.event === 'connected');
      const long = await openWriter(own.client_id, 1);
      let short: Awaited<ReturnType<typeof openWriter>> | undefined;
      try {
        const first = await commitEvent(own.client_id, 2);
        await sleep(1000);
        // A second writer, open for far less than SSE_GAP_WAIT_MS when the first event is given up on.
        short = await openWriter(own.client_id, 3);
        const second = await commitEvent(own.client_id, 4);
        await r.waitFor((e) => e.id === first.id, 5000);
        await sleep(300);
        expect(queuedIds(r)).toEqual([first.id]);
        await short.commit();
        await r.waitFor((e) => e.id === second.id, 3000);
        await long.commit();
        await r.waitFor((e) => e.id === long.id, 3000);
        expect(queuedIds(r)).toEqual([first.id, short.id, second.id, long.id]);
      } finally {
        await short?.commit();
        await long.commit();
      }
      await r.close();
    } finally {
      await gapped.close();
    }
  });

  /**
   * Ends the API's LISTEN connection, as a database restart would; the API reconnects by itself. It is
   * this process's (test files in other jest workers have listeners of their own on the same schema).
   */
  async function dropListenConnection() {
    const { db } = api.deps;
    const { rows } = await db.raw<{ rows: unknown[] }>(
      'select pg_terminate_backend(pid, 5000) from pg_stat_activity where datname = current_database() and application_name = ?',
      [`leadjobs-events/${process.pid}`],
    );
    expect(rows).toHaveLength(1);
  }

  test('a stream whose server loses its LISTEN connection while a later event waits for a lower id misses neither', async () => {
    const own = await api.newClient();
    const r = await stream(`token=${encodeURIComponent(token(own))}`);
    await r.waitFor((e) => e.event === 'connected');
    const before = await commitEvent(own.client_id, 0);
    await r.waitFor((e) => e.id === before.id);
    const slow = await openWriter(own.client_id, 1);
    try {
      const later = await commitEvent(own.client_id, 2);
      await sleep(100);
      // The slow writer commits while the API is not listening: its announcement is lost.
      await dropListenConnection();
      await slow.commit();
      await r.waitFor((e) => e.id === later.id, 5000);
      for (let i = 0; i < 40 && queuedIds(r).length < 3; i++) await sleep(50);
      expect(queuedIds(r)).toEqual([before.id, slow.id, later.id]);
    } finally {
      await slow.commit();
    }
  });

  test('events held back when the LISTEN connection was lost, with nobody left subscribed, do not go to a stream opened later', async () => {
    const lone = await startTestApi({ RATE_LIMIT_ENABLED: 'false', ...ownQueues('events') });
    try {
      const { db } = api.deps;
      // This process's listeners (other jest workers have their own on the same schema): the main API's, and then lone's.
      const listeners = `select pid from pg_stat_activity where datname = current_database() and application_name = 'leadjobs-events/${process.pid}'`;
      const others = (await db.raw<{ rows: { pid: number }[] }>(listeners)).rows.map((row) => row.pid);
      const own = await lone.newClient();
      const url = `${lone.url}/api/v1/events/stream?token=${encodeURIComponent(token(own))}`;
      const first = await new SseReader().open(url);
      readers.push(first);
      await first.waitFor((e) => e.event === 'connected');
      const doomed = await openWriter(own.client_id, 1);
      await commitEvent(own.client_id, 2);
      await sleep(100);
      // Its LISTEN connection drops, and its only stream closes before it reconnects.
      await db.raw(`select pg_terminate_backend(pid, 5000) from (${listeners}) l where not (pid = any(?))`, [others]);
      await first.close();
      await doomed.rollBack();
      await sleep(500);
      const fresh = await new SseReader().open(url);
      readers.push(fresh);
      await fresh.waitFor((e) => e.event === 'connected');
      await sleep(500);
      expect(queuedIds(fresh)).toEqual([]);
      await fresh.close();
    } finally {
      await lone.close();
    }
  });

  test('a jump in the event ids (a range of ids never used) does not hold the stream back', async () => {
    const own = await api.newClient();
    const r = await stream(`token=${encodeURIComponent(token(own))}`);
    await r.waitFor((e) => e.event === 'connected');
    const before = await commitEvent(own.client_id, 0);
    await r.waitFor((e) => e.id === before.id);
    // As after a restore, or ids taken by a large write that was rolled back: 3 million ids no event has.
    await api.deps.db.raw(
      "select setval(pg_get_serial_sequence('events', 'id'), (select max(id) from events) + 3000000)",
    );
    const after = await commitEvent(own.client_id, 1);
    await r.waitFor((e) => e.id === after.id, 1000);
    expect(queuedIds(r)).toEqual([before.id, after.id]);
  });
});

describe('stream limits', () => {
  let limited: TestApi;
  beforeAll(async () => {
    limited = await startTestApi({
      RATE_LIMIT_ENABLED: 'false',
      SSE_HEARTBEAT_SECONDS: '0.3',
      SSE_MAX_STREAMS_PER_CLIENT: '2',
      ...ownQueues('events'),
    });
  });
  afterAll(async () => {
    await limited?.close();
  });
  const subscriptions = async (as: Caller) =>
    (await as.json<{ active_subscriptions: number }>(await as.get('/api/v1/events/status'))).active_subscriptions;
  /** `n` stored events of the client, `size` bytes each on the stream (made large: the kernel's socket buffers hold tens of MB). */
  async function history(clientId: string, n: number, size: number): Promise<void> {
    const rows = Array.from({ length: n }, (_, i) => ({
      client_id: clientId,
      name: 'job.queued',
      data: JSON.stringify({ job_id: null, type: 'crawlSite', priority: 1, n: i, note: 'x'.repeat(size) }),
    }));
    for (let i = 0; i < rows.length; i += 200) await limited.deps.db('events').insert(rows.slice(i, i + 200));
  }

  test('a client may hold SSE_MAX_STREAMS_PER_CLIENT streams on a server: one more is a 429 until one closes', async () => {
    const own = await limited.newClient();
    const as = caller(limited, bearer(own));
    const url = `${limited.url}/api/v1/events/stream?token=${encodeURIComponent(token(own))}`;
    const open = [await new SseReader().open(url), await new SseReader().open(url)];
    for (const r of open) await r.waitFor((e) => e.event === 'connected');
    const refused = await fetch(url);
    expect([refused.status, await refused.json()]).toEqual([
      429,
      { detail: 'too many open event streams: this client has 2 on this server; close one first' },
    ]);
    // Another client is not held to this one's streams.
    const other = await limited.newClient();
    const theirs = await new SseReader().open(
      `${limited.url}/api/v1/events/stream?token=${encodeURIComponent(token(other))}`,
    );
    expect(theirs.status).toBe(200);
    await theirs.close();
    await open[0]?.close();
    for (let i = 0; i < 50 && (await subscriptions(as)) > 1; i++) await new Promise((r) => setTimeout(r, 100));
    const again = await new SseReader().open(url);
    expect(again.status).toBe(200);
    await Promise.all([again.close(), open[1]?.close()]);
  });

  test('a long history is replayed as the client reads it, in order; a client that reads nothing is dropped, not buffered', async () => {
    const reading = await limited.newClient();
    const as = caller(limited, bearer(reading));
    await history(reading.client_id, 1500, 2000);
    const reader = await new SseReader().open(
      `${limited.url}/api/v1/events/stream?token=${encodeURIComponent(token(reading))}&last_event_id=0`,
    );
    await reader.waitFor(() => reader.events.filter((e) => e.event === 'job.queued').length === 1500, 60_000);
    expect(reader.events.filter((e) => e.event === 'job.queued').map((e) => (e.data as { n: number }).n)).toEqual(
      Array.from({ length: 1500 }, (_, i) => i),
    );
    await reader.close();
    for (let i = 0; i < 50 && (await subscriptions(as)) > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await subscriptions(as)).toBe(0);

    // A client that asks for 60 MB of history (3,000 events of 20 KB: more than a stalled
    // connection's socket buffers take) and never reads: its stream ends within a few heartbeat
    // intervals (0.3 s here) instead of holding the whole history in the server's memory.
    const stalling = await limited.newClient();
    // /events/status counts the caller's own streams only: the stalling client asks about its own.
    const stallingAs = caller(limited, bearer(stalling));
    await history(stalling.client_id, 3000, 20_000);
    const stalled = await new Promise<import('node:http').ClientRequest>((resolve) => {
      const req = request(
        `${limited.url}/api/v1/events/stream?token=${encodeURIComponent(token(stalling))}&last_event_id=0`,
        (res) => res.pause(),
      );
      req.on('error', () => undefined);
      req.end();
      resolve(req);
    });
    let count = 0;
    for (let i = 0; i < 50 && count === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      count = await subscriptions(stallingAs);
    }
    expect(count).toBe(1);
    for (let i = 0; i < 600 && count > 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      count = await subscriptions(stallingAs);
    }
    expect(count).toBe(0);
    stalled.destroy();
  }, 180_000);
});

test('a listener closed while its LISTEN connection is being made leaves no connection behind', async () => {
  const { DATABASE_URL, DATABASE_SCHEMA } = api.deps.config;
  // This process's listeners (the test API's own one too, if it is connected), by the name they give Postgres.
  const listeners = async () =>
    Number(
      (
        (await api.deps.db.raw(
          `select count(*) as n from pg_stat_activity where datname = current_database() and application_name = ?`,
          [`leadjobs-events/${process.pid}`],
        )) as { rows: { n: string }[] }
      ).rows[0]?.n,
    );
  const before = await listeners();
  const listener = new EventListener(DATABASE_URL, DATABASE_SCHEMA, api.deps.db, createLogger('silent'));
  const subscribed = listener
    .subscribe({ clientId: 'cli_closing', onEvent: () => undefined, onResync: () => undefined })
    .catch(() => undefined);
  await listener.close();
  await subscribed;
  // A connection left open would show up here for good; one being ended goes within moments.
  const until = Date.now() + 3000;
  let now = await listeners();
  while (now !== before && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 100));
    now = await listeners();
  }
  expect(now).toBe(before);
  expect(listener.listening).toBe(false);
});

test('closing the listener does not wait for long on a database that accepts the connection and never answers', async () => {
  // A blackholed database: the connect would wait for its answer for ever (pg sets no connect timeout).
  const sockets = new Set<import('node:net').Socket>();
  const silent = createServer((socket) => void sockets.add(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const { port } = silent.address() as AddressInfo;
  const listener = new EventListener(
    `postgres://postgres@127.0.0.1:${port}/leadjobs`,
    'public',
    api.deps.db,
    createLogger('silent'),
  );
  try {
    void listener
      .subscribe({ clientId: 'cli_silent', onEvent: () => undefined, onResync: () => undefined })
      .catch(() => undefined);
    await new Promise((r) => setTimeout(r, 200));
    const started = Date.now();
    await listener.close();
    // The close waits up to 2 s (CLOSE_WAIT_MS) for the connect. A bound only the defect crosses,
    // not a timing: a close that waits for the connect itself takes its 10 s connect timeout (for
    // ever without one).
    expect(Date.now() - started).toBeLessThan(5000);
  } finally {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  }
});

test('a large event whose read fails when it is announced still goes out, in order, once the table answers', async () => {
  const { db, config } = api.deps;
  const schema = config.DATABASE_SCHEMA;
  let failReads = 0;
  // The listener's database handle, failing its next reads of the events table (a connection lost just then).
  const flaky = new Proxy(db, {
    apply(target, self, args: unknown[]) {
      if (args[0] === 'events' && failReads > 0) {
        failReads -= 1;
        throw new Error('Connection terminated unexpectedly');
      }
      return Reflect.apply(target, self, args);
    },
  });
  const listener = new EventListener(config.DATABASE_URL, schema, flaky, createLogger('silent'));
  const own = await api.newClient();
  const got: number[] = [];
  const append = (note: string) =>
    transactionWithEvents(db, schema, (trx) =>
      appendEvent(trx, schema, {
        clientId: own.client_id,
        name: 'job.queued',
        data: { job_id: null, type: 'crawlSite', priority: 1, note },
      }),
    );
  const waitForIds = async (n: number) => {
    const until = Date.now() + 5000;
    while (got.length < n && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  };
  try {
    await listener.subscribe({ clientId: own.client_id, onEvent: (e) => got.push(e.id), onResync: () => undefined });
    failReads = 1;
    // Past NOTIFY's 8000 bytes: announced by its id only, and read from the table when heard.
    const big = await append('x'.repeat(10_000));
    await waitForIds(1);
    expect(failReads).toBe(0);
    // Nothing comes after it: before, it waited for a later event's gap to be read, and none came.
    expect(got).toEqual([big.id]);
    const next = await append('small');
    await waitForIds(2);
    expect(got).toEqual([big.id, next.id]);
  } finally {
    await listener.close();
  }
});

test('a subscription whose LISTEN cannot start is not kept (nor counted)', async () => {
  const listener = new EventListener(
    'postgres://postgres@127.0.0.1:1/leadjobs',
    'public',
    api.deps.db,
    createLogger('silent'),
  );
  try {
    await expect(
      listener.subscribe({ clientId: 'cli_x', onEvent: () => undefined, onResync: () => undefined }),
    ).rejects.toThrow();
    expect(listener.subscriptionCount).toBe(0);
  } finally {
    await listener.close();
  }
});
