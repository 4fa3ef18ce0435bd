import type { Context } from '@temporalio/activity';
import type { ActivityExecuteInput } from '@temporalio/worker';
import { HEARTBEAT_INTERVAL } from '../../jobs/limits';
import { OutageWaitInterceptor } from '../../workers/outage-wait';

// The worker's outage wait (workers/outage-wait.ts) with a fake activity context: an attempt that
// met Postgres down waits, heartbeating, until the probe answers, then fails for Temporal to retry.
function fakeContext(options: { cancelAfterSleeps?: number; timeoutMs?: number } = {}) {
  let sleeps = 0;
  const ctx = {
    info: { startToCloseTimeoutMs: options.timeoutMs ?? 60_000, currentAttemptScheduledTimestampMs: Date.now() },
    cancelled: new Promise<never>(() => undefined),
    heartbeats: 0,
    heartbeat() {
      ctx.heartbeats++;
    },
    async sleep(ms: number) {
      sleeps++;
      if (options.cancelAfterSleeps !== undefined && sleeps > options.cancelAfterSleeps) throw new Error('cancelled');
      await new Promise((r) => setTimeout(r, Math.min(ms, 10)));
    },
  };
  return ctx;
}

const refused = () =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED', syscall: 'connect' });
const input = {} as ActivityExecuteInput;

test('a database outage: the attempt fails with its own error only once the database answers again', async () => {
  const ctx = fakeContext();
  let probes = 0;
  const interceptor = new OutageWaitInterceptor(ctx as unknown as Context, {
    probes: {
      database: async () => {
        if (++probes < 4) throw refused();
      },
    },
    maxWaitMs: 60_000,
  });
  await expect(
    interceptor.execute(input, async () => {
      throw refused();
    }),
  ).rejects.toThrow('connect ECONNREFUSED');
  expect(probes).toBe(4);
  expect(ctx.heartbeats).toBe(4);
});

test('an error that is no outage fails at once, without probing', async () => {
  const ctx = fakeContext();
  const probe = jest.fn(async () => undefined);
  const interceptor = new OutageWaitInterceptor(ctx as unknown as Context, {
    probes: { database: probe },
    maxWaitMs: 60_000,
  });
  const siteDown = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8080'), {
    name: 'OutboundError',
    code: 'ECONNREFUSED',
  });
  await expect(
    interceptor.execute(input, async () => {
      throw siteDown;
    }),
  ).rejects.toBe(siteDown);
  expect(probe).not.toHaveBeenCalled();
  await expect(interceptor.execute(input, async () => 'done')).resolves.toBe('done');
});

test('a cancel ends the wait, and the attempt ends as cancelled', async () => {
  const ctx = fakeContext({ cancelAfterSleeps: 2 });
  const probe = jest.fn(async () => {
    throw refused();
  });
  const interceptor = new OutageWaitInterceptor(ctx as unknown as Context, {
    probes: { database: probe },
    maxWaitMs: 60_000,
  });
  await expect(
    interceptor.execute(input, async () => {
      throw refused();
    }),
  ).rejects.toThrow('cancelled');
  expect(probe).toHaveBeenCalledTimes(3);
});

test('the wait never outlives the attempt: an outage longer than its timeout fails it as before', async () => {
  const ctx = fakeContext({ timeoutMs: 4000 });
  const probe = jest.fn(async () => {
    throw refused();
  });
  const interceptor = new OutageWaitInterceptor(ctx as unknown as Context, {
    probes: { database: probe },
    maxWaitMs: 60_000,
  });
  await expect(
    interceptor.execute(input, async () => {
      throw refused();
    }),
  ).rejects.toThrow('ECONNREFUSED');
  expect(probe).not.toHaveBeenCalled();
});

// As on a real worker, the attempt learns of a cancel only in the answer to a heartbeat; its sleeps
// and `cancelled` fail from then on.
function heartbeatDeliveredCancel() {
  let requested = false;
  let reject!: (err: Error) => void;
  const cancelled = new Promise<never>((_, r) => {
    reject = r;
  });
  cancelled.catch(() => undefined);
  let delivered: Error | undefined;
  const ctx = {
    info: { startToCloseTimeoutMs: 60_000, currentAttemptScheduledTimestampMs: Date.now() },
    cancelled,
    heartbeat() {
      if (requested && !delivered) {
        delivered = new Error('cancelled');
        reject(delivered);
      }
    },
    async sleep(ms: number) {
      if (delivered) throw delivered;
      await Promise.race([new Promise((r) => setTimeout(r, ms)), cancelled]);
    },
    requestCancel() {
      requested = true;
    },
  };
  return ctx;
}

test('a cancel during a probe that hangs (a service that takes connections and never answers) ends the attempt within a heartbeat interval', async () => {
  // On a fake clock: what is checked is the time the code waits, not how fast this machine runs it.
  jest.useFakeTimers();
  try {
    const ctx = heartbeatDeliveredCancel();
    const hanging = () => new Promise<void>(() => undefined);
    const interceptor = new OutageWaitInterceptor(ctx as unknown as Context, {
      probes: { database: hanging },
      maxWaitMs: 60_000,
    });
    let outcome: unknown = 'still waiting';
    void interceptor
      .execute(input, async () => {
        throw refused();
      })
      .then(
        () => (outcome = 'completed'),
        (err: Error) => (outcome = err.message),
      );
    await jest.advanceTimersByTimeAsync(100);
    ctx.requestCancel();
    // A heartbeat every HEARTBEAT_INTERVAL (500 ms) carries it; before, one went out per probe round
    // (the probe's 2 s time-out, then the 1 s pause): the attempt was still waiting here.
    await jest.advanceTimersByTimeAsync(HEARTBEAT_INTERVAL.ms);
    expect(outcome).toBe('cancelled');
  } finally {
    jest.useRealTimers();
  }
});
