/**
 * How the session workflows are bundled, in one place for the worker, prebuilt bundles, the
 * tests and the benchmarks.
 */
import { bundleWorkflowCode, type BundleOptions, type WorkflowBundle } from '@temporalio/worker';

export const WORKFLOWS_PATH = require.resolve('../workflows');

/**
 * The sandbox's stack formatter and the promise hook's look-ups (`fastWorkflowStacks`,
 * ARCHITECTURE.md#workflow-stack-traces): preloaded only when that option is on.
 */
export const STACK_TRACES_MODULE = require.resolve('../workflows/stack-traces');

/**
 * Evaluated once per worker thread and shared by every workflow (ARCHITECTURE.md#shared-libraries):
 * the modules of every session bundle. `preloadedModules` adds the stack-trace patches when asked.
 */
const PRELOADED_MODULES: readonly string[] = [require.resolve('../workflows/preload')];

/** The worker option's variable: `1` preloads the stack-trace patches (ARCHITECTURE.md#workflow-stack-traces). */
export const FAST_WORKFLOW_STACKS_ENV = 'DURABLE_AGENT_FAST_WORKFLOW_STACKS';

/**
 * Found in a bundle's code when `src/workflows/stack-traces.ts` is in it (it sets this on its
 * formatter, so no bundler drops it); see `bundleHasFastWorkflowStacks`.
 */
export const FAST_WORKFLOW_STACKS_MARK = 'durable-agent:fast-workflow-stacks';

export interface SessionBundleOptions {
  /**
   * Trade the SDK's stack-trace query and source-mapped workflow errors for CPU: the sandbox
   * records no stack per promise and formats errors by bundle position
   * (ARCHITECTURE.md#workflow-stack-traces). Default false: the SDK's own behaviour.
   */
  fastWorkflowStacks?: boolean;
}

/** The modules a session bundle preloads, with the stack-trace patches when `fastWorkflowStacks`. */
export function preloadedModules(opts: SessionBundleOptions = {}): string[] {
  return opts.fastWorkflowStacks ? [...PRELOADED_MODULES, STACK_TRACES_MODULE] : [...PRELOADED_MODULES];
}

/**
 * `DURABLE_AGENT_FAST_WORKFLOW_STACKS`: `1`/`true`/`yes`/`on` or `0`/`false`/`no`/`off`/unset
 * (the default, off). Anything else throws, naming the variable — call it at start-up.
 */
export function fastWorkflowStacksFromEnv(env: Record<string, string | undefined> = process.env): boolean {
  const raw = env[FAST_WORKFLOW_STACKS_ENV];
  const v = (raw ?? '').trim().toLowerCase();
  if (v === '' || v === '0' || v === 'false' || v === 'no' || v === 'off') return false;
  if (v === '1' || v === 'true' || v === 'yes' || v === 'on') return true;
  throw new Error(`${FAST_WORKFLOW_STACKS_ENV}: expected 1 or 0, got '${raw}'`);
}

/** Whether a bundle's code was built with `fastWorkflowStacks` (it has `stack-traces.ts` in it). */
export function bundleHasFastWorkflowStacks(code: string): boolean {
  return code.includes(FAST_WORKFLOW_STACKS_MARK);
}

type WebpackConfig = Parameters<NonNullable<BundleOptions['webpackConfigHook']>>[0];

/** What our TypeScript compiles to in the bundle: the tsconfig's target, which Node 20 runs natively. */
export const WORKFLOW_CODE_TARGET = 'es2022';

/**
 * The SDK's bundler compiles workflow TypeScript for ES2017, which turns every object spread into
 * calls to helper functions and every class field into a `defineProperty` call; a turn runs
 * dozens of spreads. Compiled for ES2022 they run as V8's own (ARCHITECTURE.md#workflow-code-target).
 * Throws if the bundler no longer compiles TypeScript with swc-loader, so an SDK upgrade cannot
 * drop this unnoticed.
 */
export function compileWorkflowsForNode(config: WebpackConfig): WebpackConfig {
  let found = false;
  for (const rule of config.module?.rules ?? []) {
    const use = rule && typeof rule === 'object' ? rule.use : undefined;
    if (!use || typeof use !== 'object' || Array.isArray(use) || typeof use.loader !== 'string' || !use.loader.includes('swc-loader'))
      continue;
    const options = use.options as { jsc?: { target?: string } } | undefined;
    if (!options?.jsc) continue;
    options.jsc.target = WORKFLOW_CODE_TARGET;
    found = true;
  }
  if (!found) throw new Error('bundling workflows: the SDK bundler has no swc-loader rule with `jsc` options to set the target of');
  return config;
}

/** The bundler options of a session bundle (the worker's own, when it bundles at start-up). */
export function sessionBundlerOptions(opts: SessionBundleOptions = {}): Pick<BundleOptions, 'preloadModules' | 'webpackConfigHook'> {
  return { preloadModules: preloadedModules(opts), webpackConfigHook: compileWorkflowsForNode };
}

/** Options every bundle of the session workflows is made with, by default (`fastWorkflowStacks` off). */
export const SESSION_BUNDLER_OPTIONS = sessionBundlerOptions();

/**
 * The session workflows as one bundle, for `DURABLE_AGENT_WORKFLOW_BUNDLE` or
 * `createWorker({ workflowBundle })`. With encryption on, pass
 * `failureConverterPath: ENCRYPTING_FAILURE_CONVERTER_PATH`. With `fastWorkflowStacks: true` the
 * workers given it must have that option on too (`DURABLE_AGENT_FAST_WORKFLOW_STACKS=1`), and
 * without it off: a worker refuses a bundle built the other way.
 */
export function bundleSessionWorkflows(
  opts: Pick<BundleOptions, 'failureConverterPath' | 'logger' | 'workflowInterceptorModules'> & SessionBundleOptions = {},
): Promise<WorkflowBundle> {
  const { fastWorkflowStacks, ...bundleOpts } = opts;
  return bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, ...sessionBundlerOptions({ fastWorkflowStacks }), ...bundleOpts });
}
