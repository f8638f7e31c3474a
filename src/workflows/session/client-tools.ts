/**
 * Calls of client tools (ARCHITECTURE.md#client-mcp-tools): tools of an in-process MCP server that
 * lives in the process that called `query()`. The call is a pending request in state, a
 * `system/tool_request` event, and a durable wait for `respondToTool` — through worker crashes and
 * client reconnects — until `clientToolTimeoutMs`; no answer is an error result, never a hang.
 * Cancelling the turn cancels the wait; the request is withdrawn either way. Only sessions that
 * declare `clientTools` get here, so no recorded history takes this path.
 */
import { awaitClientAnswer } from './client-answers';
import { clientToolTimeoutMs, type PendingToolRequest, type ToolAnswer } from '../../shared/client-tools';
import type { ToolUseBlock } from '../../shared/messages';
import type { ToolOutcome, ToolSpec } from '../../shared/tools';
import type { EventLog, LoopState } from './state';
import { noClientAnswer } from '../../shared/model-texts';

export async function callClientTool(deps: { state: LoopState; log: EventLog }, spec: ToolSpec, call: ToolUseBlock): Promise<ToolOutcome> {
  const { state, log } = deps;
  const requests = (state.client.toolRequests ??= { pending: [], answers: {}, nextId: 0 });
  const request: PendingToolRequest = {
    requestId: `tool-${++requests.nextId}`,
    server: spec.mcp!.server,
    tool: spec.mcp!.tool,
    toolName: call.name,
    toolUseId: call.id,
    input: call.input,
    timeoutMs: clientToolTimeoutMs(state.config),
    requestedAtMs: Date.now(),
  };
  requests.pending.push(request);
  log.emit({
    type: 'system',
    subtype: 'tool_request',
    request_id: request.requestId,
    request_session_id: state.sessionId,
    server: request.server,
    tool: request.tool,
    tool_name: request.toolName,
    tool_use_id: request.toolUseId,
    tool_input: request.input,
    timeout_ms: request.timeoutMs,
  });
  const answer = await awaitClientAnswer<ToolAnswer>(requests, request.requestId, request.timeoutMs);
  if (!answer) return { content: noClientAnswer(request), isError: true };
  return { content: answer.content, isError: answer.isError === true };
}
