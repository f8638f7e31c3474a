/**
 * Test harness for sessions: the real dev server started by the global setup, a real worker (in
 * this process) and the scripted model behind real HTTP, assembled by src/testing/stack.ts.
 * A test file calls `useHarness()` once at its top.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import type { PayloadCodec } from '@temporalio/common';
import { DurableAgentClient, type SessionHandle } from '../../src/client/client';
import type { AgentWorker, CreateWorkerOptions } from '../../src/worker/worker';
import { bundleSessionWorkflows } from '../../src/worker/bundle';
import { quietBundlerLogger } from '../../src/testing/workflow-modules';
import type { RecordedRequest, ScenarioInput, ScriptedModel } from '../../src/testing/scripted-model';
import { quietSdkLogs, startStack } from '../../src/testing/stack';
import type { DevServerOptions } from '../../src/server/dev-server';
import type { SessionOptions } from '../../src/shared/config';
import type { ResultMessage, SessionEvent } from '../../src/shared/events';
import { encrypts, ENCRYPTING_FAILURE_CONVERTER_PATH } from '../../src/codec';
import { perFile } from './per-file';
import { testAddress } from './server';

const bundles = new Map<string, Promise<{ code: string }>>();
/** Workspaces for test sessions: never under /tmp (a checkout may live there), which the sandbox makes private. */
const TEST_ROOT = path.join(homedir(), '.cache', 'durable-agent', 'test-workspaces');

let harnessCount = 0;

/**
 * The workflow bundle, built once per jest worker and settings (or read from the global setup's
 * file, for the default ones). With `encryptFailures` it includes the encrypting failure
 * converter, which workers with encrypted payloads require (src/worker/worker.ts); with
 * `fastWorkflowStacks` the stack-trace patches, which a worker requires exactly when it has that
 * option on (ARCHITECTURE.md#workflow-stack-traces).
 */
export function workflowBundle(opts: { encryptFailures?: boolean; fastWorkflowStacks?: boolean } = {}): Promise<{ code: string }> {
  const encryptFailures = opts.encryptFailures ?? false;
  const fastWorkflowStacks = opts.fastWorkflowStacks ?? false;
  const file = process.env.TEMPORAL_TEST_BUNDLE;
  if (!encryptFailures && !fastWorkflowStacks && file && existsSync(file)) return Promise.resolve({ code: readFileSync(file, 'utf8') });
  const key = JSON.stringify({ encryptFailures, fastWorkflowStacks });
  let bundle = bundles.get(key);
  if (!bundle) {
    bundle = bundleSessionWorkflows({
      ...(encryptFailures ? { failureConverterPath: ENCRYPTING_FAILURE_CONVERTER_PATH } : {}),
      fastWorkflowStacks,
      logger: quietBundlerLogger,
    });
    bundles.set(key, bundle);
  }
  return bundle;
}

export interface Harness {
  client: DurableAgentClient;
  /** Another client on the harness's connection and queue, e.g. one without the payload codecs. */
  connectClient(opts: { payloadCodecs: PayloadCodec[] }): Promise<DurableAgentClient>;
  model: ScriptedModel;
  worker: AgentWorker;
  /** Stop the worker (in-flight tasks finish) and start a new one on the same queues. */
  stopWorker(): Promise<void>;
  startWorker(): Promise<void>;
  address: string;
  /** The Prometheus endpoint of the harness's own dev server, when started with `devServer.metricsPort`. */
  metricsUrl?: string;
  /** The workflow queue of this harness's worker (DURABLE_AGENT_TASK_QUEUE for spawned CLIs). */
  taskQueue: string;
  /** The environment a spawned `durable-agent` needs to reach this harness's server and worker. */
  env: NodeJS.ProcessEnv;
  /** A fresh temp dir for a session's workspace. */
  workspace(): string;
  /** A Bash command that runs until the test calls `release()`: a turn the test ends, not a clock. */
  gate(): Gate;
  /** The scripted model's requests for `scenario`, in arrival order. */
  requestsOf(scenario: string): RecordedRequest[];
  /** Start a session playing `scenario` (added to the scripted model) and return its handle. */
  start(scenario: ScenarioInput, options: Partial<SessionOptions> & { cwd?: string }): Promise<SessionHandle>;
  /** Start and collect every message until the result. */
  run(scenario: ScenarioInput, options: Partial<SessionOptions> & { cwd?: string }): Promise<Run>;
  close(): Promise<void>;
}

export interface Gate {
  command: string;
  release(): void;
}

export interface Run {
  handle: SessionHandle;
  messages: SessionEvent[];
  result: ResultMessage;
}

/** The scripted model picks a session's scenario from this tag in the first user message. */
export function scenarioTag(name: string): string {
  return `[scenario:${name}]`;
}

