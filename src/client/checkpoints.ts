/**
 * The client side of workspace checkpoints (ARCHITECTURE.md#checkpoints): which turns of a session
 * can be forked at or diffed, the options of a fork at turn N, and the checkpoint list as `show`
 * prints it. Pure functions of the `checkpoints` query's answer, so they test without a server.
 */
import { checkpointAtOrBefore, type CheckpointRecord, type CheckpointsView } from '../shared/checkpoint';
import type { SessionOptions } from '../shared/config';

/** A turn that cannot be chosen, or a session without checkpoints: bad input (the CLI exits 2). */
export class CheckpointChoiceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CheckpointChoiceError';
  }
}

/** The turns of a session that have a checkpoint at or before them: [first checkpoint's turn, turns]. */
export function checkpointedTurns(view: CheckpointsView | null | undefined): { first: number; last: number } | undefined {
  if (!view || view.checkpoints.length === 0) return undefined;
  return { first: Math.min(...view.checkpoints.map((c) => c.turn)), last: view.turns };
}

/** Checkpoints in turn order (the query's order is the workflow's, which should be the same). */
function byTurn(list: CheckpointRecord[]): CheckpointRecord[] {
  return [...list].sort((a, b) => a.turn - b.turn);
}

const range = (lo: number, hi: number) => (lo === hi ? `${lo}` : `${lo}–${hi}`);
const turnsWord = (lo: number, hi: number) => `${lo === hi ? 'turn' : 'turns'} ${range(lo, hi)}`;

function noCheckpoints(sessionId: string, instead: string): CheckpointChoiceError {
  return new CheckpointChoiceError(
    `${sessionId} has no checkpoints (it was started with checkpoints off, or before durable-agent recorded them): ${instead}`,
  );
}

/** `raw` as a turn number, or undefined when it is not a whole number ≥ 0. */
function turnNumber(raw: string | number): number | undefined {
  const n = typeof raw === 'number' ? raw : raw.trim() === '' ? NaN : Number(raw);
  return Number.isInteger(n) && n >= 0 ? n : undefined;
}

export interface ForkPoint {
  /** The turn the fork's transcript ends at (`resumeAtTurn`). */
  turn: number;
  /** The files: the latest checkpoint at or before `turn`. */
  checkpoint: CheckpointRecord;
}

/**
 * The fork point for `fork ID --at N` (or `resumeSessionAt`, labelled `what`): N must be a whole
 * number from the first checkpoint's turn to the session's last turn, and not before the turn its
 * transcript was compacted at. Otherwise a CheckpointChoiceError naming the range.
 */
export function forkPoint(view: CheckpointsView | null | undefined, sessionId: string, what: string, raw: string | number): ForkPoint {
  const turns = checkpointedTurns(view);
  if (!turns)
    throw noCheckpoints(sessionId, `it cannot be forked at a turn (durable-agent resume ${sessionId} --fork continues from its end)`);
  const compacted = view!.compactedAtTurn;
  const lo = Math.max(turns.first, compacted ?? turns.first);
  const has = `${sessionId} has ${turnsWord(turns.first, turns.last)} with checkpoints`;
  const why = compacted !== undefined && compacted > turns.first ? `, and its transcript before turn ${compacted} was compacted away` : '';
  if (lo > turns.last) throw new CheckpointChoiceError(`${what}: ${has}${why}: there is no turn to fork at`);
  const n = turnNumber(raw);
  if (n === undefined || n < lo || n > turns.last) {
    throw new CheckpointChoiceError(`${what}: ${has}${why}; choose a turn in ${range(lo, turns.last)}`);
  }
  return { turn: n, checkpoint: checkpointAtOrBefore(view!.checkpoints, n)! };
}

/**
 * What a fork at `point` adds to the resumed session's options: the transcript up to that turn,
 * and a workspace restored from the checkpoint. No `cwd`: the workspace is the fork's folder.
 */
export function forkAtOptions(
  sessionId: string,
  point: ForkPoint,
): Required<Pick<SessionOptions, 'resume' | 'forkSession' | 'resumeAtTurn' | 'workspace'>> {
  const c = point.checkpoint;
  return {
    resume: sessionId,
    forkSession: true,
    resumeAtTurn: point.turn,
    workspace: { checkpoint: { session: sessionId, turn: c.turn, commit: c.commit, ref: c.ref } },
  };
}

export interface DiffEnds {
  from: { turn: number; checkpoint: CheckpointRecord };
  to: { turn: number; checkpoint: CheckpointRecord };
}

/**
 * The two checkpoints `diff ID --from N --to M` compares: the latest at or before each. N defaults
 * to the first checkpoint (turn 0, the folder as found), M to the latest. Each must be a whole
 * number from the first checkpoint's turn to the session's last turn.
 */
export function diffEnds(view: CheckpointsView | null | undefined, sessionId: string, from?: string, to?: string): DiffEnds {
  const turns = checkpointedTurns(view);
  if (!turns) throw noCheckpoints(sessionId, `durable-agent diff ${sessionId} (without --from/--to) prints its whole patch`);
  const list = byTurn(view!.checkpoints);
  const end = (flag: 'from' | 'to', raw: string | undefined, dflt: CheckpointRecord) => {
    if (raw === undefined) return { turn: dflt.turn, checkpoint: dflt };
    const n = turnNumber(raw);
    if (n === undefined || n < turns.first || n > turns.last) {
      const r = range(turns.first, turns.last);
      const has = turnsWord(turns.first, turns.last);
      throw new CheckpointChoiceError(`--${flag} ${raw}: ${sessionId} has ${has} with checkpoints; choose a turn in ${r}`);
    }
    return { turn: n, checkpoint: checkpointAtOrBefore(list, n)! };
  };
  return { from: end('from', from, list[0]!), to: end('to', to, list.at(-1)!) };
}

const PUSHED: Record<CheckpointRecord['pushed'], string> = {
  remote: 'pushed',
  local: 'local only (no checkpoint remote)',
  failed: 'push failed',
};

/** `show`'s checkpoint lines: one per checkpoint by turn, and why checkpointing fails, if it does. */
export function renderCheckpoints(view: CheckpointsView | null | undefined, sessionId: string): string[] {
  if (!view) return [];
  const lines: string[] = [];
  if (view.checkpoints.length) {
    lines.push(`checkpoints (durable-agent fork ${sessionId} --at N; durable-agent diff ${sessionId} --from N --to M):`);
    const list = byTurn(view.checkpoints);
    const width = String(list.at(-1)!.turn).length;
    for (const c of list) lines.push(`  turn ${String(c.turn).padStart(width)}  ${c.commit.slice(0, 12)}  ${PUSHED[c.pushed]}`);
  }
  if (view.failing) lines.push(`checkpointing is failing: ${view.failing}`);
  return lines;
}
