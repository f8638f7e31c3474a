/**
 * The whole stack in one process — a Temporal dev server (or one already running), the scripted
 * model (or a real endpoint), a worker and a client — assembled in this one place for the tests
 * (test/helpers/harness.ts), the benchmarks (bench/) and `npm run demo`.
 */
import type { Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, type LogLevel } from '@temporalio/worker';
import { DurableAgentClient } from '../client/client';
import { startDevServer, type DevServer, type DevServerOptions } from '../server/dev-server';
import { createWorker, type AgentWorker, type CreateWorkerOptions } from '../worker/worker';
import { startScriptedModel, type ScriptedModel, type ScriptedModelOptions } from './scripted-server';
import { connectTemporal } from '../server/connection';

export interface StackOptions {
  /** A running server (`host:port`); without it a dev server is started with `devServer`. */
  address?: string;
  devServer?: DevServerOptions;
  /** The scripted model (default: one with no scenarios yet) or a real OpenAI-compatible endpoint. */
  model?: { scripted: Partial<ScriptedModelOptions> } | { baseURL?: string; apiKey: string };
  /** The in-process worker's options; `false` starts no worker. Its `log` defaults to silence. */
  worker?: Omit<CreateWorkerOptions, 'connection' | 'address' | 'taskQueue'> | false;
  /** The session workflow queue of the worker and the client (default `agent`). */
  taskQueue?: string;
}

export interface Stack {
  readonly address: string;
  /** The dev server this stack started (undefined with `address`). */
  readonly server: DevServer | undefined;
  /** The scripted model (undefined with a real endpoint). */
  readonly model: ScriptedModel | undefined;
  readonly modelUrl: string | undefined;
  readonly taskQueue: string;
  /** For more workers on the same server (closed by close()). */
  readonly connection: NativeConnection;
  /** For more clients on the same server (closed by close()). */
  readonly clientConnection: Connection;
  readonly client: DurableAgentClient;
  /** The running worker; throws while it is stopped. */
  readonly worker: AgentWorker;
  /** Stop the worker (in-flight tasks finish first). */
  stopWorker(): Promise<void>;
  /** Start a worker again on the same queues, with the same options. */
  startWorker(): Promise<void>;
  /** Stop everything this stack started, the worker first. */
  close(): Promise<void>;
}

let sdkLoggerInstalled = false;

/**
 * Show only the SDK's messages at `level` and above (its INFO lines about worker state would
 * bury a test's, a benchmark's or the demo's output). The runtime is process-wide: the first
 * call wins, and a runtime someone else installed is kept.
 */
export function quietSdkLogs(level: LogLevel): void {
  if (sdkLoggerInstalled) return;
  sdkLoggerInstalled = true;
  try {
    Runtime.install({ logger: new DefaultLogger(level) });
  } catch {
    // Already installed or instantiated in this process: keep that one.
  }
}

export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  const cleanup: (() => Promise<unknown>)[] = [];
  const closeAll = async () => {
    for (const step of cleanup.splice(0).reverse()) await step().catch(() => undefined);
  };
  try {
    let server: DevServer | undefined;
    if (!opts.address) {
      server = await startDevServer({ log: () => undefined, ...opts.devServer });
      cleanup.push(() => server!.stop());
    }
    const address = opts.address ?? server!.address;

    const modelOpts = opts.model ?? { scripted: {} };
    let model: ScriptedModel | undefined;
    if ('scripted' in modelOpts) {
      model = await startScriptedModel({ scenarios: [], ...modelOpts.scripted });
      cleanup.push(() => model!.close());
    }
    const endpoint = model ? { baseURL: model.url, apiKey: 'scripted-model' } : (modelOpts as { baseURL?: string; apiKey: string });

    const connection = await NativeConnection.connect({ address });
    cleanup.push(() => connection.close());
    const clientConnection = await connectTemporal({ address });
    cleanup.push(() => clientConnection.close());
    const taskQueue = opts.taskQueue ?? 'agent';
    const workerOpts = opts.worker;
    const client = await DurableAgentClient.connect({
      connection: clientConnection,
      taskQueue,
      // Encryption or compression the worker uses, the client needs too.
      ...(workerOpts && workerOpts.payloadCodecs ? { payloadCodecs: workerOpts.payloadCodecs } : {}),
    });

    let worker: AgentWorker | undefined;
    let running: Promise<void> = Promise.resolve();
    const startWorker = async () => {
      if (workerOpts === false) throw new Error('this stack was started without a worker (worker: false)');
      if (worker) throw new Error('the stack worker is already running');
      worker = await createWorker({
        log: () => undefined,
        ...workerOpts,
        connection,
        taskQueue,
        model: { ...endpoint, ...workerOpts?.model },
      });
      running = worker.run();
    };
    const stopWorker = async () => {
      worker?.shutdown();
      await running;
      worker = undefined;
    };
    if (workerOpts !== false) {
      await startWorker();
      // Runs before the connections close (cleanup goes in reverse order).
      cleanup.push(stopWorker);
    }

    return {
      address,
      server,
      model,
      modelUrl: endpoint.baseURL,
      taskQueue,
      connection,
      clientConnection,
      client,
      get worker() {
        if (!worker) throw new Error('the stack worker is stopped');
        return worker;
      },
      stopWorker,
      startWorker,
      close: closeAll,
    };
  } catch (e) {
    await closeAll();
    throw e;
  }
}
