/**
 * Deploys with Worker Versioning (ARCHITECTURE.md#deploys): which build of a worker deployment
 * new and continuing sessions go to (`setCurrentBuild`), what each build holds
 * (`deploymentStatus`), and which build a session runs on (`buildOf`).
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import * as api from '../shared/api';
import { quote } from './stream';
/** The name a versioned CLI command acts on: `--deployment`, else DURABLE_AGENT_DEPLOYMENT. */
export function deploymentNameFrom(flag: string | undefined, env: Record<string, string | undefined> = process.env): string | undefined {
  return flag ?? (env.DURABLE_AGENT_DEPLOYMENT?.trim() || undefined);
}

export class DeploymentNotFoundError extends Error {
  constructor(name: string) {
    super(`no worker deployment '${name}': start a worker with --deployment ${name} --build-id ID first`);
  }
}

/**
 * Make `buildId` the deployment's current build: new sessions start on it, and sessions pinned to
 * another build move to it when they continue as new. The build must have polled (a worker of it
 * started) — the server refuses a version it has not seen, and so do we, by name. Resolves once
 * the server has told every task queue of the deployment (`propagated`; false if that took longer
 * than `waitMs`): until then a session continuing as new may still start on the old build.
 */
export async function setCurrentBuild(
  client: Client,
  deployment: string,
  buildId: string,
  opts: { waitMs?: number } = {},
): Promise<{ previous?: string; propagated: boolean }> {
  const status = await deploymentStatus(client, deployment);
  if (!status.versions.some((v) => v.buildId === buildId)) {
    const known = status.versions.map((v) => v.buildId).join(', ') || 'none';
    throw new BuildNotFoundError(deployment, buildId, known);
  }
  const res = await client.workflowService.setWorkerDeploymentCurrentVersion({
    namespace: client.options.namespace,
    deploymentName: deployment,
    buildId,
    identity: client.options.identity ?? 'durable-agent deploy',
  });
  const previous = res.previousDeploymentVersion?.buildId ?? undefined;
  const propagated = await routingPropagated(client, deployment, opts.waitMs ?? 30_000);
  return { ...(previous ? { previous } : {}), propagated };
}

/** Wait until the deployment's routing change has reached all its task queues (or `waitMs` passed). */
async function routingPropagated(client: Client, deployment: string, waitMs: number): Promise<boolean> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const info = (
      await client.workflowService.describeWorkerDeployment({ namespace: client.options.namespace, deploymentName: deployment })
    ).workerDeploymentInfo;
    if (info?.routingConfigUpdateState !== temporal.api.enums.v1.RoutingConfigUpdateState.ROUTING_CONFIG_UPDATE_STATE_IN_PROGRESS)
      return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 250));
  }
}

export class BuildNotFoundError extends Error {
  constructor(deployment: string, buildId: string, known: string) {
    super(
      `build '${buildId}' of deployment '${deployment}' has not polled yet (known builds: ${known}): start a worker with --deployment ${deployment} --build-id ${buildId} first`,
    );
  }
}

interface BuildStatus {
  buildId: string;
  /** The server's: current, ramping, draining (no new sessions; pinned ones still run), drained, inactive. */
  status: string;
  /** Running sessions pinned to or running on this build. */
  runningSessions: number;
  createdAt?: string;
}

export interface DeploymentStatus {
  deployment: string;
  currentBuild?: string;
  rampingBuild?: string;
  versions: BuildStatus[];
}

const STATUS_NAMES: Record<number, string> = {
  [temporal.api.enums.v1.WorkerDeploymentVersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_INACTIVE]: 'inactive',
  [temporal.api.enums.v1.WorkerDeploymentVersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_CURRENT]: 'current',
  [temporal.api.enums.v1.WorkerDeploymentVersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_RAMPING]: 'ramping',
  [temporal.api.enums.v1.WorkerDeploymentVersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_DRAINING]: 'draining',
  [temporal.api.enums.v1.WorkerDeploymentVersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_DRAINED]: 'drained',
};

/** The deployment's builds, which is current, and how many running sessions each holds. */
export async function deploymentStatus(client: Client, deployment: string): Promise<DeploymentStatus> {
  let info;
  try {
    info = (await client.workflowService.describeWorkerDeployment({ namespace: client.options.namespace, deploymentName: deployment }))
      .workerDeploymentInfo;
  } catch (e) {
    if ((e as { code?: number }).code === 5) throw new DeploymentNotFoundError(deployment);
    throw e;
  }
  const routing = info?.routingConfig;
  const versions: BuildStatus[] = [];
  for (const v of info?.versionSummaries ?? []) {
    const buildId = v.deploymentVersion?.buildId ?? /^[^.:]+[.:](.+)$/.exec(v.version ?? '')?.[1];
    if (!buildId) continue;
    const created = v.createTime?.seconds;
    versions.push({
      buildId,
      status: STATUS_NAMES[v.status ?? 0] ?? 'unknown',
      runningSessions: await runningSessionsOn(client, deployment, buildId),
      ...(created !== undefined && created !== null ? { createdAt: new Date(Number(created) * 1000).toISOString() } : {}),
    });
  }
  const current = routing?.currentDeploymentVersion?.buildId ?? undefined;
  const ramping = routing?.rampingDeploymentVersion?.buildId ?? undefined;
  return { deployment, ...(current ? { currentBuild: current } : {}), ...(ramping ? { rampingBuild: ramping } : {}), versions };
}

/** Running sessions on `buildId` (visibility's `TemporalWorkerDeploymentVersion`). */
async function runningSessionsOn(client: Client, deployment: string, buildId: string): Promise<number> {
  const res = await client.workflowService.countWorkflowExecutions({
    namespace: client.options.namespace,
    query: [
      `WorkflowType = ${quote(api.WORKFLOW_TYPE)}`,
      `ExecutionStatus = 'Running'`,
      `TemporalWorkerDeploymentVersion = ${quote(`${deployment}:${buildId}`)}`,
    ].join(' AND '),
  });
  return Number(res.count ?? 0);
}
