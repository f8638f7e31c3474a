/** Reading a workflow's history in tests. */
import type { temporal } from '@temporalio/proto';

type Attributes = temporal.api.history.v1.IActivityTaskScheduledEventAttributes;

/** The scheduled events of every call of activity `name`, in history order. */
export async function scheduledActivities(
  workflow: { fetchHistory(): Promise<temporal.api.history.v1.IHistory> },
  name: string,
): Promise<Attributes[]> {
  return ((await workflow.fetchHistory()).events ?? []).flatMap((e) => {
    const a = e.activityTaskScheduledEventAttributes;
    return a?.activityType?.name === name ? [a] : [];
  });
}

/**
 * The markers of a history in order: `patch:ID` for a `patched()` marker, `local-activity` for a
 * local activity's result, each with the id of the workflow task that recorded it.
 */
export async function markers(workflow: {
  fetchHistory(): Promise<temporal.api.history.v1.IHistory>;
}): Promise<{ marker: string; workflowTask: number }[]> {
  return ((await workflow.fetchHistory()).events ?? []).flatMap((e) => {
    const m = e.markerRecordedEventAttributes;
    if (!m) return [];
    const workflowTask = Number(m.workflowTaskCompletedEventId);
    if (m.markerName !== 'core_patch')
      return [{ marker: m.markerName === 'core_local_activity' ? 'local-activity' : m.markerName!, workflowTask }];
    const data = m.details?.['patch-data']?.payloads?.[0]?.data;
    const { id } = JSON.parse(Buffer.from(data ?? new Uint8Array()).toString('utf8')) as { id: string };
    return [{ marker: `patch:${id}`, workflowTask }];
  });
}
