/** Jest: TypeScript transpiled by swc (type checking is `npm run typecheck`, run by `npm test`). */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } } }] },
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 60000,
  // The suite shares one stack; two workers keep the 2-core machine responsive.
  maxWorkers: 2,
  // Each test file's module registry (Temporal's client, Playwright, the Elasticsearch client) is not
  // all released: a worker's heap grew by ~50 MB per file to ~2.5 GB after ~49 files, and Jest then
  // force-killed the slow-exiting worker at the end ("failed to exit gracefully"). A worker whose heap
  // is above this after a file is replaced by a fresh one.
  workerIdleMemoryLimit: '1GB',
};
