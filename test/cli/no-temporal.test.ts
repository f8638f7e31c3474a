/**
 * With no `temporal` anywhere and no Go to build one, `durable-agent server` and
 * scripts/ensure-temporal.ts exit 2 and say what to install. This machine has Go in its usual
 * tarball location (/usr/local/go), which the lookup also tries: each command runs under
 * bubblewrap with an empty directory mounted over it, PATH holding only node's directory, and an
 * empty HOME (so no cached build either).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/chaos';

const NODE_DIR = path.dirname(process.execPath);

function runWithoutTemporal(args: string[]): { status: number | null; stderr: string; stdout: string } {
  const home = mkdtempSync(path.join(tmpdir(), 'da-no-temporal-'));
  const env: NodeJS.ProcessEnv = { PATH: `${NODE_DIR}:/bin`, HOME: home };
  const r = spawnSync('bwrap', ['--dev-bind', '/', '/', '--tmpfs', '/usr/local/go', '--', process.execPath, ...args], {
    cwd: REPO_ROOT,
    env,
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (r.error) throw r.error;
  return { status: r.status, stderr: r.stderr, stdout: r.stdout };
}

test.each([
  ['durable-agent server', [path.join(REPO_ROOT, 'bin', 'durable-agent.js'), 'server']],
  ['scripts/ensure-temporal.ts', ['--require', 'tsx/cjs', path.join(REPO_ROOT, 'scripts', 'ensure-temporal.ts')]],
])('%s exits 2 naming what to install when neither temporal nor go exists', (_, args) => {
  // The test's own premise: nothing on that PATH is either binary.
  expect(spawnSync('sh', ['-c', 'command -v temporal go'], { env: { PATH: `${NODE_DIR}:/bin` } }).status).not.toBe(0);
  const r = runWithoutTemporal(args);
  expect({ status: r.status, stdout: r.stdout }).toEqual({ status: 2, stdout: '' });
  expect(r.stderr).toContain('No Temporal CLI found, and Go is not installed to build one.');
  expect(r.stderr).toContain('DURABLE_AGENT_TEMPORAL_BIN');
});
