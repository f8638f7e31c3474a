/**
 * `durable-agent ui` refuses bad flags by name with exit 2 before it connects anywhere (the
 * server address here accepts no connection, so reaching it would exit 1, not 2).
 */
import { mkdtempSync, readFileSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cli } from '../cli/helpers';
import { uiActionToken } from '../../src/cli/dashboard';
import { DEFAULT_DENY_READ } from '../../src/activities/sandbox';

const env = { ...process.env, TEMPORAL_ADDRESS: '127.0.0.1:1', DURABLE_AGENT_UI_TOKEN: '' };

test.each([
  [['--port', 'abc'], "--port: expected an integer ≥ 0, got 'abc'"],
  [['--port', '70000'], "--port: expected an integer ≤ 65535, got '70000'"],
  [['--host', '0.0.0.0'], '--host 0.0.0.0: binding beyond this machine needs --token (or DURABLE_AGENT_UI_TOKEN)'],
  [['--temporal-ui', 'ftp://x'], "--temporal-ui: expected an http(s) URL, got 'ftp://x'"],
  [['extra'], "ui takes no arguments, got 'extra'"],
  [['--colour', 'red'], "Unknown option '--colour'"],
])('durable-agent ui %j: exit 2, naming the flag', async (args, message) => {
  const r = await cli(['ui', ...args], { env });
  expect(r.stderr).toContain(message);
  expect(r.code).toBe(2);
});

test('the action token is kept in a 0600 file under ~/.config/durable-agent/, on the sandbox deny-read list, and reused', () => {
  const home = mkdtempSync(path.join(tmpdir(), 'da-ui-home-'));
  const file = path.join(home, '.config', 'durable-agent', 'ui-token');
  const token = uiActionToken(home);
  expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect(statSync(file).mode & 0o777).toBe(0o600);
  expect(statSync(path.dirname(file)).mode & 0o077).toBe(0);
  expect(uiActionToken(home)).toBe(token);
  expect(DEFAULT_DENY_READ).toContain('~/.config');
  // A file others can read is tightened; one too short to be a token is refused by name.
  chmodSync(file, 0o644);
  expect(uiActionToken(home)).toBe(token);
  expect(statSync(file).mode & 0o777).toBe(0o600);
  writeFileSync(file, 'short\n');
  expect(() => uiActionToken(home)).toThrow(`${file}: expected a token of at least 16 characters`);
  expect(readFileSync(file, 'utf8')).toBe('short\n');
});
