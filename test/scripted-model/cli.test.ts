/** `durable-agent scripted-model`: as a real process (serve, log, stop on SIGTERM) and in-process for argument errors. */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import OpenAI from 'openai';
import { runScriptedModelCli } from '../../src/testing/scripted-model';

const root = resolve(__dirname, '../..');
const demo = join(root, 'examples/scenarios/demo.json');
const tsx = join(root, 'node_modules/.bin/tsx');
const entry = "require('./src/testing/scripted-model').runScriptedModelCli(process.argv.slice(1)).then((c) => process.exit(c))";

function startCli(args: string[]) {
  const child = spawn(tsx, ['-e', entry, '--', ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

async function until(check: () => boolean, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function inProcessIo() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l), stop: Promise.resolve() }, out, err };
}

test('serves a scenario file, logs each request, and exits 0 on SIGTERM', async () => {
  const cli = startCli(['--scenario', demo, '--var', 'WORKSPACE=/ws', '--port', '0']);
  try {
    await until(() => cli.stdout().includes('\n'), 'the URL on stdout');
    const url = cli.stdout().split('\n')[0]!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);

    const client = new OpenAI({ baseURL: url, apiKey: 'x', maxRetries: 0 });
    const stream = client.chat.completions.stream({ model: 'any', messages: [{ role: 'user', content: 'fix greet.js' }] });
    const reply = await stream.finalChatCompletion();
    expect(reply.choices[0]!.message.tool_calls).toEqual([
      { id: 'call_read_greet', type: 'function', function: { name: 'Read', arguments: '{"file_path":"/ws/greet.js"}' } },
    ]);
    await until(() => cli.stderr().includes('scenario=demo turn=0 attempt=1 status=200'), 'the request log line');

    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
    expect(cli.stderr()).toContain("scenario 'demo': turns 1, 2, 3 of 4 never served");
  } finally {
    if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
  }
});

test('an unknown flag prints the usage and exits 2', async () => {
  const cli = startCli(['--scenario', demo, '--prot', '8080']);
  expect(await cli.exited).toBe(2);
  expect(cli.stderr()).toContain("unknown argument '--prot'");
  expect(cli.stderr()).toContain('usage: durable-agent scripted-model');
  expect(cli.stdout()).toBe('');
});

test('a bad scenario file is named, exit 2', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cli-'));
  try {
    const bad = join(dir, 'bad.json');
    await writeFile(bad, JSON.stringify({ name: 'b', turns: [{ tool_calls: [{ name: 'Read', arguments: 7 }] }] }));
    const { io, err } = inProcessIo();
    expect(await runScriptedModelCli(['--scenario', bad], io)).toBe(2);
    expect(err.join('\n')).toContain(`${bad}: turns.0.tool_calls.0.arguments: expected an object`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test.each([
  [['--scenario', demo], /demo\.json: turns\.0\.tool_calls\.0\.arguments\.file_path: unknown variable \$\{WORKSPACE\}/],
  [[], /at least one --scenario FILE is required/],
  [['--scenario'], /--scenario needs a value/],
  [['--scenario', demo, '--port', 'http'], /--port: expected a port number, got 'http'/],
  [['--scenario', demo, '--var', 'W'], /--var: expected NAME=VALUE, got 'W'/],
  [['--scenario', demo, '--var=WORKSPACE=/w', '--default', 'other'], /--default: no scenario named 'other'/],
])('%j exits 2 saying why', async (args, message) => {
  const { io, err } = inProcessIo();
  expect(await runScriptedModelCli(args, io)).toBe(2);
  expect(err.join('\n')).toMatch(message);
});

test('--help prints the usage and exits 0', async () => {
  const { io, out } = inProcessIo();
  expect(await runScriptedModelCli(['--help'], io)).toBe(0);
  expect(out.join('\n')).toContain('--var NAME=VALUE');
});

test('in process, it serves until told to stop', async () => {
  let stop!: () => void;
  const { io, out } = inProcessIo();
  const running = runScriptedModelCli(['--scenario', demo, '--var', 'WORKSPACE=/w'], {
    ...io,
    stop: new Promise<void>((r) => (stop = r)),
  });
  await until(() => out.length > 0, 'the URL');
  const client = new OpenAI({ baseURL: out[0]!, apiKey: 'x', maxRetries: 0 });
  expect((await client.models.list()).data.map((m) => m.id)).toEqual(['scripted/demo']);
  stop();
  expect(await running).toBe(0);
});
