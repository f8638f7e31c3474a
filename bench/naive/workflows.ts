/**
 * The common peer design, for comparison only (not part of the product): a loop that passes the
 * whole transcript into every model activity, so each call re-records everything said so far.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { Message } from '../../src/shared/messages';
import type { NaiveActivities } from './activities';

const acts = proxyActivities<NaiveActivities>({ startToCloseTimeout: '5 minutes', retry: { maximumAttempts: 1 } });

export async function naiveSession(prompt: string, cwd: string): Promise<{ messages: Message[]; turns: number }> {
  const messages: Message[] = [{ role: 'user', content: prompt }];
  for (let turns = 1; ; turns++) {
    const reply = await acts.naiveModel(messages);
    messages.push({ role: 'assistant', content: reply.content });
    const calls = reply.content.filter((b) => b.type === 'tool_use');
    if (calls.length === 0) return { messages, turns };
    const results = [];
    for (const c of calls) {
      const out = await acts.naiveTool(c.name, c.input, c.id, cwd);
      results.push({ type: 'tool_result' as const, tool_use_id: c.id, content: out });
    }
    messages.push({ role: 'user', content: results });
  }
}
