/**
 * How the session workflows are bundled, in one place for the worker, prebuilt bundles, the
 * tests and the benchmarks.
 */
import { bundleWorkflowCode, type BundleOptions, type WorkflowBundle } from '@temporalio/worker';

export const WORKFLOWS_PATH = require.resolve('../workflows');

/** Evaluated once per worker thread and shared by every workflow (ARCHITECTURE.md#shared-libraries). */
export const PRELOADED_MODULES: string[] = [require.resolve('../workflows/preload'), require.resolve('../workflows/stack-traces')];

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

/** Options every bundle of the session workflows is made with. */
export const SESSION_BUNDLER_OPTIONS = { preloadModules: PRELOADED_MODULES, webpackConfigHook: compileWorkflowsForNode };

/**
 * The session workflows as one bundle, for `DURABLE_AGENT_WORKFLOW_BUNDLE` or
 * `createWorker({ workflowBundle })`. With encryption on, pass
 * `failureConverterPath: ENCRYPTING_FAILURE_CONVERTER_PATH`.
 */
export function bundleSessionWorkflows(
  opts: Pick<BundleOptions, 'failureConverterPath' | 'logger' | 'workflowInterceptorModules'> = {},
): Promise<WorkflowBundle> {
  return bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, ...SESSION_BUNDLER_OPTIONS, ...opts });
}
