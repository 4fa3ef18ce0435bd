import { errors } from '@elastic/elasticsearch';
import { markDependency, unavailableDependency } from '../../lib/outages';

// Which backing service an error says is down: those answer 503 (api/middleware/errors.ts), the rest 500.
test('database outages: refused connection, pool timeout, shutdown and connection SQLSTATEs', () => {
  expect(
    unavailableDependency(
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED', syscall: 'connect' }),
    ),
  ).toBe('database');
  expect(
    unavailableDependency(
      Object.assign(new Error('Knex: Timeout acquiring a connection'), { name: 'KnexTimeoutError' }),
    ),
  ).toBe('database');
  expect(
    unavailableDependency(
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
    ),
  ).toBe('database');
  expect(unavailableDependency(Object.assign(new Error('connection failure'), { code: '08006' }))).toBe('database');
  expect(unavailableDependency(new Error('Connection terminated unexpectedly'))).toBe('database');
});

test('search, queue and storage outages; a cause chain is followed', () => {
  expect(unavailableDependency(new errors.ConnectionError('connect ECONNREFUSED 127.0.0.1:9200'))).toBe('search');
  expect(
    unavailableDependency(
      Object.assign(new Error('14 UNAVAILABLE: No connection established'), { name: 'ServiceError' }),
    ),
  ).toBe('queue');
  expect(
    unavailableDependency(Object.assign(new Error('Please reduce your request rate.'), { code: 'SlowDown' })),
  ).toBe('storage');
  expect(
    unavailableDependency(new Error('query failed', { cause: Object.assign(new Error('x'), { code: '57P03' }) })),
  ).toBe('database');
});

test("a refused connection marked as object storage's is a storage outage, not the database's (lib/storage.ts marks MinIO's)", () => {
  const refused = () =>
    Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9000'), { code: 'ECONNREFUSED', syscall: 'connect' });
  expect(unavailableDependency(refused())).toBe('database');
  expect(unavailableDependency(markDependency(refused(), 'storage'))).toBe('storage');
  // The first mark stands.
  expect(unavailableDependency(markDependency(markDependency(refused(), 'storage'), 'database'))).toBe('storage');
});

test("Objection's DBError around a driver error: a Postgres restarting after a crash is a database outage", () => {
  // What the API met right after Postgres came back from a crash (57P03), wrapped by Objection (db-errors).
  const native = Object.assign(new Error('the database system is not yet accepting connections'), {
    name: 'error',
    code: '57P03',
  });
  const wrapped = Object.assign(new Error(native.message), { name: 'DBError', nativeError: native });
  expect(unavailableDependency(wrapped)).toBe('database');
  expect(
    unavailableDependency(Object.assign(new Error('the database system is in recovery mode'), { name: 'DBError' })),
  ).toBe('database');
  // pg's client whose connection broke mid-transaction (Postgres killed during a submission's COMMIT).
  expect(
    unavailableDependency(new Error('COMMIT; - Client has encountered a connection error and is not queryable')),
  ).toBe('database');
  // A DBError that is a bug stays one.
  expect(
    unavailableDependency(
      Object.assign(new Error('column "x" does not exist'), {
        name: 'DBError',
        nativeError: Object.assign(new Error('column "x" does not exist'), { code: '42703' }),
      }),
    ),
  ).toBeUndefined();
});

test('bugs and refusals are not outages', () => {
  expect(unavailableDependency(new TypeError("Cannot read properties of undefined (reading 'id')"))).toBeUndefined();
  expect(unavailableDependency(Object.assign(new Error('duplicate key value'), { code: '23505' }))).toBeUndefined();
  expect(unavailableDependency(Object.assign(new Error('syntax error'), { code: '42601' }))).toBeUndefined();
  expect(
    unavailableDependency(Object.assign(new Error('x'), { name: 'ServiceError', message: '3 INVALID_ARGUMENT: bad' })),
  ).toBeUndefined();
  expect(unavailableDependency('ECONNREFUSED')).toBeUndefined();
  // An outside server refusing (our own typed errors about it) is not a backing service down.
  class MailServerError extends Error {
    override name = 'MailServerError';
  }
  expect(
    unavailableDependency(
      Object.assign(new MailServerError('connect ECONNREFUSED 127.0.0.1:25'), { code: 'ECONNREFUSED' }),
    ),
  ).toBeUndefined();
  expect(
    unavailableDependency(
      Object.assign(new Error('fetch failed'), {
        name: 'OutboundError',
        cause: Object.assign(new Error('x'), { code: 'ECONNREFUSED' }),
      }),
    ),
  ).toBeUndefined();
  // AbortSignal.timeout()'s DOMException is not Elasticsearch's TimeoutError.
  expect(
    unavailableDependency(
      Object.assign(new Error('The operation was aborted due to timeout'), { name: 'TimeoutError' }),
    ),
  ).toBeUndefined();
});
