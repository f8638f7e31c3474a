/**
 * How a session's history shows its start (ARCHITECTURE.md#session-start-in-one-step): which
 * set-up activities it scheduled (`prepareSession`, or `listTools` and `loadSettings`), in how
 * many workflow tasks, and how many patch markers and `TemporalChangeVersion` upserts it recorded.
 */
import type { temporal } from '@temporalio/proto';

export interface StartShape {
  setup: string[];
  setupTasks: number;
  markers: number;
  changeVersions: number;
}

const SETUP = ['prepareSession', 'listTools', 'loadSettings'];

export async function startShape(workflow: { fetchHistory(): Promise<temporal.api.history.v1.IHistory> }): Promise<StartShape> {
  const events = (await workflow.fetchHistory()).events ?? [];
  const setup = events.flatMap((e) => {
    const a = e.activityTaskScheduledEventAttributes;
    const name = a?.activityType?.name ?? '';
    return SETUP.includes(name) ? [{ name, task: String(a!.workflowTaskCompletedEventId) }] : [];
  });
  return {
    setup: setup.map((a) => a.name),
    setupTasks: new Set(setup.map((a) => a.task)).size,
    markers: events.filter((e) => e.markerRecordedEventAttributes).length,
    changeVersions: events.filter(
      (e) => e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.TemporalChangeVersion,
    ).length,
  };
}
