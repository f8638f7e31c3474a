/**
 * Tool dispatch inside the workflow: validate → permission → run (activity, or in-workflow for
 * TodoWrite) → one `tool_result` per call. Tool failures are data the model sees (ARCHITECTURE.md#tools-fail-as-data).
 */
import type { ToolResultBlock, ToolUseBlock } from '../../shared/messages';
import type { RunToolInput, ToolOutcome, ToolSpec } from '../../shared/tools';
import { normalizePath } from '../../shared/tools';
import { TODO_RESULT, TODO_TOOL, TodoWriteInput } from '../../shared/todo';
import { DONE_TOOL, TaskCompleteInput } from '../../shared/done-tool';
import { invalidCallReason, scheduleBatches } from './tool-calls';
import type { LoopState } from './state';
import { recordFileStamps } from './state';
import { pathGuardFor, permissionGate, type GateDeps, type GateResult } from './permission-gate';
import { fireHooks, type HookDeps } from './hooks';
import { runTask, TASK_TOOL } from './subagents';
import { callMcpTool } from './mcp';
import { callClientTool } from './client-tools';
import type { McpActivities } from '../../shared/activities';
import { hookBlockedText, hookInputInvalidText, TASK_COMPLETE_INVALID, todoWriteInvalidText } from '../../shared/model-texts';

export interface ToolDispatchDeps extends GateDeps, HookDeps {
  specs: ToolSpec[];
  runTool(input: RunToolInput): Promise<ToolOutcome>;
  /** MCP tools run through these (ARCHITECTURE.md#mcp). */
  mcp: McpActivities;
  /** Called when the model calls TaskComplete (requireDoneTool). */
  onDone(message: string): void;
}

/**
 * Run one turn's calls; fills `results` (keyed by tool_use id) as calls finish, so an
 * interrupted turn still knows which calls completed.
 */
export async function dispatchToolCalls(
  deps: ToolDispatchDeps,
  calls: ToolUseBlock[],
  results: Record<string, ToolResultBlock>,
  pending: { id: string; name: string }[],
): Promise<void> {
  const planned = calls.map((call) => ({
    call,
    readOnly: deps.specs.find((s) => s.name === call.name)?.readOnly ?? true,
  }));
  for (const batch of scheduleBatches(planned)) {
    await Promise.all(
      batch.map(async ({ call }) => {
        pending.push({ id: call.id, name: call.name });
        try {
          results[call.id] = await runOne(deps, call);
        } finally {
          pending.splice(
            pending.findIndex((p) => p.id === call.id),
            1,
          );
        }
      }),
    );
  }
}

function errorResult(call: ToolUseBlock, content: string): ToolResultBlock {
  return { type: 'tool_result', tool_use_id: call.id, content, is_error: true };
}

/**
 * One call in the order Claude Code runs it: validate → PreToolUse hooks → permission (may wait
 * for a person) → run → PostToolUse / PostToolUseFailure hooks.
 */
async function runOne(deps: ToolDispatchDeps, call: ToolUseBlock): Promise<ToolResultBlock> {
  const invalid = invalidCallReason(call, deps.specs);
  if (invalid) return errorResult(call, invalid);
  const spec = deps.specs.find((s) => s.name === call.name)!;

  const pre = await fireHooks(deps, 'PreToolUse', call.name, { tool_name: call.name, tool_input: call.input, tool_use_id: call.id });
  if (pre?.block !== undefined) return errorResult(call, hookBlockedText(pre.block));
  if (pre?.updatedInput !== undefined) {
    const changed = { ...call, input: pre.updatedInput };
    const problem = invalidCallReason(changed, [spec]);
    if (problem) return errorResult(call, hookInputInvalidText(problem));
    call = changed;
  }
  const gate = await permissionGate(deps, call, spec, pre ?? undefined);
  if (!gate.allowed) return errorResult(call, gate.message);
  call = { ...call, input: gate.input };

  const result = await execute(deps, call, gate);
  const failed = result.is_error === true;
  const post = await fireHooks(
    deps,
    failed ? 'PostToolUseFailure' : 'PostToolUse',
    call.name,
    failed
      ? { tool_name: call.name, tool_input: call.input, tool_use_id: call.id, error: result.content }
      : { tool_name: call.name, tool_input: call.input, tool_use_id: call.id, tool_response: result.content },
  );
  // A PostToolUse `block` is feedback the model should act on: it travels with the result.
  if (post?.block !== undefined)
    return { ...result, content: `${result.content}\n\n[${failed ? 'PostToolUseFailure' : 'PostToolUse'} hook] ${post.block}` };
  return result;
}

async function execute(deps: ToolDispatchDeps, call: ToolUseBlock, gate: GateResult & { allowed: true }): Promise<ToolResultBlock> {
  const { state, log } = deps;
  if (call.name === TODO_TOOL) return runTodoWrite(state, call);
  if (call.name === TASK_TOOL && state.config.agents) return runTask(deps, call);
  if (call.name === DONE_TOOL) {
    const parsed = TaskCompleteInput.safeParse(call.input);
    if (!parsed.success) return errorResult(call, TASK_COMPLETE_INVALID);
    deps.onDone(parsed.data.message);
    return { type: 'tool_result', tool_use_id: call.id, content: 'Task marked complete.' };
  }

  const started = deps.now();
  const progress = (status: 'started' | 'completed') =>
    log.emit({
      type: 'tool_progress',
      tool_use_id: call.id,
      tool_name: call.name,
      elapsed_time_seconds: (deps.now() - started) / 1000,
      parent_tool_use_id: null,
      status,
    });
  progress('started');
  const input = call.input as Record<string, unknown>;
  const filePath = typeof input?.file_path === 'string' ? normalizePath(input.file_path) : undefined;
  const spec = deps.specs.find((s) => s.name === call.name);
  const pathGuard = pathGuardFor(state, call.name, gate);
  const outcome = spec?.mcp?.client
    ? await callClientTool({ state, log }, spec, call)
    : spec?.mcp
      ? await callMcpTool({ state, mcp: deps.mcp }, spec, call.input)
      : await deps.runTool({
          name: call.name,
          input: call.input,
          context: {
            sessionId: state.sessionId,
            toolUseId: call.id,
            cwd: state.config.cwd,
            additionalDirectories: state.config.additionalDirectories,
            env: state.config.env,
            sandbox: state.config.sandbox,
            readStamp: filePath === undefined ? undefined : state.fileStamps[filePath],
            ...(pathGuard ? { pathGuard } : {}),
          },
        });
  recordFileStamps(state, outcome.fileStamps);
  progress('completed');
  return { type: 'tool_result', tool_use_id: call.id, content: outcome.content, is_error: outcome.isError || undefined };
}

function runTodoWrite(state: LoopState, call: ToolUseBlock): ToolResultBlock {
  const parsed = TodoWriteInput.safeParse(call.input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return errorResult(call, todoWriteInvalidText(issue.path.join('.'), issue.message));
  }
  state.todos = parsed.data.todos;
  return { type: 'tool_result', tool_use_id: call.id, content: TODO_RESULT };
}
