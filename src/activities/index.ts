/**
 * All activities, built from injected dependencies (no import-time singletons): the worker
 * decides the model endpoint, the pricing table and the tool registry.
 */
import { statSync } from 'node:fs';
import { hostname } from 'node:os';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { SetupActivities, ToolActivities } from '../shared/activities';
import type { HookActivities } from '../shared/hooks';
import type { RunToolInput, ToolOutcome } from '../shared/tools';
import { heartbeatEveryMs } from './heartbeat';
import { leaveStickyQueueOfPreviousAttempt, withWorkerProcess } from './sticky';
import { defaultToolOps, type ToolOps, type ToolRegistry } from './tools';
import { createInspectActivity } from './permissions';

/** `ops`: the tools' filesystem, processes and sandbox (default: the real ones, from the worker's environment). */
export function createToolActivities(registry: ToolRegistry, ops?: ToolOps): ToolActivities {
  return {
    ...createInspectActivity(ops ? { fs: ops.fs } : {}),
    async listTools() {
      // Bash's spec says whether this worker can sandbox it: the workflow warns at init when it
      // cannot (docs/ARCHITECTURE.md#bash-sandbox).
      const sandbox = await (ops ?? defaultToolOps()).sandbox.status();
      return registry.specs().map((spec) => (spec.name === 'Bash' ? { ...spec, sandbox } : spec));
    },
    async runTool(input: RunToolInput): Promise<ToolOutcome> {
      const ctx = Context.current();
      // Heartbeat details are last-writer-wins: keep re-sending what the tool last reported
      // (Bash records that it started, which a retried attempt needs to see — ARCHITECTURE.md#side-effects-reported-as-unknown).
      let details: unknown;
      // Each beat names this process (sticky.ts): a retry in another process then knows to leave
      // the sticky queue of a worker that may be dead, so the turn is recorded without waiting on it.
      const heartbeat = (d?: unknown) => {
        if (d !== undefined) details = d;
        ctx.heartbeat(withWorkerProcess(details));
      };
      await leaveStickyQueueOfPreviousAttempt();
      const ticker = setInterval(() => heartbeat(), heartbeatEveryMs());
      try {
        return await registry.run(input, {
          signal: ctx.cancellationSignal,
          heartbeat,
          attempt: ctx.info.attempt,
          previousHeartbeat: ctx.info.heartbeatDetails,
          ...(ops ? { ops } : {}),
          attemptKey: ctx.info.workflowExecution
            ? `${ctx.info.workflowExecution.workflowId}/${ctx.info.workflowExecution.runId}/${ctx.info.activityId}`
            : undefined,
        });
      } finally {
        clearInterval(ticker);
      }
    },
  };
}

/**
 * `prepareSession`: the tools worker's two set-up answers in one activity, so a new session waits
 * on the tools queue once (ARCHITECTURE.md#session-start-in-one-step).
 */
export function createSetupActivities(
  tools: Pick<ToolActivities, 'listTools'>,
  hooks: Pick<HookActivities, 'loadSettings'>,
): SetupActivities {
  return {
    async prepareSession(input) {
      checkWorkingDirectory(input.cwd);
      const [list, settings] = await Promise.all([tools.listTools(), hooks.loadSettings(input)]);
      return { tools: list, settings };
    },
  };
}

/**
 * A session whose folder is missing on this host ends at once with an error result naming it
 * (the workflow's `setup_error`), instead of running every tool against a folder that is not there.
 */
function checkWorkingDirectory(cwd: string): void {
  let problem: string | undefined;
  try {
    if (!statSync(cwd).isDirectory()) problem = 'is not a directory';
  } catch (e) {
    problem = (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist' : `cannot be read (${(e as NodeJS.ErrnoException).code})`;
  }
  if (problem)
    throw ApplicationFailure.create({
      type: 'InvalidCwd',
      message: `cwd: ${cwd} ${problem} on the tools host (${hostname()})`,
      nonRetryable: true,
    });
}
