/**
 * Time travel as a user drives it (issue 41, ARCHITECTURE.md#checkpoints): a session that changes
 * its workspace over several turns is checkpointed after each; `show` and `info --json` list the
 * checkpoints, `diff --from/--to` prints the change between two turns, and `fork ID --at N` starts
 * a new session with the transcript and the files of turn N. `resume --at` without `--fork`, and a
 * turn out of range, are refused (exit 2). The SDK's `resumeSessionAt` forks the same way. Real
 * server, worker and CLI processes; the scripted model.
 */
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { query } from '../../src/sdk/query';
import type { SessionInfo } from '../../src/cli/session-info';
import type { SessionEvent } from '../../src/shared/events';
import { turn } from '../../src/testing/scripted-model';
import { removeVarTmpDirs, varTmpDir } from '../helpers/outside-tmp';
import { scenarioTag, useHarness } from '../helpers/harness';
import { cli } from './helpers';

// The worker in this process keeps workspaces and its checkpoint repository here (outside /tmp:
// the sandbox's /tmp is private); the CLIs below get the same root through h.env.
const WORKSPACES = varTmpDir('da-checkpoints-');
process.env.DURABLE_AGENT_WORKSPACES = WORKSPACES;
delete process.env.DURABLE_AGENT_CHECKPOINT_REMOTE;
afterAll(removeVarTmpDirs);

const RUN = Date.now().toString(36);
const h = useHarness();
/** Nothing listens here: a command that got as far as connecting would fail with exit 1, not 2. */
const NOWHERE = { ...process.env, TEMPORAL_ADDRESS: '127.0.0.1:1' };

const SCENARIO = `checkpointed-${RUN}`;
/**
 * Turn 1 writes a.txt; turn 2 lists the folder, shows a.txt, copies it to seen.txt and changes it;
 * turn 3 adds b.txt; turn 4 only answers (no checkpoint of its own). A fork at turn 1 replays turn 2
 * on turn 1's files: its seen.txt says "one" only if those were restored.
 */
const TURNS = [
  turn.tool('Bash', { command: 'echo one > a.txt' }),
  turn.tool('Bash', { command: 'ls; cat a.txt; cat a.txt > seen.txt; echo two > a.txt' }),
  turn.tool('Bash', { command: 'echo three > b.txt' }),
  turn.text('done'),
];

let original: { id: string; turns: number; path: string; firstAssistant: string } | undefined;

/** The session every test reads: made once, from a template folder holding a.txt = "zero". */
async function checkpointed(): Promise<NonNullable<typeof original>> {
  if (original) return original;
  const template = h.workspace();
  writeFileSync(path.join(template, 'a.txt'), 'zero\n');
  const id = `checkpointed-${RUN}`;
  const { result, messages } = await h.run({ name: SCENARIO, turns: TURNS }, { sessionId: id, workspace: { copy: template } });
  expect(result.subtype).toBe('success');
  const firstAssistant = messages.find((m) => m.type === 'assistant')!.uuid;
  original = { id, turns: result.num_turns, path: result.workspace!.path, firstAssistant };
  return original;
}

const conversation = (i: number) =>
  h
    .requestsOf(SCENARIO)
    [i]!.body.messages.filter((m) => m.role !== 'system')
    .map((m) => [m.role, typeof m.content === 'string' ? m.content : JSON.stringify(m.content)]);

const read = (dir: string, file: string) => readFileSync(path.join(dir, file), 'utf8');

