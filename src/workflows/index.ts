// The workflow bundle's entry point: everything exported here is a workflow type.
//
// Worker Versioning (ARCHITECTURE.md#deploys): sessions, batch jobs and model listings are pinned
// to the build that started them (the worker's default); the long-lived helpers below would hold
// an old build alive, so they move to the deployment's current build on their next task, and a
// change to their code goes behind patched() as before.
// Only on a versioned worker: the server refuses a versioning behavior from an unversioned one.
import type { WorkflowDefinitionOptions } from '@temporalio/common';
import { setWorkflowOptions } from '@temporalio/workflow';
import { onVersionedWorker } from './session/continue-as-new';
import { agentBatch } from './batch/batch';
import { modelRateLimit } from './rate-limit/rate-limit';

const followCurrentBuild = (): WorkflowDefinitionOptions => (onVersionedWorker() ? { versioningBehavior: 'AUTO_UPGRADE' } : {});
setWorkflowOptions(followCurrentBuild, agentBatch);
setWorkflowOptions(followCurrentBuild, modelRateLimit);

export { agentSession } from './session/session';
export { agentBatch, agentBatchJob } from './batch/batch';
export { agentListModels } from './list-models/list-models';
export { modelRateLimit } from './rate-limit/rate-limit';
