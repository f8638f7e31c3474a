/**
 * A session's patch (ARCHITECTURE.md#workspaces): what the agent changed in its workspace. Up to
 * MAX_INLINE_PATCH_BYTES it is in the result (`workspace.patch`); a larger one is in the session's
 * history as the results of its `readPatchPart` activities (`workspace.patchParts` of them), which
 * any client that can read the history can put back together — a remote one included.
 */
import type { Client } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import type { temporal } from '@temporalio/proto';
import type { ResultMessage } from '../shared/events';

/** Why a session has no patch to print: `no-workspace` and `running` are the caller's mistake; the others are not. */
export class NoPatchError extends Error {
  constructor(
    message: string,
    readonly reason: 'no-workspace' | 'running' | 'truncated' | 'no-diff' | 'parts-missing',
  ) {
    super(message);
    this.name = 'NoPatchError';
  }
}

export interface PatchPart {
  /** The `part` the activity was asked for. */
  part: number;
  /** What it returned. */
  value: unknown;
}

/**
 * The patch from its parts, in part order, whatever order the history holds them in (and once
 * each: a part read twice counts once). Throws NoPatchError unless exactly `expected` consecutive
 * parts are there. Each part is base64 of the patch file's bytes [part × PATCH_PART_BYTES, +PATCH_PART_BYTES)
 * (`readPatchPart`, src/shared/workspace.ts): joined as bytes first, as a character may straddle
 * two parts, then read as UTF-8.
 */
export function reassemblePatch(parts: PatchPart[], expected: number): string {
  const byPart = new Map<number, unknown>();
  for (const p of parts) if (!byPart.has(p.part)) byPart.set(p.part, p.value);
  const order = [...byPart.keys()].sort((a, b) => a - b);
  const contiguous = order.every((n, i) => i === 0 || n === order[i - 1]! + 1);
  if (order.length !== expected || !contiguous) {
    throw new NoPatchError(
      `the session's history holds ${order.length} of the patch's ${expected} parts${contiguous ? '' : ` (parts ${order.join(', ')})`}`,
      'parts-missing',
    );
  }
  return Buffer.concat(
    order.map((n) => {
      const v = byPart.get(n);
      if (typeof v !== 'string') throw new NoPatchError(`patch part ${n} is not text (${typeof v})`, 'parts-missing');
      return Buffer.from(v, 'base64');
    }),
  ).toString('utf8');
}

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
type Payloads = temporal.api.common.v1.IPayload[];

/** The `readPatchPart` results in a history: each completed activity's part number (from its input) and result. */
export async function patchPartsIn(
  events: HistoryEvent[],
  decode: (payloads: Payloads) => Promise<unknown>,
  activityType = 'readPatchPart',
): Promise<PatchPart[]> {
  const scheduled = new Map<string, Payloads>();
  for (const e of events) {
    const s = e.activityTaskScheduledEventAttributes;
    if (s?.activityType?.name === activityType) scheduled.set(String(e.eventId), s.input?.payloads ?? []);
  }
  const parts: PatchPart[] = [];
  for (const e of events) {
    const c = e.activityTaskCompletedEventAttributes;
    const input = c ? scheduled.get(String(c.scheduledEventId)) : undefined;
    if (!c || !input) continue;
    const arg = (await decode(input)) as { part?: unknown } | undefined;
    if (typeof arg?.part !== 'number') continue;
    parts.push({ part: arg.part, value: await decode(c.result?.payloads ?? []) });
  }
  return parts;
}

/**
 * The patch of a session that has ended with `result`: inline, or put back together from the
 * history of its latest run (decoded with the client's data converter, codecs included).
 */
export async function sessionPatch(client: Client, sessionId: string, result: ResultMessage): Promise<string> {
  const w = result.workspace;
  if (!w) {
    const why = result.is_error && result.errors?.length ? ` (it ended with: ${result.errors.join('; ')})` : '';
    throw new NoPatchError(
      `session ${sessionId} has no workspace: it was not started with one, or it was never made${why}`,
      'no-workspace',
    );
  }
  if (w.patch !== undefined) return w.patch;
  if (w.patchParts !== undefined) {
    const history = await client.workflow.getHandle(sessionId).fetchHistory();
    const converter = client.options.loadedDataConverter;
    const parts = await patchPartsIn(history.events ?? [], (payloads) =>
      payloads.length ? decodeFromPayloadsAtIndex(converter, 0, payloads) : Promise.resolve(undefined),
    );
    return reassemblePatch(parts, w.patchParts);
  }
  const where = w.patchFile ? ` at ${w.patchFile}` : '';
  if (w.patchTruncated) {
    throw new NoPatchError(
      `session ${sessionId}'s patch (${w.patchBytes ?? '?'} bytes) is too large to keep in its history; it is on ${w.host}${where}`,
      'truncated',
    );
  }
  throw new NoPatchError(`session ${sessionId}'s change could not be taken${w.diffError ? `: ${w.diffError}` : ''}`, 'no-diff');
}
