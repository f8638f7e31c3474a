/**
 * How the session workflows are bundled, in one place for the worker, prebuilt bundles, the
 * tests and the benchmarks.
 */
import { bundleWorkflowCode, type BundleOptions, type WorkflowBundle } from '@temporalio/worker';

export const WORKFLOWS_PATH = require.resolve('../workflows');

/** Evaluated once per worker thread and shared by every workflow (ARCHITECTURE.md#shared-libraries). */
export const PRELOADED_MODULES: string[] = [require.resolve('../workflows/preload'), require.resolve('../workflows/stack-traces')];

/**
 * The session workflows as one bundle, for `DURABLE_AGENT_WORKFLOW_BUNDLE` or
 * `createWorker({ workflowBundle })`. With encryption on, pass
 * `failureConverterPath: ENCRYPTING_FAILURE_CONVERTER_PATH`.
 */
export function bundleSessionWorkflows(
  opts: Pick<BundleOptions, 'failureConverterPath' | 'logger' | 'workflowInterceptorModules'> = {},
): Promise<WorkflowBundle> {
  return bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, preloadModules: PRELOADED_MODULES, ...opts });
}
