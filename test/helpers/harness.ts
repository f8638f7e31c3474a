/**
 * Test harness for sessions: the real dev server started by the global setup, a real worker
 * (in this process) and the scripted model behind real HTTP. One per test file.
 */
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { Connection } from '@temporalio/client';
import { DurableAgentClient, type SessionHandle } from '../../src/client/client';
import { createWorker, type AgentWorker, type CreateWorkerOptions } from '../../src/worker/worker';
import { startScriptedModel, type ScenarioInput, type ScriptedModel } from '../../src/testing/scripted-model';
import type { SessionOptions } from '../../src/shared/config';
import type { ResultMessage, SDKMessage } from '../../src/shared/events';
import { testAddress } from './server';

let bundle: Promise<{ code: string }> | undefined;
let harnessCount = 0;

/** The workflow bundle, built once per jest worker (or read from the global setup's file). */
export function workflowBundle(): Promise<{ code: string }> {
  const file = process.env.TEMPORAL_TEST_BUNDLE;
  if (file && existsSync(file)) return Promise.resolve({ code: readFileSync(file, 'utf8') });
  bundle ??= bundleWorkflowCode({
    workflowsPath: require.resolve('../../src/workflows'),
    logger: { info() {}, warn() {}, error: console.error, debug() {}, trace() {}, log() {} } as never,
  });
  return bundle;
}

export interface Harness {
  client: DurableAgentClient;
  model: ScriptedModel;
  worker: AgentWorker;
  /** Stop the worker (in-flight tasks finish) and start a new one on the same queues. */
  stopWorker(): Promise<void>;
  startWorker(): Promise<void>;
  address: string;
  /** The workflow queue of this harness's worker (DURABLE_AGENT_TASK_QUEUE for spawned CLIs). */
  taskQueue: string;
  /** A fresh temp dir for a session's workspace. */
  workspace(): string;
  /** Start a session playing `scenario` (added to the scripted model) and return its handle. */
  start(scenario: ScenarioInput, options: Partial<SessionOptions> & { cwd?: string }): Promise<SessionHandle>;
  /** Start and collect every message until the result. */
  run(scenario: ScenarioInput, options: Partial<SessionOptions> & { cwd?: string }): Promise<Run>;
  close(): Promise<void>;
}

export interface Run {
  handle: SessionHandle;
  messages: SDKMessage[];
  result: ResultMessage;
}

/** The scripted model picks a session's scenario from this tag in the first user message. */
export function scenarioTag(name: string): string {
  return `[scenario:${name}]`;
}

let runtimeInstalled = false;

/** The SDK's INFO lifecycle logs would bury test output; keep warnings and errors. */
function quietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // Already installed in this process (e.g. by another helper): keep that one.
  }
}

export async function startHarness(opts: Partial<CreateWorkerOptions> = {}, modelOpts: { keepMessages?: boolean } = {}): Promise<Harness> {
  quietRuntime();
  const address = testAddress();
  const model = await startScriptedModel({ scenarios: [], ...modelOpts });
  const connection = await NativeConnection.connect({ address });
  // Each harness gets its own queues: jest runs test files in parallel against one server.
  const taskQueue = `agent-test-${process.pid}-${harnessCount++}`;
  const newWorker = async () =>
    createWorker({
      connection,
      taskQueue,
      workflowBundle: await workflowBundle(),
      ...opts,
      model: { baseURL: model.url, apiKey: 'test-key', ...opts.model },
      log: () => undefined,
    });
  let worker: AgentWorker | undefined = await newWorker();
  let running = worker.run();
  // `opts.payloadCodecs` (encryption, compression) reaches the worker through `...opts` and the client here.
  const client = await DurableAgentClient.connect({
    connection: await Connection.connect({ address }),
    taskQueue,
    ...(opts.payloadCodecs ? { payloadCodecs: opts.payloadCodecs } : {}),
  });
  const root = mkdtempSync(path.join(tmpdir(), 'da-test-'));
  let n = 0;
  const workspace = () => mkdtempSync(path.join(root, `ws${n++}-`));

  const start: Harness['start'] = async (scenario, options) => {
    model.addScenario(scenario);
    return client.start({
      model: 'gpt-4.1-mini',
      cwd: options.cwd ?? workspace(),
      permissionMode: 'bypassPermissions',
      ...options,
      prompt: `${scenarioTag(scenario.name)} ${options.prompt ?? 'Do the task.'}`,
    });
  };
  return {
    client,
    model,
    get worker() {
      if (!worker) throw new Error('the harness worker is stopped');
      return worker;
    },
    async stopWorker() {
      worker?.shutdown();
      await running;
      worker = undefined;
    },
    async startWorker() {
      if (worker) throw new Error('the harness worker is already running');
      worker = await newWorker();
      running = worker.run();
    },
    address,
    taskQueue,
    workspace,
    start,
    async run(scenario, options) {
      const handle = await start(scenario, options);
      const messages: SDKMessage[] = [];
      for await (const m of handle.messages({ pollMs: 50 })) messages.push(m);
      const result = messages.find((m): m is ResultMessage => m.type === 'result');
      if (!result) throw new Error(`session ${handle.sessionId} ended without a result message`);
      return { handle, messages, result };
    },
    async close() {
      worker?.shutdown();
      await running;
      await connection.close();
      await client.client.connection.close();
      await model.close();
    },
  };
}
