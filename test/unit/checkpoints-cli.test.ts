/**
 * The client side of checkpoints (ARCHITECTURE.md#checkpoints), without a server: the turns
 * `fork --at` and `diff --from/--to` accept (refused naming the range), the options of a fork,
 * `show`'s list, `resume --at` without `--fork`, the SDK's `resumeSessionAt`, and finding two
 * checkpoints' commits with real git — in the local checkpoint repository, or fetched from the
 * checkpoint remote into the client's cache.
 */
import { renderMessage } from '../../src/cli/render';
import type { SessionEvent } from '../../src/shared/events';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { UsageError } from '../../src/cli/args';
import { checkForkAt } from '../../src/cli/session';
import {
  checkpointCacheRepo,
  checkpointPatch,
  CheckpointsNotFoundError,
  findCheckpoints,
  localCheckpointRepo,
} from '../../src/cli/checkpoint-diff';
import {
  CheckpointChoiceError,
  checkpointedTurns,
  diffEnds,
  forkAtOptions,
  forkPoint,
  renderCheckpoints,
} from '../../src/client/checkpoints';
import { infoFrom } from '../../src/cli/session-info';
import { mapOptions } from '../../src/sdk/options';
import { checkpointRef, type CheckpointRecord, type CheckpointsView } from '../../src/shared/checkpoint';
import { ConfigError, parseSessionConfig } from '../../src/shared/config';

const sha = (n: number) => n.toString(16).padStart(40, 'a');
const cp = (turn: number, pushed: CheckpointRecord['pushed'] = 'remote'): CheckpointRecord => ({
  turn,
  commit: sha(turn),
  ref: checkpointRef('s-1', 'run-1', turn),
  pushed,
});
/** Turns 0–7, checkpoints after turns 0, 2, 3 and 6 (the others changed nothing). */
const view: CheckpointsView = { turns: 7, checkpoints: [cp(0), cp(2), cp(3), cp(6)], path: '/ws/s-1' };

describe('fork --at N: the turn and its checkpoint', () => {
  test('a turn with a checkpoint of its own, one without (the latest before it), turn 0 and the last turn', () => {
    expect(forkPoint(view, 's-1', '--at 3', '3')).toEqual({ turn: 3, checkpoint: cp(3) });
    expect(forkPoint(view, 's-1', '--at 5', '5')).toEqual({ turn: 5, checkpoint: cp(3) });
    expect(forkPoint(view, 's-1', '--at 0', '0')).toEqual({ turn: 0, checkpoint: cp(0) });
    expect(forkPoint(view, 's-1', '--at 7', '7')).toEqual({ turn: 7, checkpoint: cp(6) });
    expect(forkPoint(view, 's-1', 'resumeSessionAt u', 1)).toEqual({ turn: 1, checkpoint: cp(0) });
  });

  test.each(['9', '8', '-1', '2.5', 'abc', '', ' '])('--at %j is refused, naming the range', (raw) => {
    expect(() => forkPoint(view, 's-1', `--at ${raw}`, raw)).toThrow(CheckpointChoiceError);
    expect(() => forkPoint(view, 's-1', `--at ${raw}`, raw)).toThrow(
      `--at ${raw}: s-1 has turns 0–7 with checkpoints; choose a turn in 0–7`,
    );
  });

  test('the range starts at the first checkpoint (checkpoints turned on later)', () => {
    const later = { turns: 7, checkpoints: [cp(4), cp(6)] };
    expect(checkpointedTurns(later)).toEqual({ first: 4, last: 7 });
    expect(() => forkPoint(later, 's-1', '--at 3', '3')).toThrow('--at 3: s-1 has turns 4–7 with checkpoints; choose a turn in 4–7');
    expect(forkPoint(later, 's-1', '--at 4', '4').checkpoint).toEqual(cp(4));
  });

  test('a transcript compacted at turn 3: a fork must be at or after it, and the message says why', () => {
    const compacted = { ...view, compactedAtTurn: 3 };
    expect(() => forkPoint(compacted, 's-1', '--at 2', '2')).toThrow(
      '--at 2: s-1 has turns 0–7 with checkpoints, and its transcript before turn 3 was compacted away; choose a turn in 3–7',
    );
    expect(forkPoint(compacted, 's-1', '--at 3', '3')).toEqual({ turn: 3, checkpoint: cp(3) });
    // Compacted at or before the first checkpoint: nothing to say.
    expect(() => forkPoint({ ...view, compactedAtTurn: 0 }, 's-1', '--at 8', '8')).toThrow(
      '--at 8: s-1 has turns 0–7 with checkpoints; choose a turn in 0–7',
    );
    expect(() => forkPoint({ ...view, compactedAtTurn: 9 }, 's-1', '--at 7', '7')).toThrow(/there is no turn to fork at/);
  });

  test('a single turn is named as one, not a range', () => {
    expect(() => forkPoint({ turns: 0, checkpoints: [cp(0)] }, 's-1', '--at 1', '1')).toThrow(
      '--at 1: s-1 has turn 0 with checkpoints; choose a turn in 0',
    );
  });

  test.each([
    ['a session from before checkpoints (no query)', null],
    ['a session started with checkpoints off', { turns: 3, checkpoints: [] }],
  ])('%s: refused, saying it has none', (_name, v) => {
    expect(() => forkPoint(v, 's-1', '--at 1', '1')).toThrow(
      /^s-1 has no checkpoints \(it was started with checkpoints off, or before durable-agent recorded them\): it cannot be forked at a turn/,
    );
  });

  test("the fork's options: resume, forkSession, resumeAtTurn and the checkpoint as its workspace, which the config takes without a cwd", () => {
    const at = forkAtOptions('s-1', forkPoint(view, 's-1', '--at 5', '5'));
    expect(at).toEqual({
      resume: 's-1',
      forkSession: true,
      resumeAtTurn: 5,
      workspace: { checkpoint: { session: 's-1', turn: 3, commit: sha(3), ref: 'refs/checkpoints/s-1/run-1/3' } },
    });
    const config = parseSessionConfig({ prompt: 'go on', model: 'm', ...at });
    expect(config).toMatchObject({ resumeAtTurn: 5, forkSession: true, workspace: at.workspace });
    expect(() => parseSessionConfig({ prompt: 'go on', model: 'm', cwd: '/w', ...at })).toThrow(/cwd/);
  });
});

