/** cleanupWorkspaces and `durable-agent cleanup` (docs/ARCHITECTURE.md#workspaces). */
import * as fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cleanupWorkspaces, TEMP_MAX_AGE_MS } from '../../src/activities/workspace/cleanup';
import { mirrorPaths, sessionPaths } from '../../src/activities/workspace/layout';
import { main } from '../../src/cli/main';
import { parseDuration } from '../../src/cli/workspace';
import { activities, makeOrigin, type Origin } from './helpers';

jest.setTimeout(60_000);

let dir: string;
let root: string;
let origin: Origin;
beforeEach(() => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'da-wsc-')));
  root = path.join(dir, 'root');
  origin = makeOrigin(dir);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const DAY = 86_400_000;

test('finished sessions older than asked go, with what is kept about them; running ones, recent ones and mirrors stay', async () => {
  const acts = activities(root);
  for (const id of ['done', 'running', 'unknown', 'recent']) {
    const ws = await acts.provisionWorkspace({ sessionId: id, workspace: { git: origin.url, ref: 'main' } });
    await acts.workspaceDiff({ sessionId: id, path: ws.path, base: ws.base });
  }
  const tmpOld = path.join(root, 'sessions', '.tmp-crashed-1-abc');
  const tmpNew = path.join(root, 'sessions', '.tmp-crashed-2-def');
  fs.mkdirSync(tmpOld);
  fs.mkdirSync(tmpNew);
  const hourAgo = new Date(Date.now() - TEMP_MAX_AGE_MS - 60_000);
  fs.utimesSync(tmpOld, hourAgo, hourAgo);

  // Every session but 'recent' last touched 8 days ago.
  const eightDaysAgo = new Date(Date.now() - 8 * DAY);
  for (const id of ['done', 'running', 'unknown']) {
    const p = sessionPaths(root, id);
    for (const f of [p.folder, p.meta, p.patch]) fs.utimesSync(f, eightDaysAgo, eightDaysAgo);
  }

  const asked: string[] = [];
  const report = await cleanupWorkspaces({
    root,
    olderThanMs: 7 * DAY,
    isRunning: async (id) => {
      asked.push(id);
      if (id === 'unknown') throw new Error('server unreachable');
      return id === 'running';
    },
  });
  expect(report.removed).toEqual([{ sessionId: 'done', path: sessionPaths(root, 'done').folder }]);
  expect(report.keptRunning).toEqual(['running']);
  expect(report.keptUnknown).toEqual([{ sessionId: 'unknown', error: 'server unreachable' }]);
  expect(report.tempRemoved).toEqual([tmpOld]);
  // A session touched recently is not even asked about.
  expect(asked.sort()).toEqual(['done', 'running', 'unknown']);
  const p = sessionPaths(root, 'done');
  for (const f of [p.folder, p.meta, p.gitDir, p.patch]) expect(fs.existsSync(f)).toBe(false);
  for (const id of ['running', 'unknown', 'recent']) {
    const q = sessionPaths(root, id);
    for (const f of [q.folder, q.meta, q.gitDir, q.patch]) expect(fs.existsSync(f)).toBe(true);
  }
  expect(fs.existsSync(tmpNew)).toBe(true);
  expect(fs.existsSync(mirrorPaths(root, origin.url).dir)).toBe(true);
});

test('a cleaned-up session provisioned again gets a fresh folder', async () => {
  const acts = activities(root);
  const ws = await acts.provisionWorkspace({ sessionId: 's', workspace: { git: origin.url, ref: 'main' } });
  fs.writeFileSync(path.join(ws.path, 'junk'), 'x');
  await cleanupWorkspaces({ root, olderThanMs: 0, now: Date.now() + 1000, isRunning: async () => false });
  const again = await acts.provisionWorkspace({ sessionId: 's', workspace: { git: origin.url, ref: 'main' } });
  expect(again.path).toBe(ws.path);
  expect(fs.existsSync(path.join(again.path, 'junk'))).toBe(false);
});

describe('durations', () => {
  test.each([
    ['7d', 7 * DAY],
    ['12h', 12 * 3_600_000],
    ['30m', 30 * 60_000],
    ['45s', 45_000],
  ])('%s', (s, ms) => expect(parseDuration(s, 'older-than')).toBe(ms));

  test.each(['7', 'd', '1w', '-1d', '1.5h', ''])('%j is refused naming the flag', (s) => {
    expect(() => parseDuration(s, 'older-than')).toThrow(`--older-than: expected a duration like 7d, 12h or 30m, got '${s}'`);
  });

  test('the CLI: a bad duration or none exits 2 before connecting', async () => {
    const errors: string[] = [];
    const spy = jest.spyOn(process.stderr, 'write').mockImplementation((s) => (errors.push(String(s)), true));
    try {
      expect(await main(['cleanup', '--older-than', '7 days'])).toBe(2);
      expect(await main(['cleanup'])).toBe(2);
    } finally {
      spy.mockRestore();
    }
    expect(errors[0]).toContain("--older-than: expected a duration like 7d, 12h or 30m, got '7 days'");
    expect(errors[1]).toContain('--older-than: required');
  });
});