/** A scripted model's requests for `scenario`, in arrival order. */
export function requestsOf(model: ScriptedModel, scenario: string): RecordedRequest[] {
  return model.requests.filter((r) => r.scenario === scenario);
}

/** Message kinds in order, `system/<subtype>` for system messages. */
export const kinds = (ms: { type: string; subtype?: string }[]): string[] =>
  ms.map((m) => (m.type === 'system' ? `system/${m.subtype}` : m.type));

/** Every message of a session until its result. */
export async function collect(handle: Pick<SessionHandle, 'messages'>): Promise<SessionEvent[]> {
  const out: SessionEvent[] = [];
  for await (const m of handle.messages({ pollMs: 50 })) out.push(m);
  return out;
}

export interface HarnessOptions {
  /** Keep each request's messages in the scripted model's log (default true). */
  keepMessages?: boolean;
  /** The scripted model's concurrency limit (429 with retry-after beyond it) and that retry-after. */
  maxConcurrent?: number;
  retryAfterMs?: number;
  /** A dev server of the harness's own with these options, instead of the run's shared one. */
  devServer?: DevServerOptions;
}

export async function startHarness(opts: Partial<CreateWorkerOptions> = {}, harnessOpts: HarnessOptions = {}): Promise<Harness> {
  quietSdkLogs('WARN');
  const { devServer, ...modelOpts } = harnessOpts;
  const stack = await startStack({
    ...(devServer ? { devServer } : { address: testAddress() }),
    model: { scripted: modelOpts },
    // Each harness gets its own queues: jest runs test files in parallel against one server.
    taskQueue: `agent-test-${process.pid}-${harnessCount++}`,
    worker: {
      workflowBundle: await workflowBundle({ encryptFailures: encrypts(opts.payloadCodecs), fastWorkflowStacks: opts.fastWorkflowStacks }),
      // Explicit, so a DURABLE_AGENT_FAST_WORKFLOW_STACKS in the developer's environment cannot mismatch the bundle.
      fastWorkflowStacks: false,
      ...opts,
    },
  });
  const model = stack.model!;
  const client = stack.client;
  const env: NodeJS.ProcessEnv = { ...process.env, TEMPORAL_ADDRESS: stack.address, DURABLE_AGENT_TASK_QUEUE: stack.taskQueue };
  delete env.TEMPORAL_NAMESPACE;
  delete env.TEMPORAL_PROFILE;
  // Not under /tmp: the Bash sandbox gives each session a private /tmp, so a gate file or fixture a
  // test puts under the OS's /tmp would be invisible to the session's commands.
  mkdirSync(TEST_ROOT, { recursive: true });
  const root = mkdtempSync(path.join(TEST_ROOT, 'da-test-'));
  let n = 0;
  const workspace = () => mkdtempSync(path.join(root, `ws${n++}-`));

  const start: Harness['start'] = async (scenario, options) => {
    model.addScenario(scenario);
    return client.start({
      model: 'gpt-4.1-mini',
      // A session with a workspace gets its folder from the tools host.
      ...(options.workspace ? {} : { cwd: options.cwd ?? workspace() }),
      permissionMode: 'bypassPermissions',
      ...options,
      prompt: `${scenarioTag(scenario.name)} ${options.prompt ?? 'Do the task.'}`,
    });
  };
  return {
    client,
    connectClient: ({ payloadCodecs }) =>
      DurableAgentClient.connect({ connection: stack.clientConnection, taskQueue: stack.taskQueue, payloadCodecs }),
    model,
    get worker() {
      return stack.worker;
    },
    stopWorker: () => stack.stopWorker(),
    startWorker: () => stack.startWorker(),
    address: stack.address,
    ...(stack.server?.metricsUrl ? { metricsUrl: stack.server.metricsUrl } : {}),
    taskQueue: stack.taskQueue,
    env,
    workspace,
    gate() {
      const file = path.join(workspace(), 'release');
      return { command: `while [ ! -e ${file} ]; do sleep 0.05; done`, release: () => writeFileSync(file, '') };
    },
    requestsOf: (scenario) => requestsOf(model, scenario),
    start,
    async run(scenario, options) {
      const handle = await start(scenario, options);
      const messages = await collect(handle);
      const result = messages.find((m): m is ResultMessage => m.type === 'result');
      if (!result) throw new Error(`session ${handle.sessionId} ended without a result message`);
      return { handle, messages, result };
    },
    close: () => stack.close(),
  };
}

/**
 * One harness for the test file: started in `beforeAll`, closed in `afterAll`. The returned
 * object stands for it from the first test on.
 */
export function useHarness(opts: Partial<CreateWorkerOptions> = {}, harnessOpts: HarnessOptions = {}): Harness {
  return perFile(
    'harness',
    () => startHarness(opts, harnessOpts),
    (h) => h.close(),
  );
}