describe('resume --at before connecting', () => {
  test('--at without --fork is refused: it would overwrite the session’s own folder', () => {
    expect(() => checkForkAt('s-1', { at: '3' })).toThrow(UsageError);
    expect(() => checkForkAt('s-1', { at: '3' })).toThrow(
      "--at goes with --fork: resuming s-1's own folder at an earlier turn would overwrite it",
    );
  });

  test('--at with --cwd is refused by name; --fork alone and --fork --at pass', () => {
    expect(() => checkForkAt('s-1', { fork: true, at: '3', cwd: '/w' })).toThrow(/^--cwd cannot be combined with --at/);
    expect(() => checkForkAt('s-1', { fork: true })).not.toThrow();
    expect(() => checkForkAt('s-1', { fork: true, at: '3' })).not.toThrow();
    expect(() => checkForkAt('s-1', {})).not.toThrow();
  });
});

describe('diff --from N --to M: the two checkpoints', () => {
  test('defaults: the first checkpoint (turn 0) and the latest', () => {
    expect(diffEnds(view, 's-1', undefined, undefined)).toEqual({
      from: { turn: 0, checkpoint: cp(0) },
      to: { turn: 6, checkpoint: cp(6) },
    });
    expect(diffEnds(view, 's-1', '2', undefined)).toEqual({ from: { turn: 2, checkpoint: cp(2) }, to: { turn: 6, checkpoint: cp(6) } });
    expect(diffEnds(view, 's-1', undefined, '3')).toEqual({ from: { turn: 0, checkpoint: cp(0) }, to: { turn: 3, checkpoint: cp(3) } });
  });

  test('each end is the checkpoint at or before its turn; the list need not be in order', () => {
    const shuffled = { ...view, checkpoints: [cp(6), cp(0), cp(3), cp(2)] };
    expect(diffEnds(shuffled, 's-1', '1', '5')).toEqual({ from: { turn: 1, checkpoint: cp(0) }, to: { turn: 5, checkpoint: cp(3) } });
    expect(diffEnds(shuffled, 's-1', undefined, undefined).to.checkpoint).toEqual(cp(6));
  });

  test.each<[string | undefined, string | undefined, string]>([
    ['8', undefined, '--from 8: s-1 has turns 0–7 with checkpoints; choose a turn in 0–7'],
    [undefined, '-2', '--to -2: s-1 has turns 0–7 with checkpoints; choose a turn in 0–7'],
    ['x', '3', '--from x: s-1 has turns 0–7 with checkpoints; choose a turn in 0–7'],
  ])('--from %j --to %j is refused, naming the range', (from, to, message) => {
    expect(() => diffEnds(view, 's-1', from, to)).toThrow(CheckpointChoiceError);
    expect(() => diffEnds(view, 's-1', from, to)).toThrow(message);
  });

  test('a session without checkpoints: refused, pointing at the whole patch', () => {
    expect(() => diffEnds(null, 's-1', '0', '1')).toThrow(/^s-1 has no checkpoints .*durable-agent diff s-1 \(without --from\/--to\)/);
  });
});

