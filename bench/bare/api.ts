/** What the bare loop's workflow and activities share: its query and the activities' shape. */
import { defineQuery } from '@temporalio/workflow';

export const iterationsQuery = defineQuery<number>('iterations');

export interface BareActivities {
  /** `latencyMs`: how long the step takes, like a model call (0: none). */
  modelStep(readViaQuery: boolean, latencyMs?: number): Promise<number>;
  toolStep(): Promise<void>;
}
