/**
 * Activity proxies for a session, and how the loop reads their failures. Model calls and tools
 * go to queues named after the session's own workflow queue (see `taskQueuesFor`).
 */
import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  proxyActivities,
  proxyLocalActivities,
  type ActivityOptions,
} from '@temporalio/workflow';
import { taskQueuesFor } from '../../shared/api';
import type { WorkspaceActivities } from '../../shared/workspace';
import type { SessionConfig } from '../../shared/config';
import type { McpActivities, ModelActivities, SessionStoreActivities, SetupActivities, ToolActivities } from '../../shared/activities';
import type { HookActivities } from '../../shared/hooks';

export interface SessionActivities {
  model: ModelActivities;
  tools: ToolActivities;
  /** `inspectToolCall` for file tools: on the workspace host, where the paths are. Short, no heartbeats. */
  inspect: Pick<ToolActivities, 'inspectToolCall'>;
  /**
   * `inspectToolCall` for Bash, as a local activity of the workflow worker: parsing needs no
   * workspace, and a local activity costs no workflow task of its own (ARCHITECTURE.md#bash-rules-on-a-real-parse).
   */
  inspectBash: Pick<ToolActivities, 'inspectToolCall'>;
  mcp: McpActivities;
  store: SessionStoreActivities;
  hooks: HookActivities;
  setup: SetupActivities;
  workspace: WorkspaceActivities;
  /** `restoreWorkspace` on the shared tools queue: any host, after the pinned one was lost (ARCHITECTURE.md#checkpoints). */
  restore: Pick<WorkspaceActivities, 'restoreWorkspace'>;
}

/**
 * `pinnedQueue`: the queue of the tools host that made the session's workspace; its tools, hooks
 * and MCP servers run there from then on (ARCHITECTURE.md#workspaces).
 */
export function activitiesFor(cfg: SessionConfig, workflowQueue: string, pinnedQueue?: string): SessionActivities {
  const pin = pinnedQueue ?? cfg.toolsTaskQueue;
  const queues = taskQueuesFor(workflowQueue, pin);
  const heartbeatTimeout = cfg.heartbeatTimeoutMs;
  // On a pinned host, a task nobody picks up in time may mean the host is gone (ARCHITECTURE.md#checkpoints).
  const hostWait = pin !== undefined ? { scheduleToStartTimeout: cfg.workspaceHostTimeoutMs } : {};
  /**
   * Tools, MCP calls, hooks and set-up: on the workspace host, cancelled only once confirmed
   * stopped. `heartbeats: false` for an activity too short to need them (no heartbeat timer).
   */
  const onWorkspaceHost = (
    startToCloseTimeout: ActivityOptions['startToCloseTimeout'],
    nonRetryableErrorTypes?: string[],
    { heartbeats = true }: { heartbeats?: boolean } = {},
  ): ActivityOptions => ({
    taskQueue: queues.tools,
    startToCloseTimeout,
    ...hostWait,
    ...(heartbeats ? { heartbeatTimeout } : {}),
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { maximumAttempts: 3, initialInterval: '1s', ...(nonRetryableErrorTypes ? { nonRetryableErrorTypes } : {}) },
  });
  return {
    model: proxyActivities<ModelActivities>({
      taskQueue: queues.model,
      startToCloseTimeout: '15 minutes',
      heartbeatTimeout,
      // Interrupt must not wait for a hung provider: the turn ends at once and the activity
      // hears the cancellation on its next heartbeat.
      cancellationType: ActivityCancellationType.TRY_CANCEL,
      retry: {
        maximumAttempts: cfg.retry.maxAttempts,
        initialInterval: cfg.retry.initialIntervalMs,
        maximumInterval: cfg.retry.maximumIntervalMs,
        backoffCoefficient: 2,
        // No list of non-retryable types: the activity throws those failures non-retryable itself
        // (`classifyModelError`), and a list here would be written with every call's scheduled
        // event and its pending-activity record (ARCHITECTURE.md#temporal-owns-retries).
      },
    }),
    store: proxyActivities<SessionStoreActivities>({
      taskQueue: queues.model,
      startToCloseTimeout: '5 minutes',
      heartbeatTimeout: '1 minute',
      retry: { maximumAttempts: 5, nonRetryableErrorTypes: ['SessionNotFound', 'TranscriptTooLarge', 'ForkOutOfRange'] },
    }),
    // Bash allows 10 minutes per command; leave room for the kill and the report. An interrupted
    // Bash command is confirmed dead before the turn's results are written.
    tools: proxyActivities<ToolActivities>(onWorkspaceHost('12 minutes', ['ToolConfigError'])),
    // Parses a command line or resolves a path before the permission decision: milliseconds, so no
    // heartbeat timer (ARCHITECTURE.md#bash-rules-on-a-real-parse).
    inspect: proxyActivities<Pick<ToolActivities, 'inspectToolCall'>>(onWorkspaceHost('1 minute', undefined, { heartbeats: false })),
    inspectBash: proxyLocalActivities<Pick<ToolActivities, 'inspectToolCall'>>({
      startToCloseTimeout: '1 minute',
      retry: { maximumAttempts: 3, initialInterval: '1s' },
    }),
    // MCP servers run on the tools worker too, in its pool; a call has its own timeout (MCP_TOOL_TIMEOUT
    // on the worker, 10 minutes by default) inside this one (ARCHITECTURE.md#mcp).
    mcp: proxyActivities<McpActivities>(onWorkspaceHost('11 minutes')),
    // Hooks and settings files live on the workspace host, like the tools (ARCHITECTURE.md#hooks).
    // Several hooks of 60 s each may run for one event.
    hooks: proxyActivities<HookActivities>(onWorkspaceHost('11 minutes', ['InvalidSettings'])),
    // Reads a few small files: no heartbeat timeout, so no heartbeat timer for the server to keep
    // (ARCHITECTURE.md#session-start-in-one-step); a worker lost mid-set-up costs this minute.
    setup: proxyActivities<SetupActivities>(onWorkspaceHost('1 minute', ['InvalidSettings'], { heartbeats: false })),
    // Making the folder (a clone may be long: heartbeats), its diff, the verify command (its own
    // timeout inside this one) — ARCHITECTURE.md#workspaces.
    workspace: proxyActivities<WorkspaceActivities>(onWorkspaceHost('130 minutes', ['WorkspaceSetupError'])),
    restore: proxyActivities<Pick<WorkspaceActivities, 'restoreWorkspace'>>({
      taskQueue: taskQueuesFor(workflowQueue).tools,
      startToCloseTimeout: '130 minutes',
      heartbeatTimeout,
      retry: { maximumAttempts: 3, initialInterval: '1s', nonRetryableErrorTypes: ['CheckpointUnavailable', 'WorkspaceRestoreRefused'] },
    }),
  };
}

export function retriesExhausted(e: unknown): boolean {
  return e instanceof ActivityFailure && (e.retryState === 'MAXIMUM_ATTEMPTS_REACHED' || e.retryState === 'TIMEOUT');
}

export function describeModelFailure(e: ActivityFailure): string {
  const cause = e.cause;
  if (cause instanceof ApplicationFailure) return `Model request failed (${cause.type ?? 'error'}): ${cause.message}`;
  return `Model request failed: ${cause?.message ?? e.message}`;
}
