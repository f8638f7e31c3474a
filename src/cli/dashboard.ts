/** `durable-agent ui`: serve the dashboard until interrupted (ARCHITECTURE.md#dashboard). */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { DurableAgentClient } from '../client/client';
import { EXIT, err, num, out, parse, UsageError } from './args';
import { checkBind, DashboardConfigError, startDashboard } from '../ui/server';

const UI_USAGE = `usage: durable-agent ui [--port 8234] [--host 127.0.0.1] [--token TOKEN] [--temporal-ui URL] [--open]
  --port N          port to serve on (default 8234; 0: any free port)
  --host HOST       address to bind (default 127.0.0.1; anything else requires a token)
  --token TOKEN     required on every request (default DURABLE_AGENT_UI_TOKEN); open the printed URL once
  --temporal-ui URL the Temporal Web UI, for links to workflows (default DURABLE_AGENT_TEMPORAL_UI, else http://localhost:8233)
  --open            open the signed-in URL in the desktop's browser (xdg-open / open)
Approving, denying and steering need the action token, which the printed URL carries (opening it
once signs the browser in); it is kept in ~/.config/durable-agent/ui-token (mode 0600, hidden from
sandboxed commands), or is --token when one is given. Without it the page is read-only.
Reaches Temporal like every command (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_PROFILE, …).`;

/**
 * The dashboard's action token: kept in a 0600 file under ~/.config/durable-agent/, a folder the
 * Bash sandbox does not let commands read (DEFAULT_DENY_READ), so a command on this host can
 * fetch the page but not act through it (ARCHITECTURE.md#dashboard). Same token across restarts:
 * a browser signed in once stays signed in.
 */
export function uiActionToken(home = homedir()): string {
  const dir = path.join(home, '.config', 'durable-agent');
  const file = path.join(dir, 'ui-token');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    writeFileSync(file, `${randomBytes(32).toString('base64url')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  if ((statSync(file).mode & 0o077) !== 0) {
    chmodSync(file, 0o600);
    err(`${file} was readable by others: made it 0600`);
  }
  const token = readFileSync(file, 'utf8').trim();
  if (token.length < 16) throw new UsageError(`${file}: expected a token of at least 16 characters (delete the file to get a new one)`);
  return token;
}

/** `durable-agent ui`. @public loaded by name through the CLI's lazy(), which knip cannot follow */
export async function uiCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    {
      port: { type: 'string' },
      host: { type: 'string' },
      token: { type: 'string' },
      'temporal-ui': { type: 'string' },
      open: { type: 'boolean' },
    },
    UI_USAGE,
  );
  if (values.help) {
    out(UI_USAGE);
    return EXIT.ok;
  }
  if (positionals.length) throw new UsageError(`ui takes no arguments, got '${positionals[0]}'\n\n${UI_USAGE}`);
  const port = num(values.port, 'port', { integer: true, min: 0 }) ?? 8234;
  if (port > 65535) throw new UsageError(`--port: expected an integer ≤ 65535, got '${values.port}'`);
  const temporalUiUrl = values['temporal-ui'] ?? process.env.DURABLE_AGENT_TEMPORAL_UI;
  if (temporalUiUrl !== undefined && !/^https?:\/\/\S+$/.test(temporalUiUrl)) {
    throw new UsageError(`--temporal-ui: expected an http(s) URL, got '${temporalUiUrl}'`);
  }
  const token = values.token ?? process.env.DURABLE_AGENT_UI_TOKEN;
  try {
    checkBind(values.host ?? '127.0.0.1', token);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const client = await DurableAgentClient.connect();
  let dashboard;
  try {
    dashboard = await startDashboard({
      client,
      host: values.host,
      port,
      token,
      ...(token ? {} : { actionToken: uiActionToken() }),
      ...(temporalUiUrl ? { temporalUiUrl } : {}),
    });
  } catch (e) {
    await client.close();
    if (e instanceof DashboardConfigError) throw new UsageError(e.message);
    if ((e as NodeJS.ErrnoException).code === 'EADDRINUSE')
      throw new UsageError(`--port ${port}: already in use (choose another, or 0 for any)`);
    throw e;
  }
  out(`Dashboard: ${dashboard.url}`);
  if (values.open) openBrowser(dashboard.url);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await dashboard.close();
  await client.close();
  return EXIT.ok;
}

/** The desktop's browser on the signed-in URL; a failure is reported, the dashboard keeps serving. */
function openBrowser(url: string): void {
  const opener = process.platform === 'darwin' ? 'open' : 'xdg-open';
  const child = spawn(opener, [url], { detached: true, stdio: 'ignore' });
  child.on('error', (e) => err(`--open: could not run ${opener} (${e.message}); open the URL above`));
  child.unref();
}
