import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { prebuiltBundle, writePrebuiltBundle } from '../../workers/bundle';

// A compiled tree as `npm run build` leaves it: the worker takes its prebuilt workflow bundle only
// while every other .js file is as it was when the bundle was made.
let dist: string;
beforeEach(() => {
  dist = mkdtempSync(path.join(tmpdir(), 'lj-dist-'));
  mkdirSync(path.join(dist, 'workflows'));
  writeFileSync(path.join(dist, 'workflows/index.js'), 'exports.a = 1;\n');
  writeFileSync(path.join(dist, 'workflows/index.js.map'), '{}');
});
afterEach(() => rmSync(dist, { recursive: true, force: true }));

test('a bundle made from the tree as it is is used', () => {
  writePrebuiltBundle(dist, '/* bundle */');
  expect(prebuiltBundle(dist)).toEqual({ codePath: path.join(dist, 'workflow-bundle.js') });
});

test('no bundle, or no manifest: none is used', () => {
  expect(prebuiltBundle(dist)).toBeUndefined();
  writeFileSync(path.join(dist, 'workflow-bundle.js'), '/* bundle */');
  expect(prebuiltBundle(dist)).toBeUndefined();
});

test.each([
  ['a changed file', () => writeFileSync(path.join(dist, 'workflows/index.js'), 'exports.a = 2;\n')],
  ['a new file', () => writeFileSync(path.join(dist, 'workflows/other.js'), 'exports.b = 1;\n')],
  [
    'a renamed file',
    () => {
      rmSync(path.join(dist, 'workflows/index.js'));
      writeFileSync(path.join(dist, 'workflows/main.js'), 'exports.a = 1;\n');
    },
  ],
])('%s after the bundle was made: it is not used, and the worker is told why', (_what, change) => {
  writePrebuiltBundle(dist, '/* bundle */');
  change();
  const warnings: string[] = [];
  const log = { warn: (_o: object, msg: string) => warnings.push(msg) } as unknown as Parameters<
    typeof prebuiltBundle
  >[1];
  expect(prebuiltBundle(dist, log)).toBeUndefined();
  expect(warnings).toEqual([expect.stringContaining('run npm run build')]);
});

test('a changed source map is no change of the code', () => {
  writePrebuiltBundle(dist, '/* bundle */');
  writeFileSync(path.join(dist, 'workflows/index.js.map'), '{"version":3}');
  expect(prebuiltBundle(dist)).toBeDefined();
});