describe("show's checkpoint list", () => {
  test('one line per checkpoint by turn: turn, short commit, pushed state; then why checkpointing fails', () => {
    const lines = renderCheckpoints(
      { turns: 12, checkpoints: [cp(10, 'failed'), cp(0), cp(3, 'local')], failing: 'push to /remote.git: permission denied' },
      's-1',
    );
    expect(lines).toEqual([
      'checkpoints (durable-agent fork s-1 --at N; durable-agent diff s-1 --from N --to M):',
      `  turn  0  ${sha(0).slice(0, 12)}  pushed`,
      `  turn  3  ${sha(3).slice(0, 12)}  local only (no checkpoint remote)`,
      `  turn 10  ${sha(10).slice(0, 12)}  push failed`,
      'checkpointing is failing: push to /remote.git: permission denied',
    ]);
  });

  test('a session from before checkpoints, or without any: nothing', () => {
    expect(renderCheckpoints(null, 's-1')).toEqual([]);
    expect(renderCheckpoints({ turns: 2, checkpoints: [] }, 's-1')).toEqual([]);
  });
});

describe('info: checkpoints and the cwd of a workspace session', () => {
  const base = { id: 's-1', executionStatus: 'RUNNING', searchAttributes: {}, startTime: new Date(0), memo: { cwd: '' } };

  test('checkpoints by turn and why they fail; null for a session without the query', () => {
    const info = infoFrom({ ...base, checkpoints: { ...view, checkpoints: [cp(3), cp(0)], failing: 'no space' } });
    expect(info.checkpoints).toEqual([cp(0), cp(3)]);
    expect(info.checkpointsFailing).toBe('no space');
    expect(infoFrom(base)).toMatchObject({ checkpoints: null, checkpointsFailing: null });
  });

  test('a running workspace session (no result, empty memo cwd): cwd from the checkpoints view, else its init event', () => {
    expect(infoFrom({ ...base, checkpoints: view }).cwd).toBe('/ws/s-1');
    expect(infoFrom({ ...base, initCwd: '/ws/from-init' }).cwd).toBe('/ws/from-init');
    expect(infoFrom(base).cwd).toBeNull();
  });
});

describe('SDK resumeSessionAt', () => {
  test('with resume and forkSession: true it is taken, and no cwd of its own', () => {
    const m = mapOptions({ resume: 's-1', forkSession: true, resumeSessionAt: 'u-1' }, '/w');
    expect(m.resumeSessionAt).toBe('u-1');
    expect(m.session).toMatchObject({ resume: 's-1', forkSession: true });
    expect(m.session).not.toHaveProperty('resumeSessionAt');
  });

  test('without forkSession: true it is refused by name, saying why', () => {
    const e = (() => {
      try {
        mapOptions({ resume: 's-1', resumeSessionAt: 'u-1' }, '/w');
      } catch (x) {
        return x as ConfigError;
      }
      throw new Error('accepted');
    })();
    expect(e).toBeInstanceOf(ConfigError);
    expect(e.field).toBe('resumeSessionAt');
    expect(e.message).toMatch(/^option resumeSessionAt without forkSession: true is not supported by durable-agent: .*overwrite/);
  });

  test.each<[Record<string, unknown>, RegExp]>([
    [{ resumeSessionAt: 'u-1', forkSession: true }, /^resumeSessionAt: goes with resume/],
    [{ resumeSessionAt: '', resume: 's-1', forkSession: true }, /^resumeSessionAt: expected the uuid/],
    [{ resumeSessionAt: 'u-1', resume: 's-1', forkSession: true, cwd: '/w' }, /^resumeSessionAt: cannot be combined with cwd/],
    [
      { resumeSessionAt: 'u-1', resume: 's-1', forkSession: true, workspace: { git: '/r' } },
      /^resumeSessionAt: cannot be combined with workspace/,
    ],
    [{ resumeDropsTurn: 'u-0', resumeSessionAt: 'u-1', resume: 's-1', forkSession: true }, /^option resumeDropsTurn is not supported/],
  ])('%j is refused', (options, message) => {
    expect(() => mapOptions(options, '/w')).toThrow(message);
  });
});

