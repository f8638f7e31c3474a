/**
 * `durable-agent ui` refuses bad flags by name with exit 2 before it connects anywhere (the
 * server address here accepts no connection, so reaching it would exit 1, not 2).
 */
import { cli } from '../cli/helpers';

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
