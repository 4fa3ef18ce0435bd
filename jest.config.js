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
  // A worker's heap grew by ~50 MB per file to ~2.5 GB after ~49 files, and Jest then force-killed the
  // slow-exiting worker at the end ("failed to exit gracefully"). Most of that was likely the workflow
  // bundle each file built (+53 MB measured alone; now built once per run: test/support/workflow-bundle.ts).
  // A guard still: a worker whose heap is above this after a file is replaced by a fresh one.
  workerIdleMemoryLimit: '1GB',
};
