/**
 * Transcript (Anthropic-style blocks) ⇄ chat-completions format. Pure; unit-tested.
 */
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { ContentBlock, Message, StopReason, ToolUseBlock } from '../../shared/messages';
import type { ToolSpec } from '../../shared/tools';

/**
 * One `role: "tool"` message per `tool_result`, in order; text that shares a user
 * message with tool results follows them as a user message.
 */
export function toChatMessages(system: string, messages: Message[]): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  if (system) out.push({ role: 'system', content: system });
  for (const m of messages) {
    if (typeof m.content === 'string') {
      out.push({ role: m.role, content: m.content });
      continue;
    }
    if (m.role === 'assistant') {
      const text = m.content
        .filter((b) => b.type === 'text')
        .map((b) => (b as { text: string }).text)
        .join('');
      const calls = m.content.filter((b): b is ToolUseBlock => b.type === 'tool_use');
      out.push({
        role: 'assistant',
        content: text.length ? text : null,
        ...(calls.length
          ? {
              tool_calls: calls.map((c) => ({
                id: c.id,
                type: 'function' as const,
                function: { name: c.name, arguments: c.raw_input ?? JSON.stringify(c.input ?? {}) },
              })),
            }
          : {}),
      });
      continue;
    }
    const texts: string[] = [];
    for (const b of m.content) {
      if (b.type === 'tool_result') out.push({ role: 'tool', tool_call_id: b.tool_use_id, content: b.content });
      else if (b.type === 'text') texts.push(b.text);
    }
    if (texts.length) out.push({ role: 'user', content: texts.join('\n') });
  }
  return out;
}

export function toChatTools(specs: ToolSpec[]): ChatCompletionTool[] {
  return specs.map((s) => {
    const { $schema: _drop, ...parameters } = s.inputSchema;
    return { type: 'function', function: { name: s.name, description: s.description, parameters } };
  });
}

export function mapFinishReason(reason: string | null | undefined, hasToolCalls: boolean): StopReason {
  switch (reason) {
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'length':
      return 'max_tokens';
    case 'stop':
      return hasToolCalls ? 'tool_use' : 'end_turn';
    case 'content_filter':
      return 'stop_sequence';
    default:
      return hasToolCalls ? 'tool_use' : 'end_turn';
  }
}

export interface PartialToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** Parse streamed tool-call arguments; malformed JSON is kept raw. */
export function toToolUseBlocks(calls: PartialToolCall[]): ContentBlock[] {
  return calls.map((c, i) => {
    const id = c.id || `call_${i}`;
    const raw = c.arguments.trim() === '' ? '{}' : c.arguments;
    try {
      const input: unknown = JSON.parse(raw);
      if (input && typeof input === 'object' && !Array.isArray(input)) return { type: 'tool_use', id, name: c.name, input };
    } catch {
      // fall through: keep the raw text so the model can be told exactly what was wrong
    }
    return { type: 'tool_use', id, name: c.name, input: {}, raw_input: c.arguments };
  });
}
