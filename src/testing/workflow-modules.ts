/**
 * A workflow bundle loaded the way the SDK's reusable V8 context loads it (`reusable-vm.js` of
 * @temporalio/worker): modules required while the bundle boots, the preloaded ones included, go
 * into one shared cache; every module a workflow requires after that goes into a cache of its
 * own, evaluated again for each new workflow. For `bench/workflow-start.ts` and the test that the
 * worker's bundle shares its libraries (ARCHITECTURE.md#shared-libraries).
 */
import vm from 'node:vm';
import { bundleWorkflowCode, type BundleOptions, type WorkflowBundle } from '@temporalio/worker';
import { compileWorkflowsForNode, WORKFLOWS_PATH } from '../worker/bundle';

/** A bundler logger that prints errors only (webpack's report would drown a test's or a benchmark's output). */
export const quietBundlerLogger = {
  info() {},
  warn() {},
  error: console.error,
  debug() {},
  trace() {},
  log() {},
} as unknown as NonNullable<BundleOptions['logger']>;

/** The session workflows bundled without the shared-library preload, to compare the workers' bundle against. */
export function bundleWithoutPreload(): Promise<WorkflowBundle> {
  return bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, webpackConfigHook: compileWorkflowsForNode, logger: quietBundlerLogger });
}

export interface LoadedBundle {
  /** Module ids in the shared cache. */
  shared: string[];
  /** Evaluate the workflow modules as one new workflow does; returns that workflow's module cache. */
  startWorkflow(): Record<string, unknown>;
}

export function loadBundle(code: string): LoadedBundle {
  const context = vm.createContext({ console, TextEncoder, TextDecoder, URL, URLSearchParams });
  const shared = new Map<string, unknown>();
  let perWorkflow: Record<string, unknown> | undefined;
  Object.defineProperty(context, '__webpack_module_cache__', {
    value: new Proxy(
      {},
      {
        get: (_, p: string) => shared.get(p) ?? perWorkflow?.[p],
        set: (_, p: string, v) => {
          if (perWorkflow) perWorkflow[p] = v;
          else shared.set(p, v);
          return true;
        },
      },
    ),
  });
  new vm.Script(code, { filename: 'workflow-bundle.js' }).runInContext(context);
  vm.runInContext('__TEMPORAL__.preloadModules?.()', context);
  return {
    shared: [...shared.keys()],
    startWorkflow() {
      perWorkflow = {};
      vm.runInContext('__TEMPORAL__.importWorkflows()', context);
      const cache = perWorkflow;
      perWorkflow = undefined;
      return cache;
    },
  };
}
