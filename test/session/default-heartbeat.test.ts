/**
 * The default heartbeat path: a session that sets no `heartbeatTimeoutMs` gets
 * DEFAULT_HEARTBEAT_TIMEOUT_MS on its model and tool activities, and both keep beating while
 * they wait longer than that — a provider slow to its first byte, a long Bash command — so
 * neither is declared dead and run again. (The chaos tests use shortened timeouts.)
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_HEARTBEAT_TIMEOUT_MS } from '../../src/shared/config';
import { turn } from '../../src/testing/scripted-model';
import { useHarness } from '../helpers/harness';

const h = useHarness();

const msOf = (d: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
  Number(d?.seconds ?? 0) * 1000 + Math.round((d?.nanos ?? 0) / 1e6);

test('with no heartbeatTimeoutMs, a model call and a Bash command each outlast the default timeout on their first attempt', async () => {
  const cwd = h.workspace();
  const runs = path.join(cwd, 'runs');
  // One and a half timeouts: without heartbeats the server times each attempt out and retries it.
  const longMs = Math.round(DEFAULT_HEARTBEAT_TIMEOUT_MS * 1.5);
  const handle = await h.start(
    {
      name: 'default-heartbeat',
      turns: [
        turn.tool('Bash', { command: `echo run >> '${runs}'; sleep ${longMs / 1000}; echo slept` }),
        turn.text('patient', { delay_ms: longMs }),
      ],
    },
    { cwd },
  );
  const result = await handle.result();
  expect(result).toMatchObject({ subtype: 'success', result: 'patient' });

  const events = (await handle.workflow.fetchHistory()).events ?? [];
  const scheduled = events.filter((e) =>
    ['callModel', 'runTool'].includes(e.activityTaskScheduledEventAttributes?.activityType?.name ?? ''),
  );
  const ids = new Set(scheduled.map((e) => String(e.eventId)));
  expect(
    scheduled.map((e) => e.activityTaskScheduledEventAttributes!).map((a) => [a.activityType!.name, msOf(a.heartbeatTimeout)]),
  ).toEqual([
    ['callModel', DEFAULT_HEARTBEAT_TIMEOUT_MS],
    ['runTool', DEFAULT_HEARTBEAT_TIMEOUT_MS],
    ['callModel', DEFAULT_HEARTBEAT_TIMEOUT_MS],
  ]);
  // Each activity completed on its first attempt; the command ran once, the provider was asked twice.
  const attempts = events
    .map((e) => e.activityTaskStartedEventAttributes)
    .filter((a) => a && ids.has(String(a.scheduledEventId)))
    .map((a) => a!.attempt);
  expect(attempts).toEqual([1, 1, 1]);
  expect(readFileSync(runs, 'utf8')).toBe('run\n');
  expect(h.requestsOf('default-heartbeat')).toHaveLength(2);
});
