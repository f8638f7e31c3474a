/**
 * The typed client: start a session, attach to one, stream its messages, steer it.
 * Options are validated here, before anything starts (a bad field is named and nothing runs).
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection, WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import * as api from '../shared/api';
import { parseSessionConfig, type PermissionMode, type SessionOptions } from '../shared/config';
import type { ResultMessage, SDKMessage } from '../shared/events';
import type { Message } from '../shared/messages';

export interface ConnectOptions {
  address?: string;
  namespace?: string;
  connection?: Connection;
  /** Workflow task queue sessions start on (default `agent`). */
  taskQueue?: string;
}

export class DurableAgentClient {
  private constructor(
    readonly client: Client,
    private readonly ownsConnection: boolean,
    readonly taskQueue: string = api.TASK_QUEUES.workflow,
  ) {}

  static async connect(opts: ConnectOptions = {}): Promise<DurableAgentClient> {
    const connection =
      opts.connection ?? (await Connection.connect({ address: opts.address ?? process.env.TEMPORAL_ADDRESS ?? 'localhost:7233' }));
    const namespace = opts.namespace ?? process.env.TEMPORAL_NAMESPACE ?? 'default';
    return new DurableAgentClient(new Client({ connection, namespace }), !opts.connection, opts.taskQueue ?? process.env.DURABLE_AGENT_TASK_QUEUE);
  }

  /** Validate options, start the session workflow, and return its handle. */
  async start(options: SessionOptions): Promise<SessionHandle> {
    const config = parseSessionConfig({
      ...options,
      platform: options.platform ?? process.platform,
      startedAt: options.startedAt ?? new Date().toISOString(),
    });
    const sessionId = config.sessionId ?? `session-${randomUUID()}`;
    const handle = await this.client.workflow.start(api.WORKFLOW_TYPE, {
      workflowId: sessionId,
      taskQueue: this.taskQueue,
      args: [{ ...config, sessionId }],
    });
    return new SessionHandle(this.client, sessionId, handle as WorkflowHandle);
  }

  /** Attach to an existing session by id (follows continue-as-new: the latest run is used). */
  async get(sessionId: string): Promise<SessionHandle> {
    const handle = this.client.workflow.getHandle(sessionId);
    try {
      await handle.describe();
    } catch (e) {
      if (e instanceof WorkflowNotFoundError) throw new Error(`no session with id ${sessionId}`);
      throw e;
    }
    return new SessionHandle(this.client, sessionId, handle);
  }

  async close(): Promise<void> {
    if (this.ownsConnection) await this.client.connection.close();
  }
}

export class SessionHandle {
  constructor(
    private readonly client: Client,
    readonly sessionId: string,
    readonly workflow: WorkflowHandle,
  ) {}

  /** A handle on the session's latest run (queries and signals always reach the current run). */
  private latest(): WorkflowHandle {
    return this.client.workflow.getHandle(this.sessionId);
  }

  /**
   * The session's messages as they happen: polls the `events` query and ends after the final
   * `result`. `after` resumes from a sequence number (e.g. after a client restart).
   */
  async *messages(opts: { after?: number; pollMs?: number } = {}): AsyncGenerator<SDKMessage> {
    let after = opts.after;
    const pollMs = opts.pollMs ?? 250;
    for (;;) {
      let page: Awaited<ReturnType<typeof this.events>>;
      try {
        page = await this.events({ after });
      } catch (e) {
        // The run may have finished and been closed before we read its last events.
        if (await this.isClosed()) return;
        throw e;
      }
      for (const e of page.events) {
        after = e.seq;
        yield e;
      }
      if (page.done) return;
      if (page.events.length === 0) await new Promise((r) => setTimeout(r, pollMs));
    }
  }

  private async isClosed(): Promise<boolean> {
    const d = await this.latest().describe();
    return d.status.name !== 'RUNNING';
  }

  events(opts: { after?: number; limit?: number } = {}) {
    return this.latest().query(api.eventsQuery, opts);
  }
  interrupt(): Promise<void> {
    return this.latest().signal(api.interruptSignal);
  }
  setModel(model: string): Promise<void> {
    return this.latest().signal(api.setModelSignal, model);
  }
  setPermissionMode(mode: PermissionMode): Promise<void> {
    return this.latest().signal(api.setPermissionModeSignal, mode);
  }
  setMaxThinkingTokens(tokens: number | null): Promise<void> {
    return this.latest().signal(api.setMaxThinkingTokensSignal, tokens);
  }
  usage(): Promise<api.SessionUsage> {
    return this.latest().query(api.usageQuery);
  }
  turnCount(): Promise<number> {
    return this.latest().query(api.turnCountQuery);
  }
  state(): Promise<api.SessionState> {
    return this.latest().query(api.stateQuery);
  }
  async transcript(): Promise<Message[]> {
    const all: Message[] = [];
    for (;;) {
      const page = await this.latest().query(api.transcriptQuery, { start: all.length });
      if (page.length === 0) return all;
      all.push(...page);
    }
  }
  /** The final result message (waits for the session to end). */
  result(): Promise<ResultMessage> {
    return this.latest().result() as Promise<ResultMessage>;
  }
  cancel(): Promise<void> {
    return this.latest().cancel().then(() => undefined);
  }
}
