/**
 * `loadTranscript`: the conversation of another session (or an earlier run of this one), for
 * `resume`. Read through the `transcript` query of that run — Temporal replays a closed run on a
 * worker to answer it — and bounded to one payload by trimming old tool output.
 */
import { Context } from '@temporalio/activity';
import { QueryNotRegisteredError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { settingsQuery, transcriptQuery } from '../shared/api';
import type { LoadedTranscript, LoadTranscriptInput, SessionStoreActivities } from '../shared/activities';
import type { Message } from '../shared/messages';
import { jsonBytes, MAX_PAYLOAD_BYTES } from '../shared/payload';
import { trimOldToolResults } from '../shared/trim-tool-results';

export function createSessionStoreActivities(): SessionStoreActivities {
  return {
    async loadTranscript(input: LoadTranscriptInput): Promise<LoadedTranscript> {
      const client = Context.current().client;
      const runId = await previousRun(input);
      const handle = client.workflow.getHandle(input.sessionId, runId);
      const messages: Message[] = [];
      for (;;) {
        const page = await handle.query(transcriptQuery, { start: messages.length });
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
      return { messages: fitted, runId, trimmed, ...(settings ? { settings } : {}) };
    },
  };
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
