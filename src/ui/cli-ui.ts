/** `durable-agent ui`: serve the dashboard until interrupted (ARCHITECTURE.md#dashboard). */
import { DurableAgentClient } from '../client/client';
import { EXIT, num, out, parse, UsageError } from '../client/cli-args';
import { checkBind, DashboardConfigError, startDashboard } from './server';

export const UI_USAGE = `usage: durable-agent ui [--port 8234] [--host 127.0.0.1] [--token TOKEN] [--temporal-ui URL]
  --port N          port to serve on (default 8234; 0: any free port)
  --host HOST       address to bind (default 127.0.0.1; anything else requires a token)
  --token TOKEN     required on every request (default DURABLE_AGENT_UI_TOKEN); open the printed URL once
  --temporal-ui URL the Temporal Web UI, for links to workflows (default DURABLE_AGENT_TEMPORAL_UI, else http://localhost:8233)
Reaches Temporal like every command (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_PROFILE, …).`;

export async function uiCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    { port: { type: 'string' }, host: { type: 'string' }, token: { type: 'string' }, 'temporal-ui': { type: 'string' } },
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
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await dashboard.close();
  await client.close();
  return EXIT.ok;
}
