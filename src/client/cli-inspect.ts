/** The CLI's commands that read one session's outcome: info (its facts) and diff (its patch). */
import { WorkflowNotFoundError } from '@temporalio/client';
import { EXIT, out, parse, printJson, usd, UsageError, withClient } from './cli-args';
import { SessionNotFoundError } from './client';
import { NoPatchError, sessionPatch } from './patch';
import { sessionInfo, type SessionInfo } from './session-info';

export const INFO_USAGE = `usage: durable-agent info ID [--json]
  One session's facts: id, status, cwd, model, workspace (path, host, base, diffStat; not the
  patch: durable-agent diff ID), verdict, verify, costUsd, turns, durationMs, error. --json: one
  object, for scripts; fields a session does not have (yet) are null.`;

export const DIFF_USAGE = `usage: durable-agent diff ID
  Print what the agent changed in the session's workspace, as a patch against its base commit
  (git apply takes it). Only for a session started with a workspace, once it has ended.`;

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
export function renderInfo(i: SessionInfo): string[] {
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
  const { values: v, positionals } = parse(argv, {}, DIFF_USAGE);
  if (v.help) return (out(DIFF_USAGE), EXIT.ok);
  if (positionals.length !== 1) throw new UsageError(DIFF_USAGE);
  const id = positionals[0]!;
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
