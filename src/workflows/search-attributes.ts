/**
 * Keep a session findable: `durable-agent ls --status running --batch X` and the Web UI's
 * filters read these. Upserted only when a value changes, to keep history small.
 */
import { upsertSearchAttributes } from '@temporalio/workflow';
import { defineSearchAttributeKey } from '@temporalio/common';
import { SEARCH_ATTRIBUTES } from '../shared/api';
import type { LoopState } from './state';

const keys = {
  status: defineSearchAttributeKey(SEARCH_ATTRIBUTES.status, 'KEYWORD'),
  model: defineSearchAttributeKey(SEARCH_ATTRIBUTES.model, 'KEYWORD'),
  turns: defineSearchAttributeKey(SEARCH_ATTRIBUTES.turns, 'INT'),
  costUsd: defineSearchAttributeKey(SEARCH_ATTRIBUTES.costUsd, 'DOUBLE'),
  batchId: defineSearchAttributeKey(SEARCH_ATTRIBUTES.batchId, 'KEYWORD'),
};

let last = '';

export function indexSession(state: LoopState, status: string): void {
  if (!state.config.searchAttributes) return;
  const values = { status, model: state.model, turns: state.turnCount, costUsd: Math.round(state.costUsd * 1e6) / 1e6 };
  const fingerprint = JSON.stringify(values);
  if (fingerprint === last) return;
  last = fingerprint;
  upsertSearchAttributes([
    { key: keys.status, value: values.status },
    { key: keys.model, value: values.model },
    { key: keys.turns, value: values.turns },
    { key: keys.costUsd, value: values.costUsd },
    ...(state.config.batchId ? [{ key: keys.batchId, value: state.config.batchId }] : []),
  ]);
}
