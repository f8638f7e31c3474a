/**
 * Context accounting: how full the model's window is before the next call. The provider's own
 * count of the last prompt is exact; only what was appended since is estimated (chars / 4), so
 * the estimate's error stays small however long the session runs. Pure.
 */
import type { CompactionConfig } from '../../../shared/compaction-config';
import type { ContentBlock, Message, Usage } from '../../../shared/messages';
import { contextWindowOf } from '../../../shared/context-windows';

/** Estimated tokens of a text: one token per 4 characters, rounded up. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

export function estimateBlockTokens(block: ContentBlock): number {
  switch (block.type) {
    case 'text':
      return estimateTokens(block.text);
    case 'thinking':
      return estimateTokens(block.thinking);
    case 'tool_use':
      // What the provider sees: the name and the arguments as JSON (or the raw text it sent).
      return estimateTokens(block.name) + estimateTokens(block.raw_input ?? JSON.stringify(block.input ?? {}));
    case 'tool_result':
      return estimateTokens(block.content);
  }
}

export function estimateMessageTokens(message: Message): number {
  if (typeof message.content === 'string') return estimateTokens(message.content);
  let sum = 0;
  for (const b of message.content) sum += estimateBlockTokens(b);
  return sum;
}

export function estimateMessagesTokens(messages: readonly Message[]): number {
  let sum = 0;
  for (const m of messages) sum += estimateMessageTokens(m);
  return sum;
}

/** Prompt tokens the provider reported for one call (our `input_tokens` excludes cached ones). */
export function promptTokensOf(usage: Usage): number {
  return usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
}

export interface ContextUsageInput {
  /** Prompt tokens of the last model call (`promptTokensOf(reply.usage)`). */
  lastPromptTokens: number;
  /** How many messages that prompt held (its `upTo`); 0 when no call has been measured since the transcript was (re)built. */
  lastPromptMessageCount: number;
  messages: readonly Message[];
  /**
   * System prompt and tool specs, estimated; asked for only when nothing has been measured yet
   * (estimating the tool specs means serializing them, which every turn would otherwise pay).
   */
  fixedTokens?: () => number;
}

/**
 * Estimated prompt tokens of the next call: the last measured prompt plus what was appended
 * since. Unmeasured (count 0, or a count beyond the transcript — it was compacted since): the
 * whole transcript is estimated, plus `fixedTokens`.
 */
export function contextUsage(input: ContextUsageInput): number {
  const { lastPromptTokens, lastPromptMessageCount: count, messages } = input;
  if (count <= 0 || count > messages.length) return (input.fixedTokens?.() ?? 0) + estimateMessagesTokens(messages);
  return lastPromptTokens + estimateMessagesTokens(messages.slice(count));
}

export function shouldCompact(tokens: number, contextWindow: number, threshold = 0.8): boolean {
  return tokens >= contextWindow * threshold;
}

/**
 * The window to account against: the session's override, else what the worker's pricing table
 * said in the last reply for this model (an operator's pricing file may know models we do not),
 * else our table, else the default.
 */
export function contextWindowFor(opts: { model: string; override?: number; lastReply?: { model: string; contextWindow: number } }): number {
  if (opts.override) return opts.override;
  if (opts.lastReply && opts.lastReply.model === opts.model) return opts.lastReply.contextWindow;
  return contextWindowOf(opts.model);
}

/** Compaction settings with every default filled in. */
export interface ResolvedCompaction {
  enabled: boolean;
  contextWindow: number;
  threshold: number;
  keepRecentTurns: number;
  keepRecentTokens: number;
  /** 0: trimming is off. */
  toolResultBudgetChars: number;
  keepRecentToolResultTurns: number;
}

/**
 * Every default filled in for the current model. `lastReply`: the last `AssistantReply`
 * (its `model` and `contextWindow`), if any.
 */
export function resolveCompaction(
  cfg: CompactionConfig,
  opts: { model: string; lastReply?: { model: string; contextWindow: number } },
): ResolvedCompaction {
  const window = contextWindowFor({ ...opts, override: cfg.contextWindow });
  return {
    enabled: cfg.enabled,
    contextWindow: window,
    threshold: cfg.threshold,
    keepRecentTurns: cfg.keepRecentTurns,
    keepRecentTokens: cfg.keepRecentTokens ?? Math.floor(window / 4),
    toolResultBudgetChars: cfg.toolResultBudgetChars ?? Math.floor(window * 4 * 0.4),
    keepRecentToolResultTurns: cfg.keepRecentToolResultTurns,
  };
}
