// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const nodeBuiltins = [
  'assert',
  'buffer',
  'child_process',
  'cluster',
  'crypto',
  'dgram',
  'dns',
  'events',
  'fs',
  'fs/promises',
  'http',
  'http2',
  'https',
  'net',
  'os',
  'path',
  'perf_hooks',
  'process',
  'readline',
  'stream',
  'timers',
  'tls',
  'url',
  'util',
  'v8',
  'vm',
  'worker_threads',
  'zlib',
];
const ioPackages = ['pg', 'knex', 'objection', 'minio', '@elastic/elasticsearch', 'playwright-core', 'undici', 'pino'];

/** Import patterns of a top-level folder (`../db`, `../../db/models/job`, ...). */
const room = (name) => [`**/${name}`, `**/${name}/**`];
const ban = (names, message, extra = {}) => ({ group: names.flatMap(room), message, ...extra });

/** One `no-restricted-imports` rule per row of the import table in shared/house-style.md. */
const importRules = (paths, patterns) => ({ 'no-restricted-imports': ['error', { paths, patterns }] });

export default tseslint.config(
  // dev/ holds the stack's scripts and files; its TypeScript tools (dev/*.ts, e.g. config-doc.ts) are linted like bench/.
  { ignores: ['node_modules/**', 'dist/**', '.stack/**', 'dev/*', '!dev/*.ts', 'coverage/**', '*.js', '*.mjs'] },
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
    rules: importRules(
      [...nodeBuiltins.flatMap((name) => [name, `node:${name}`]), ...ioPackages],
      [
        ban(['db', 'search', 'api', 'workers'], 'workflows may not import I/O modules'),
        ban(['activities', 'lib'], 'workflows import only types from activities/ and lib/', { allowTypeImports: true }),
        // jobs/limits.ts is plain data; the rest of the catalog (zod schemas) only as types.
        {
          regex: '(^|/)jobs(/(?!limits$)[^/]+)*$',
          allowTypeImports: true,
          message: 'workflows import only types and jobs/limits.ts from the catalog',
        },
      ],
    ),
  },
  {
    files: ['activities/**/*.ts'],
    rules: importRules(
      [],
      [
        ban(['api', 'workers'], 'activities may not import api/ or workers/'),
        ban(['workflows'], 'activities import only shared types from workflows/', { allowTypeImports: true }),
      ],
    ),
  },
  {
    files: ['api/**/*.ts'],
    rules: importRules(
      [],
      [
        ban(
          ['activities', 'workers'],
          'api/ may not import activities/ or workers/ (task-queue names live in jobs/queues.ts)',
        ),
      ],
    ),
  },
  {
    files: ['db/**/*.ts'],
    rules: importRules(
      [],
      [
        ban(['api', 'activities', 'workflows', 'workers', 'search'], 'db/ may import only lib/ and jobs/'),
        {
          group: ['**/lib/errors'],
          importNames: ['AppError', 'badRequest', 'notFound'],
          message:
            'db/ knows nothing of HTTP: throw a DomainError (conflict, invalid, not_found) and let the error middleware map it',
        },
      ],
    ),
  },
  {
    files: ['search/**/*.ts'],
    rules: importRules(
      [],
      [ban(['api', 'activities', 'workflows', 'workers', 'db'], 'search/ may import only lib/ and jobs/')],
    ),
  },
  {
    // The catalog is read by everyone, workflows included: no I/O, nothing above it.
    files: ['jobs/**/*.ts'],
    rules: importRules(
      [...nodeBuiltins.flatMap((name) => [name, `node:${name}`]), ...ioPackages],
      [
        ban(
          ['api', 'activities', 'workflows', 'workers', 'db', 'search'],
          'jobs/ may import only lib/ (pure helpers) and zod',
        ),
      ],
    ),
  },
  {
    // The ground floor: shared by all, owns nothing above it.
    files: ['lib/**/*.ts'],
    rules: importRules(
      [],
      [
        ban(
          ['api', 'activities', 'workflows', 'workers', 'db', 'search'],
          'lib/ is the ground floor: it imports only jobs/ types and packages',
        ),
        ban(['jobs'], 'lib/ may import only types from jobs/ (the catalog builds on lib/, not the other way round)', {
          allowTypeImports: true,
        }),
      ],
    ),
  },
);
