/**
 * `npm run demo`: everything on one machine, nothing to set up. Starts the Temporal dev server
 * (building the CLI on first use), a worker and — without OPENAI_API_KEY — the built-in scripted
 * model; runs one session on a copy of examples/workspace; prints it as it happens; stops all.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadScenarioFile } from '../testing/scripted-model';
import { quietSdkLogs, startStack, type Stack } from '../testing/stack';
import { renderMessage } from './render';
import { startDashboard, type Dashboard } from '../ui/server';

const ROOT = path.resolve(__dirname, '..', '..');
const DEMO_PROMPT = 'greet.js crashes when run. Find the bug, fix it, run the program to check, and tell me what you changed.';

const USAGE = `usage: npm run demo [-- --model MODEL] [--prompt TEXT] [--keep] [--stay]
  --stay: keep the servers and the dashboard up after the session, until Ctrl-C.
  Without OPENAI_API_KEY the built-in scripted model plays the session.
  With OPENAI_API_KEY (and optionally OPENAI_BASE_URL) the real endpoint is used with --model.`;

export async function runDemo(argv: string[]): Promise<number> {
  let args;
  try {
    args = parseArgs({
      args: argv,
      options: {
        model: { type: 'string' },
        prompt: { type: 'string' },
        keep: { type: 'boolean' },
        stay: { type: 'boolean' },
        help: { type: 'boolean' },
      },
      strict: true,
    }).values;
  } catch (e) {
    console.error(`${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  // The SDK's worker lifecycle logs would drown the session; keep its warnings and errors.
  quietSdkLogs('WARN');
  const color = Boolean(process.stdout.isTTY);
  const step = (s: string) => console.log(color ? `\x1b[2m${s}\x1b[0m` : s);
  const workspace = mkdtempSync(path.join(tmpdir(), 'durable-agent-demo-'));
  cpSync(path.join(ROOT, 'examples', 'workspace'), workspace, { recursive: true });

  const realKey = process.env.OPENAI_API_KEY;
  const modelName = args.model ?? 'gpt-4.1-mini';
  let stack: Stack | undefined;
  let dashboard: Dashboard | undefined;
  try {
    step('Starting the Temporal dev server (the first run builds the Temporal CLI; that takes a few minutes)…');
    stack = await startStack({
      devServer: { dbFile: path.join(workspace, '.temporal.db'), ui: true },
      model: realKey
        ? { baseURL: process.env.OPENAI_BASE_URL, apiKey: realKey }
        : {
            scripted: {
              scenarios: await loadScenarioFile(path.join(ROOT, 'examples', 'scenarios', 'demo.json'), { vars: { WORKSPACE: workspace } }),
            },
          },
    });
    const temporalUiUrl = stack.server?.uiUrl;
    const dashboardOn = (port: number) => startDashboard({ client: stack!.client, port, ...(temporalUiUrl ? { temporalUiUrl } : {}) });
    const ui = await dashboardOn(8234).catch((e: NodeJS.ErrnoException) => (e.code === 'EADDRINUSE' ? dashboardOn(0) : Promise.reject(e)));
    dashboard = ui;
    step(`Temporal ${stack.address} · Web UI ${temporalUiUrl ?? 'off'} · Dashboard ${ui.url}`);
    if (stack.model) {
      step(`Model: the built-in scripted model at ${stack.model.url}, priced as ${modelName} (set OPENAI_API_KEY to use a real one)`);
    } else {
      step(`Model: ${modelName} at ${stack.modelUrl ?? 'https://api.openai.com/v1'} (OPENAI_API_KEY is set)`);
    }
    step('Worker running (queues agent, agent-model, agent-tools).');

    const session = await stack.client.start({
      prompt: args.prompt ?? DEMO_PROMPT,
      model: modelName,
      cwd: workspace,
      permissionMode: 'acceptEdits',
      allowedTools: ['Bash'],
      maxTurns: 20,
    });
    step(`Session ${session.sessionId} on ${workspace}\n`);
    console.log(`> ${args.prompt ?? DEMO_PROMPT}`);
    let ok = false;
    for await (const m of session.messages()) {
      for (const line of renderMessage(m, { color })) console.log(line);
      if (m.type === 'result') ok = !m.is_error;
    }
    if (args.stay) {
      step(`\nStaying up: dashboard ${ui.url} · Temporal UI ${temporalUiUrl ?? 'off'} (Ctrl-C to stop)`);
      await new Promise<void>((resolve) => process.once('SIGINT', () => resolve()));
    }
    return ok ? 0 : 1;
  } catch (e) {
    console.error(`demo failed: ${(e as Error).message}`);
    return (e as { exitCode?: number }).exitCode ?? 1;
  } finally {
    await dashboard?.close();
    await stack?.close();
    if (!args.keep) rmSync(workspace, { recursive: true, force: true });
    else step(`Workspace kept at ${workspace}`);
  }
}

if (require.main === module) {
  runDemo(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e) => {
      console.error(e);
      process.exit(1);
    },
  );
}
