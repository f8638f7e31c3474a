/** Real git repositories in temp dirs, and the workspace activities run in a mock activity context. */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createWorkspaceActivities, runGit, type GitRunner } from '../../src/activities/workspace';
import { createToolOps } from '../../src/activities/tools';
import { createSandbox, type SandboxOptions } from '../../src/activities/sandbox';
import type { WorkspaceActivities } from '../../src/shared/workspace';

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@t',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@t',
      GIT_CONFIG_NOSYSTEM: '1',
    },
  }).trim();
}

export interface Origin {
  /** The bare repository: the URL sessions clone. */
  url: string;
  main: string;
  feature: string;
  tagged: string;
}

/** A bare origin with `main` (2 commits, tag v1 on the first) and `feature` (1 more commit). */
export function makeOrigin(dir: string): Origin {
  const work = path.join(dir, 'work');
  const url = path.join(dir, 'origin.git');
  git(dir, 'init', '--quiet', '--bare', '--initial-branch=main', url);
  git(dir, 'init', '--quiet', '--initial-branch=main', work);
  fs.writeFileSync(path.join(work, 'a.txt'), 'one\n');
  fs.writeFileSync(path.join(work, '.gitignore'), 'build/\n');
  git(work, 'add', '-A');
  git(work, 'commit', '--quiet', '-m', 'one');
  const tagged = git(work, 'rev-parse', 'HEAD');
  git(work, 'tag', 'v1');
  fs.writeFileSync(path.join(work, 'a.txt'), 'two\n');
  git(work, 'commit', '--quiet', '-am', 'two');
  const main = git(work, 'rev-parse', 'HEAD');
  git(work, 'checkout', '--quiet', '-b', 'feature');
  fs.writeFileSync(path.join(work, 'f.txt'), 'feature\n');
  git(work, 'add', '-A');
  git(work, 'commit', '--quiet', '-m', 'feature');
  const feature = git(work, 'rev-parse', 'HEAD');
  git(work, 'push', '--quiet', url, 'main', 'feature', 'v1');
  return { url, main, feature, tagged };
}

/** The real git, counting mirror clones and fetches. */
export function countingGit(): { git: GitRunner; clones: () => number; fetches: () => number } {
  let clones = 0;
  let fetches = 0;
  return {
    git: (call) => {
      if (call.args[0] === 'clone' && call.args.includes('--mirror')) clones++;
      if (call.args[0] === 'fetch') fetches++;
      return runGit(call);
    },
    clones: () => clones,
    fetches: () => fetches,
  };
}

/** Each activity run as the worker runs it: in an activity context (heartbeats, cancellation). */
export function activities(root: string, git?: GitRunner, sandbox: SandboxOptions = {}, checkpointRemote = ''): WorkspaceActivities {
  const ops = createToolOps({ sandbox: createSandbox({ readOnly: [path.join(root, 'mirrors')], ...sandbox }) });
  // The remote given, never the one in the environment of whoever runs the tests.
  const acts = createWorkspaceActivities({
    toolsQueue: 'agent-tools',
    root,
    host: 'host-1',
    ops,
    checkpointRemote,
    ...(git ? { git } : {}),
  });
  const run =
    <K extends keyof WorkspaceActivities>(k: K) =>
    (input: Parameters<WorkspaceActivities[K]>[0]) =>
      new MockActivityEnvironment().run(acts[k] as (i: typeof input) => ReturnType<WorkspaceActivities[K]>, input);
  return {
    provisionWorkspace: run('provisionWorkspace'),
    workspaceDiff: run('workspaceDiff'),
    readPatchPart: run('readPatchPart'),
    runVerify: run('runVerify'),
    checkpointWorkspace: run('checkpointWorkspace'),
    restoreWorkspace: run('restoreWorkspace'),
  } as WorkspaceActivities;
}
