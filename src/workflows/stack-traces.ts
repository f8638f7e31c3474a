/**
 * How errors in the workflow sandbox get their `stack`, and what the SDK's promise hook finds when
 * it looks for one (ARCHITECTURE.md#workflow-stack-traces).
 *
 * The SDK's promise hook makes an `Error` for every promise workflow code creates and reads its
 * `stack`, so that its stack-trace query can show where each pending promise was made; its
 * formatter source-maps every frame of every one of those stacks. A session creates ~44 promises a
 * round and a saturated worker spent about a quarter of its workflow thread there. Here the
 * sandbox's own `Error.prepareStackTrace` (Node calls the realm's own before the SDK's) answers
 * those probes with an empty stack, which the hook takes as "nothing to record", and formats every
 * real error as V8 does by default: function names and bundle positions, not source-mapped.
 *
 * Preloaded only with the worker option `fastWorkflowStacks` (DURABLE_AGENT_FAST_WORKFLOW_STACKS=1,
 * src/worker/bundle.ts; off by default, which keeps the SDK's stack-trace query and source-mapped
 * errors): it runs once per worker thread, before the SDK freezes the sandbox's globals, and so
 * applies to every workflow of the thread.
 */

/**
 * The stack of an error made by the promise hook itself: its first frame is the SDK's hook
 * (`@temporalio/worker/lib/workflow/vm-shared.js`), called directly or through Node's `initAll`.
 * Only saves formatting: whatever this returns, the hook records nothing, since it records only
 * what its own formatter, which no longer runs for sandbox errors, collected.
 */
function isPromiseHookProbe(frames: readonly NodeJS.CallSite[]): boolean {
  for (let i = 0; i < frames.length && i < 2; i++) {
    const file = frames[i]!.getFileName() ?? '';
    if (file === 'node:internal/promise_hooks' || file.endsWith('vm-shared.js')) return true;
  }
  return false;
}

/** V8's own format: `Name: message` and one `    at …` line per frame. */
function formatStack(error: unknown, frames: readonly NodeJS.CallSite[]): string {
  let head: string;
  try {
    head = String(error);
  } catch {
    head = 'Error';
  }
  return frames.length === 0 ? head : `${head}\n${frames.map((f) => `    at ${String(f)}`).join('\n')}`;
}

function prepareWorkflowStackTrace(error: unknown, frames: NodeJS.CallSite[]): string {
  return isPromiseHookProbe(frames) ? '' : formatStack(error, frames);
}

/* Found in the bundle's code by the worker (`FAST_WORKFLOW_STACKS_MARK`, `bundleHasFastWorkflowStacks` in
 * src/worker/bundle.ts), which refuses a prebuilt bundle built with the other setting than its own. */
Object.defineProperty(prepareWorkflowStackTrace, 'mark', { value: 'durable-agent:fast-workflow-stacks' });

Error.prepareStackTrace = prepareWorkflowStackTrace;

/*
 * The hook's look-ups, answered without compiling code. For every promise workflow code creates,
 * the SDK's hook reaches the sandbox through `promise.constructor.constructor(source)()`: it
 * compiles a new function with the sandbox's `Function` to read the running workflow's activator,
 * compiles another to read `Error`, then makes an `Error` (capturing its frames) only to find that
 * the formatter above recorded nothing. Profiled on a saturated worker that was, after the `vm`
 * calls themselves, the workflow thread's largest cost. `Promise.constructor`, which is
 * `Function` by inheritance, is given as an own property a function that answers those two
 * sources with functions made once: the activator is still read from `globalThis` when called,
 * as the compiled function did; `Error` is a class without a stack, which the hook takes as
 * "nothing to record", as before. Any other source is compiled by the real `Function`.
 */
const ACTIVATOR_SOURCE = 'return globalThis.__TEMPORAL_ACTIVATOR__';
const ERROR_SOURCE = 'return globalThis.Error';

/** What the hook makes for a promise instead of an `Error`: no frames captured, no `stack`. */
class NoStack {}

const readActivator = (): unknown => (globalThis as { __TEMPORAL_ACTIVATOR__?: unknown }).__TEMPORAL_ACTIVATOR__;
const readNoStack = (): typeof NoStack => NoStack;
const SandboxFunction = Function;

function promiseHookLookup(...args: string[]): unknown {
  if (args.length === 1 && args[0] === ACTIVATOR_SOURCE) return readActivator;
  if (args.length === 1 && args[0] === ERROR_SOURCE) return readNoStack;
  return SandboxFunction(...args);
}

Object.defineProperty(Promise, 'constructor', { value: promiseHookLookup, writable: false, enumerable: false, configurable: false });
