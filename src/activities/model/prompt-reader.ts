/**
 * How a model activity reads its prompt: through its workflow's `prompt` query, in pages that
 * each stay under the gRPC message limit (ARCHITECTURE.md#transcript-by-reference — the activity's input carries no messages).
 */
import { Context } from '@temporalio/activity';
import { promptQuery, type PromptPage } from '../../shared/api';
import type { Message } from '../../shared/messages';
import type { PromptOffers } from './prompt-offers';
import type { ToolSpec } from '../../shared/tools';
import { leaveStickyQueueOfPreviousAttempt } from '../sticky';

/** Per query answer; the workflow also caps a page at 1 MiB (a query answer is one payload). */
const PAGE_BYTES = 1024 * 1024;

export interface PromptRef {
  sessionId: string;
  runId: string;
  /** Read messages [from, upTo); `from` defaults to 0. */
  from?: number;
  upTo: number;
  withTools: boolean;
  /** Set by `callModel` from workflows that offer their prompt (ARCHITECTURE.md#prompt-offer). */
  promptSeq?: number;
}

export interface Prompt {
  system: string;
  tools: ToolSpec[];
  messages: Message[];
  /** The session's newest event when the prompt was read (-1 if the workflow did not say). */
  lastSeq: number;
}

/** The prompt offered to this process when the call was scheduled, else the workflow's `prompt` query. */
export async function readPrompt(input: PromptRef, offers?: PromptOffers): Promise<Prompt> {
  if (offers && input.promptSeq !== undefined && !input.from && Context.current().info.attempt === 1) {
    const offer = offers.take({ runId: input.runId, upTo: input.upTo, withTools: input.withTools, promptSeq: input.promptSeq });
    if (offer) return { system: offer.system, tools: offer.tools, messages: offer.messages, lastSeq: offer.lastSeq };
  }
  // A retry after the previous attempt's worker died: ask the shared queue, not the dead worker's.
  await leaveStickyQueueOfPreviousAttempt();
  return queryPrompt(input);
}

/** Page through the workflow's `prompt` query (each answer stays under the gRPC limit). */
async function queryPrompt(input: PromptRef): Promise<Prompt> {
  const handle = Context.current().client.workflow.getHandle(input.sessionId, input.runId);
  const from = input.from ?? 0;
  const messages: Message[] = [];
  let first: PromptPage | undefined;
  while (from + messages.length < input.upTo) {
    const page = await handle.query(promptQuery, {
      upTo: input.upTo,
      start: from + messages.length,
      maxBytes: PAGE_BYTES,
      withTools: input.withTools && !first,
    });
    first ??= page;
    if (page.messages.length === 0) {
      throw new Error(`prompt query returned no messages at ${from + messages.length}/${input.upTo}`);
    }
    messages.push(...page.messages);
  }
  first ??= await handle.query(promptQuery, { upTo: 0, start: 0, maxBytes: PAGE_BYTES, withTools: input.withTools });
  return { system: first.system, tools: first.tools, messages, lastSeq: first.lastSeq ?? -1 };
}
