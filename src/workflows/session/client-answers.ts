/**
 * A request the workflow puts to its client (a callback hook, a client MCP tool) and waits for
 * durably (ARCHITECTURE.md#callback-hooks): the answer arrives by update into `answers`; waiting
 * ends with it or at `timeoutMs`, and either way — also when the turn is cancelled — the request
 * leaves `pending` and its answer is taken out of state.
 */
import { condition } from '@temporalio/workflow';

export interface ClientRequests<A> {
  pending: { requestId: string }[];
  answers: Record<string, A>;
}

/** The answer to request `id`, or undefined when none came within `timeoutMs`. */
export async function awaitClientAnswer<A>(requests: ClientRequests<A>, id: string, timeoutMs: number): Promise<A | undefined> {
  let answer: A | undefined;
  try {
    await condition(() => requests.answers[id] !== undefined, timeoutMs);
  } finally {
    answer = requests.answers[id];
    delete requests.answers[id];
    const at = requests.pending.findIndex((p) => p.requestId === id);
    if (at !== -1) requests.pending.splice(at, 1);
  }
  return answer;
}
