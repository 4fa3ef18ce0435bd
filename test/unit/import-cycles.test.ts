import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * No import cycles among the service's modules (issue 39: a structure read found them between the
 * mail activities, db/index, its seeds and the locations repository, events and the webhook
 * outbox, workflows/job and its steps). A cycle makes a module's exports undefined while the other
 * one loads, depending on which is imported first. Only run-time imports count: `import type` (and
 * an import whose every name is `type X`) is erased by the compiler. Checked on the sources as
 * written, so no tool has to be installed; madge 8 found none either on 2026-12-07.
 */
const ROOT = join(__dirname, '..', '..');
const DIRS = ['api', 'workflows', 'activities', 'workers', 'db', 'search', 'lib', 'jobs'];

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sources(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** `import ... from '<spec>'`, `export ... from '<spec>'` and side-effect `import '<spec>'`, with what they import. */
const IMPORT = /^\s*(import|export)\s+(type\s+)?([^'";]*?)\s*(?:from\s+)?['"]([^'"]+)['"]/gm;

/** The relative run-time imports of one file, resolved to files. */
export function runtimeImports(file: string, text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(IMPORT)) {
    const [, , typeOnly, what = '', spec = ''] = m;
    if (typeOnly || !spec.startsWith('.')) continue;
    // `import { type A, type B } from` imports nothing at run time either.
    const names = /^\{([^}]*)\}$/.exec(what.trim())?.[1];
    if (names !== undefined && names.split(',').every((n) => n.trim() === '' || /^type\s/.test(n.trim()))) continue;
    const base = resolve(dirname(file), spec);
    const target = [`${base}.ts`, join(base, 'index.ts')].find((f) => existsSync(f));
    if (target) out.push(target);
  }
  return out;
}

/** Every cycle found by a depth-first walk, each as the files around it. */
function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (f: string) => {
    state.set(f, 'open');
    stack.push(f);
    for (const g of graph.get(f) ?? []) {
      if (state.get(g) === 'open') found.push([...stack.slice(stack.indexOf(g)), g]);
      else if (!state.has(g)) visit(g);
    }
    stack.pop();
    state.set(f, 'done');
  };
  for (const f of graph.keys()) if (!state.has(f)) visit(f);
  return found;
}

test('no run-time import cycles among api, workflows, activities, workers, db, search, lib and jobs', () => {
  const graph = new Map<string, string[]>();
  for (const dir of DIRS)
    for (const file of sources(join(ROOT, dir))) graph.set(file, runtimeImports(file, readFileSync(file, 'utf8')));
  expect(graph.size).toBeGreaterThan(200);
  expect(cycles(graph).map((c) => c.map((f) => relative(ROOT, f)).join(' -> '))).toEqual([]);
});

test('the walk sees a cycle, and ignores type-only imports', () => {
  const a = join(ROOT, 'lib/a.ts');
  const b = join(ROOT, 'lib/b.ts');
  expect(
    cycles(
      new Map([
        [a, [b]],
        [b, [a]],
      ]),
    ),
  ).toHaveLength(1);
  const importsOf = (text: string) => runtimeImports(join(ROOT, 'lib/x.ts'), text).map((f) => relative(ROOT, f));
  expect(importsOf("import { idapRef } from './idap';")).toEqual(['lib/idap.ts']);
  expect(importsOf("import type { Flag } from './idap';\nimport { type Flag } from './idap';")).toEqual([]);
  expect(importsOf("export { idapRef } from './idap';\nimport './logger';")).toEqual(['lib/idap.ts', 'lib/logger.ts']);
});
