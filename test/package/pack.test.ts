/**
 * The package as a user gets it: `npm run build`, `npm pack`, `npm install <tarball>` into a
 * scratch project (dependencies from the npm cache), then a worker started from the installed
 * package (`npx durable-agent worker`: compiled JS, the workflow bundle built from dist/), a plain
 * `.mjs` script that imports `query` and runs a session against the scripted model, and a `.ts`
 * file typed with the Claude Agent SDK's own types compiled against the installed package.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startScriptedModel, turn, type ScriptedModel } from '../../src/testing/scripted-model';
import { scenarioTag } from '../helpers/harness';
import { testAddress } from '../helpers/server';
import { waitFor } from '../helpers/wait';

jest.setTimeout(240_000);

const ROOT = path.resolve(__dirname, '..', '..');
const TASK_QUEUE = `agent-pack-${process.pid}`;

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(cmd: string, args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString('utf8')));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function ok(cmd: string, args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<string> {
  const r = await run(cmd, args, opts);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.code}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

let scratch: string;
let model: ScriptedModel;
let worker: ChildProcess | undefined;
let workerLog = '';

// Building, packing and installing is CPU-bound: 1–2 min on a quiet machine, over 4 min with two
// whole suites beside it. The hook's own limit is a backstop for a hang, not a measure of speed.
const INSTALL_BACKSTOP_MS = 15 * 60_000;

beforeAll(async () => {
  await ok('npm', ['run', 'build'], { cwd: ROOT });
  const packDir = mkdtempSync(path.join(tmpdir(), 'da-pack-'));
  await ok('npm', ['pack', '--pack-destination', packDir], { cwd: ROOT });
  const tarball = path.join(
    packDir,
    readdirSync(packDir).find((f) => f.endsWith('.tgz'))!,
  );
  scratch = mkdtempSync(path.join(tmpdir(), 'da-scratch-'));
  writeFileSync(path.join(scratch, 'package.json'), JSON.stringify({ name: 'scratch', version: '1.0.0', private: true }));
  await ok('npm', ['install', tarball, '--no-audit', '--no-fund', '--prefer-offline'], { cwd: scratch });
  model = await startScriptedModel({ scenarios: [] });
}, INSTALL_BACKSTOP_MS);

afterAll(async () => {
  // The worker runs in its own process group (ours): stop it gracefully, the way an operator would.
  if (worker?.pid && worker.exitCode === null) {
    const exited = new Promise((r) => worker!.once('exit', r));
    process.kill(-worker.pid, 'SIGTERM');
    await exited;
  }
  await model?.close();
});

test('the installed package runs: npx durable-agent worker, and a plain .mjs script importing query', async () => {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TEMPORAL_ADDRESS: testAddress(),
    DURABLE_AGENT_TASK_QUEUE: TASK_QUEUE,
    OPENAI_BASE_URL: model.url,
    OPENAI_API_KEY: 'test-key',
  };
  delete env.TEMPORAL_NAMESPACE;
  delete env.TEMPORAL_PROFILE;
  worker = spawn('npx', ['durable-agent', 'worker'], { cwd: scratch, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  worker.stdout!.on('data', (b: Buffer) => (workerLog += b.toString('utf8')));
  worker.stderr!.on('data', (b: Buffer) => (workerLog += b.toString('utf8')));
  await waitFor(
    "the installed worker's ready line",
    () => {
      if (worker!.exitCode !== null) throw new Error(`the worker exited ${worker!.exitCode}:\n${workerLog}`);
      return /\[worker\] .*ready/.test(workerLog);
    },
    120_000,
  ).catch((e: Error) => Promise.reject(new Error(`${e.message}\n${workerLog}`)));
  // Compiled JS from the package, not sources through tsx.
  expect(workerLog).not.toMatch(/tsx/);

  const target = path.join(scratch, 'package.json');
  model.addScenario({ name: 'pack', turns: [turn.tool('Read', { file_path: target }), turn.text('read the manifest')] });
  writeFileSync(
    path.join(scratch, 'main.mjs'),
    `import { query } from 'durable-agent';
const kinds = [];
let result;
for await (const m of query({ prompt: process.argv[2], options: { cwd: process.cwd(), allowedTools: ['Read'] } })) {
  kinds.push(m.type === 'system' ? 'system/' + m.subtype : m.type);
  if (m.type === 'result') result = m;
}
console.log(JSON.stringify({ kinds, subtype: result.subtype, result: result.result }));
`,
  );
  const out = await ok(process.execPath, ['main.mjs', `${scenarioTag('pack')} read package.json`], { cwd: scratch, env });
  const printed = JSON.parse(out.trim().split('\n').pop()!) as { kinds: string[]; subtype: string; result: string };
  expect(printed).toEqual({
    kinds: expect.arrayContaining(['system/init', 'assistant', 'user', 'result']) as unknown as string[],
    subtype: 'success',
    result: 'read the manifest',
  });
  // The Read ran on the installed package's tools worker: the model saw the scratch manifest.
  expect(JSON.stringify(model.requests.filter((r) => r.scenario === 'pack')[1]!.body.messages)).toContain('\\"name\\":\\"scratch\\"');
  // CommonJS gets the same entry points.
  expect(await ok(process.execPath, ['-e', "process.stdout.write(typeof require('durable-agent').query)"], { cwd: scratch })).toBe(
    'function',
  );
});

test("a .ts file typed with the Claude Agent SDK's types compiles against the installed package (ESM and CommonJS)", async () => {
  const body = `import type { Options, Query, SDKMessage, SDKResultMessage, SDKUserMessage } from '@anthropic-ai/claude-agent-sdk';
import { isDurableAgentEvent, query } from 'durable-agent';

export async function ask(prompt: string): Promise<string> {
  const options: Options = { cwd: '/tmp', maxTurns: 3, permissionMode: 'acceptEdits', env: { PATH: '/usr/bin' } };
  const q = query({ prompt, options });
  const control: Pick<Query, 'setModel' | 'setPermissionMode' | 'interrupt'> = q;
  let last: SDKResultMessage | undefined;
  for await (const message of q) {
    // Any type and subtype the SDK declares narrows, and so do our own events.
    if (message.type === 'rate_limit_event' || (message.type === 'system' && message.subtype === 'status')) continue;
    if (message.type === 'system' && message.subtype === 'permission_request') console.log(message.tool_name);
    if (isDurableAgentEvent(message)) continue;
    const m: SDKMessage = message;
    if (m.type === 'result') last = m;
  }
  await control.setModel('gpt-4.1');
  await control.setPermissionMode('default');
  return last?.subtype === 'success' ? last.result : (last?.errors.join('; ') ?? '');
}

export async function* input(): AsyncGenerator<SDKUserMessage> {
  yield { type: 'user', message: { role: 'user', content: 'hi' }, parent_tool_use_id: null };
}
`;
  writeFileSync(path.join(scratch, 'typed.mts'), body);
  writeFileSync(path.join(scratch, 'typed-cjs.cts'), body);
  const modules = path.join(ROOT, 'node_modules');
  writeFileSync(
    path.join(scratch, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: 'ES2022',
        lib: ['ES2022'],
        module: 'nodenext',
        moduleResolution: 'nodenext',
        skipLibCheck: true,
        types: ['node'],
        typeRoots: [path.join(modules, '@types')],
        // The SDK's types from this repository's devDependency: installing it here would fetch its CLI binary.
        paths: { '@anthropic-ai/claude-agent-sdk': [path.join(modules, '@anthropic-ai', 'claude-agent-sdk', 'sdk.d.ts')] },
      },
      files: ['typed.mts', 'typed-cjs.cts'],
    }),
  );
  const r = await run(process.execPath, [path.join(modules, 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: scratch });
  expect(`${r.stdout}${r.stderr}`).toBe('');
  expect(r.code).toBe(0);
});

test('the installed package serves the dashboard: npx durable-agent ui, its page and assets from dist/', async () => {
  const env: NodeJS.ProcessEnv = { ...process.env, TEMPORAL_ADDRESS: testAddress(), DURABLE_AGENT_TASK_QUEUE: TASK_QUEUE };
  const ui = spawn('npx', ['durable-agent', 'ui', '--port', '0'], { cwd: scratch, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  ui.stdout!.on('data', (b: Buffer) => (out += b.toString('utf8')));
  ui.stderr!.on('data', (b: Buffer) => (out += b.toString('utf8')));
  try {
    const url = await waitFor('the dashboard URL', () => /Dashboard: (http:\/\/\S+)/.exec(out)?.[1], 60_000);
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<script defer src="/assets/app.js"></script>');
    const app = await fetch(new URL('/assets/app.js', url));
    expect(app.status).toBe(200);
    expect(await app.text()).toContain('function sessionsPage()');
    const list = await fetch(new URL('/api/sessions', url));
    expect(list.status).toBe(200);
  } finally {
    // Its own process group (npx and the CLI): stop it as an operator would.
    if (ui.exitCode === null) {
      const exited = new Promise((r) => ui.once('exit', r));
      process.kill(-ui.pid!, 'SIGTERM');
      await exited;
    }
    expect(out).toContain('Dashboard: ');
  }
});
