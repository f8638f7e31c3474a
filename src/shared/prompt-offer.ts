/**
 * The prompt handed from the workflow to a model call on the same worker process
 * (ARCHITECTURE.md#prompt-offer): a workflow sink, so nothing reaches history.
 */
import type { Sinks } from '@temporalio/workflow';
import type { Message } from './messages';
import type { ToolSpec } from './tools';

/** What `callModel` would read through the `prompt` query, offered when the call is scheduled. */
export interface PromptOffer {
  runId: string;
  /** The session's newest event when the call was scheduled; the call's input carries it as `promptSeq`. */
  lastSeq: number;
  upTo: number;
  withTools: boolean;
  system: string;
  tools: ToolSpec[];
  /** Messages [0, upTo). */
  messages: Message[];
}

export interface PromptSinks extends Sinks {
  prompts: { offer(offer: PromptOffer): void };
}
