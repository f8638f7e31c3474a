/** The import-cycle check that `npm run lint` runs, on small trees written to temp dirs. */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { findImportCycles } from '../../scripts/import-cycles';
import { sourceTree as tree, treeCompilerOptions as compilerOptions } from '../helpers/source-tree';

const cyclesIn = (files: Record<string, string>, roots = ['src']) => findImportCycles(roots, { cwd: tree(files), compilerOptions });

test('a tree without cycles passes, packages and builtins not followed', () => {
  expect(
    cyclesIn({
      'src/a.ts': "import { b } from './b';\nimport fs from 'node:fs';\nimport { z } from 'zod';\nexport const a = b;",
      'src/b.ts': "import { c } from './lib';\nexport const b = c;",
      'src/lib/index.ts': 'export const c = 1;',
    }),
  ).toEqual([]);
});

test('two modules importing each other are a cycle, named file by file', () => {
  expect(
    cyclesIn({
      'src/model.ts': "import { summarize } from './summarize';\nexport const m = summarize;",
      'src/summarize.ts': "import { m } from './model';\nexport const summarize = () => m;",
    }),
  ).toEqual([['src/model.ts', 'src/summarize.ts', 'src/model.ts']]);
});

test('a type-only import closes a cycle too', () => {
  expect(
    cyclesIn({
      'src/model.ts': "import { summarize } from './summarize';\nexport interface ModelDeps { x: number }\nexport const m = summarize;",
      'src/summarize.ts': "import type { ModelDeps } from './model';\nexport const summarize = (d: ModelDeps) => d;",
    }),
  ).toEqual([['src/model.ts', 'src/summarize.ts', 'src/model.ts']]);
});

test('re-exports, dynamic imports, require and directory indexes are followed', () => {
  expect(
    cyclesIn({
      'src/a.ts': "export * from './b';",
      'src/b.ts': "export const load = () => import('./c');",
      'src/c.ts': "const d = require('./d');\nexport default d;",
      'src/d/index.ts': "export { x } from '../a';",
    }),
  ).toEqual([['src/a.ts', 'src/b.ts', 'src/c.ts', 'src/d/index.ts', 'src/a.ts']]);
});

test('a cycle through a second root is found; modules tangled by several cycles are reported once, by a shortest one', () => {
  expect(
    cyclesIn(
      {
        'src/a.ts': "import '../bench/b';\nimport './x';",
        'src/x.ts': "import './a';",
        'bench/b.ts': "import '../src/a';",
        'src/p.ts': "import './q';",
        'src/q.ts': "import './p';",
      },
      ['src', 'bench'],
    ),
  ).toEqual([
    ['bench/b.ts', 'src/a.ts', 'bench/b.ts'],
    ['src/p.ts', 'src/q.ts', 'src/p.ts'],
  ]);
});

test('a directory that does not exist is an error naming it', () => {
  expect(() => cyclesIn({ 'src/a.ts': '' }, ['src', 'nope'])).toThrow(/no such directory: .*nope/);
});

test('the command exits 1 and names the cycle; 0 on a clean tree', () => {
  const script = path.resolve(__dirname, '../../scripts/import-cycles.ts');
  const tsx = path.resolve(__dirname, '../../node_modules/.bin/tsx');
  const bad = tree({ 'src/a.ts': "import './b';", 'src/b.ts': "import './a';" });
  const failed = spawnSync(tsx, [script, 'src'], { cwd: bad, encoding: 'utf8' });
  expect(failed.status).toBe(1);
  expect(failed.stderr).toContain('import cycle: src/a.ts → src/b.ts → src/a.ts');
  const good = tree({ 'src/a.ts': "import './b';", 'src/b.ts': 'export {};' });
  expect(spawnSync(tsx, [script, 'src'], { cwd: good, encoding: 'utf8' }).status).toBe(0);
});
