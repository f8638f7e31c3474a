/**
 * The mechanism of the workflow-thread crash (docs/ARCHITECTURE.md#workflow-thread-crash,
 * temporalio/sdk-typescript#939) in plain Node, without Temporal: a worker thread runs a script in
 * a `vm` context with `microtaskMode: 'afterEvaluate'` under a 50 ms watchdog, as the SDK runs an
 * activation, and the script's promise callback outlives the watchdog. Each variant runs in a
 * process of its own; the table says whether that process survived.
 *
 *   npx tsx bench/async-hook-crash.ts [--node PATH[,PATH…]] [--node-flags FLAGS]
 *
 * Variants: the callback alone; with a V8 promise hook installed in the thread (as the SDK's
 * stack-trace hook, init + settled); inside `AsyncLocalStorage.run` (as the SDK's cancellation
 * scopes); both. `--node` runs them on other Node binaries too (e.g. Node 24, whose
 * AsyncLocalStorage does not use async hooks); `--node-flags` adds flags (e.g. `--no-async-context-frame`).
 */
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import vm from 'node:vm';
import v8 from 'node:v8';
import { AsyncLocalStorage } from 'node:async_hooks';
import { isMainThread, parentPort, Worker } from 'node:worker_threads';

const VARIANTS = ['callback alone', 'V8 promise hook', 'AsyncLocalStorage.run', 'both'] as const;
type Variant = (typeof VARIANTS)[number];

/** In the thread: the variant's context, then one call whose promise callback outlives the watchdog. */
function threadMain(variant: Variant): void {
  if (variant === 'V8 promise hook' || variant === 'both') v8.promiseHooks.createHook({ init() {}, settled() {} });
  const context = vm.createContext({ AsyncLocalStorage }, { microtaskMode: 'afterEvaluate' });
  const spin = 'Promise.resolve().then(() => { for (const t = Date.now(); Date.now() - t < 200; ); })';
  const source = variant === 'AsyncLocalStorage.run' || variant === 'both' ? `new AsyncLocalStorage().run(1, () => ${spin})` : spin;
  parentPort!.on('message', () => {
    try {
      vm.runInContext(source, context, { timeout: 50 });
    } catch {
      // the watchdog's "Script execution timed out": the thread survived the timeout itself
    }
    parentPort!.postMessage('done');
  });
}

/** In a child process: the thread, one message, and a line saying the process lived on. */
function childMain(variant: Variant): void {
  // The thread inherits this process's flags, `--require tsx/cjs` among them.
  const thread = new Worker(__filename, { workerData: variant });
  thread.on('message', () => {
    setTimeout(() => {
      console.log('survived');
      process.exit(0);
    }, 200);
  });
  thread.postMessage('go');
}

function run(node: string, flags: string[], variant: Variant): string {
  const r = spawnSync(node, [...flags, '--require', 'tsx/cjs', __filename, '--child', variant], { encoding: 'utf8', timeout: 30_000 });
  const corrupted = /async hook stack has become corrupted \(actual: \d+, expected: \d+\)/.exec(r.stderr)?.[0];
  if (r.stdout.includes('survived') && r.status === 0) return 'survived';
  return `died (${r.signal ?? `exit ${r.status}`})${corrupted ? `: ${corrupted}` : ''}`;
}

if (!isMainThread) {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  threadMain((require('node:worker_threads') as typeof import('node:worker_threads')).workerData as Variant);
} else if (process.argv[2] === '--child') {
  childMain(process.argv[3] as Variant);
} else if (require.main === module) {
  const { values } = parseArgs({ options: { node: { type: 'string' }, 'node-flags': { type: 'string' } } });
  const nodes = [process.execPath, ...(values.node ? values.node.split(',') : [])];
  const flags = values['node-flags'] ? values['node-flags'].split(' ').filter(Boolean) : [];
  // Here, not at the top: the thread and the child load this file too, and nothing there may bring
  // in a module that uses AsyncLocalStorage (the SDK does), or the plain variants would not be plain.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { machine, table } = require('./lib') as typeof import('./lib');
  const rows: string[][] = [['node', 'flags', ...VARIANTS]];
  for (const node of nodes) {
    const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
    rows.push([version, flags.join(' ') || '-', ...VARIANTS.map((v) => run(node, flags, v))]);
  }
  console.log(`\n## The workflow-thread crash in plain Node (a promise callback outliving a 50 ms vm watchdog in a worker thread)`);
  console.log(`machine: ${machine()}`);
  console.log(table(rows));
}
