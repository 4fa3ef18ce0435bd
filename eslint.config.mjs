// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const nodeBuiltins = ['assert', 'buffer', 'child_process', 'cluster', 'crypto', 'dgram', 'dns', 'events', 'fs', 'fs/promises', 'http', 'http2', 'https', 'net', 'os', 'path', 'perf_hooks', 'process', 'readline', 'stream', 'timers', 'tls', 'url', 'util', 'v8', 'vm', 'worker_threads', 'zlib'];

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', '.stack/**', 'dev/**', 'coverage/**', '*.js', '*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Workflow code is replayed: it must stay deterministic and free of I/O (Temporal's sandbox rules).
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [
          ...nodeBuiltins.flatMap((name) => [name, `node:${name}`]),
          'pg', 'knex', 'objection', 'minio', '@elastic/elasticsearch', 'playwright-core', 'undici',
        ],
        patterns: [
          { group: ['**/db/**', '**/search/**', '**/api/**'], message: 'workflows may not import I/O modules' },
          { group: ['**/activities/**'], allowTypeImports: true, message: 'workflows import only types from activities' },
        ],
      }],
    },
  },
);
