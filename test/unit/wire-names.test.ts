/**
 * The names clients, the CLI and workers in other languages address sessions and batches by.
 * Renaming one breaks every client already deployed, so each is pinned here.
 */
import * as api from '../../src/shared/api';
import * as batch from '../../src/shared/batch';
import { pendingHookRequestsQuery, respondToHookUpdate } from '../../src/shared/client-hooks';

test('session workflow type and queues', () => {
  expect(api.WORKFLOW_TYPE).toBe('agentSession');
  expect(api.TASK_QUEUES).toEqual({ workflow: 'agent', model: 'agent', tools: 'agent-tools', formerModel: 'agent-model' });
});

test('model and tool queues are named after the workflow queue unless tools are pinned to a host', () => {
  expect(api.taskQueuesFor('ci')).toEqual({ workflow: 'ci', model: 'ci', tools: 'ci-tools', formerModel: 'ci-model' });
  expect(api.taskQueuesFor('ci', 'agent-tools@box')).toEqual({
    workflow: 'ci',
    model: 'ci',
    tools: 'agent-tools@box',
    formerModel: 'ci-model',
  });
  expect(api.taskQueuesFor(api.TASK_QUEUES.workflow)).toEqual(api.TASK_QUEUES);
});

test('session signals, updates and queries', () => {
  const names = (defs: { type: string; name: string }[]) => defs.map((d) => `${d.type}:${d.name}`);
  expect(
    names([
      api.interruptSignal,
      api.setModelSignal,
      api.setPermissionModeSignal,
      api.setMaxThinkingTokensSignal,
      api.userMessageSignal,
      api.closeSignal,
      api.apiRetrySignal,
      api.sendMessageUpdate,
      api.usageQuery,
      api.turnCountQuery,
      api.sessionViewQuery,
      api.eventsQuery,
      api.transcriptQuery,
      api.promptQuery,
    ]),
  ).toEqual([
    'signal:interrupt',
    'signal:setModel',
    'signal:setPermissionMode',
    'signal:setMaxThinkingTokens',
    'signal:userMessage',
    'signal:close',
    'signal:apiRetry',
    'update:sendMessage',
    'query:usage',
    'query:turnCount',
    'query:state',
    'query:events',
    'query:transcript',
    'query:prompt',
  ]);
});

test('callback hook requests: the update that answers one and the query that lists them', () => {
  expect([respondToHookUpdate, pendingHookRequestsQuery].map((d) => `${d.type}:${d.name}`)).toEqual([
    'update:respondToHook',
    'query:pendingHookRequests',
  ]);
});

test('search attributes and their types', () => {
  expect(api.SEARCH_ATTRIBUTES).toEqual({
    status: 'AgentStatus',
    model: 'AgentModel',
    turns: 'AgentTurns',
    costUsd: 'AgentCostUsd',
    batchId: 'AgentBatchId',
  });
  expect(api.SEARCH_ATTRIBUTE_KEYS).toEqual({
    status: { name: 'AgentStatus', type: 'KEYWORD' },
    model: { name: 'AgentModel', type: 'KEYWORD' },
    turns: { name: 'AgentTurns', type: 'INT' },
    costUsd: { name: 'AgentCostUsd', type: 'DOUBLE' },
    batchId: { name: 'AgentBatchId', type: 'KEYWORD' },
  });
});

test('batch workflow types, signals and queries', () => {
  expect([batch.BATCH_WORKFLOW_TYPE, batch.BATCH_JOB_WORKFLOW_TYPE]).toEqual(['agentBatch', 'agentBatchJob']);
  expect(
    [
      batch.acquireSignal,
      batch.releaseSignal,
      batch.progressQuery,
      batch.setConcurrencySignal,
      batch.grantSignal,
      batch.jobStateQuery,
      batch.spendSignal,
    ].map((d) => `${d.type}:${d.name}`),
  ).toEqual([
    'signal:acquire',
    'signal:release',
    'query:progress',
    'signal:setConcurrency',
    'signal:grant',
    'query:jobState',
    'signal:spend',
  ]);
});
