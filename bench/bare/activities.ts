/** No-op activities for the bare loop; `modelStep` may read its workflow's state by query. */
import { Context } from '@temporalio/activity';
import { iterationsQuery } from './workflows';

export interface BareActivities {
  modelStep(readViaQuery: boolean): Promise<number>;
  toolStep(): Promise<void>;
}

export const bareActivities: BareActivities = {
  async modelStep(readViaQuery) {
    if (!readViaQuery) return 0;
    const { workflowId, runId } = Context.current().info.workflowExecution!;
    return Context.current().client.workflow.getHandle(workflowId, runId).query(iterationsQuery);
  },
  async toolStep() {},
};
