/**
 * How a session's history shows its start (ARCHITECTURE.md#session-start-in-one-step): whether
 * `listTools` and `loadSettings` were scheduled by the same workflow task, and how many patch
 * markers and `TemporalChangeVersion` upserts it recorded.
 */
import type { temporal } from '@temporalio/proto';

export interface StartShape {
  oneTask: boolean;
  markers: number;
  changeVersions: number;
}

export async function startShape(workflow: { fetchHistory(): Promise<temporal.api.history.v1.IHistory> }): Promise<StartShape> {
  const events = (await workflow.fetchHistory()).events ?? [];
  const scheduledIn = (name: string) =>
    events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === name)?.activityTaskScheduledEventAttributes
      ?.workflowTaskCompletedEventId;
  const tools = scheduledIn('listTools');
  return {
    oneTask: tools !== undefined && String(tools) === String(scheduledIn('loadSettings')),
    markers: events.filter((e) => e.markerRecordedEventAttributes).length,
    changeVersions: events.filter(
      (e) => e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.TemporalChangeVersion,
    ).length,
  };
}
