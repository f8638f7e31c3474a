/**
 * Workspaces (ARCHITECTURE.md#workspaces): a folder per session made on a tools host from a git
 * repository at a ref or from a template folder; what the agent changed in it, as a patch; and a
 * verdict from a command run in it after the agent ends. Shared by the session options, the
 * workflow, the tools worker that does the work and the clients that report it.
 */
import { z } from 'zod';
import { sharedSchema } from './shared-schema';
import type { CheckpointActivities } from './checkpoint';
import type { SandboxSettings } from './sandbox';

/**
 * `{"git": URL_OR_PATH, "ref": BRANCH_TAG_OR_SHA}` or `{"copy": DIR}`. One object with a rule
 * rather than a union, so an unknown key is named (`workspace.branch: unknown option`).
 */
export const WorkspaceOption = sharedSchema('workspace.WorkspaceOption', () =>
  z
    .object({
      git: z.string().min(1).optional().describe('A git URL or a path on the tools host; cloned through a local mirror.'),
      ref: z.string().min(1).optional().describe('Branch, tag or commit to check out; default: the remote HEAD.'),
      copy: z.string().startsWith('/', { message: 'must be an absolute path' }).optional().describe('A folder on the tools host to copy.'),
      checkpoint: z
        .object({
          session: z.string().min(1),
          turn: z.number().int().min(0),
          commit: z.string().regex(/^[0-9a-f]{40,64}$/, { message: 'must be a commit id' }),
          ref: z.string().startsWith('refs/checkpoints/', { message: 'must be a checkpoint ref' }),
        })
        .strict()
        .optional()
        .describe("Another session's checkpoint (`fork --at`): restored from the host's checkpoint repository or the checkpoint remote."),
    })
    .strict()
    .superRefine((w, ctx) => {
      const given = [w.git, w.copy, w.checkpoint].filter((x) => x !== undefined).length;
      if (given !== 1) {
        ctx.addIssue({ code: 'custom', message: 'give exactly one of git, copy or checkpoint', path: w.git === undefined ? [] : ['copy'] });
      }
      if (w.ref !== undefined && w.git === undefined) ctx.addIssue({ code: 'custom', message: 'ref goes with git', path: ['ref'] });
      if (w.ref !== undefined && (w.ref.startsWith('-') || /\s|\.\.|[~^:?*[\\]/.test(w.ref))) {
        ctx.addIssue({ code: 'custom', message: 'not a valid git ref', path: ['ref'] });
      }
      if (w.git !== undefined && w.git.startsWith('-')) ctx.addIssue({ code: 'custom', message: 'not a git URL or path', path: ['git'] });
    }),
);
export type WorkspaceOption = z.infer<typeof WorkspaceOption>;

/** Default and largest time a `verify` command may run. */
const DEFAULT_VERIFY_TIMEOUT_MS = 10 * 60_000;
const MAX_VERIFY_TIMEOUT_MS = 2 * 3_600_000;

/** `"CMD"` or `{"command": CMD, "timeoutMs": N}`: run in the workspace after the agent ends. */
export const VerifyOption = sharedSchema('workspace.VerifyOption', () =>
  z.union([
    z.string().min(1),
    z
      .object({
        command: z.string().min(1),
        timeoutMs: z.number().int().min(1_000).max(MAX_VERIFY_TIMEOUT_MS).optional(),
      })
      .strict(),
  ]),
);
export type VerifyOption = z.infer<typeof VerifyOption>;

export function verifySpec(v: VerifyOption): { command: string; timeoutMs: number } {
  return typeof v === 'string'
    ? { command: v, timeoutMs: DEFAULT_VERIFY_TIMEOUT_MS }
    : { command: v.command, timeoutMs: v.timeoutMs ?? DEFAULT_VERIFY_TIMEOUT_MS };
}

/** The largest patch a session's result carries inline; a larger one is kept in parts (`patchParts`). */
export const MAX_INLINE_PATCH_BYTES = 256 * 1024;
/**
 * The size of one part of a larger patch, each the result of one `readPatchPart` activity: as
 * base64 (4/3 larger) it stays under the SDK's 512 KiB payload warning.
 */
export const PATCH_PART_BYTES = 360 * 1024;
/** Larger patches are not kept in history at all: `patchTruncated`, and the file stays on the tools host. */
export const MAX_PATCH_BYTES = 32 * 1024 * 1024;

interface ProvisionWorkspaceInput {
  /** The session id names the folder: a retry finds (or redoes) the same one. */
  sessionId: string;
  workspace: WorkspaceOption;
}

interface ProvisionedWorkspace {
  /** The folder: the session's `cwd`. */
  path: string;
  /** The commit the folder started from; for `copy`, a commit of the copy in a git dir outside it. */
  base: string;
  kind: 'git' | 'copy';
  /** The task queue only this tools host polls: the session's tools are pinned to it. */
  hostQueue: string;
  /** The tools host's name, for people. */
  host: string;
}

export interface DiffStat {
  filesChanged: number;
  insertions: number;
  deletions: number;
}

interface WorkspaceDiffInput {
  sessionId: string;
  path: string;
  base: string;
}

export interface WorkspaceDiff {
  base: string;
  diffStat: DiffStat;
  /** Bytes of the whole patch (git diff --binary against the base, new files included, ignored files not). */
  patchBytes: number;
  /** The patch, when at most MAX_INLINE_PATCH_BYTES and valid UTF-8 (a string would change other bytes). */
  patch?: string;
  /** Otherwise: how many `readPatchPart` calls return it (up to MAX_PATCH_BYTES): ceil(patchBytes / PATCH_PART_BYTES). */
  patchParts?: number;
  /** Over MAX_PATCH_BYTES: kept only on the tools host, at `patchFile`. */
  patchTruncated?: boolean;
  /** Where the tools host keeps the patch. */
  patchFile: string;
}

interface PatchPartInput {
  sessionId: string;
  /** 0-based, below `patchParts`. */
  part: number;
}

export interface RunVerifyInput {
  sessionId: string;
  path: string;
  command: string;
  timeoutMs: number;
  /** The session's environment and sandbox, as its Bash calls get them. */
  env: Record<string, string>;
  sandbox?: SandboxSettings;
  additionalDirectories: string[];
}

export type Verdict = 'pass' | 'fail' | 'error';

export interface VerifyOutcome {
  verdict: Verdict;
  /** null when the command could not run or was stopped at its timeout. */
  exitCode: number | null;
  durationMs: number;
  /** The last 4 KiB of stdout and stderr together. */
  outputTail: string;
  /** Why the verdict is `error`. */
  error?: string;
}

/** Run on the tools queue (provisioning, restoring) and then on the session's host queue (the rest). */
export interface WorkspaceActivities extends CheckpointActivities {
  provisionWorkspace(input: ProvisionWorkspaceInput): Promise<ProvisionedWorkspace>;
  workspaceDiff(input: WorkspaceDiffInput): Promise<WorkspaceDiff>;
  /** Bytes [part × PATCH_PART_BYTES, +PATCH_PART_BYTES) of the patch file, base64: decoded and
   *  concatenated in order, the parts are the file byte for byte (a split may fall inside a character). */
  readPatchPart(input: PatchPartInput): Promise<string>;
  runVerify(input: RunVerifyInput): Promise<VerifyOutcome>;
}

/** What a session's result says about its workspace (`result.workspace`). */
export interface WorkspaceReport {
  path: string;
  host: string;
  kind: 'git' | 'copy';
  base: string;
  /** The repository and ref asked for, or the folder copied. */
  source: WorkspaceOption;
  diffStat?: DiffStat;
  patchBytes?: number;
  patch?: string;
  patchParts?: number;
  patchTruncated?: boolean;
  patchFile?: string;
  /** The diff could not be taken. */
  diffError?: string;
}

/** What a session's result says about its `verify` command (`result.verify`); with `verdict` beside it. */
export interface VerifyReport {
  command: string;
  exitCode: number | null;
  durationMs: number;
  outputTail: string;
  error?: string;
}

/** A folder name for a session id (ids may hold `/` and `:`): readable, and distinct for distinct ids. */
export function workspaceSlug(sessionId: string, hash: (s: string) => string): string {
  const readable = sessionId.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80);
  return `${readable}-${hash(sessionId).slice(0, 10)}`;
}
