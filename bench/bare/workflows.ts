/**
 * The baseline for the per-turn overhead benchmark (not part of the product): the least a
 * Temporal agent loop can do per turn — two no-op activities on two task queues, like our model
 * and tool calls — optionally with the model step reading its input through a query (DESIGN D1).
 */
import { defineQuery, proxyActivities, setHandler } from '@temporalio/workflow';
import type { BareActivities } from './activities';

export const iterationsQuery = defineQuery<number>('iterations');

const model = proxyActivities<Pick<BareActivities, 'modelStep'>>({ taskQueue: 'bare-model', startToCloseTimeout: '1 minute' });
const tools = proxyActivities<Pick<BareActivities, 'toolStep'>>({ taskQueue: 'bare-tools', startToCloseTimeout: '1 minute' });

export async function bareLoop(iterations: number, readViaQuery: boolean): Promise<number> {
  let done = 0;
  setHandler(iterationsQuery, () => done);
  for (; done < iterations; done++) {
    await model.modelStep(readViaQuery);
    await tools.toolStep();
  }
  return done;
}
