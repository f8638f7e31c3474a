/**
 * Loaded into every thread of a worker process with NODE_OPTIONS=--require (a preload runs in
 * worker threads too), for test/chaos/workflow-thread-crash.test.ts. In the SDK's workflow
 * threads (not the main thread) it wraps `vm.Script#runInContext`, the call through which the SDK
 * runs every activation:
 * - PROBE_TIMEOUTS_FILE: appends each distinct `timeout` the SDK passes (its per-activation
 *   watchdog, `isolateExecutionTimeout`), so a test can see what the thread really runs with;
 * - PROBE_CRASH_TRIGGER: once that file exists, after the next activation it runs, in the same
 *   context, a promise callback that outlives a 50 ms watchdog: the way a starved activation ends
 *   (docs/ARCHITECTURE.md#workflow-thread-crash). Node then finds its async-hook stack corrupted
 *   and the process exits, as in temporalio/sdk-typescript#939.
 * - PROBE_THREAD_EXIT: once that file exists, the thread ends itself (`process.exit` in a worker
 *   thread ends that thread alone) before its next activation: a workflow thread gone while the
 *   process lives on.
 * Plain CommonJS: it runs before tsx is loaded.
 */
'use strict';
const { isMainThread } = require('node:worker_threads');
const fs = require('node:fs');
const vm = require('node:vm');

if (!isMainThread) {
  const timeoutsFile = process.env.PROBE_TIMEOUTS_FILE;
  const trigger = process.env.PROBE_CRASH_TRIGGER;
  const threadExit = process.env.PROBE_THREAD_EXIT;
  const seen = new Set();
  const runInContext = vm.Script.prototype.runInContext;
  vm.Script.prototype.runInContext = function (context, options) {
    const timeout = options && options.timeout;
    if (timeoutsFile && timeout !== undefined && !seen.has(timeout)) {
      seen.add(timeout);
      fs.appendFileSync(timeoutsFile, `${timeout}\n`);
    }
    if (threadExit && context && fs.existsSync(threadExit)) process.exit(7);
    const result = runInContext.call(this, context, options);
    if (trigger && context && fs.existsSync(trigger)) {
      const spin = new vm.Script('Promise.resolve().then(() => { for (let i = 0; i < 1e12; i++); })');
      runInContext.call(spin, context, { timeout: 50 });
    }
    return result;
  };
}
