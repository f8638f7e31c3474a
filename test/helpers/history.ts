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
