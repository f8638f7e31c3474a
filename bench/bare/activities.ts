/**
 * No-op activities for the bare loop; `modelStep` may read its workflow's state by query, take a
 * while, or make one streamed provider call through the same client our `callModel` uses.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Context } from '@temporalio/activity';
import { ChatStreamClient } from '../../src/activities/model/chat-stream';
import { iterationsQuery, type BareActivities, type BareProviderCall } from './api';

/** When each modelStep started (epoch ms), for the throughput benchmark's steady-state rate. */
export const modelStepStarts: number[] = [];
/** When each loop's first modelStep started: the throughput benchmark's "every loop is running" moment. */
export const firstStepStarts: number[] = [];
const loopsSeen = new Set<string>();

const clients = new Map<string, ChatStreamClient>();

/** One streamed completion, read to the end: the provider's share of a turn, without the runner around it. */
async function providerCall(p: BareProviderCall): Promise<void> {
  let client = clients.get(p.baseURL);
  if (!client) clients.set(p.baseURL, (client = new ChatStreamClient({ baseURL: p.baseURL, apiKey: 'bare' })));
  // `scripted/<name>` picks the scenario on the scripted model.
  const { chunks } = await client.stream({
    model: `scripted/${p.scenario}`,
    messages: [{ role: 'user', content: 'go' }],
    stream: true,
    stream_options: { include_usage: true },
  });
  for await (const chunk of chunks) void chunk;
}

export const bareActivities: BareActivities = {
  async modelStep(readViaQuery, latencyMs = 0, provider) {
    const now = Date.now();
    modelStepStarts.push(now);
    const loop = Context.current().info.workflowExecution?.workflowId ?? '';
    if (!loopsSeen.has(loop)) {
      loopsSeen.add(loop);
      firstStepStarts.push(now);
    }
    if (latencyMs > 0) await sleep(latencyMs);
    if (provider) await providerCall(provider);
    if (!readViaQuery) return 0;
    const { workflowId, runId } = Context.current().info.workflowExecution!;
    return Context.current().client.workflow.getHandle(workflowId, runId).query(iterationsQuery);
  },
  async toolStep() {},
};
