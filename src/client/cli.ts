/**
 * `durable-agent` — the command line. Exit codes: 0 success, 1 the session ended in an error
 * result, 2 bad input (nothing started).
 */
import path from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ConfigError, type PermissionMode } from '../shared/config';
import type { SDKMessage } from '../shared/events';
import { DurableAgentClient } from './client';
import { renderMessage } from './render';

const USAGE = `usage: durable-agent <command> [options]

Commands:
  server                 run the Temporal dev server (SQLite, Web UI, our search attributes)
  worker                 run the workflow, model and tool workers in one process
  run [prompt]           start a session and stream it (--detach to only print its id)
  watch ID               stream a session's messages
  interrupt ID           interrupt the current turn
  set-model ID MODEL     switch the model for the next call
  usage ID               tokens and cost so far
  show ID                the transcript
  cancel ID              end a session
  scripted-model         serve scenario files as an OpenAI-compatible model (for tests and demos)

Environment: TEMPORAL_ADDRESS (default localhost:7233), TEMPORAL_NAMESPACE (default "default"),
OPENAI_BASE_URL, OPENAI_API_KEY (worker only).`;

class UsageError extends Error {}

function parse<T extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: T, usage: string) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError(`${(e as Error).message}\n\n${usage}`);
  }
}

const RUN_USAGE = `usage: durable-agent run [prompt] [--model M] [--cwd DIR] [--max-turns N] [--max-budget-usd X]
  [--permission-mode default|acceptEdits|bypassPermissions|plan|dontAsk] [--allowed-tools A,B]
  [--disallowed-tools A,B] [--id ID] [--detach] [--json]`;

const list = (s: string | undefined) => (s ? s.split(',').map((x) => x.trim()).filter(Boolean) : undefined);
const num = (s: string | undefined, flag: string) => {
  if (s === undefined) return undefined;
  const n = Number(s);
  if (!Number.isFinite(n)) throw new UsageError(`--${flag}: expected a number, got '${s}'`);
  return n;
};

async function stream(messages: AsyncIterable<SDKMessage>, json: boolean): Promise<number> {
  const color = Boolean(process.stdout.isTTY) && !json;
  let code = 0;
  for await (const m of messages) {
    if (json) process.stdout.write(`${JSON.stringify(m)}\n`);
    else for (const line of renderMessage(m, { color })) console.log(line);
    if (m.type === 'result') code = m.is_error ? 1 : 0;
  }
  return code;
}

async function withClient<T>(fn: (c: DurableAgentClient) => Promise<T>): Promise<T> {
  const client = await DurableAgentClient.connect();
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}

async function runCommand(argv: string[]): Promise<number> {
  const { values: v, positionals } = parse(
    argv,
    {
      model: { type: 'string' },
      cwd: { type: 'string' },
      'max-turns': { type: 'string' },
      'max-budget-usd': { type: 'string' },
      'permission-mode': { type: 'string' },
      'allowed-tools': { type: 'string' },
      'disallowed-tools': { type: 'string' },
      id: { type: 'string' },
      detach: { type: 'boolean' },
      json: { type: 'boolean' },
    },
    RUN_USAGE,
  );
  const prompt = positionals.join(' ').trim();
  if (!prompt) throw new UsageError(`a prompt is required\n\n${RUN_USAGE}`);
  const options = {
    prompt,
    cwd: v.cwd ? path.resolve(v.cwd) : process.cwd(),
    ...(v.model ? { model: v.model } : {}),
    ...(v['max-turns'] ? { maxTurns: num(v['max-turns'], 'max-turns') } : {}),
    ...(v['max-budget-usd'] ? { maxBudgetUsd: num(v['max-budget-usd'], 'max-budget-usd') } : {}),
    ...(v['permission-mode'] ? { permissionMode: v['permission-mode'] as PermissionMode } : {}),
    ...(v['allowed-tools'] ? { allowedTools: list(v['allowed-tools']) } : {}),
    ...(v['disallowed-tools'] ? { disallowedTools: list(v['disallowed-tools']) } : {}),
    ...(v.id ? { sessionId: v.id } : {}),
  };
  return withClient(async (client) => {
    const session = await client.start(options);
    if (v.detach) {
      console.log(session.sessionId);
      return 0;
    }
    if (!v.json) console.error(`session ${session.sessionId} (Ctrl-C interrupts the turn)`);
    const onSigint = () => {
      console.error('\ninterrupting the current turn…');
      session.interrupt().catch((e) => console.error(`interrupt failed: ${(e as Error).message}`));
    };
    process.on('SIGINT', onSigint);
    try {
      return await stream(session.messages(), Boolean(v.json));
    } finally {
      process.off('SIGINT', onSigint);
    }
  });
}

async function idCommand(argv: string[], usage: string, fn: (c: DurableAgentClient, id: string, rest: string[], json: boolean) => Promise<number>) {
  const { values, positionals } = parse(argv, { json: { type: 'boolean' } }, usage);
  const [id, ...rest] = positionals;
  if (!id) throw new UsageError(`a session id is required\n\n${usage}`);
  return withClient((c) => fn(c, id, rest, Boolean(values.json)));
}

const print = (x: unknown) => console.log(JSON.stringify(x, null, 2));

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'server':
        return await (await import('../worker/dev-server')).runServerCommand(rest);
      case 'worker':
        return await (await import('../worker/main')).runWorkerCommand(rest);
      case 'scripted-model':
        return await (await import('../testing/scripted-model')).runScriptedModelCli(rest);
      case 'run':
        return await runCommand(rest);
      case 'watch':
        return await idCommand(rest, 'usage: durable-agent watch ID [--json]', async (c, id, _r, json) => stream((await c.get(id)).messages(), json));
      case 'interrupt':
        return await idCommand(rest, 'usage: durable-agent interrupt ID', async (c, id) => ((await (await c.get(id)).interrupt()), 0));
      case 'set-model':
        return await idCommand(rest, 'usage: durable-agent set-model ID MODEL', async (c, id, [model]) => {
          if (!model) throw new UsageError('usage: durable-agent set-model ID MODEL');
          await (await c.get(id)).setModel(model);
          return 0;
        });
      case 'usage':
        return await idCommand(rest, 'usage: durable-agent usage ID', async (c, id) => (print(await (await c.get(id)).usage()), 0));
      case 'show':
        return await idCommand(rest, 'usage: durable-agent show ID', async (c, id) => (print(await (await c.get(id)).transcript()), 0));
      case 'cancel':
        return await idCommand(rest, 'usage: durable-agent cancel ID', async (c, id) => ((await (await c.get(id)).cancel()), 0));
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        console.log(USAGE);
        return command === undefined ? 2 : 0;
      default:
        console.error(`unknown command '${command}'\n\n${USAGE}`);
        return 2;
    }
  } catch (e) {
    if (e instanceof UsageError || e instanceof ConfigError) {
      console.error(e.message);
      return 2;
    }
    console.error(`error: ${(e as Error).message}`);
    return 1;
  }
}

if (require.main === module) {
  void main(process.argv.slice(2)).then((code) => process.exit(code));
}
