/**
 * Tools of in-process MCP servers, run by a client (ARCHITECTURE.md#client-mcp-tools): an SDK
 * server (`createSdkMcpServer`) lives in the process that called `query()`, so the session holds
 * only its tools' declaration (`clientTools`). When the model calls one, the workflow records a
 * pending request, emits `system/tool_request`, and waits durably for the `respondToTool` update,
 * as callback hooks wait for `respondToHook`; no answer within `clientToolTimeoutMs` is an error
 * result. Pure: the workflow, its update validator and the client share it.
 */
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import { capText, MAX_TOOL_RESULT_CHARS, type ToolSpec } from './tools';
import { CLIENT_TOOL_DEFAULT_TIMEOUT_MS, clientToolName, type ClientTools } from './client-tools-config';

export { ClientTool, ClientTools, clientToolName } from './client-tools-config';

/** A tool call waiting for a client to run it, in the workflow's state. */
export interface PendingToolRequest {
  /** Unique within the session: `tool-1`, `tool-2`, … */
  requestId: string;
  /** The in-process server, and its own name for the tool. */
  server: string;
  tool: string;
  /** The name the model called: `mcp__<server>__<tool>`. */
  toolName: string;
  toolUseId: string;
  /** The call's arguments, after hooks and permission (what the tool runs with). */
  input: unknown;
  timeoutMs: number;
  requestedAtMs: number;
}

/** The answer to a tool request: the result's text (MCP content as the model sees it) and whether it is an error. */
export interface ToolAnswer {
  requestId: string;
  content: string;
  isError?: boolean;
}

/** Answer a pending tool request. Rejected (nothing applied) for an unknown or already-answered id, or an invalid answer. */
export const respondToToolUpdate = defineUpdate<{ applied: true }, [ToolAnswer]>('respondToTool');
/** The session's tool calls waiting for a client (a reconnecting client answers these). */
export const pendingToolRequestsQuery = defineQuery<PendingToolRequest[]>('pendingToolRequests');

/** Why an answer cannot be applied, or null. Pure: the update's validator and clients share it. */
export function toolAnswerProblem(answer: unknown, pending: readonly PendingToolRequest[]): string | null {
  if (!answer || typeof answer !== 'object' || Array.isArray(answer)) return 'respondToTool: the answer must be an object';
  const a = answer as Partial<ToolAnswer>;
  if (typeof a.requestId !== 'string' || !a.requestId) return 'respondToTool: `requestId` must be a non-empty string';
  if (!pending.some((p) => p.requestId === a.requestId)) {
    const ids = pending.map((p) => p.requestId);
    return `respondToTool: no pending tool request ${a.requestId} (${ids.length ? `pending: ${ids.join(', ')}` : 'none is pending'}); it may have been answered already, or timed out`;
  }
  if (typeof a.content !== 'string') return 'respondToTool: `content` must be a string (the tool result as text)';
  if (a.isError !== undefined && typeof a.isError !== 'boolean') return 'respondToTool: `isError` must be a boolean';
  return null;
}

/** The answer as recorded in state: the text capped as any tool result is. Call after `toolAnswerProblem` said null. */
export function recordedToolAnswer(answer: ToolAnswer): ToolAnswer {
  return {
    requestId: answer.requestId,
    content: capText(answer.content, MAX_TOOL_RESULT_CHARS),
    ...(answer.isError ? { isError: true } : {}),
  };
}

/** The declared tools as the specs offered to the model (`mcp.client` marks them run by the client). */
export function clientToolSpecs(tools: ClientTools | undefined): ToolSpec[] {
  return (tools ?? []).map((t) => ({
    name: clientToolName(t),
    description: t.description || t.name,
    inputSchema: t.inputSchema,
    readOnly: t.readOnly === true,
    mcp: { server: t.server, tool: t.name, client: true },
  }));
}

export function clientToolTimeoutMs(config: { clientToolTimeoutMs?: number | undefined }): number {
  return config.clientToolTimeoutMs ?? CLIENT_TOOL_DEFAULT_TIMEOUT_MS;
}