test('show and info --json list the checkpoints by turn: 0 (as found) and each turn that ran Bash', async () => {
  const { id, turns } = await checkpointed();
  expect(turns).toBe(4);
  const show = await cli(['show', id], { env: h.env });
  expect(show.code).toBe(0);
  expect(show.stdout).toContain(`checkpoints (durable-agent fork ${id} --at N; durable-agent diff ${id} --from N --to M):`);
  const listed = [...show.stdout.matchAll(/^ {2}turn (\d+) {2}([0-9a-f]{12}) {2}(.+)$/gm)].map((m) => [Number(m[1]), m[3]]);
  // No checkpoint remote is set: each is kept on the tools host only.
  expect(listed).toEqual([0, 1, 2, 3].map((t) => [t, 'local only (no checkpoint remote)']));
  expect(show.stdout).not.toContain('checkpointing is failing');

  const info = JSON.parse((await cli(['info', id, '--json'], { env: h.env })).stdout) as SessionInfo;
  expect(info.checkpoints!.map((c) => [c.turn, c.pushed])).toEqual([0, 1, 2, 3].map((t) => [t, 'local']));
  for (const c of info.checkpoints!) {
    expect(c.commit).toMatch(/^[0-9a-f]{40,64}$/);
    expect(c.ref).toMatch(/^refs\/checkpoints\//);
  }
  expect(info.checkpointsFailing).toBeNull();
});

test('diff --from 1 --to 2: the change turn 2 made, as a patch; --stat; defaults; a turn out of range is refused', async () => {
  const { id } = await checkpointed();
  const d = await cli(['diff', id, '--from', '1', '--to', '2'], { env: h.env });
  expect(d.stderr).toBe('');
  expect(d.code).toBe(0);
  expect(d.stdout).toContain('--- a/a.txt\n+++ b/a.txt');
  expect(d.stdout).toContain('-one\n+two');
  expect(d.stdout).toContain('+++ b/seen.txt');
  expect(d.stdout).not.toContain('b/b.txt');

  const stat = await cli(['diff', id, '--from', '1', '--to', '2', '--stat'], { env: h.env });
  expect(stat.stdout).toMatch(/2 files changed, 2 insertions\(\+\), 1 deletion\(-\)/);

  // --to alone: from turn 0, the folder as found, to turn 3 (turn 4 has no checkpoint of its own).
  const all = await cli(['diff', id, '--to', '4'], { env: h.env });
  expect(all.code).toBe(0);
  expect(all.stdout).toContain('-zero\n+two');
  expect(all.stdout).toContain('+++ b/b.txt');
  expect(all.stderr).toContain('turn 4 → checkpoint of turn 3');

  const bad = await cli(['diff', id, '--from', '9'], { env: h.env });
  expect(bad.stderr).toContain(`--from 9: ${id} has turns 0–4 with checkpoints; choose a turn in 0–4`);
  expect(bad.code).toBe(2);

  // Plain diff is what it was: the whole patch against the base, from the session's result.
  const whole = await cli(['diff', id], { env: h.env });
  expect(whole.code).toBe(0);
  expect(whole.stdout).toContain('+++ b/b.txt');
});

test('diff --from/--to elsewhere: exit 2 naming the missing checkpoints and the variable; with the remote set, fetched into the cache', async () => {
  const { id } = await checkpointed();
  const elsewhere = varTmpDir('da-elsewhere-');
  const missing = await cli(['diff', id, '--from', '1', '--to', '2'], {
    env: { ...h.env, DURABLE_AGENT_WORKSPACES: elsewhere, DURABLE_AGENT_CHECKPOINT_REMOTE: '' },
  });
  expect(missing.stderr).toContain(`the checkpoints of ${id} at turn 1 (`);
  expect(missing.stderr).toContain(`are not in this host's checkpoint repository ${path.join(elsewhere, 'checkpoints.git')}`);
  expect(missing.stderr).toContain('DURABLE_AGENT_CHECKPOINT_REMOTE is not set');
  expect(missing.code).toBe(2);

  // The host's own checkpoint repository stands in for the remote (a bare repository is one).
  const cacheHome = mkdtempSync(path.join(elsewhere, 'cache-'));
  const fetched = await cli(['diff', id, '--from', '1', '--to', '2'], {
    env: {
      ...h.env,
      DURABLE_AGENT_WORKSPACES: elsewhere,
      DURABLE_AGENT_CHECKPOINT_REMOTE: path.join(WORKSPACES, 'checkpoints.git'),
      XDG_CACHE_HOME: cacheHome,
    },
  });
  expect(fetched.stderr).toBe('');
  expect(fetched.code).toBe(0);
  expect(fetched.stdout).toContain('-one\n+two');
  expect(readdirSync(path.join(cacheHome, 'durable-agent'))).toEqual(['checkpoint-cache.git']);
});

test('fork ID --at 1: a new session with the transcript to the end of turn 1 and the files of turn 1', async () => {
  const { id, path: originalPath } = await checkpointed();
  const before = h.requestsOf(SCENARIO).length;
  const fork = await cli(['fork', id, '--at', '1', 'branch', 'here', '--id', `fork-${RUN}`, '--detach'], { env: h.env });
  expect(fork.stderr).toContain(`forking ${id} at turn 1: files from the checkpoint of turn 1 (`);
  expect(fork.code).toBe(0);
  const forkId = fork.stdout.trim();
  expect(forkId).toBe(`fork-${RUN}`);
  const result = await (await h.client.get(forkId)).result();
  expect(result.subtype).toBe('success');

  // The model saw turn 1 and the new prompt, and nothing of turns 2–4.
  const first = conversation(before);
  expect(first.map(([role]) => role)).toEqual(['user', 'assistant', 'tool', 'user']);
  expect(first[0]![1]).toContain(scenarioTag(SCENARIO));
  expect(first[3]).toEqual(['user', 'branch here']);
  // Its first Bash call (the original's turn 2) ran on turn 1's files: a.txt said "one", no seen.txt or b.txt yet.
  const tool = conversation(before + 1).filter(([role]) => role === 'tool')[1]![1];
  expect(tool).toContain('a.txt\none');
  expect(tool).not.toContain('seen.txt');
  expect(tool).not.toContain('b.txt');

  // Its folder: a new one, made from the checkpoint; the original's is as it was.
  const info = JSON.parse((await cli(['info', forkId, '--json'], { env: h.env })).stdout) as SessionInfo;
  expect(info.cwd).toBeTruthy();
  expect(info.cwd).not.toBe(originalPath);
  expect(read(info.cwd!, 'seen.txt')).toBe('one\n');
  expect(read(info.cwd!, 'a.txt')).toBe('two\n');
  expect(read(originalPath, 'seen.txt')).toBe('one\n');
  expect(read(originalPath, 'b.txt')).toBe('three\n');
  // The original's transcript is untouched: four turns.
  const transcript = await (await h.client.get(id)).transcript();
  expect(transcript.filter((m) => m.role === 'assistant')).toHaveLength(4);
});

test('resume ID --fork --at 0 is the same command: the fork starts from the folder as found', async () => {
  const { id } = await checkpointed();
  const before = h.requestsOf(SCENARIO).length;
  const fork = await cli(['resume', id, '--fork', '--at', '0', 'from the start', '--detach'], { env: h.env });
  expect(fork.code).toBe(0);
  const forkId = fork.stdout.trim();
  expect((await (await h.client.get(forkId)).result()).subtype).toBe('success');
  expect(conversation(before).at(-1)).toEqual(['user', 'from the start']);
  // Replayed from turn 1 on the template's files: its turn 2 listed only a.txt (no seen.txt or b.txt).
  const listed = conversation(before + 2).filter(([role]) => role === 'tool')[1]![1];
  expect(listed).toContain('a.txt\none');
  expect(listed).not.toContain('b.txt');
  const info = JSON.parse((await cli(['info', forkId, '--json'], { env: h.env })).stdout) as SessionInfo;
  expect(read(info.cwd!, 'seen.txt')).toBe('one\n');
  expect(read(info.cwd!, 'b.txt')).toBe('three\n');
});

test('refused (exit 2): resume --at without --fork, before connecting; --at out of range, naming the range', async () => {
  const { id, turns } = await checkpointed();
  const noFork = await cli(['resume', id, '--at', '1'], { env: NOWHERE });
  expect(noFork.stderr).toContain(`--at goes with --fork: resuming ${id}'s own folder at an earlier turn would overwrite it`);
  expect(noFork.code).toBe(2);

  const noAt = await cli(['fork', id], { env: NOWHERE });
  expect(noAt.stderr).toContain('--at N is required');
  expect(noAt.code).toBe(2);

  for (const at of [String(turns + 5), '-1', 'x']) {
    // `--at=-1`: node's parseArgs reads a separate `-1` as an option.
    const r = await cli(['fork', id, `--at=${at}`], { env: h.env });
    expect(r.stderr).toContain(`--at ${at}: ${id} has turns 0–${turns} with checkpoints; choose a turn in 0–${turns}`);
    expect(r.code).toBe(2);
  }
});

test('a session without checkpoints (checkpoints: false): show lists none; fork --at is refused saying so', async () => {
  const { handle, result } = await h.run({ name: `no-checkpoints-${RUN}`, turns: [turn.text('hi')] }, { checkpoints: false });
  expect(result.subtype).toBe('success');
  const show = await cli(['show', handle.sessionId], { env: h.env });
  expect(show.code).toBe(0);
  expect(show.stdout).not.toContain('checkpoints (');
  const r = await cli(['fork', handle.sessionId, '--at', '1'], { env: h.env });
  expect(r.stderr).toContain(`${handle.sessionId} has no checkpoints (it was started with checkpoints off`);
  expect(r.code).toBe(2);
});

test("the SDK's resumeSessionAt with forkSession: true forks at the turn of that message", async () => {
  const { id, firstAssistant } = await checkpointed();
  const before = h.requestsOf(SCENARIO).length;
  const messages: SessionEvent[] = [];
  for await (const m of query({
    prompt: 'sdk branch',
    options: {
      client: h.client,
      model: 'gpt-4.1-mini',
      resume: id,
      forkSession: true,
      resumeSessionAt: firstAssistant,
      permissionMode: 'bypassPermissions',
      allowDangerouslySkipPermissions: true,
    },
  })) {
    messages.push(m as SessionEvent);
  }
  expect(messages.at(-1)).toMatchObject({ type: 'result', subtype: 'success' });
  expect(messages[0]!.session_id).not.toBe(id);
  expect(conversation(before).map(([role]) => role)).toEqual(['user', 'assistant', 'tool', 'user']);
  expect(conversation(before).at(-1)).toEqual(['user', 'sdk branch']);

  const unknown = query({ prompt: 'x', options: { client: h.client, resume: id, forkSession: true, resumeSessionAt: `no-such-${RUN}` } });
  await expect(unknown.next()).rejects.toThrow(`resumeSessionAt: no message with uuid no-such-${RUN} in session ${id}`);
});
