#!/usr/bin/env node
// The programs `npm test` needs besides Node: ripgrep (the Grep tool), bubblewrap and socat (the Bash
// sandbox and its network bridge), tmux (the terminal the batch progress test draws in) and Debian's chromium (the dashboard's
// browser tests, driven by playwright-core, which downloads no browser of its own). Run by `npm test` before
// anything else, so a fresh clone either gets them or stops
// at once with one line saying how, instead of failing tests one by one. As root with apt-get
// (a CI container, a fresh VM) they are installed; otherwise nothing is changed on the machine.
// Plain Node with no dependencies: it runs before `npm ci` has to have succeeded.
// `--integration` (run by `npm run test:integration`) asks only for what that tier's tests use:
// ripgrep, bubblewrap and socat, not the browser or tmux. Neither mode builds Temporal: that is
// jest's global setup (test/global-setup.ts), which the integration tier does not run.
import { spawnSync } from 'node:child_process';
import { appendFileSync } from 'node:fs';

/** command on PATH → the Debian/Ubuntu package that provides it */
const ALL = [
  { command: 'rg', pkg: 'ripgrep', why: 'the Grep tool', integration: true },
  { command: 'bwrap', pkg: 'bubblewrap', why: 'the Bash sandbox', integration: true },
  { command: 'socat', pkg: 'socat', why: "the Bash sandbox's bridge to its network proxy", integration: true },
  { command: 'chromium', pkg: 'chromium', why: 'the dashboard browser tests' },
  { command: 'tmux', pkg: 'tmux', why: 'the batch progress display test (a real terminal)' },
];
const integrationOnly = process.argv.includes('--integration');
const REQUIRED = integrationOnly ? ALL.filter((r) => r.integration) : ALL;
const runAgain = integrationOnly ? 'npm run test:integration' : 'npm test';

const onPath = (command) => spawnSync('/bin/sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;

function aptInstall(pkgs) {
  const canApt = process.platform === 'linux' && process.getuid?.() === 0 && onPath('apt-get');
  if (!canApt) return false;
  const log = '/tmp/durable-agent-apt.log';
  process.stderr.write(`[test-prerequisites] installing ${pkgs.join(', ')} with apt-get (log: ${log})\n`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [
    ['update', '-qq'],
    ['install', '-y', '-qq', '--no-install-recommends', ...pkgs],
  ]) {
    const r = spawnSync('apt-get', args, { env, encoding: 'utf8' });
    appendFileSync(log, `$ apt-get ${args.join(' ')}\n${r.stdout ?? ''}${r.stderr ?? ''}\n`);
    if (r.status !== 0) return false;
  }
  return true;
}

let missing = REQUIRED.filter((r) => !onPath(r.command));
if (missing.length > 0 && aptInstall(missing.map((r) => r.pkg))) missing = missing.filter((r) => !onPath(r.command));
if (missing.length > 0) {
  const names = missing.map((r) => `${r.command} (${r.why})`).join(' and ');
  const pkgs = missing.map((r) => r.pkg).join(' ');
  console.error(
    `${runAgain} needs ${names}: install ${missing.length > 1 ? 'them' : 'it'} (e.g. \`sudo apt-get install ${pkgs}\`) and run ${runAgain} again.`,
  );
  process.exit(1);
}
