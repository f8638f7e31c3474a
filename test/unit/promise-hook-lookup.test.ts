/**
 * `src/workflows/stack-traces.ts` answers the SDK's per-promise look-ups without compiling code or
 * making an `Error` (ARCHITECTURE.md#workflow-stack-traces). The module is evaluated in a fresh
 * `vm` context, as the worker evaluates it in the workflow sandbox, and the SDK's real promise
 * hook (`@temporalio/worker`'s vm-shared.js) is installed on this thread to run against it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import ts from 'typescript';

const modulePath = path.join(__dirname, '../../src/workflows/stack-traces.ts');
const moduleJs = ts.transpileModule(readFileSync(modulePath, 'utf8'), {
  compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
}).outputText;

interface Sandbox {
  errorsMade: number;
  __TEMPORAL_ACTIVATOR__?: unknown;
}

/**
 * A context like the workflow sandbox, with or without our module, whose `Error` counts the
 * instances made of it (the hook makes one per promise when it reaches `Error`).
 */
function sandbox(withModule: boolean): { ctx: vm.Context & Sandbox; run: <T>(code: string) => T } {
  const ctx = vm.createContext({ errorsMade: 0, exports: {} }) as vm.Context & Sandbox;
  vm.runInContext(
    `const OriginalError = Error;
     globalThis.Error = class CountedError extends OriginalError {
       constructor(...args) { super(...args); globalThis.errorsMade++; }
     };`,
    ctx,
  );
  if (withModule) vm.runInContext(moduleJs, ctx);
  return { ctx, run: <T>(code: string) => vm.runInContext(code, ctx) as T };
}

function activatorWithStore(runId: string) {
  return { info: { runId }, promiseStackStore: { promiseToStack: new Map(), childToParent: new Map() } };
}

describe('the look-ups answered for the promise hook', () => {
  test('the activator is read from the global when called, Error is a class without a stack, other sources compile', () => {
    const { ctx, run } = sandbox(true);
    ctx.__TEMPORAL_ACTIVATOR__ = { id: 1 };
    expect(run(`Promise.constructor('return globalThis.__TEMPORAL_ACTIVATOR__')()`)).toEqual({ id: 1 });
    // Reusable contexts swap the activator per workflow: the look-up must see the current one.
    ctx.__TEMPORAL_ACTIVATOR__ = { id: 2 };
    expect(run(`Promise.constructor('return globalThis.__TEMPORAL_ACTIVATOR__')()`)).toEqual({ id: 2 });

    expect(run(`new (Promise.constructor('return globalThis.Error')())().stack`)).toBeUndefined();
    expect(run(`Promise.constructor('return globalThis.Error')() === Error`)).toBe(false);
    expect(ctx.errorsMade).toBe(0);

    expect(run(`Promise.constructor('a', 'b', 'return a * b')(6, 7)`)).toBe(42);
    expect(run(`(class extends Promise {}).constructor === Promise.constructor`)).toBe(true);
    // Real errors are untouched: made by the real Error, with their stack.
    expect(run(`new Error('boom').stack`)).toMatch(/^Error: boom\n\s+at /);
  });

  test("the SDK's promise hook makes no Error and records no stack for a sandbox with the module; without it, one per promise", async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { globalHandlers } = require('@temporalio/worker/lib/workflow/vm-shared') as {
      globalHandlers: { install(): void; uninstall(): void };
    };
    const ours = sandbox(true);
    const sdkDefault = sandbox(false);
    const oursActivator = activatorWithStore('ours');
    ours.ctx.__TEMPORAL_ACTIVATOR__ = oursActivator;
    sdkDefault.ctx.__TEMPORAL_ACTIVATOR__ = activatorWithStore('default');

    globalHandlers.install();
    try {
      const code = `globalThis.pending = [1, 2, 3, 4, 5].map((n) => new Promise(() => n)); globalThis.pending.length`;
      expect(ours.run(code)).toBe(5);
      expect(sdkDefault.run(code)).toBe(5);
    } finally {
      globalHandlers.uninstall();
    }
    // The hook ran in both: it tagged each promise with its workflow's run.
    expect(ours.run<string[]>(`globalThis.pending.map((p) => p.runId)`)).toEqual(Array(5).fill('ours'));
    expect(sdkDefault.run<string[]>(`globalThis.pending.map((p) => p.runId)`)).toEqual(Array(5).fill('default'));

    expect(ours.ctx.errorsMade).toBe(0);
    expect(oursActivator.promiseStackStore.promiseToStack.size).toBe(0);
    // Without the module the hook compiles its look-ups and makes an Error (capturing frames) for
    // every promise. (What it records then depends on the outer realm's formatter, which in a
    // worker thread is the SDK's and here is not, so only the Errors are compared.)
    expect(sdkDefault.ctx.errorsMade).toBeGreaterThanOrEqual(5);
  });
});
