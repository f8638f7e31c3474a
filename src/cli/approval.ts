/** `durable-agent approve` / `deny`: answer a tool call that waits for a person (ARCHITECTURE.md#durable-approval). */
import type { PendingPermission, PermissionAnswer } from '../shared/approvals';
import { EXIT, out, parse, UsageError, withClient } from './args';
import { describeInput, visible, visibleDeep } from './render';

const APPROVE_USAGE = `usage: durable-agent approve SESSION [REQUEST] [--always]
  Let a tool call that waits for approval run, once. REQUEST (perm-N, shown by watch) may be left
  out when exactly one request is pending.
  --always   also allow calls like it for the rest of the session (adds the request's suggested rules)`;

const DENY_USAGE = `usage: durable-agent deny SESSION [REQUEST] [--message TEXT] [--interrupt]
  Refuse a tool call that waits for approval; the model gets TEXT as the tool's error result.
  --message TEXT   what the model is told (default: "The user denied this tool call.")
  --interrupt      also stop the current turn`;

export async function approvalCommand(command: 'approve' | 'deny', argv: string[]): Promise<number> {
  const usage = command === 'approve' ? APPROVE_USAGE : DENY_USAGE;
  const { values: v, positionals } = parse(
    argv,
    { always: { type: 'boolean' }, message: { type: 'string' }, interrupt: { type: 'boolean' } },
    usage,
  );
  if (v.help) return (out(usage), EXIT.ok);
  const misplaced =
    command === 'approve'
      ? v.message !== undefined
        ? '--message'
        : v.interrupt
          ? '--interrupt'
          : undefined
      : v.always
        ? '--always'
        : undefined;
  if (misplaced) throw new UsageError(`${misplaced} does not apply to ${command}\n\n${usage}`);
  if (v.message !== undefined && !v.message.trim()) throw new UsageError('--message: expected some text for the model');
  const [sessionId, named, ...extra] = positionals;
  if (!sessionId || extra.length) throw new UsageError(usage);
  return withClient(async (c) => {
    const session = await c.get(sessionId);
    const request = pick(sessionId, named, await session.pendingPermissions());
    const answer: PermissionAnswer =
      command === 'approve'
        ? { requestId: request.requestId, behavior: 'allow', ...(v.always ? { always: true } : {}) }
        : {
            requestId: request.requestId,
            behavior: 'deny',
            ...(v.message !== undefined ? { message: v.message } : {}),
            ...(v.interrupt ? { interrupt: true } : {}),
          };
    // A second client answering in between makes the update refuse this one by name (exit 2).
    const r = await session.respond(answer);
    out(`${command === 'approve' ? 'approved' : 'denied'} ${request.requestId}: ${line(request)}`);
    if (r.rulesAdded.length) out(`allowed from now on in this session: ${r.rulesAdded.join(', ')}`);
    return EXIT.ok;
  });
}

/** Model-written text, escaped: a request must look like what it is on a terminal. */
function line(p: PendingPermission): string {
  return `${visible(p.toolName)}(${describeInput(visibleDeep(p.input))})`;
}

/** The request to answer: the one named, or the only one pending. Bad input (exit 2) otherwise. */
function pick(sessionId: string, named: string | undefined, pending: PendingPermission[]): PendingPermission {
  const list = () => pending.map((p) => `  ${visible(p.requestId)}  ${line(p)}  — ${visible(p.message)}`).join('\n');
  if (named !== undefined) {
    const found = pending.find((p) => p.requestId === named);
    if (found) return found;
    throw new UsageError(
      pending.length
        ? `no pending permission request ${named} for session ${sessionId}; pending:\n${list()}`
        : `no pending permission request ${named} for session ${sessionId} (none is pending; it may have been answered already)`,
    );
  }
  if (pending.length === 0) throw new UsageError(`no pending permission request for session ${sessionId}`);
  if (pending.length > 1)
    throw new UsageError(`session ${sessionId} has ${pending.length} pending permission requests; name one:\n${list()}`);
  return pending[0]!;
}
