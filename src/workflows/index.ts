// The workflow bundle's entry point: everything exported here is a workflow type.
export { agentSession } from './session';
export { agentBatch, agentBatchJob } from './batch';
export { agentListModels } from './list-models';
export { modelRateLimit } from './rate-limit';
