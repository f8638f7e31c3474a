/** No-op activities for the bare loop; `modelStep` may read its workflow's state by query, or take a while. */
import { setTimeout as sleep } from 'node:timers/promises';
import { Context } from '@temporalio/activity';
import { iterationsQuery, type BareActivities } from './api';

/** When each modelStep started (epoch ms), for the throughput benchmark's steady-state rate. */
export const modelStepStarts: number[] = [];

export const bareActivities: BareActivities = {
  async modelStep(readViaQuery, latencyMs = 0) {
    modelStepStarts.push(Date.now());
    if (latencyMs > 0) await sleep(latencyMs);
    if (!readViaQuery) return 0;
    const { workflowId, runId } = Context.current().info.workflowExecution!;
    return Context.current().client.workflow.getHandle(workflowId, runId).query(iterationsQuery);
  },
  async toolStep() {},
};
