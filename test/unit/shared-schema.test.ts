/**
 * src/shared/shared-schema.ts: a schema is built once per map and handed to every later
 * evaluation of its module once the bundle's preload has said that modules are evaluated once per
 * workflow; before that a key seen twice is two definitions sharing a key, and throws.
 */
import { z } from 'zod';

type SharedSchemaModule = typeof import('../../src/shared/shared-schema');

/** A fresh copy of the module (its map empty, not yet shared across workflows). */
function fresh(): SharedSchemaModule {
  let m: SharedSchemaModule | undefined;
  jest.isolateModules(() => {
    m = jest.requireActual<SharedSchemaModule>('../../src/shared/shared-schema');
  });
  return m!;
}

test('outside a preloaded bundle a key used twice throws, naming it', () => {
  const { sharedSchema } = fresh();
  const first = sharedSchema('t.A', () => z.string());
  expect(first.parse('x')).toBe('x');
  expect(() => sharedSchema('t.A', () => z.number())).toThrow("shared schema key 't.A' is used by two definitions");
  expect(sharedSchema('t.B', () => z.number()).parse(1)).toBe(1);
});

test('once shared across workflows, a later evaluation gets the first schema and does not build its own', () => {
  const { sharedSchema, shareAcrossWorkflows } = fresh();
  shareAcrossWorkflows();
  const build = jest.fn(() => z.object({ n: z.number() }).strict());
  const first = sharedSchema('t.Obj', build);
  const again = sharedSchema('t.Obj', build);
  expect(again).toBe(first);
  expect(build).toHaveBeenCalledTimes(1);
  // Used by both "workflows": zod's own caches on the schema serve each.
  expect(first.safeParse({ n: 1 }).success).toBe(true);
  expect(again.safeParse({ n: 1, extra: true }).success).toBe(false);
});

test('shared data is frozen all the way down', () => {
  const { sharedData } = fresh();
  const data = sharedData('t.json', () => ({ type: 'object', properties: { todos: { type: 'array', items: [{ a: 1 }] } } }));
  expect(Object.isFrozen(data)).toBe(true);
  expect(Object.isFrozen(data.properties.todos)).toBe(true);
  expect(Object.isFrozen(data.properties.todos.items[0])).toBe(true);
  expect(() => {
    (data.properties as Record<string, unknown>).x = 1;
  }).toThrow(TypeError);
});
