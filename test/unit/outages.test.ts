import { errors } from '@elastic/elasticsearch';
import { markDependency, unavailableDependency } from '../../lib/outages';

// Which backing service an error says is down: those answer 503 (api/middleware/errors.ts), the rest 500.
test('database outages: refused connection, pool timeout, shutdown and connection SQLSTATEs', () => {
  expect(unavailableDependency(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED', syscall: 'connect' }))).toBe('database');
  expect(unavailableDependency(Object.assign(new Error('Knex: Timeout acquiring a connection'), { name: 'KnexTimeoutError' }))).toBe('database');
  expect(unavailableDependency(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }))).toBe('database');
  expect(unavailableDependency(Object.assign(new Error('connection failure'), { code: '08006' }))).toBe('database');
  expect(unavailableDependency(new Error('Connection terminated unexpectedly'))).toBe('database');
});

test('search, queue and storage outages; a cause chain is followed', () => {
  expect(unavailableDependency(new errors.ConnectionError('connect ECONNREFUSED 127.0.0.1:9200'))).toBe('search');
  expect(unavailableDependency(Object.assign(new Error('14 UNAVAILABLE: No connection established'), { name: 'ServiceError' }))).toBe('queue');
  expect(unavailableDependency(Object.assign(new Error('Please reduce your request rate.'), { code: 'SlowDown' }))).toBe('storage');
  expect(unavailableDependency(new Error('query failed', { cause: Object.assign(new Error('x'), { code: '57P03' }) }))).toBe('database');
});

test("a refused connection marked as object storage's is a storage outage, not the database's (lib/storage.ts marks MinIO's)", () => {
  const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9000'), { code: 'ECONNREFUSED', syscall: 'connect' });
  expect(unavailableDependency(refused())).toBe('database');
  expect(unavailableDependency(markDependency(refused(), 'storage'))).toBe('storage');
  // The first mark stands.
  expect(unavailableDependency(markDependency(markDependency(refused(), 'storage'), 'database'))).toBe('storage');
});

test('bugs and refusals are not outages', () => {
  expect(unavailableDependency(new TypeError("Cannot read properties of undefined (reading 'id')"))).toBeUndefined();
  expect(unavailableDependency(Object.assign(new Error('duplicate key value'), { code: '23505' }))).toBeUndefined();
  expect(unavailableDependency(Object.assign(new Error('syntax error'), { code: '42601' }))).toBeUndefined();
  expect(unavailableDependency(Object.assign(new Error('x'), { name: 'ServiceError', message: '3 INVALID_ARGUMENT: bad' }))).toBeUndefined();
  expect(unavailableDependency('ECONNREFUSED')).toBeUndefined();
  // An outside server refusing (our own typed errors about it) is not a backing service down.
  class MailServerError extends Error {
    override name = 'MailServerError';
  }
  expect(unavailableDependency(Object.assign(new MailServerError('connect ECONNREFUSED 127.0.0.1:25'), { code: 'ECONNREFUSED' }))).toBeUndefined();
  expect(unavailableDependency(Object.assign(new Error('fetch failed'), { name: 'OutboundError', cause: Object.assign(new Error('x'), { code: 'ECONNREFUSED' }) }))).toBeUndefined();
  // AbortSignal.timeout()'s DOMException is not Elasticsearch's TimeoutError.
  expect(unavailableDependency(Object.assign(new Error('The operation was aborted due to timeout'), { name: 'TimeoutError' }))).toBeUndefined();
});
