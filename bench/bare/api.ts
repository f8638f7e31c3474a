/** What the bare loop's workflow and activities share: its query and the activities' shape. */
import { defineQuery } from '@temporalio/workflow';

export const iterationsQuery = defineQuery<number>('iterations');

/** A provider call for the model step: the same streamed chat completion a session's `callModel` makes. */
export interface BareProviderCall {
  /** The OpenAI-compatible endpoint (the benchmark's scripted model). */
  baseURL: string;
  /** The scenario to ask for (the scripted model's `x-scenario` header). */
  scenario: string;
}

export interface BareActivities {
  /** `latencyMs`: how long the step takes, like a model call (0: none); `provider`: make a real provider call. */
  modelStep(readViaQuery: boolean, latencyMs?: number, provider?: BareProviderCall): Promise<number>;
  toolStep(): Promise<void>;
}
