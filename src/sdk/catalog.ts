/**
 * What `query()` looks up besides a session: the newest session started in a directory (the SDK's
 * `continue`) and the models the workers' endpoint serves (`Query.supportedModels()`).
 */
import { randomUUID } from 'node:crypto';
import * as api from '../shared/api';
import type { ModelListing } from '../shared/activities';
import type { DurableAgentClient } from '../client/client';
import { quote } from '../client/stream';
import { listRuns } from '../client/visibility';

/**
 * The id of the newest session started with this `cwd`, found through visibility and the `cwd`
 * memo each session gets at start; undefined when there is none.
 */
export async function latestSessionIn(agents: DurableAgentClient, cwd: string): Promise<string | undefined> {
  let newest: { id: string; start: number } | undefined;
  const query = `WorkflowType = ${quote(api.WORKFLOW_TYPE)}`;
  for await (const w of listRuns(agents.client, query, { codecs: agents.payloadCodecs })) {
    if (w.memo.cwd !== cwd) continue;
    if (!newest || w.startTime.getTime() > newest.start) newest = { id: w.workflowId, start: w.startTime.getTime() };
  }
  return newest?.id;
}

/**
 * The endpoint's models. The client has no key for the endpoint (ARCHITECTURE.md#secrets-stay-on-workers):
 * a one-activity workflow, `agentListModels`, asks it from a model worker.
 */
export function listModels(agents: DurableAgentClient): Promise<ModelListing[]> {
  return agents.client.workflow.execute(api.LIST_MODELS_WORKFLOW_TYPE, {
    workflowId: `list-models-${randomUUID()}`,
    taskQueue: agents.taskQueue,
    args: [],
    workflowExecutionTimeout: '2 minutes',
  });
}
