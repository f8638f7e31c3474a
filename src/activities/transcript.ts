/**
 * `loadTranscript`: the conversation of another session (or an earlier run of this one), for
 * `resume`. Read through the `transcript` query of that run — Temporal replays a closed run on a
 * worker to answer it — and bounded to one payload by trimming old tool output.
 */
import { Context } from '@temporalio/activity';
import { QueryNotRegisteredError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { checkpointsQuery, settingsQuery, transcriptQuery, turnMarksQuery } from '../shared/api';
import type { LoadedTranscript, LoadTranscriptInput, SessionStoreActivities } from '../shared/activities';
import type { CheckpointsView, HostAliveInput, TurnMark } from '../shared/checkpoint';
import type { Message } from '../shared/messages';
import { jsonBytes, MAX_PAYLOAD_BYTES } from '../shared/payload';
import { trimOldToolResults } from '../shared/trim-tool-results';

export function createSessionStoreActivities(): SessionStoreActivities {
  return {
    async loadTranscript(input: LoadTranscriptInput): Promise<LoadedTranscript> {
      const client = Context.current().client;
      const runId = await previousRun(input);
      const handle = client.workflow.getHandle(input.sessionId, runId);
      // Turn marks and checkpoints: absent from runs recorded before them (the query is not there).
      const orNone = (e: unknown) => {
        if (e instanceof QueryNotRegisteredError) return undefined;
        throw e;
      };
      let marks: TurnMark[] | undefined = await handle.query(turnMarksQuery).catch(orNone);
      let view: CheckpointsView | undefined = await handle.query(checkpointsQuery).catch(orNone);
      let upTo: number | undefined;
      if (input.atTurn !== undefined) {
        upTo = forkPoint(input.sessionId, input.atTurn, marks, view);
        marks = marks!.slice(0, input.atTurn);
        if (view) view = { ...view, checkpoints: view.checkpoints.filter((c) => c.turn <= input.atTurn!) };
      }
      const messages: Message[] = [];
      for (;;) {
        const remaining = upTo === undefined ? undefined : upTo - messages.length;
        if (remaining === 0) break;
        const page = await handle.query(transcriptQuery, {
          start: messages.length,
          ...(remaining !== undefined ? { limit: remaining } : {}),
        });
        if (page.length === 0) break;
        messages.push(...page);
        Context.current().heartbeat();
      }
      let fitted = messages;
      let trimmed = 0;
      for (const budget of [200_000, 50_000, 1]) {
        if (jsonBytes(fitted) <= MAX_PAYLOAD_BYTES) break;
        const r = trimOldToolResults(fitted, { budgetChars: budget, keepRecent: 1 });
        fitted = r.messages;
        trimmed += r.trimmed;
      }
      if (jsonBytes(fitted) > MAX_PAYLOAD_BYTES) {
        throw ApplicationFailure.nonRetryable(
          `the transcript of ${input.sessionId} is too large to resume even with old tool output trimmed`,
          'TranscriptTooLarge',
        );
      }
      // What a resume keeps while the settings files differ from these (ARCHITECTURE.md#hooks). A
      // run without the query (a worker too old to answer it) has none to give: the files are read.
      const settings = await handle.query(settingsQuery).catch((e: unknown) => {
        if (e instanceof QueryNotRegisteredError) return null;
        throw e;
      });
      return {
        messages: fitted,
        runId,
        trimmed,
        ...(settings ? { settings } : {}),
        ...(marks ? { turnMarks: marks } : {}),
        ...(view ? { checkpoints: view.checkpoints } : {}),
      };
    },

    async hostAlive({ queue, withinMs }: HostAliveInput): Promise<boolean> {
      const client = Context.current().client;
      const res = await client.workflowService.describeTaskQueue({
        namespace: client.options.namespace,
        taskQueue: { name: queue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
        taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
      });
      const now = Date.now();
      return (res.pollers ?? []).some((p) => {
        const t = p.lastAccessTime;
        if (!t) return false;
        const ms = Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6);
        return now - ms <= withinMs;
      });
    },
  };
}

/** Where a fork's transcript ends: the end of turn `atTurn` (0: before the first turn). */
function forkPoint(sessionId: string, atTurn: number, marks: TurnMark[] | undefined, view: CheckpointsView | undefined): number {
  const refuse = (why: string) => ApplicationFailure.nonRetryable(`cannot fork ${sessionId} at turn ${atTurn}: ${why}`, 'ForkOutOfRange');
  if (!marks) throw refuse('the session keeps no turn marks (it was started before forks existed)');
  if (atTurn > marks.length) throw refuse(`it has turns 1–${marks.length}`);
  if (view?.compactedAtTurn !== undefined && atTurn < view.compactedAtTurn) {
    throw refuse(`the transcript before turn ${view.compactedAtTurn} was compacted; fork at ${view.compactedAtTurn} or later`);
  }
  return atTurn === 0 ? 0 : marks[atTurn - 1]!.end;
}

/** The latest closed run of the session other than the caller's own. */
async function previousRun(input: LoadTranscriptInput): Promise<string> {
  const client = Context.current().client;
  const latest = await client.workflow.getHandle(input.sessionId).describe();
  if (latest.runId !== input.excludeRunId) return latest.runId;
  let best: { runId: string; startTime: number } | undefined;
  for await (const w of client.workflow.list({ query: `WorkflowId = '${input.sessionId.replace(/'/g, "\\'")}'` })) {
    if (w.runId === input.excludeRunId) continue;
    if (!best || w.startTime.getTime() > best.startTime) best = { runId: w.runId, startTime: w.startTime.getTime() };
  }
  if (!best) throw ApplicationFailure.nonRetryable(`no earlier run of session ${input.sessionId} to resume`, 'SessionNotFound');
  return best.runId;
}
