/**
 * `durable-agent cleanup`: removes the workspaces of finished sessions on this tools host
 * (docs/ARCHITECTURE.md#workspaces). A session counts as running while its workflow's latest run
 * is RUNNING; one whose state cannot be learned is kept.
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import { cleanupWorkspaces } from '../activities/workspace/cleanup';
import { workspacesRoot } from '../activities/workspace/layout';
import { EXIT, err, out, parse, printJson, UsageError, withClient } from './args';
import type { DurableAgentClient } from '../client/client';

const CLEANUP_USAGE = `usage: durable-agent cleanup --older-than DURATION [--root DIR] [--json]
  Run on a tools host: removes the folders (and the patches and metadata kept beside them) of
  sessions that are not running and were last touched longer ago than DURATION (e.g. 7d, 12h, 30m),
  and temp folders crashed provisioning left over an hour ago. Mirrors are kept. A running
  session's folder is never removed.
  --root DIR   the workspaces root (default: DURABLE_AGENT_WORKSPACES, else
               \${XDG_CACHE_HOME:-~/.cache}/durable-agent/workspaces)
  --json       the report as one JSON object`;

const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `7d`, `12h`, `30m`, `45s` → milliseconds; anything else is refused naming the flag. */
export function parseDuration(s: string | undefined, flag: string): number {
  const m = /^(\d+)([smhd])$/.exec(s?.trim() ?? '');
  if (!m) throw new UsageError(`--${flag}: expected a duration like 7d, 12h or 30m, got '${s ?? ''}'`);
  return Number(m[1]) * UNIT_MS[m[2]!]!;
}

/** What cleanup asks the server of each session before removing its folder; an error keeps the folder. */
export function sessionIsRunning(c: DurableAgentClient): (sessionId: string) => Promise<boolean> {
  return async (sessionId) => {
    try {
      return (await c.client.workflow.getHandle(sessionId).describe()).status.name === 'RUNNING';
    } catch (e) {
      // Gone from the server (past retention): certainly not running.
      if (e instanceof WorkflowNotFoundError) return false;
      throw e;
    }
  };
}

export async function cleanupCommand(argv: string[]): Promise<number> {
  const { values: v, positionals } = parse(
    argv,
    { 'older-than': { type: 'string' }, root: { type: 'string' }, json: { type: 'boolean' } },
    CLEANUP_USAGE,
  );
  if (v.help) return (out(CLEANUP_USAGE), EXIT.ok);
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'\n\n${CLEANUP_USAGE}`);
  if (v['older-than'] === undefined) throw new UsageError(`--older-than: required\n\n${CLEANUP_USAGE}`);
  const olderThanMs = parseDuration(v['older-than'], 'older-than');
  const root = v.root ?? workspacesRoot(process.env);
  const report = await withClient((c) =>
    cleanupWorkspaces({
      root,
      olderThanMs,
      isRunning: sessionIsRunning(c),
    }),
  );
  if (v.json) printJson(report);
  else {
    for (const r of report.removed) out(`removed ${r.path} (${r.sessionId})`);
    for (const t of report.tempRemoved) out(`removed ${t} (left by a crashed provisioning)`);
    if (report.keptRunning.length) out(`kept ${report.keptRunning.length} running session(s)`);
    for (const k of report.keptUnknown) err(`kept ${k.sessionId}: its state could not be read (${k.error})`);
    if (!report.removed.length && !report.tempRemoved.length) out(`nothing to remove under ${root}`);
  }
  return EXIT.ok;
}
