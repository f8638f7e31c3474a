/**
 * `durable-agent stalled` on a real dev server (ARCHITECTURE.md#stalled-sessions): a session
 * whose tools queue nobody polls is reported waiting on its scheduled, never started activity,
 * with that queue's missing pollers and its history shard; a session waiting for its user is
 * reported as waiting on a person; a session that is still progressing is not listed.
 */
import { turn } from '../../src/testing/scripted-model';
import type { StalledReport } from '../../src/client/stalled';
import { useHarness } from '../helpers/harness';
import { waitFor } from '../helpers/wait';
import { cli, cliEnv } from './helpers';

jest.setTimeout(120_000);

const h = useHarness();

test('lists quiet sessions with what each waits on, its shard, and the queues they wait on', async () => {
  const unpolled = `${h.taskQueue}-nobody`;
  const stuck = await h.start(
    { name: 'stalled-tools', turns: [turn.text('never reached')] },
    { toolsTaskQueue: unpolled, cwd: h.workspace() },
  );
  const waiting = await h.start({ name: 'stalled-input', turns: [turn.text('hello')] }, { interactive: true, cwd: h.workspace() });
  const gate = h.gate();
  const busy = await h.start(
    { name: 'stalled-busy', turns: [turn.tool('Bash', { command: gate.command }), turn.text('done')] },
    { permissionMode: 'bypassPermissions', cwd: h.workspace() },
  );
  try {
    const report = await waitFor(
      'both quiet sessions in the report',
      async () => {
        const r = await cli(['stalled', '--quiet-for', '5s', '--json'], { env: cliEnv(h) });
        expect(r.code).toBe(0);
        const parsed = JSON.parse(r.stdout) as StalledReport;
        const ids = parsed.sessions.map((s) => s.sessionId);
        return ids.includes(stuck.sessionId) && ids.includes(waiting.sessionId) ? parsed : undefined;
      },
      { timeoutMs: 60_000, everyMs: 500 },
    );
    const s = report.sessions.find((x) => x.sessionId === stuck.sessionId)!;
    expect(s.agentStatus).toBe('running');
    expect(s.activities).toEqual([expect.objectContaining({ state: 'scheduled', attempt: 1, taskQueue: unpolled })]);
    const type = s.activities[0]!.type;
    expect(s.waitingOn).toMatch(new RegExp(`^${type} \\(attempt 1\\) scheduled \\d+s ago on ${unpolled}, not started$`));
    // The dev server has one history shard; its owner is the server's history host.
    expect(s.shard).toEqual({ id: 1, owner: expect.stringMatching(/:\d+$/) });
    expect(report.queues).toContainEqual(expect.objectContaining({ queue: unpolled, type: 'activity', pollers: 0 }));

    const w = report.sessions.find((x) => x.sessionId === waiting.sessionId)!;
    expect(w).toMatchObject({ agentStatus: 'waiting_for_input', activities: [], waitingOn: 'a person (waiting_for_input)' });
    // Running a command for longer than the quiet time, but heartbeating: not listed.
    expect(report.sessions.map((x) => x.sessionId)).not.toContain(busy.sessionId);

    const text = await cli(['stalled', '--quiet-for', '5s'], { env: cliEnv(h) });
    expect(text.stdout).toMatch(/running session\(s\) have recorded nothing for 5s or more:/);
    expect(text.stdout).toContain(`${unpolled} (activity): no pollers`);
    expect(text.stdout).toMatch(/by what they wait on:\n(\s+\d+ {2}.+\n)+/);
  } finally {
    gate.release();
    await busy.result();
    await stuck.cancel();
    await waiting.cancel();
  }
});

test('bad input is refused with exit 2', async () => {
  const r = await cli(['stalled', '--quiet-for', 'soon'], { env: cliEnv(h) });
  expect(r.code).toBe(2);
  expect(r.stderr).toContain("--quiet-for: expected a duration like 7d, 12h or 30m, got 'soon'");
});
