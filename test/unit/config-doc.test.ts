import { readFileSync } from 'node:fs';
import { CONFIG_DOC, readDescriptions, renderConfigDoc } from '../../dev/config-doc';
import { configSchema } from '../../lib/config';

// docs/configuration.md is generated from lib/config.ts (dev/config-doc.ts): the schema's keys and
// defaults, and the JSDoc comment above each key. These tests fail when the two drift.

test('docs/configuration.md is what `npm run docs:config` renders from lib/config.ts', () => {
  const committed = readFileSync(CONFIG_DOC, 'utf8');
  const rendered = renderConfigDoc();
  if (rendered !== committed) {
    const [want, have] = [rendered.split('\n'), committed.split('\n')];
    const differs = want.findIndex((text, i) => text !== have[i]);
    const line = differs === -1 ? want.length : differs;
    throw new Error(
      'docs/configuration.md is out of date with lib/config.ts: run `npm run docs:config` (do not edit the file by hand).\n' +
        `First difference at line ${line + 1}:\n  committed: ${have[line] ?? '(end of file)'}\n  rendered:  ${want[line] ?? '(end of file)'}`,
    );
  }
  expect(rendered).toBe(committed);
});

test('every key of the config schema has a row in the rendered doc', () => {
  const rendered = renderConfigDoc();
  const keys = Object.keys(configSchema.shape);
  expect(keys.length).toBeGreaterThan(100);
  expect(keys.filter((key) => !rendered.includes(`\n| \`${key}\` | `))).toEqual([]);
});

test('a key without a JSDoc comment is named, not rendered without a meaning', () => {
  const source =
    'const s = z.object({\n  /** Documented. */\n  A: z.string(),\n  // a line comment is not a description\n  B: z.string(),\n});\n';
  expect([...readDescriptions(source, 's')]).toEqual([
    ['A', 'Documented.'],
    ['B', undefined],
  ]);
});
