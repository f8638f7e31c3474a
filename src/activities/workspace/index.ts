/**
 * The workspace activities of a tools host (docs/ARCHITECTURE.md#workspaces): provisioning and
 * restoring on the shared tools queue, then checkpoints, diff, patch parts and verify on this
 * host's own queue.
 */
import os from 'node:os';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { WorkspaceActivities } from '../../shared/workspace';
import { heartbeatEveryMs } from '../heartbeat';
import type { ToolOps } from '../tools/ops';
import { checkpoint, CheckpointFetchFailed, CheckpointUnavailable } from './checkpoint';
import { NoWorkspace, readPart, takeDiff } from './diff';
import { GitError, redact, runGit, type GitRunner } from './git';
import { hostQueueFor } from './layout';
import { RefNotFound } from './mirror';
import { NotADirectory, provision } from './provision';
import { restore, RestoreRefused } from './restore';
import { verify } from './verify';

export { hostQueueFor, workspacesRoot } from './layout';
export { runGit, type GitRunner } from './git';

export interface WorkspaceActivityOptions {
  /** The shared tools queue this worker polls; its host queue is `hostQueueFor(toolsQueue)`. */
  toolsQueue: string;
  /** Runs verify commands (sandbox, environment). */
  ops: ToolOps;
  /** The workspaces root: the worker's settings' `workspacesRoot` (DURABLE_AGENT_WORKSPACES). */
  root: string;
  /** Default: os.hostname(). */
  host?: string;
  /** Default: the git on PATH. */
  git?: GitRunner;
  /**
   * Where checkpoints are pushed and fetched from: a git URL, read here on the worker and never
   * passed in activity input (it may hold credentials): the worker's settings'
   * DURABLE_AGENT_CHECKPOINT_REMOTE. Default or empty: none (checkpoints stay on this host).
   */
  checkpointRemote?: string;
  /** A checkpoint push running longer is stopped (`pushed: 'failed'`). Default 120 s. */
  checkpointPushTimeoutMs?: number;
}

/** Beat on a timer while `fn` runs: a clone of a large repository takes minutes. */
async function beating<T>(phase: string, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ctx = Context.current();
  ctx.heartbeat({ phase });
  const ticker = setInterval(() => ctx.heartbeat({ phase }), heartbeatEveryMs());
  try {
    return await fn(ctx.cancellationSignal);
  } finally {
    clearInterval(ticker);
  }
}

function setupError(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: 'WorkspaceSetupError', message: redact(message), nonRetryable: true });
}

const notFound = (e: Error) => ApplicationFailure.create({ type: 'WorkspaceNotFound', message: e.message, nonRetryable: true });

export function createWorkspaceActivities(opts: WorkspaceActivityOptions): WorkspaceActivities {
  const root = opts.root;
  const host = opts.host ?? os.hostname();
  const hostQueue = hostQueueFor(opts.toolsQueue, host);
  const git = opts.git ?? runGit;
  const checkpointRemote = opts.checkpointRemote ?? '';
  const ckptDeps = (signal: AbortSignal) => ({
    root,
    git,
    signal,
    checkpointRemote,
    ...(opts.checkpointPushTimeoutMs !== undefined ? { pushTimeoutMs: opts.checkpointPushTimeoutMs } : {}),
  });
  return {
    async provisionWorkspace({ sessionId, workspace }) {
      return beating('provisionWorkspace', async (signal) => {
        try {
          const meta = await provision(sessionId, workspace, { root, git, signal, checkpointRemote });
          return { path: meta.path, base: meta.base, kind: meta.kind, hostQueue, host };
        } catch (e) {
          if (signal.aborted) throw e;
          if (e instanceof CheckpointUnavailable) throw setupError(`workspace: ${e.message}`);
          if (e instanceof CheckpointFetchFailed) {
            throw ApplicationFailure.create({ type: 'CheckpointFetchFailed', message: `workspace: ${e.message}` });
          }
          const what = workspace.git !== undefined ? `${workspace.git} at ${workspace.ref ?? 'its default branch'}` : workspace.copy;
          if (e instanceof RefNotFound) throw setupError(`workspace: ref ${e.message} does not exist in ${workspace.git}`);
          if (e instanceof GitError && workspace.git !== undefined) throw setupError(`workspace: cannot clone ${what}: ${e.message}`);
          if (e instanceof NotADirectory) throw setupError(`workspace: cannot copy ${e.message}`);
          throw e;
        }
      });
    },
    async checkpointWorkspace(input) {
      // The first checkpoint of a large folder hashes every file, and a push may be long: beats.
      return beating('checkpointWorkspace', async (signal) => {
        try {
          return await checkpoint(input, ckptDeps(signal));
        } catch (e) {
          if (!signal.aborted && e instanceof NoWorkspace) throw notFound(e);
          throw e;
        }
      });
    },
    async restoreWorkspace(input) {
      return beating('restoreWorkspace', async (signal) => {
        try {
          const r = await restore(input, ckptDeps(signal));
          return { ...r, hostQueue, host };
        } catch (e) {
          if (signal.aborted) throw e;
          if (e instanceof CheckpointUnavailable) {
            throw ApplicationFailure.create({ type: 'CheckpointUnavailable', message: e.message, nonRetryable: true });
          }
          if (e instanceof RestoreRefused) {
            throw ApplicationFailure.create({ type: 'WorkspaceRestoreRefused', message: redact(e.message), nonRetryable: true });
          }
          // The remote may come back: retried.
          if (e instanceof CheckpointFetchFailed) throw ApplicationFailure.create({ type: 'CheckpointFetchFailed', message: e.message });
          const from = `${input.source?.git ?? ''} at ${input.base ?? ''}`;
          if (e instanceof RefNotFound)
            throw setupError(`workspace restore: commit ${e.message} is no longer in ${input.source?.git ?? ''}`);
          if (e instanceof GitError && input.kind === 'git') throw setupError(`workspace restore: cannot clone ${from}: ${e.message}`);
          throw e;
        }
      });
    },
    async workspaceDiff(input) {
      return beating('workspaceDiff', async (signal) => {
        try {
          return await takeDiff(input, { root, git, signal });
        } catch (e) {
          if (e instanceof NoWorkspace) throw notFound(e);
          throw e;
        }
      });
    },
    async readPatchPart(input) {
      try {
        return await readPart(input, root);
      } catch (e) {
        if (e instanceof NoWorkspace) throw notFound(e);
        if (e instanceof RangeError)
          throw ApplicationFailure.create({ type: 'PatchPartOutOfRange', message: e.message, nonRetryable: true });
        throw e;
      }
    },
    async runVerify(input) {
      const ctx = Context.current();
      return verify(input, { ops: opts.ops, signal: ctx.cancellationSignal, heartbeat: (d) => ctx.heartbeat(d) });
    },
  };
}
