/**
 * All activities, built from injected dependencies (no import-time singletons): the worker
 * decides the model endpoint, the pricing table and the tool registry.
 */
import { Context } from '@temporalio/activity';
import type { ModelActivities, ToolActivities } from '../shared/activities';
import type { RunToolInput, ToolOutcome } from '../shared/tools';
import { createModelActivities, type ModelDeps } from './model';
import { heartbeatEveryMs } from './heartbeat';
import type { ToolRegistry } from './tools';

export interface ActivityDeps {
  model: ModelDeps;
  tools: ToolRegistry;
}

export function createToolActivities(registry: ToolRegistry): ToolActivities {
  return {
    async listTools() {
      return registry.specs();
    },
    async runTool(input: RunToolInput): Promise<ToolOutcome> {
      const ctx = Context.current();
      // Heartbeat details are last-writer-wins: keep re-sending what the tool last reported
      // (Bash records that it started, which a retried attempt needs to see — DESIGN D4).
      let details: unknown;
      const heartbeat = (d?: unknown) => {
        if (d !== undefined) details = d;
        ctx.heartbeat(details);
      };
      const ticker = setInterval(() => heartbeat(), heartbeatEveryMs());
      try {
        return await registry.run(input, {
          signal: ctx.cancellationSignal,
          heartbeat,
          attempt: ctx.info.attempt,
          previousHeartbeat: ctx.info.heartbeatDetails,
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

export function createActivities(deps: ActivityDeps): ModelActivities & ToolActivities {
  return { ...createModelActivities(deps.model), ...createToolActivities(deps.tools) };
}
