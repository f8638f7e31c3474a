/** `durable-agent stalled`: running sessions that are not progressing, and what each waits on (ARCHITECTURE.md#stalled-sessions). */
import { EXIT, num, out, parse, printJson, UsageError, withClient } from './args';
import { parseDuration } from './workspace';
import { findStalledSessions, renderStalled } from '../client/stalled';

const STALLED_USAGE = `usage: durable-agent stalled [--quiet-for 60s] [--batch ID] [--limit 1000] [--json]
  Running sessions whose history has recorded nothing for --quiet-for (s, m, h), and what each waits
  on: its pending workflow task (attempt, age, sticky queue), its pending activities (scheduled or
  running, attempt, retry backoff, last heartbeat, last worker), its history shard and the server
  node that owns it; then the task queues they wait on (pollers, backlog).
  --batch ID    only the sessions of this batch
  --limit N     look at no more than N running sessions (default 1000)
  --json        the whole report as one JSON object`;

export async function stalledCommand(argv: string[]): Promise<number> {
  const { values: v, positionals } = parse(
    argv,
    { 'quiet-for': { type: 'string' }, batch: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' } },
    STALLED_USAGE,
  );
  if (v.help) return (out(STALLED_USAGE), EXIT.ok);
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'\n\n${STALLED_USAGE}`);
  const quietForMs = v['quiet-for'] === undefined ? 60_000 : parseDuration(v['quiet-for'], 'quiet-for');
  const limit = num(v.limit, 'limit', { integer: true, min: 1 }) ?? 1000;
  return withClient(async (c) => {
    const report = await findStalledSessions(c.client, { quietForMs, limit, ...(v.batch ? { batchId: v.batch } : {}) });
    if (v.json) printJson(report);
    else for (const line of renderStalled(report)) out(line);
    return EXIT.ok;
  });
}
