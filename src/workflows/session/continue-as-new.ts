/**
 * Continue-as-new at a safe point (ARCHITECTURE.md#continue-as-new): between model calls or while
 * waiting for input, never with a handler running or a tool in flight. Everything that must
 * survive is in the one carried state; the event tail rides along for slow readers.
 */
import { allHandlersFinished, condition, continueAsNew, makeContinueAsNewFunc, workflowInfo } from '@temporalio/workflow';
import { jsonBytes, MAX_PAYLOAD_BYTES } from '../../shared/payload';
import * as context from './context/index';
import type { CarriedState } from './state';

/** Events a new run keeps so a slow reader can catch up across continue-as-new. */
const CARRIED_EVENTS = { count: 500, bytes: 256 * 1024 };

/**
 * The server suggests it (history size or length), the deployment's current build is no longer
 * the one this run is pinned to (ARCHITECTURE.md#deploys), or the session's own turn count per run
 * is reached. A new build moves a run that has made a model call: should a continue-as-new ever
 * leave the session on the old build, it goes on working there rather than loop.
 */
export function continueAsNewDue(every: number | undefined, turnsThisRun: number): boolean {
  const info = workflowInfo();
  return (
    info.continueAsNewSuggested ||
    (info.targetWorkerDeploymentVersionChanged && turnsThisRun > 0) ||
    (every !== undefined && turnsThisRun >= every)
  );
}

/**
 * This task runs on a worker of a deployment build (ARCHITECTURE.md#deploys). An unversioned
 * worker still reports a version — no deployment, its bundle's checksum as build id — so the
 * deployment name is what counts.
 */
export function onVersionedWorker(): boolean {
  return Boolean(workflowInfo().currentDeploymentVersion?.deploymentName);
}

export async function continueAsNewNow(deps: context.ContextDeps): Promise<never> {
  const { state, log } = deps;
  await condition(allHandlersFinished);
  await context.beforeContinueAsNew(deps);
  // The event tail goes first when space is short: readers can still page the transcript.
  const events = log.tail(CARRIED_EVENTS.count, CARRIED_EVENTS.bytes);
  const carried: CarriedState = { state, recentEvents: jsonBytes(state) + jsonBytes(events) > MAX_PAYLOAD_BYTES ? [] : events };
  // Same workflow type, same config: the new run reads `carried` instead of starting afresh. A
  // versioned session's new run starts on the deployment's current build (then pinned to it).
  if (!onVersionedWorker()) return continueAsNew(state.config, carried);
  return makeContinueAsNewFunc<(c: typeof state.config, k: CarriedState) => Promise<never>>({ initialVersioningBehavior: 'AUTO_UPGRADE' })(
    state.config,
    carried,
  );
}
