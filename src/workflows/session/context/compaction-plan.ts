/**
 * Compaction: replace the older part of the transcript with a summary, keeping the most recent
 * turns verbatim. The split never separates a `tool_use` from its `tool_result` (the provider
 * rejects an orphan either way), and the result is a valid chat transcript. Pure.
 */
import type { ContentBlock, Message } from '../../../shared/messages';
import { estimateMessageTokens } from './token-accounting';
import { CONTINUATION_PREFIX, cutTaskText, originalRequestText } from '../../../shared/model-texts';

/** The original task is re-attached verbatim up to this length; the summary covers the rest. */
export const MAX_TASK_CHARS = 20_000;

export interface CompactionPlan {
  /** Summarize messages [0, summarizeUpTo). */
  summarizeUpTo: number;
  /** messages[summarizeUpTo..], kept verbatim. */
  keep: Message[];
}

export interface PlanOptions {
  /** Keep this many model turns (assistant message + its tool results) verbatim. Default 4 when neither option is set. */
  keepRecentTurns?: number;
  /** Keep at most this many estimated tokens verbatim. When both are set, whichever keeps less wins. */
  keepRecentTokens?: number;
}

/**
 * Where to split, or null when nothing worth summarizing lies before the kept part (no
 * assistant message). The first user message (the task) is always on the summarized side: it
 * is the summarizer's most important input, and `applyCompaction` can re-attach it verbatim.
 */
export function planCompaction(messages: readonly Message[], opts: PlanOptions = {}): CompactionPlan | null {
  const n = messages.length;
  const turns = opts.keepRecentTurns ?? (opts.keepRecentTokens === undefined ? 4 : undefined);
  let target = 1;
  if (turns !== undefined) target = Math.max(target, turnsStart(messages, turns));
  if (opts.keepRecentTokens !== undefined) target = Math.max(target, tokensStart(messages, opts.keepRecentTokens));

  const valid = splitPoints(messages);
  let k = target;
  while (k < n && !valid[k]) k++;
  if (!messages.slice(0, k).some((m) => m.role === 'assistant')) return null;
  return { summarizeUpTo: k, keep: messages.slice(k) };
}

/**
 * The compacted transcript: one user message with the summary (and the original task, when
 * given), then every message from `plan.summarizeUpTo` on — including any appended since the
 * plan was made. A kept part that starts with a user message is merged into the summary
 * message, so roles still alternate.
 */
export function applyCompaction(
  messages: readonly Message[],
  summaryText: string,
  plan: Pick<CompactionPlan, 'summarizeUpTo'>,
  opts: { task?: string } = {},
): Message[] {
  let text = CONTINUATION_PREFIX + summaryText.trim();
  if (opts.task) {
    const task = opts.task.length > MAX_TASK_CHARS ? cutTaskText(opts.task, MAX_TASK_CHARS) : opts.task;
    text += originalRequestText(task);
  }
  const keep = messages.slice(plan.summarizeUpTo);
  const first = keep[0];
  if (first?.role === 'user') {
    return [{ role: 'user', content: [{ type: 'text', text }, ...blocksOf(first)] }, ...keep.slice(1)];
  }
  return [{ role: 'user', content: text }, ...keep];
}

/**
 * The first reason `messages` is not a valid chat transcript, or null: it must start with a user
 * message, roles must alternate, and each assistant `tool_use` must be answered by a
 * `tool_result` in the next message (the last message may still await its results), which
 * carries no other results.
 */
export function transcriptProblem(messages: readonly Message[]): string | null {
  if (messages.length === 0) return 'the transcript is empty';
  if (messages[0]!.role !== 'user') return 'the first message is not a user message';
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (i > 0 && messages[i - 1]!.role === m.role) return `messages ${i - 1} and ${i} are both ${m.role} messages`;
    const uses = new Set(idsOf(m, 'tool_use'));
    const results = idsOf(m, 'tool_result');
    if (m.role === 'user' && results.length) {
      const asked = i > 0 ? new Set(idsOf(messages[i - 1]!, 'tool_use')) : new Set<string>();
      const orphan = results.find((id) => !asked.has(id));
      if (orphan) return `message ${i} has a tool_result (${orphan}) with no tool_use in the message before it`;
    }
    if (m.role === 'assistant' && uses.size && i + 1 < messages.length) {
      const answered = new Set(idsOf(messages[i + 1]!, 'tool_result'));
      const missing = [...uses].find((id) => !answered.has(id));
      if (missing) return `message ${i} has a tool_use (${missing}) with no tool_result in the next message`;
    }
  }
  return null;
}

/** Index of the `turns`-th last assistant message, pulling in the user's text message before it. */
function turnsStart(messages: readonly Message[], turns: number): number {
  if (turns <= 0) return messages.length;
  let seen = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role !== 'assistant') continue;
    if (++seen < turns) continue;
    // The instruction that started this turn belongs with it.
    const before = messages[i - 1];
    return i >= 2 && before && before.role === 'user' && idsOf(before, 'tool_result').length === 0 ? i - 1 : i;
  }
  return 0;
}

/** The smallest index from which the rest fits in `maxTokens`. */
function tokensStart(messages: readonly Message[], maxTokens: number): number {
  let sum = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    sum += estimateMessageTokens(messages[i]!);
    if (sum > maxTokens) return i + 1;
  }
  return 0;
}

/**
 * valid[k]: the transcript may be cut before message k. Not before a user message carrying tool
 * results, and not anywhere between a tool_use and its result (or before a result whose
 * tool_use is missing: it goes to the summary).
 */
function splitPoints(messages: readonly Message[]): boolean[] {
  const n = messages.length;
  const valid = new Array<boolean>(n + 1).fill(true);
  valid[0] = false;
  const useAt = new Map<string, number>();
  messages.forEach((m, j) => {
    for (const id of idsOf(m, 'tool_use')) useAt.set(id, j);
    for (const id of idsOf(m, 'tool_result')) {
      const i = useAt.get(id) ?? -1;
      for (let k = Math.max(1, i + 1); k <= j; k++) valid[k] = false;
    }
  });
  return valid;
}

function idsOf(m: Message, type: 'tool_use' | 'tool_result'): string[] {
  if (typeof m.content === 'string') return [];
  const ids: string[] = [];
  for (const b of m.content) {
    if (type === 'tool_use' && b.type === 'tool_use') ids.push(b.id);
    if (type === 'tool_result' && b.type === 'tool_result') ids.push(b.tool_use_id);
  }
  return ids;
}

function blocksOf(m: Message): ContentBlock[] {
  return typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
}
