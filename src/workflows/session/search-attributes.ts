/**
 * Keep a session findable: `durable-agent ls --status running --batch X` and the Web UI's
 * filters read these. Each upsert is a history event and a write to the server's visibility
 * store, so status and model are written when they change and the running counters (turns, cost)
 * only every few turns — and always with a status.
 */
import { upsertSearchAttributes } from '@temporalio/workflow';
import { SEARCH_ATTRIBUTE_KEYS } from '../../shared/api';
import type { LoopState } from './state';

const keys = SEARCH_ATTRIBUTE_KEYS;

const COUNTER_EVERY_TURNS = 10;

export function upsertSessionSearchAttributes(state: LoopState, status: string): void {
  if (!state.config.searchAttributes) return;
  const last = state.indexed;
  const changed = status !== last.status || state.model !== last.model;
  if (!changed && state.turnCount - last.turns < COUNTER_EVERY_TURNS) return;
  state.indexed = { status, model: state.model, turns: state.turnCount };
  const values = { status, model: state.model, turns: state.turnCount, costUsd: Math.round(state.spend.costUsd * 1e6) / 1e6 };
  upsertSearchAttributes([
    { key: keys.status, value: values.status },
    { key: keys.model, value: values.model },
    { key: keys.turns, value: values.turns },
    { key: keys.costUsd, value: values.costUsd },
    ...(state.config.batchId ? [{ key: keys.batchId, value: state.config.batchId }] : []),
  ]);
}
