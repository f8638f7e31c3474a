/** The layering check that `npm run lint` runs (scripts/layers.ts), on small trees and on src/ itself. */
import { findLayerViolations } from '../../scripts/layers';
import { sourceTree, treeCompilerOptions } from '../helpers/source-tree';

const violationsIn = (files: Record<string, string>): string[] =>
  findLayerViolations({ cwd: sourceTree(files), compilerOptions: treeCompilerOptions });

const base = {
  'src/shared/api.ts': 'export const api = 1;',
  'src/client/client.ts': "import { api } from '../shared/api';\nexport const client = api;",
  'src/cli/main.ts': "import { client } from '../client/client';\nexport const main = client;",
  'src/index.ts': "export { client } from './client/client';",
};

test('imports that point down a layer pass', () => {
  expect(violationsIn(base)).toEqual([]);
});

test('an upward import fails, naming both files and what the folder may import', () => {
  expect(violationsIn({ ...base, 'src/shared/api.ts': "import { client } from '../client/client';\nexport const api = client;" })).toEqual([
    'src/shared/api.ts → src/client/client.ts: src/shared/ may import only itself',
  ]);
  expect(violationsIn({ ...base, 'src/client/tty.ts': "import { main } from '../cli/main';\nexport const t = main;" })).toEqual([
    'src/client/tty.ts → src/cli/main.ts: src/client/ may import only src/shared/, src/codec/, src/server/, src/activities/',
  ]);
});

test('a type-only import counts, and so does one between siblings of the same layer', () => {
  expect(
    violationsIn({
      ...base,
      'src/activities/model.ts': "import type { X } from '../workflows/state';\nexport type Y = X;",
      'src/workflows/state.ts': 'export type X = 1;',
    }),
  ).toEqual(['src/activities/model.ts → src/workflows/state.ts: src/activities/ may import only src/shared/']);
});

test('one workflow type does not import another; the bundle entry imports them all', () => {
  const workflows = {
    'src/workflows/session/state.ts': 'export const s = 1;',
    'src/workflows/batch/batch.ts': "import { s } from '../session/state';\nexport const b = s;",
    'src/workflows/index.ts': "export { s } from './session/state';\nexport { b } from './batch/batch';",
  };
  expect(violationsIn({ ...base, ...workflows })).toEqual([
    "src/workflows/batch/batch.ts → src/workflows/session/state.ts: one workflow type's folder imports none of another's (what both need goes in src/shared/)",
  ]);
});

test('a folder or workflow type nobody placed, and an import from outside src/, are refused', () => {
  expect(
    violationsIn({
      ...base,
      'src/extras/x.ts': "import { api } from '../shared/api';\nexport const x = api;",
      'src/workflows/cron/cron.ts': 'export const c = 1;',
      'src/client/fixture.ts': "import { f } from '../../test/f';\nexport const g = f;",
      'test/f.ts': 'export const f = 1;',
    }),
  ).toEqual([
    'src/client/fixture.ts → test/f.ts: src/ imports nothing outside src/',
    'src/extras/x.ts → src/shared/api.ts: src/extras/ has no place in the layers (scripts/layers.ts LAYERS)',
    'src/workflows/cron/cron.ts: src/workflows/cron/ is not a known workflow type (scripts/layers.ts WORKFLOW_TYPES)',
  ]);
});

test("the project's own src/ keeps its layers", () => {
  expect(findLayerViolations()).toEqual([]);
});
