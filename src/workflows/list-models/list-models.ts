/**
 * `agentListModels`: the model endpoint's catalogue, read by the model worker. A client has no
 * key for the endpoint (ARCHITECTURE.md#secrets-stay-on-workers), so `Query.supportedModels()`
 * starts this one-activity workflow instead of calling the endpoint itself.
 */
import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import { NON_RETRYABLE_MODEL_ERRORS, type ModelCatalogActivities, type ModelListing } from '../../shared/activities';
import { taskQueuesFor } from '../../shared/api';

export async function agentListModels(): Promise<ModelListing[]> {
  const { listModels } = proxyActivities<ModelCatalogActivities>({
    taskQueue: taskQueuesFor(workflowInfo().taskQueue).model,
    startToCloseTimeout: '1 minute',
    retry: { maximumAttempts: 3, nonRetryableErrorTypes: [...NON_RETRYABLE_MODEL_ERRORS] },
  });
  return listModels();
}
