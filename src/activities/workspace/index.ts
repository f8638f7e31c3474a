/**
 * The workspace activities of a tools host (docs/ARCHITECTURE.md#workspaces): provisioning on the
 * shared tools queue, then diff, patch parts and verify on this host's own queue.
 */
import os from 'node:os';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { WorkspaceActivities } from '../../shared/workspace';
import { heartbeatEveryMs } from '../heartbeat';
import type { ToolOps } from '../tools/ops';
import { NoWorkspace, readPart, takeDiff } from './diff';
import { GitError, redact, runGit, type GitRunner } from './git';
import { hostQueueFor, workspacesRoot } from './layout';
import { RefNotFound } from './mirror';
import { NotADirectory, provision } from './provision';
import { verify } from './verify';

export { cleanupWorkspaces, type CleanupOptions, type CleanupReport } from './cleanup';
export { hostQueueFor, workspacesRoot, WORKSPACES_ENV_VAR } from './layout';
export { runGit, type GitRunner } from './git';

export interface WorkspaceActivityOptions {
  /** The shared tools queue this worker polls; its host queue is `hostQueueFor(toolsQueue)`. */
  toolsQueue: string;
  /** Runs verify commands (sandbox, environment). */
  ops: ToolOps;
  /** Default: workspacesRoot(). */
  root?: string;
  /** Default: os.hostname(). */
  host?: string;
  /** Default: the git on PATH. */
  git?: GitRunner;
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

export function createWorkspaceActivities(opts: WorkspaceActivityOptions): WorkspaceActivities {
  const root = opts.root ?? workspacesRoot();
  const host = opts.host ?? os.hostname();
  const hostQueue = hostQueueFor(opts.toolsQueue, host);
  const git = opts.git ?? runGit;
  return {
    async provisionWorkspace({ sessionId, workspace }) {
      return beating('provisionWorkspace', async (signal) => {
        try {
          const meta = await provision(sessionId, workspace, { root, git, signal });
          return { path: meta.path, base: meta.base, kind: meta.kind, hostQueue, host };
        } catch (e) {
          if (signal.aborted) throw e;
          const what = workspace.git !== undefined ? `${workspace.git} at ${workspace.ref ?? 'its default branch'}` : workspace.copy;
          if (e instanceof RefNotFound) throw setupError(`workspace: ref ${e.message} does not exist in ${workspace.git}`);
          if (e instanceof GitError) throw setupError(`workspace: cannot clone ${what}: ${e.message}`);
          if (e instanceof NotADirectory) throw setupError(`workspace: cannot copy ${e.message}`);
          throw e;
        }
      });
    },
    async workspaceDiff(input) {
      return beating('workspaceDiff', async (signal) => {
        try {
          return await takeDiff(input, { root, git, signal });
        } catch (e) {
          if (e instanceof NoWorkspace)
            throw ApplicationFailure.create({ type: 'WorkspaceNotFound', message: e.message, nonRetryable: true });
          throw e;
        }
      });
    },
    async readPatchPart(input) {
      try {
        return await readPart(input, root);
      } catch (e) {
        if (e instanceof NoWorkspace)
          throw ApplicationFailure.create({ type: 'WorkspaceNotFound', message: e.message, nonRetryable: true });
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
