/**
 * Tool dispatch inside the workflow: validate → permission → run (activity, or in-workflow for
 * TodoWrite) → one `tool_result` per call. Tool failures are data the model sees (DESIGN D3).
 */
import type { ToolResultBlock, ToolUseBlock } from '../shared/messages';
import type { RunToolInput, ToolOutcome, ToolSpec } from '../shared/tools';
import { normalizePath } from '../shared/tools';
import { decide } from '../shared/permissions';
import { TODO_RESULT, TODO_TOOL, TodoWriteInput } from '../shared/todo';
import { DONE_TOOL, TaskCompleteInput } from '../shared/done-tool';
import { invalidCallReason, scheduleBatches } from './decide';
import type { EventLog, LoopState } from './state';
import { recordFileStamps } from './state';

export interface ToolDispatchDeps {
  state: LoopState;
  log: EventLog;
  specs: ToolSpec[];
  runTool(input: RunToolInput): Promise<ToolOutcome>;
  now(): number;
  /** Called when the model calls TaskComplete (requireDoneTool). */
  onDone(message: string): void;
}

/** The result every call left unanswered gets when its turn is interrupted (DESIGN D5). */
export const INTERRUPTED_RESULT = 'Interrupted by user: the tool call was cancelled before it finished.';

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

async function runOne(deps: ToolDispatchDeps, call: ToolUseBlock): Promise<ToolResultBlock> {
  const { state, log } = deps;
  const invalid = invalidCallReason(call, deps.specs);
  if (invalid) return errorResult(call, invalid);

  const spec = deps.specs.find((s) => s.name === call.name)!;
  const decision = decide({
    toolName: call.name,
    readOnly: spec.readOnly,
    mode: state.permissionMode,
    allowedTools: state.config.allowedTools,
    disallowedTools: state.config.disallowedTools,
  });
  if (decision.behavior !== 'allow') {
    state.permissionDenials.push({ tool_name: call.name, tool_use_id: call.id, tool_input: call.input });
    log.emit({
      type: 'system',
      subtype: 'permission_denied',
      tool_name: call.name,
      tool_use_id: call.id,
      message: decision.message,
    });
    return errorResult(call, decision.message);
  }

  if (call.name === TODO_TOOL) return runTodoWrite(state, call);
  if (call.name === DONE_TOOL) {
    const parsed = TaskCompleteInput.safeParse(call.input);
    if (!parsed.success) return errorResult(call, 'InputValidationError: TaskComplete needs a non-empty `message`.');
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
  const outcome = await deps.runTool({
    name: call.name,
    input: call.input,
    context: {
      sessionId: state.sessionId,
      toolUseId: call.id,
      cwd: state.config.cwd,
      additionalDirectories: state.config.additionalDirectories,
      env: state.config.env,
      readStamp: filePath === undefined ? undefined : state.fileStamps[filePath],
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
    return errorResult(call, `InputValidationError: TodoWrite failed: \`${issue.path.join('.')}\`: ${issue.message}`);
  }
  state.todos = parsed.data.todos;
  return { type: 'tool_result', tool_use_id: call.id, content: TODO_RESULT };
}
