/**
 * `summarize`: the model call behind compaction. Reads messages [from, upTo) through the
 * workflow's `prompt` query like `callModel` (ARCHITECTURE.md#transcript-by-reference), renders
 * them as one text transcript — tool calls included, so no `tools` need be sent and no provider
 * rejects a dangling tool call — and streams a summary back without tools.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ChatStreamClient } from './chat-stream';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { SummarizeInput, SummarizeResult } from '../../shared/activities';
import type { Message } from '../../shared/messages';
import { DEFAULT_CONTEXT_WINDOW, lookupPrice } from '../../shared/pricing';
import { streamModelCall, type ModelDeps, type RetryView } from './stream';

export const SUMMARY_SYSTEM_PROMPT = `You write the hand-over summary for a coding agent whose conversation has grown too long for its context window. The older part of the conversation will be replaced by your summary; the agent will see only the summary and the most recent messages, and must carry on the work without redoing it or asking the user again.

Write the summary under these headings:
1. Task — the user's original request and every later instruction, correction or preference, quoted verbatim.
2. Decisions — the approach chosen and why, constraints discovered, and approaches tried and abandoned (with the reason).
3. Files — every file read, created or modified: its exact path, what was changed, and its current state.
4. Errors and fixes — each error met (failed commands, failing tests, tool errors), its cause, and whether and how it was fixed.
5. Current state — what was being done when the conversation was cut, including the last commands run and their outcome.
6. Remaining work — what is still to do, in order, including how to verify it.

Be specific: keep exact paths, names, commands, error messages and values. Leave out anything that no longer matters. Reply with the summary only; do not call tools and do not continue the work.`;

export interface SummaryRequestOptions {
  /** Each tool result (and tool-call input) is cut to this many characters, head and tail. Default 4,000. */
  maxBlockChars?: number;
  /** The rendered conversation is cut to this many characters, oldest messages after the first dropped first. */
  maxInputChars?: number;
}

/** The chat messages `summarize` sends: our system prompt and the conversation as text. */
export function buildSummaryRequest(messages: Message[], opts: SummaryRequestOptions = {}): ChatCompletionMessageParam[] {
  const conversation = renderConversation(messages, opts);
  return [
    { role: 'system', content: SUMMARY_SYSTEM_PROMPT },
    {
      role: 'user',
      content: `The conversation so far:\n\n<conversation>\n${conversation}\n</conversation>\n\nWrite the summary now.`,
    },
  ];
}

/** One section per message; tool calls and results by name and id. */
export function renderConversation(messages: Message[], opts: SummaryRequestOptions = {}): string {
  const maxBlock = opts.maxBlockChars ?? 4_000;
  const names = new Map<string, string>();
  const sections = messages.map((m) => {
    if (typeof m.content === 'string') return `[${m.role}]\n${m.content}`;
    const lines: string[] = [`[${m.role}]`];
    for (const b of m.content) {
      if (b.type === 'text') lines.push(b.text);
      else if (b.type === 'tool_use') {
        names.set(b.id, b.name);
        lines.push(`[tool call ${b.name} ${b.id}] ${clip(b.raw_input ?? JSON.stringify(b.input ?? {}), maxBlock)}`);
      } else if (b.type === 'tool_result') {
        const name = names.get(b.tool_use_id) ?? 'tool';
        lines.push(`[tool result ${name} ${b.tool_use_id}${b.is_error ? ' (error)' : ''}]\n${clip(b.content, maxBlock)}`);
      }
      // Thinking blocks are left out: the decisions they led to are in the text and tool calls.
    }
    return lines.join('\n');
  });
  return fitSections(sections, opts.maxInputChars ?? Infinity).join('\n\n');
}

/** Keep the first section (the task) and as many of the latest as fit; say what was dropped. */
function fitSections(sections: string[], maxChars: number): string[] {
  const total = sections.reduce((n, s) => n + s.length + 2, 0);
  if (total <= maxChars || sections.length === 0) return sections;
  const head = clip(sections[0]!, Math.floor(maxChars / 4));
  let budget = maxChars - head.length;
  const tail: string[] = [];
  for (let i = sections.length - 1; i > 0; i--) {
    if (sections[i]!.length + 2 > budget) break;
    budget -= sections[i]!.length + 2;
    tail.unshift(sections[i]!);
  }
  const dropped = sections.length - 1 - tail.length;
  return [head, ...(dropped ? [`[… ${dropped} messages omitted to fit the summarizer's context …]`] : []), ...tail];
}

function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const half = Math.floor(max / 2);
  return `${text.slice(0, half)}\n[… ${text.length - 2 * half} characters omitted …]\n${text.slice(text.length - half)}`;
}

export async function summarize(client: ChatStreamClient, deps: ModelDeps, input: SummarizeInput): Promise<SummarizeResult> {
  const window = lookupPrice(input.model, deps.pricing)?.contextWindow ?? DEFAULT_CONTEXT_WINDOW;
  // 3 characters a token (code and JSON run denser than prose), leaving room for the reply.
  const maxInputChars = Math.max(20_000, (window - input.maxOutputTokens - 2_000) * 3);
  const r = await streamModelCall(client, deps, {
    prompt: { ...input, withTools: false },
    model: input.model,
    maxOutputTokens: input.maxOutputTokens,
    request: (prompt) => ({ messages: buildSummaryRequest(prompt.messages, { maxInputChars }) }),
    check: (reply) => {
      if (!reply.text.trim()) {
        throw ApplicationFailure.create({ message: 'the model returned an empty summary', type: 'ModelEmptySummary' });
      }
    },
    retry: retryOf(input) ?? retryPolicyOfThisActivity(),
    phases: { reading: 'reading transcript', waiting: 'summarizing' },
    name: 'summarize',
  });
  return {
    summary: r.text.trim(),
    truncated: r.finishReason === 'length',
    usage: r.usage,
    costUsd: r.costUsd,
    costBasis: r.costBasis,
    model: input.model,
    durationMs: r.durationMs,
  };
}

/** The retry policy the workflow put in the input (sessions of this version). */
function retryOf(input: SummarizeInput): RetryView | undefined {
  const { maxAttempts, initialIntervalMs, maximumIntervalMs } = input;
  return maxAttempts !== undefined && initialIntervalMs !== undefined && maximumIntervalMs !== undefined
    ? { maxAttempts, initialIntervalMs, maximumIntervalMs }
    : undefined;
}

/**
 * For calls scheduled by earlier versions, whose input has no policy: the server tells the
 * activity its policy, which is the same one (both go through the model proxy) — except to an
 * eagerly dispatched first attempt, whose info has none.
 */
function retryPolicyOfThisActivity(): RetryView | undefined {
  // The worker hands the intervals over in milliseconds; 0 attempts means unlimited (no count to report).
  const p = Context.current().info.retryPolicy;
  if (!p?.maximumAttempts || typeof p.initialInterval !== 'number') return undefined;
  const initialIntervalMs = p.initialInterval;
  // Temporal's default ceiling is 100 × the initial interval.
  const maximumIntervalMs = typeof p.maximumInterval === 'number' ? p.maximumInterval : initialIntervalMs * 100;
  return { maxAttempts: p.maximumAttempts, initialIntervalMs, maximumIntervalMs };
}
