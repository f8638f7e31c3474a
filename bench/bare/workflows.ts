/**
 * The baseline for the per-turn overhead benchmark (not part of the product): the least a
 * Temporal agent loop can do per turn — two no-op activities on two task queues, like our model
 * and tool calls (the model step optionally taking `latencyMs`, for the throughput benchmark) — optionally with the model step reading its input through a query (ARCHITECTURE.md#transcript-by-reference), or making the same provider call a session's model step makes.
 */
import { proxyActivities, setHandler } from '@temporalio/workflow';
import { iterationsQuery, type BareActivities, type BareProviderCall } from './api';

const model = proxyActivities<Pick<BareActivities, 'modelStep'>>({ taskQueue: 'bare-model', startToCloseTimeout: '1 minute' });
const tools = proxyActivities<Pick<BareActivities, 'toolStep'>>({ taskQueue: 'bare-tools', startToCloseTimeout: '1 minute' });

export async function bareLoop(iterations: number, readViaQuery: boolean, latencyMs = 0, provider?: BareProviderCall): Promise<number> {
  let done = 0;
  setHandler(iterationsQuery, () => done);
  for (; done < iterations; done++) {
    await model.modelStep(readViaQuery, latencyMs, provider);
    await tools.toolStep();
  }
  return done;
}
