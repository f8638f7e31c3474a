/** The CLI's commands that read one session's outcome: info (its facts) and diff (its patch, or a checkpoint's change). */
import { WorkflowNotFoundError } from '@temporalio/client';
import { CHECKPOINT_REMOTE_ENV } from '../shared/checkpoint';
import { EXIT, err, out, parse, printJson, usd, UsageError, withClient } from './args';
import { SessionNotFoundError } from '../client/client';
import { checkpointPatch, findCheckpoints } from './checkpoint-diff';
import { diffEnds } from '../client/checkpoints';
import { NoPatchError, sessionPatch } from '../client/patch';
import { sessionInfo, type SessionInfo } from './session-info';

const INFO_USAGE = `usage: durable-agent info ID [--json]
  One session's facts: id, status, cwd, model, workspace (path, host, base, diffStat; not the
  patch: durable-agent diff ID), verdict, verify, costUsd, turns, durationMs, error, checkpoints
  (turn, commit, ref, pushed) and checkpointsFailing. --json: one object, for scripts; fields a
  session does not have (yet) are null.`;

const DIFF_USAGE = `usage: durable-agent diff ID [--from N] [--to M] [--stat]
  Print what the agent changed in the session's workspace, as a patch against its base commit
  (git apply takes it). Only for a session started with a workspace, once it has ended.
  --from N --to M: the change between the checkpoints of turns N and M (each the latest at or
  before that turn; default: turn 0, the folder as found, and the latest), running or not, with
  or without a workspace; durable-agent show ID lists them. --stat: a summary instead of the patch.
  git runs here: the commits are read from this tools host's checkpoint repository or fetched
  from ${CHECKPOINT_REMOTE_ENV}.`;

async function infoOf(c: Parameters<Parameters<typeof withClient>[0]>[0], id: string) {
  try {
    return await sessionInfo(c.client, id);
  } catch (e) {
    if (e instanceof WorkflowNotFoundError) throw new SessionNotFoundError(id);
    throw e;
  }
}

export async function infoCommand(argv: string[]): Promise<number> {
  const { values: v, positionals } = parse(argv, { json: { type: 'boolean' } }, INFO_USAGE);
  if (v.help) return (out(INFO_USAGE), EXIT.ok);
  if (positionals.length !== 1) throw new UsageError(INFO_USAGE);
  return withClient(async (c) => {
    const { info } = await infoOf(c, positionals[0]!);
    if (v.json) printJson(info);
    else for (const line of renderInfo(info)) out(line);
    return EXIT.ok;
  });
}

/** `info` for people: a short block, a line per fact the session has. */
function renderInfo(i: SessionInfo): string[] {
  const lines = [
    `session   ${i.id}`,
    `status    ${i.status}${i.executionStatus === 'RUNNING' ? '' : ` (${i.executionStatus.toLowerCase()})`}`,
  ];
  if (i.model) lines.push(`model     ${i.model}`);
  if (i.batchId) lines.push(`batch     ${i.batchId}`);
  if (i.cwd) lines.push(`cwd       ${i.cwd}`);
  const w = i.workspace;
  if (w) {
    const from = 'git' in w.source && w.source.git ? `${w.source.git}${w.source.ref ? `#${w.source.ref}` : ''}` : (w.source.copy ?? '?');
    lines.push(`workspace ${from} at ${w.base.slice(0, 12)} on ${w.host}`);
    if (w.diffStat) {
      const d = w.diffStat;
      lines.push(
        `changed   ${d.filesChanged} file${d.filesChanged === 1 ? '' : 's'}, +${d.insertions} -${d.deletions} (durable-agent diff ${i.id})`,
      );
    } else if (w.diffError) lines.push(`changed   unknown: ${w.diffError}`);
  }
  if (i.verdict || i.verify) {
    const v = i.verify;
    const how = v
      ? ` (${v.exitCode === null ? 'did not finish' : `exit ${v.exitCode}`}, ${(v.durationMs / 1000).toFixed(1)}s: ${v.command})`
      : '';
    lines.push(`verdict   ${i.verdict ?? 'none'}${how}`);
  }
  const spent = [
    usd(i.costUsd ?? undefined),
    i.turns !== null ? `${i.turns} turns` : undefined,
    i.durationMs !== null ? `${(i.durationMs / 1000).toFixed(1)}s` : undefined,
  ];
  lines.push(`spent     ${spent.filter(Boolean).join(' · ')}`);
  if (i.error) lines.push(`error     ${i.error}`);
  return lines;
}

export async function diffCommand(argv: string[]): Promise<number> {
  const { values: v, positionals } = parse(
    argv,
    { from: { type: 'string' }, to: { type: 'string' }, stat: { type: 'boolean' } },
    DIFF_USAGE,
  );
  if (v.help) return (out(DIFF_USAGE), EXIT.ok);
  if (positionals.length !== 1) throw new UsageError(DIFF_USAGE);
  const id = positionals[0]!;
  if (v.from !== undefined || v.to !== undefined) return checkpointDiffCommand(id, v);
  if (v.stat) throw new UsageError(`--stat goes with --from/--to (the whole patch: durable-agent diff ${id} | git apply --stat)`);
  return withClient(async (c) => {
    const { info, result } = await infoOf(c, id);
    if (info.executionStatus === 'RUNNING') {
      throw new UsageError(`session ${id} is still running: its patch is taken when it ends (durable-agent watch ${id})`);
    }
    if (!result)
      throw new UsageError(`session ${id} ended without a result (${info.error ?? info.executionStatus.toLowerCase()}): no patch`);
    try {
      process.stdout.write(await sessionPatch(c.client, id, result));
    } catch (e) {
      // Asking for the patch of a session without a workspace is bad input (2); a patch that cannot be had is not (1).
      if (e instanceof NoPatchError && e.reason === 'no-workspace') throw new UsageError(e.message);
      throw e;
    }
    return EXIT.ok;
  });
}

/** `diff ID --from N --to M`: git diff between two checkpoints, taken on this machine. */
async function checkpointDiffCommand(id: string, v: { from?: string; to?: string; stat?: boolean }): Promise<number> {
  const ends = await withClient(async (c) => diffEnds(await (await c.get(id)).checkpoints(), id, v.from, v.to));
  const { from, to } = ends;
  const repo = await findCheckpoints([from.checkpoint, to.checkpoint], { sessionId: id });
  if (from.turn !== from.checkpoint.turn || to.turn !== to.checkpoint.turn) {
    err(`(turn ${from.turn} → checkpoint of turn ${from.checkpoint.turn}; turn ${to.turn} → checkpoint of turn ${to.checkpoint.turn})`);
  }
  process.stdout.write(await checkpointPatch(repo, from.checkpoint.commit, to.checkpoint.commit, { stat: Boolean(v.stat) }));
  return EXIT.ok;
}
