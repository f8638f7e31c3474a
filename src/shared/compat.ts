/**
 * Every compatibility branch the code keeps for sessions, batches and workers of earlier versions,
 * and the condition for deleting each (ARCHITECTURE.md#compatibility-branches). A branch that is
 * not listed here does not exist: `test/unit/compat.test.ts` fails on a `patched()` whose id is
 * not in `PATCHES`, and on an entry here that no code uses any more.
 *
 * Deleting a patch takes two deploys, as Temporal prescribes: first `deprecatePatch(id)` in place
 * of `patched(id)` (keeping the new branch) once its condition holds, then the call itself once no
 * open run started on the deprecating build is left. Recorded histories of the old branch leave the
 * replay corpus (test/replay/histories/) with it.
 */

export interface CompatBranch {
  /** What the older runs or workers do that the branch keeps. */
  keeps: string;
  /** Where the branch is. */
  where: string;
  /** When it can go. */
  deleteWhen: string;
}

/** Until no open run started before the change: `temporal workflow list --query 'ExecutionStatus="Running" AND StartTime < "<date of the deploy>"'` is empty for the type. */
const NO_OLDER_SESSION = 'no session started before the deploy that brought it is still open';
const NO_OLDER_BATCH = 'no batch started before the deploy that brought it is still open';

/** `patched()` ids in workflow code, each a branch kept for histories recorded before it. */
export const PATCHES = {
  mcpServers: {
    id: 'mcp-servers',
    keeps: 'sessions recorded before MCP servers existed never list them',
    where: 'src/workflows/session/mcp.ts',
    deleteWhen: NO_OLDER_SESSION,
  },
  durableApproval: {
    id: 'durable-approval',
    keeps: 'histories recorded before durable approval answer every "ask" with a denial at once',
    where: 'src/workflows/session/permission-gate.ts',
    deleteWhen: NO_OLDER_SESSION,
  },
  permissionCallFacts: {
    id: 'permission-call-facts',
    keeps:
      'histories recorded before the tools host parsed Bash lines and resolved paths decide on the input alone, with the old splitter (analyseBash in src/shared/permissions/decide.ts goes with it)',
    where: 'src/workflows/session/permission-gate.ts',
    deleteWhen: NO_OLDER_SESSION,
  },
  hooksFailClosed: {
    id: 'pretooluse-hooks-fail-closed',
    keeps: 'histories recorded before a PreToolUse hook that could not run denied the call went on without it',
    where: 'src/workflows/session/hooks.ts',
    deleteWhen: NO_OLDER_SESSION,
  },
  settingsAndHooks: {
    id: 'settings-and-hooks',
    keeps: 'sessions recorded before settings files and hooks existed start without loading them',
    where: 'src/workflows/session/session-start.ts',
    deleteWhen: NO_OLDER_SESSION,
  },
  workspaceCheckpoints: {
    id: 'workspace-checkpoints',
    keeps: 'a session recorded before checkpoints never takes one',
    where: 'src/workflows/session/checkpoints.ts',
    deleteWhen: NO_OLDER_SESSION,
  },
  batchSpend: {
    id: 'batch-spend',
    keeps: "a job's session recorded before batch budgets reports no spend to its batch",
    where: 'src/workflows/session/batch-spend.ts',
    deleteWhen: NO_OLDER_SESSION,
  },
  batchBudget: {
    id: 'batch-budget',
    keeps: 'a batch recorded before batch budgets enforces none',
    where: 'src/workflows/batch/batch.ts',
    deleteWhen: NO_OLDER_BATCH,
  },
  batchLiveness: {
    id: 'batch-liveness',
    keeps: 'a batch recorded before the liveness check of granted jobs runs none',
    where: 'src/workflows/batch/batch.ts',
    deleteWhen: NO_OLDER_BATCH,
  },
  batchGrantsFitRun: {
    id: 'batch-grants-fit-run',
    keeps: "a batch recorded before grants were fitted to the run's history room grants without that bound",
    where: 'src/workflows/batch/batch.ts',
    deleteWhen: NO_OLDER_BATCH,
  },
} as const satisfies Record<string, CompatBranch & { id: string }>;

/** Versions of state carried across continue-as-new, each reading every older one it lists. */
export const SCHEMA_VERSIONS = {
  carriedSessionState: {
    current: 3,
    reads: [1, 2, 3],
    keeps:
      'a session carried by a worker before turn records (version 1) or before the fields were grouped (version 2) is migrated on its next run, one version at a time',
    where: 'migrateCarriedState in src/workflows/session/state.ts',
    deleteWhen:
      'no open session was last carried by a worker writing version 1 (then drop fromVersion1) or version 2 (then drop fromVersion2 and the flat shape)',
  },
  batchCarried: {
    current: 1,
    reads: [1],
    keeps: 'one version so far; a new shape adds a migration here',
    where: 'BatchCarried in src/shared/batch.ts',
    deleteWhen: 'never: the version field stays',
  },
} as const satisfies Record<string, CompatBranch & { current: number; reads: readonly number[] }>;

/** Branches for workers or clients of an earlier version running beside this one (a rolling deploy). */
export const OLDER_PEERS: readonly CompatBranch[] = [
  {
    keeps: 'a model worker older than outputFormat sends no verdict: its reply counts as a mismatch (UNCHECKED_OUTPUT)',
    where: 'src/workflows/session/turn.ts',
    deleteWhen: 'no model worker older than outputFormat can still be deployed beside a newer workflow worker',
  },
  {
    keeps: 'model workers older than the fleet share signal blocks and query them instead of the sync update',
    where: 'blockSignal and blockQuery in src/workflows/rate-limit/rate-limit.ts',
    deleteWhen: 'no model worker older than the sync update runs',
  },
  {
    keeps: "a job's spend is absent from batch reports of workers older than batch budgets",
    where: 'BatchCarried in src/shared/batch.ts',
    deleteWhen: 'no batch started before batch budgets is still open',
  },
  {
    keeps: 'runs recorded before turn marks and checkpoints have no such query: the transcript goes without them',
    where: 'src/activities/transcript.ts',
    deleteWhen: 'no session recorded before turn marks is still read',
  },
];
