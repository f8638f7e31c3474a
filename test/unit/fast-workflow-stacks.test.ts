/**
 * The worker option `fastWorkflowStacks` / DURABLE_AGENT_FAST_WORKFLOW_STACKS
 * (ARCHITECTURE.md#workflow-stack-traces): off by default, a bad value named at start-up, the
 * stack-trace patches preloaded only when on, and a prebuilt bundle built with the other setting
 * refused before the worker connects. (test/session/workflow-stack-traces.test.ts runs both.)
 */
import {
  bundleHasFastWorkflowStacks,
  FAST_WORKFLOW_STACKS_MARK,
  fastWorkflowStacksFromEnv,
  preloadedModules,
  SESSION_BUNDLER_OPTIONS,
  sessionBundlerOptions,
  STACK_TRACES_MODULE,
} from '../../src/worker/bundle';
import { createWorker } from '../../src/worker/worker';
import { runWorkerCommand } from '../../src/worker/main';
import { readFileSync } from 'node:fs';

test('DURABLE_AGENT_FAST_WORKFLOW_STACKS: off unless set to a yes; anything else is an error naming it', () => {
  expect(fastWorkflowStacksFromEnv({})).toBe(false);
  for (const v of ['', '0', 'false', 'no', 'off', ' OFF '])
    expect(fastWorkflowStacksFromEnv({ DURABLE_AGENT_FAST_WORKFLOW_STACKS: v })).toBe(false);
  for (const v of ['1', 'true', 'yes', 'on', 'True'])
    expect(fastWorkflowStacksFromEnv({ DURABLE_AGENT_FAST_WORKFLOW_STACKS: v })).toBe(true);
  expect(() => fastWorkflowStacksFromEnv({ DURABLE_AGENT_FAST_WORKFLOW_STACKS: 'fast' })).toThrow(
    "DURABLE_AGENT_FAST_WORKFLOW_STACKS: expected 1 or 0, got 'fast'",
  );
});

test('the stack-trace patches are preloaded only with the option on; the default bundle keeps the SDK behaviour', () => {
  expect(preloadedModules()).not.toContain(STACK_TRACES_MODULE);
  expect(SESSION_BUNDLER_OPTIONS.preloadModules).not.toContain(STACK_TRACES_MODULE);
  expect(sessionBundlerOptions({ fastWorkflowStacks: false }).preloadModules).not.toContain(STACK_TRACES_MODULE);
  expect(preloadedModules({ fastWorkflowStacks: true })).toEqual([...preloadedModules(), STACK_TRACES_MODULE]);
  // The mark the worker finds a bundle's setting by is the one the module sets.
  expect(readFileSync(STACK_TRACES_MODULE, 'utf8')).toContain(`'${FAST_WORKFLOW_STACKS_MARK}'`);
  expect(bundleHasFastWorkflowStacks(`x ${FAST_WORKFLOW_STACKS_MARK} y`)).toBe(true);
  expect(bundleHasFastWorkflowStacks('x y')).toBe(false);
});

describe('a prebuilt bundle built with the other setting is refused before connecting', () => {
  const fastBundle = { code: `/* stack-traces */ "${FAST_WORKFLOW_STACKS_MARK}"` };
  const plainBundle = { code: '/* no patches */' };
  // An address nothing listens on: a worker that got as far as connecting would retry for ever.
  const base = { address: '127.0.0.1:1', roles: ['workflow' as const], payloadCodecs: [], log: () => {} };

  test('option on, bundle without the patches', async () => {
    await expect(createWorker({ ...base, workflowBundle: plainBundle, fastWorkflowStacks: true })).rejects.toThrow(
      /^the workflow bundle was built with fastWorkflowStacks off but this worker has it on \(option fastWorkflowStacks, env DURABLE_AGENT_FAST_WORKFLOW_STACKS\): build it with bundleSessionWorkflows\(\{ fastWorkflowStacks: true \}\)/,
    );
  });

  test('option off (the default), bundle with them', async () => {
    await expect(createWorker({ ...base, workflowBundle: fastBundle })).rejects.toThrow(
      /built with fastWorkflowStacks on but this worker has it off .* or set DURABLE_AGENT_FAST_WORKFLOW_STACKS=1/,
    );
  });

  test('a bad variable fails start-up, named', async () => {
    const before = process.env.DURABLE_AGENT_FAST_WORKFLOW_STACKS;
    process.env.DURABLE_AGENT_FAST_WORKFLOW_STACKS = 'maybe';
    try {
      await expect(createWorker({ ...base, workflowBundle: plainBundle })).rejects.toThrow(
        "DURABLE_AGENT_FAST_WORKFLOW_STACKS: expected 1 or 0, got 'maybe'",
      );
      const errors: string[] = [];
      const spy = jest.spyOn(console, 'error').mockImplementation((line: string) => void errors.push(line));
      try {
        expect(await runWorkerCommand([])).toBe(2);
      } finally {
        spy.mockRestore();
      }
      expect(errors).toEqual(["DURABLE_AGENT_FAST_WORKFLOW_STACKS: expected 1 or 0, got 'maybe'"]);
    } finally {
      if (before === undefined) delete process.env.DURABLE_AGENT_FAST_WORKFLOW_STACKS;
      else process.env.DURABLE_AGENT_FAST_WORKFLOW_STACKS = before;
    }
  });
});
