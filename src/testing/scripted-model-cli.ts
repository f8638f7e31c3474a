/**
 * `durable-agent scripted-model --scenario FILE [--scenario FILE ...] [--port P] [--host H]
 * [--var NAME=VALUE ...] [--default NAME]`: serve scenario files until SIGINT/SIGTERM.
 *
 * The URL is the only thing on stdout (so a script can read it); request logs go to stderr.
 */
import { loadScenarioFile, type Scenario } from './scenario';
import { startScriptedModel, type RecordedRequest, type ScriptedModel } from './scripted-server';

const SCRIPTED_MODEL_USAGE = `usage: durable-agent scripted-model --scenario FILE [--scenario FILE ...] [options]

Serve scripted OpenAI-compatible chat completions (POST /v1/chat/completions, GET /v1/models).
A request picks its scenario by the header x-scenario, else model "scripted/NAME" (a known
scenario), else a [scenario:NAME] tag in its first user message, else the default; its turn is
the number of assistant messages it holds.

options:
  --scenario FILE     scenario JSON file (repeatable; the first is the default)
  --port P            port to listen on (default 0: a free port)
  --host H            address to bind (default 127.0.0.1)
  --var NAME=VALUE    value for \${NAME} placeholders in the scenarios (repeatable)
  --default NAME      the scenario served when a request names none
  --max-concurrent N  answer 429 (with retry-after) to requests beyond N in flight, as a rate-limited provider
  --retry-after-ms M  the retry-after those 429s carry (default 1000)
  -h, --help          show this help`;

export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
  /** Resolves when the server should stop; default: the first SIGINT or SIGTERM. */
  stop?: Promise<void>;
}

const defaultIo: CliIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

interface CliArgs {
  files: string[];
  port: number;
  host: string;
  vars: Record<string, string>;
  defaultScenario?: string;
  maxConcurrent?: number;
  retryAfterMs?: number;
}

/** Run the CLI; resolves with the exit code: 0 after a clean stop, 2 on a usage or scenario error, 1 if it cannot listen. */
export async function runScriptedModelCli(argv: string[], io: CliIo = defaultIo): Promise<number> {
  const parsed = parseArgs(argv);
  if (parsed === 'help') {
    io.out(SCRIPTED_MODEL_USAGE);
    return 0;
  }
  if (typeof parsed === 'string') {
    io.err(`durable-agent scripted-model: ${parsed}\n\n${SCRIPTED_MODEL_USAGE}`);
    return 2;
  }
  const scenarios: Scenario[] = [];
  try {
    for (const file of parsed.files) scenarios.push(await loadScenarioFile(file, { vars: parsed.vars }));
  } catch (err) {
    io.err(`durable-agent scripted-model: ${(err as Error).message}`);
    return 2;
  }
  const names = scenarios.map((s) => s.name);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup !== undefined || (parsed.defaultScenario !== undefined && !names.includes(parsed.defaultScenario))) {
    const problem =
      dup !== undefined ? `two scenario files are named '${dup}'` : `--default: no scenario named '${parsed.defaultScenario}'`;
    io.err(`durable-agent scripted-model: ${problem} (scenarios: ${names.join(', ')})`);
    return 2;
  }
  let model: ScriptedModel;
  try {
    model = await startScriptedModel({
      scenarios,
      defaultScenario: parsed.defaultScenario,
      port: parsed.port,
      host: parsed.host,
      ...(parsed.maxConcurrent !== undefined ? { maxConcurrent: parsed.maxConcurrent } : {}),
      ...(parsed.retryAfterMs !== undefined ? { retryAfterMs: parsed.retryAfterMs } : {}),
      onRequest: (r) => io.err(describeRequest(r)),
    });
  } catch (err) {
    io.err(`durable-agent scripted-model: cannot listen on ${parsed.host}:${parsed.port}: ${(err as Error).message}`);
    return 1;
  }
  io.out(model.url);
  io.err(`scripted-model: serving ${scenarios.map((s) => `'${s.name}' (${s.turns.length} turns)`).join(', ')}`);
  await (io.stop ?? untilSignal());
  await model.close();
  try {
    model.assertConsumed();
  } catch (err) {
    io.err((err as Error).message);
  }
  return 0;
}

function describeRequest(r: RecordedRequest): string {
  const fault = !r.fault
    ? ''
    : 'status' in r.fault
      ? ' (fault)'
      : 'drop_after_chunks' in r.fault
        ? ` (fault: dropped after ${r.fault.drop_after_chunks} chunks)`
        : ` (fault: hang ${r.fault.hang_ms}ms)`;
  return `scripted-model: scenario=${r.scenario} turn=${r.turnIndex} attempt=${r.attempt} status=${r.status}${fault}`;
}

function parseArgs(argv: string[]): CliArgs | 'help' | string {
  const args: CliArgs = { files: [], port: 0, host: '127.0.0.1', vars: {} };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '-h' || arg === '--help') return 'help';
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    if (!['--scenario', '--port', '--host', '--var', '--default', '--max-concurrent', '--retry-after-ms'].includes(flag))
      return `unknown argument '${arg}'`;
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined) return `${flag} needs a value`;
    if (flag === '--scenario') args.files.push(value);
    else if (flag === '--host') args.host = value;
    else if (flag === '--default') args.defaultScenario = value;
    else if (flag === '--max-concurrent' || flag === '--retry-after-ms') {
      if (!/^\d+$/.test(value) || (flag === '--max-concurrent' && Number(value) < 1))
        return `${flag}: expected a whole number, got '${value}'`;
      if (flag === '--max-concurrent') args.maxConcurrent = Number(value);
      else args.retryAfterMs = Number(value);
    } else if (flag === '--port') {
      if (!/^\d+$/.test(value) || Number(value) > 65535) return `--port: expected a port number, got '${value}'`;
      args.port = Number(value);
    } else {
      const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(value);
      if (!m) return `--var: expected NAME=VALUE, got '${value}'`;
      args.vars[m[1]!] = m[2]!;
    }
  }
  if (args.files.length === 0) return 'at least one --scenario FILE is required';
  return args;
}

function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
