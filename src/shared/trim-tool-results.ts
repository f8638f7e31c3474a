/**
 * Trimming old tool outputs: a cheaper relief than compaction. When the tool output held in the
 * transcript passes a budget, the oldest results are replaced by a placeholder that says what
 * was there and how to get it back. Trimming goes down to half the budget at once, so the
 * transcript's prefix changes rarely (each change costs the provider's prompt cache). Pure.
 */
import type { ContentBlock, Message, ToolResultBlock } from './messages';

const PLACEHOLDER_PREFIX = '[Old tool result trimmed to save context: ';

export function trimmedPlaceholder(chars: number, toolName: string): string {
  return `${PLACEHOLDER_PREFIX}${groupThousands(chars)} characters from ${toolName}. Run the tool again if you need it.]`;
}

export function isTrimmedPlaceholder(content: string): boolean {
  return content.startsWith(PLACEHOLDER_PREFIX);
}

export interface TrimOptions {
  /** Characters of tool output the transcript may hold (untrimmed results, recent ones included). */
  budgetChars: number;
  /** The results in this many most recent tool-result messages are never trimmed. */
  keepRecent: number;
  /** When over budget, trim down to this share of it (default 0.5). */
  lowWater?: number;
}

export interface TrimResult {
  messages: Message[];
  /** How many tool results were replaced. */
  trimmed: number;
  /** Characters removed (original lengths minus placeholder lengths). */
  savedChars: number;
}

/**
 * Replace the oldest tool results by placeholders while the transcript holds more than
 * `budgetChars` of tool output. Results no longer than their placeholder are left alone.
 * Does not mutate its input; returns the same array when nothing changes.
 */
export function trimOldToolResults(messages: Message[], opts: TrimOptions): TrimResult {
  const none: TrimResult = { messages, trimmed: 0, savedChars: 0 };
  let total = 0;
  for (const b of toolResults(messages)) if (!isTrimmedPlaceholder(b.content)) total += b.content.length;
  if (opts.budgetChars <= 0 || total <= opts.budgetChars) return none;

  const target = opts.budgetChars * (opts.lowWater ?? 0.5);
  const protectedFrom = recentResultsStart(messages, opts.keepRecent);
  const names = toolNames(messages);
  let trimmed = 0;
  let savedChars = 0;
  const out = messages.slice();
  for (let i = 0; i < protectedFrom && total > target; i++) {
    const m = out[i]!;
    if (m.role !== 'user' || typeof m.content === 'string') continue;
    let changed = false;
    const content: ContentBlock[] = m.content.map((b) => {
      if (b.type !== 'tool_result' || total <= target || isTrimmedPlaceholder(b.content)) return b;
      const placeholder = trimmedPlaceholder(b.content.length, names.get(b.tool_use_id) ?? 'a tool');
      if (b.content.length <= placeholder.length) return b;
      total -= b.content.length;
      savedChars += b.content.length - placeholder.length;
      trimmed++;
      changed = true;
      return { ...b, content: placeholder };
    });
    if (changed) out[i] = { ...m, content };
  }
  return trimmed ? { messages: out, trimmed, savedChars } : none;
}

/** Index of the first of the last `keep` messages that carry tool results (length if keep is 0). */
function recentResultsStart(messages: Message[], keep: number): number {
  let seen = 0;
  for (let i = messages.length - 1; i >= 0 && keep > 0; i--) {
    const c = messages[i]!.content;
    if (typeof c !== 'string' && c.some((b) => b.type === 'tool_result') && ++seen === keep) return i;
  }
  return keep > 0 ? 0 : messages.length;
}

function* toolResults(messages: Message[]): Generator<ToolResultBlock> {
  for (const m of messages) {
    if (typeof m.content === 'string') continue;
    for (const b of m.content) if (b.type === 'tool_result') yield b;
  }
}

function toolNames(messages: Message[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const m of messages) {
    if (typeof m.content === 'string') continue;
    for (const b of m.content) if (b.type === 'tool_use') names.set(b.id, b.name);
  }
  return names;
}

/** 12345 → "12,345", without Intl (its output depends on the host's locale data). */
function groupThousands(n: number): string {
  return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}
