/**
 * Pure checks on a turn's tool calls: which tools the model sees, whether a call can run, and
 * the order calls run in (ARCHITECTURE.md#the-turn). No Temporal APIs here.
 */
import type { ContentBlock, ToolUseBlock } from '../../shared/messages';
import type { ToolSpec } from '../../shared/tools';
import { checkAgainstSchema } from '../../shared/json-schema';
import { invalidInputText, invalidJsonArgumentsText, noSuchToolText } from '../../shared/model-texts';

/**
 * On `max_tokens`, a tool call cut off mid-arguments cannot be run or answered sensibly: drop it.
 */
export function discardTruncatedToolCalls(content: ContentBlock[]): ContentBlock[] {
  return content.filter((b) => !(b.type === 'tool_use' && b.raw_input !== undefined));
}

/**
 * Group calls into batches that keep the model's order: consecutive read-only calls share a
 * batch (run in parallel); each mutating call is a batch of its own.
 */
export function scheduleBatches<T extends { readOnly: boolean }>(calls: T[]): T[][] {
  const batches: T[][] = [];
  for (const call of calls) {
    const last = batches[batches.length - 1];
    if (call.readOnly && last && last[0]!.readOnly) last.push(call);
    else batches.push([call]);
  }
  return batches;
}

/** Why a call cannot run, as the error text the model will see; null if it can. */
export function invalidCallReason(call: ToolUseBlock, specs: ToolSpec[]): string | null {
  const spec = specs.find((s) => s.name === call.name);
  if (!spec) {
    return noSuchToolText(
      call.name,
      specs.map((s) => s.name),
    );
  }
  if (call.raw_input !== undefined) {
    return invalidJsonArgumentsText(call.name, truncate(call.raw_input, 200));
  }
  const problem = checkAgainstSchema(call.input, spec.inputSchema as never);
  return problem ? invalidInputText(call.name, problem) : null;
}

function truncate(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}

/** Filter the worker's tools by the session's `tools` / `disallowedTools` (bare names remove a tool). */
export function visibleTools(all: ToolSpec[], opts: { tools?: string[]; disallowedTools: string[] }): ToolSpec[] {
  const removed = new Set(opts.disallowedTools.filter((r) => !r.includes('(')).map((r) => r.trim()));
  // `tools` lists built-in tools (the SDK's meaning): MCP tools are chosen by configuring their servers.
  return all.filter((s) => (!opts.tools || opts.tools.includes(s.name) || s.mcp !== undefined) && !removed.has(s.name));
}
