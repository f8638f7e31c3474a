/**
 * Benchmark 8 — what starting one session's workflow costs a worker thread: evaluating the
 * bundle's modules for that workflow, and the heap those module copies keep while the workflow is
 * cached. Side by side in one run: the bundle the worker uses (zod preloaded and shared,
 * ARCHITECTURE.md#shared-libraries) and the same bundle without the preload.
 *
 *   npx tsx bench/workflow-start.ts [--workflows 200]
 *
 * The SDK's reusable V8 context keeps one module cache for modules loaded while the bundle boots
 * (the SDK's own and the preloaded ones, then frozen) and one cache per workflow for the rest,
 * which each new workflow evaluates again — on its first activation, and again after every cache
 * eviction or continue-as-new. This bench loads the real bundle into a `vm` context the same way
 * (src/testing/workflow-modules.ts) and times `importWorkflows()`, the call the SDK makes for each
 * new workflow. It leaves out
 * what is the same with or without the preload: the activation itself, the globals swap, the
 * workflow's own state.
 */
import { setFlagsFromString } from 'node:v8';
import vm from 'node:vm';
import { parseArgs } from 'node:util';
import { bundleSessionWorkflows } from '../src/worker/bundle';
import { bundleWithoutPreload, loadBundle, quietBundlerLogger, type LoadedBundle } from '../src/testing/workflow-modules';
import { load, machine, median, percentile, table } from './lib';

setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

function measure(loaded: LoadedBundle, workflows: number) {
  for (let i = 0; i < 20; i++) loaded.startWorkflow(); // warm-up: compile, first-use paths
  const ms: number[] = [];
  let modules = 0;
  for (let i = 0; i < workflows; i++) {
    const t0 = process.hrtime.bigint();
    modules = Object.keys(loaded.startWorkflow()).length;
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  // Heap kept per cached workflow: hold `workflows` module caches at once, as a worker's cache does.
  gc();
  const before = process.memoryUsage().heapUsed;
  const held = Array.from({ length: workflows }, () => loaded.startWorkflow());
  gc();
  const kept = (process.memoryUsage().heapUsed - before) / held.length;
  held.length = 0;
  return { ms, modules, kept };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { workflows: { type: 'string', default: '200' } } });
  const workflows = Number(values.workflows);
  const loadBefore = load();
  const [withPreload, without] = await Promise.all([bundleSessionWorkflows({ logger: quietBundlerLogger }), bundleWithoutPreload()]);
  const rows: string[][] = [['bundle', 'shared modules', 'modules per workflow', 'median ms', 'p90 ms', 'heap per workflow']];
  const results: Record<string, ReturnType<typeof measure>> = {};
  // Alternate, so drift on a busy machine hits both alike.
  for (const [name, code] of [
    ['zod preloaded (the worker)', withPreload.code],
    ['no preload', without.code],
  ] as const) {
    const loaded = loadBundle(code);
    const r = measure(loaded, workflows);
    results[name] = r;
    rows.push([
      name,
      String(loaded.shared.length),
      String(r.modules),
      median(r.ms).toFixed(2),
      percentile(r.ms, 90).toFixed(2),
      `${(r.kept / 1024).toFixed(0)} KiB`,
    ]);
  }
  console.log(`\n## 8. Workflow start: module evaluation per new workflow (${workflows} workflows each, after 20 warm-up)`);
  console.log(`machine: ${machine()}; ${loadBefore} before, ${load()} after`);
  console.log(table(rows));
  const a = results['zod preloaded (the worker)']!;
  const b = results['no preload']!;
  console.log(
    `preloaded / no preload: ${(median(a.ms) / median(b.ms)).toFixed(2)}× time, ${(a.kept / b.kept).toFixed(2)}× heap per cached workflow`,
  );
}

if (require.main === module) {
  main().then(
    () => process.exit(0),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
