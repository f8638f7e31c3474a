/**
 * Worker Versioning (ARCHITECTURE.md#deploys): a worker that names its deployment and build polls
 * as that version of the deployment. Sessions are pinned to the build that started them
 * (`defaultVersioningBehavior: 'PINNED'`) and move to the deployment's current build when they
 * continue as new; the long-lived helper workflows are AUTO_UPGRADE (src/workflows/index.ts).
 */
import type { WorkerOptions } from '@temporalio/worker';

export interface WorkerDeployment {
  /** The worker deployment's name, e.g. `durable-agent`. */
  name: string;
  /** This build's id, e.g. a git commit or a release tag. */
  buildId: string;
}

const NAME = /^[A-Za-z0-9_-]{1,64}$/;
const BUILD_ID = /^[A-Za-z0-9_.+-]{1,128}$/;

/** Why a deployment is not usable, naming the field; null when it is. */
export function deploymentProblem(d: WorkerDeployment, fields = { name: 'deployment', buildId: 'buildId' }): string | null {
  if (!NAME.test(d.name)) return `${fields.name}: '${d.name}' must be 1-64 letters, digits, '_' or '-'`;
  if (!BUILD_ID.test(d.buildId)) return `${fields.buildId}: '${d.buildId}' must be 1-128 letters, digits, '_', '.', '+' or '-'`;
  return null;
}

/** DURABLE_AGENT_DEPLOYMENT and DURABLE_AGENT_BUILD_ID: both or neither. */
export function deploymentFromEnv(env: Record<string, string | undefined>): WorkerDeployment | undefined {
  const name = env.DURABLE_AGENT_DEPLOYMENT?.trim() || undefined;
  const buildId = env.DURABLE_AGENT_BUILD_ID?.trim() || undefined;
  if (!name && !buildId) return undefined;
  if (!name || !buildId) {
    throw new Error(
      `${name ? 'DURABLE_AGENT_BUILD_ID' : 'DURABLE_AGENT_DEPLOYMENT'} is not set: a versioned worker names both its deployment and its build`,
    );
  }
  const d = { name, buildId };
  const problem = deploymentProblem(d, { name: 'DURABLE_AGENT_DEPLOYMENT', buildId: 'DURABLE_AGENT_BUILD_ID' });
  if (problem) throw new Error(problem);
  return d;
}

/** The options of a worker polling the workflow queue: versioned, sessions pinned; none when unversioned. */
export function versioningOptions(d: WorkerDeployment | undefined): Pick<WorkerOptions, 'workerDeploymentOptions'> {
  if (!d) return {};
  const problem = deploymentProblem(d);
  if (problem) throw new Error(problem);
  return {
    workerDeploymentOptions: {
      version: { deploymentName: d.name, buildId: d.buildId },
      useWorkerVersioning: true,
      defaultVersioningBehavior: 'PINNED',
    },
  };
}
