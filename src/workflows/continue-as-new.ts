/**
 * Continue-as-new at a safe point (ARCHITECTURE.md#continue-as-new): between model calls or while
 * waiting for input, never with a handler running or a tool in flight. Everything that must
 * survive is in the one carried state; the event tail rides along for slow readers.
 */
import { allHandlersFinished, condition, continueAsNew, workflowInfo } from '@temporalio/workflow';
import { jsonBytes, MAX_PAYLOAD_BYTES } from '../shared/payload';
import * as context from './context';
import type { CarriedState } from './state';

/** Events a new run keeps so a slow reader can catch up across continue-as-new. */
const CARRIED_EVENTS = { count: 500, bytes: 256 * 1024 };

/** The server suggests it (history size or length), or the session's own turn count per run is reached. */
export function continueAsNewDue(every: number | undefined, turnsThisRun: number): boolean {
  return workflowInfo().continueAsNewSuggested || (every !== undefined && turnsThisRun >= every);
}

export async function continueAsNewNow(deps: context.ContextDeps): Promise<never> {
  const { state, log } = deps;
  await condition(allHandlersFinished);
  await context.beforeContinueAsNew(deps);
  // The event tail goes first when space is short: readers can still page the transcript.
  const events = log.tail(CARRIED_EVENTS.count, CARRIED_EVENTS.bytes);
  const carried: CarriedState = { state, recentEvents: jsonBytes(state) + jsonBytes(events) > MAX_PAYLOAD_BYTES ? [] : events };
  // Same workflow type, same config: the new run reads `carried` instead of starting afresh.
  return continueAsNew(state.config, carried);
}