describe('finding two checkpoints with git', () => {
  const env = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };
  const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env, encoding: 'utf8' }).trim();
  const tmp = mkdtempSync(path.join(tmpdir(), 'da-checkpoints-'));
  let n = 0;

  /**
   * A bare checkpoint repository with two commits at checkpoint refs: turn 0 (a.txt) and turn 2
   * (a.txt changed, b.bin added); each repository's commits are its own (a salt file).
   */
  function checkpointRepo(): { repo: string; c0: CheckpointRecord; c2: CheckpointRecord } {
    const salt = n++;
    const dir = path.join(tmp, `r${salt}`);
    const work = path.join(dir, 'work');
    const repo = path.join(dir, 'checkpoints.git');
    mkdirSync(work, { recursive: true });
    git(dir, 'init', '-q', '--bare', repo);
    git(work, 'init', '-q');
    writeFileSync(path.join(work, 'a.txt'), 'one\n');
    writeFileSync(path.join(work, 'salt'), `${salt}\n`);
    git(work, 'add', '-A');
    git(work, 'commit', '-q', '-m', 'turn 0');
    const c0 = { turn: 0, commit: git(work, 'rev-parse', 'HEAD'), ref: checkpointRef('s-1', 'run-1', 0), pushed: 'remote' as const };
    writeFileSync(path.join(work, 'a.txt'), 'two\n');
    writeFileSync(path.join(work, 'b.bin'), Buffer.from([0, 1, 2, 255]));
    git(work, 'add', '-A');
    git(work, 'commit', '-q', '-m', 'turn 2');
    const c2 = { turn: 2, commit: git(work, 'rev-parse', 'HEAD'), ref: checkpointRef('s-1', 'run-1', 2), pushed: 'remote' as const };
    git(work, 'push', '-q', repo, `${c0.commit}:${c0.ref}`, `${c2.commit}:${c2.ref}`);
    return { repo, c0, c2 };
  }

  test('the default places: <workspaces root>/checkpoints.git and the cache under XDG_CACHE_HOME or ~/.cache', () => {
    expect(localCheckpointRepo({ DURABLE_AGENT_WORKSPACES: '/srv/ws' }, '/home/u')).toBe('/srv/ws/checkpoints.git');
    expect(localCheckpointRepo({}, '/home/u')).toBe('/home/u/.cache/durable-agent/workspaces/checkpoints.git');
    expect(checkpointCacheRepo({ XDG_CACHE_HOME: '/c' }, '/home/u')).toBe('/c/durable-agent/checkpoint-cache.git');
    expect(checkpointCacheRepo({}, '/home/u')).toBe('/home/u/.cache/durable-agent/checkpoint-cache.git');
  });

  test('in the local checkpoint repository: found there; the patch applies to turn 0 and gives turn 2 (binary included)', async () => {
    const { repo, c0, c2 } = checkpointRepo();
    const cache = path.join(tmp, `cache${n++}.git`);
    expect(await findCheckpoints([c0, c2], { sessionId: 's-1', local: repo, remote: '/nowhere.git', cache })).toBe(repo);
    expect(existsSync(cache)).toBe(false);
    const patch = await checkpointPatch(repo, c0.commit, c2.commit);
    expect(patch.toString('utf8')).toContain('--- a/a.txt\n+++ b/a.txt');
    expect(patch.toString('utf8')).toContain('GIT binary patch');
    const check = path.join(tmp, `check${n++}`);
    execFileSync('git', ['clone', '-q', repo, check], { stdio: 'ignore' });
    git(check, 'checkout', '-q', c0.commit);
    writeFileSync(path.join(tmp, 'p.patch'), patch);
    git(check, 'apply', path.join(tmp, 'p.patch'));
    expect(git(check, 'status', '--porcelain')).toBe('M a.txt\n?? b.bin');
    const stat = (await checkpointPatch(repo, c0.commit, c2.commit, { stat: true })).toString('utf8');
    expect(stat).toMatch(/2 files changed/);
  });

  test('not here and no remote set: refused, naming what is missing, where it looked, and the variable', async () => {
    const { c0, c2 } = checkpointRepo();
    const local = path.join(tmp, 'no-such.git');
    const p = findCheckpoints([c0, c2], { sessionId: 's-1', local, remote: '', cache: path.join(tmp, `cache${n++}.git`) });
    await expect(p).rejects.toThrow(CheckpointsNotFoundError);
    await expect(
      findCheckpoints([c0, c2], { sessionId: 's-1', local, remote: '', cache: path.join(tmp, `cache${n++}.git`) }),
    ).rejects.toThrow(
      `the checkpoints of s-1 at turn 0 (${c0.commit.slice(0, 12)}) and turn 2 (${c2.commit.slice(0, 12)}) are not in this host's checkpoint repository ${local}, and DURABLE_AGENT_CHECKPOINT_REMOTE is not set`,
    );
  });

  test('not here, in the remote: fetched by their refs into a bare cache, which is used from then on', async () => {
    const { repo: remote, c0, c2 } = checkpointRepo();
    const cache = path.join(tmp, `cache${n++}`, 'durable-agent', 'checkpoint-cache.git');
    const local = path.join(tmp, 'no-such.git');
    expect(await findCheckpoints([c0, c2], { sessionId: 's-1', local, remote, cache })).toBe(cache);
    expect(git(cache, 'rev-parse', '--is-bare-repository')).toBe('true');
    expect(git(cache, 'rev-parse', c2.ref)).toBe(c2.commit);
    // A second time, from the cache alone (the remote is gone).
    expect(await findCheckpoints([c0, c2], { sessionId: 's-1', local, remote: path.join(tmp, 'gone.git'), cache })).toBe(cache);
    expect((await checkpointPatch(cache, c0.commit, c2.commit)).toString('utf8')).toContain('+two');
  });

  test('not here, and the remote lacks them: refused, naming the remote and what was never pushed', async () => {
    const { c0, c2 } = checkpointRepo();
    const { repo: other } = checkpointRepo();
    const cache = path.join(tmp, `cache${n++}.git`);
    const unpushed = { ...c2, ref: checkpointRef('s-1', 'run-1', 5), pushed: 'failed' as const };
    await expect(
      findCheckpoints([c0, unpushed], { sessionId: 's-1', local: path.join(tmp, 'none.git'), remote: other, cache }),
    ).rejects.toThrow(
      new RegExp(
        `cannot be fetched from DURABLE_AGENT_CHECKPOINT_REMOTE \\(${other.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\) \\(turn 2: its push failed\\)`,
      ),
    );
    // The refs exist in `other` but are other commits: fetched, and still not there.
    await expect(findCheckpoints([c0, c2], { sessionId: 's-1', local: path.join(tmp, 'none.git'), remote: other, cache })).rejects.toThrow(
      /nor at their refs in DURABLE_AGENT_CHECKPOINT_REMOTE/,
    );
  });
});

test('watch and show render a restored workspace as one line naming both hosts, the folder and the checkpoint', () => {
  const restored = {
    type: 'system',
    subtype: 'workspace_restored',
    lost_host: 'build-1',
    host: 'build-2',
    path: '/ws/sessions/s-1',
    turn: 3,
    commit: 'abcdef0123456789abcdef0123456789abcdef01',
    message: 'The tools host …',
    uuid: 'u',
    session_id: 's-1',
  };
  expect(renderMessage(restored as unknown as SessionEvent, { color: false })).toEqual([
    '⟲ tools host build-1 lost: /ws/sessions/s-1 restored on build-2 from the checkpoint of turn 3 (abcdef012345)',
  ]);
});
