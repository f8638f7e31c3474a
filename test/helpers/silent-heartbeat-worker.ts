/**
 * A worker whose first attempt of each model call sends no heartbeat, as if its process had
 * stalled (test/chaos/abandoned-attempt.test.ts): the server times that attempt out and retries
 * the call while the attempt itself runs on, streaming, until the SDK's own timer cancels it
 * (heartbeat timeout + 5 s without an answered heartbeat) — or it finishes first. Everything else
 * is the real `durable-agent worker`. Run with `node --require tsx/cjs`.
 */
import { Context } from '@temporalio/activity';
import { exitAfterOutput, main } from '../../src/cli/main';

/** Attempts at or below this are silent (SILENT_ATTEMPTS, default 1). */
const SILENT = Number(process.env.SILENT_ATTEMPTS ?? '1');

// Every activity finds its context through `Context.current()`; a silenced one's beats go nowhere.
// (`heartbeat` calls the injected `heartbeatFn` on each call, so replacing it is enough.)
const current = Context.current.bind(Context);
const silenced = new WeakSet<Context>();
Context.current = () => {
  const ctx = current();
  if (!silenced.has(ctx) && ctx.info.activityType === 'callModel' && ctx.info.attempt <= SILENT) {
    silenced.add(ctx);
    (ctx as unknown as { heartbeatFn: (details: unknown) => void }).heartbeatFn = () => undefined;
  }
  return ctx;
};

// The real command, with its environment (TEMPORAL_ADDRESS, DURABLE_AGENT_WORKFLOW_BUNDLE, …).
void main(['worker']).then(exitAfterOutput);
