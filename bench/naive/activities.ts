/** Activities of the naive peer loop: the same model endpoint and the same tools as ours. */
import OpenAI from 'openai';
import { toChatMessages, toToolUseBlocks } from '../../src/activities/model/chat-format';
import { createToolRegistry } from '../../src/activities/tools';
import type { ContentBlock, Message } from '../../src/shared/messages';

export interface NaiveActivities {
  naiveModel(messages: Message[]): Promise<{ content: ContentBlock[] }>;
  naiveTool(name: string, input: unknown, toolUseId: string, cwd: string): Promise<string>;
}

export function createNaiveActivities(baseURL: string): NaiveActivities {
  const client = new OpenAI({ baseURL, apiKey: 'bench', maxRetries: 0 });
  const tools = createToolRegistry();
  return {
    async naiveModel(messages) {
      const res = await client.chat.completions.create({
        model: 'gpt-4.1-mini',
        messages: toChatMessages('', messages),
        tools: tools.specs().map((s) => ({ type: 'function' as const, function: { name: s.name, parameters: s.inputSchema } })),
      });
      const msg = res.choices[0]!.message;
      const calls = (msg.tool_calls ?? []).flatMap((c) =>
        c.type === 'function' ? [{ id: c.id, name: c.function.name, arguments: c.function.arguments }] : [],
      );
      return { content: [...(msg.content ? [{ type: 'text' as const, text: msg.content }] : []), ...toToolUseBlocks(calls)] };
    },
    async naiveTool(name, input, toolUseId, cwd) {
      const out = await tools.run(
        { name, input, context: { sessionId: 'naive', toolUseId, cwd, additionalDirectories: [], env: {} } },
        { signal: new AbortController().signal, heartbeat: () => undefined, attempt: 1 },
      );
      return out.content;
    },
  };
}
