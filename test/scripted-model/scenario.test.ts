/** Scenario files: validation names the file and the field; `${NAME}` placeholders; the demo script. */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import OpenAI from 'openai';
import { loadScenarioFile, parseScenario, startScriptedModel, turn } from '../../src/testing/scripted-model';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'scenarios-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function writeScenario(file: string, content: unknown): Promise<string> {
  const path = join(dir, file);
  await writeFile(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

describe('loadScenarioFile', () => {
  test.each([
    [
      'a tool call without a string name',
      { name: 'x', turns: [{ text: 'a' }, { text: 'b' }, { tool_calls: [{ name: 3, arguments: {} }] }] },
      'turns.2.tool_calls.0.name: expected string, received number',
    ],
    ['a missing name', { turns: [] }, 'name: expected string, received undefined'],
    ['an unknown field', { name: 'x', turns: [{ txt: 'hi' }] }, "turns.0.txt: unknown field 'txt'"],
    ['a bad finish reason', { name: 'x', turns: [{ finish_reason: 'done' }] }, 'turns.0.finish_reason: expected one of'],
    [
      'a fault of no known kind',
      { name: 'x', turns: [{ faults: [{ status: 429 }, { drop: 1 }] }] },
      'turns.0.faults.1: expected {status, headers?, body?} | {drop_after_chunks} | {hang_ms, after_chunks?}',
    ],
    [
      'arguments that are a number',
      { name: 'x', turns: [{ tool_calls: [{ name: 'R', arguments: 1 }] }] },
      'turns.0.tool_calls.0.arguments: expected an object',
    ],
  ])('rejects %s, naming the file and the field', async (_what, content, message) => {
    const path = await writeScenario('bad.json', content);
    await expect(loadScenarioFile(path)).rejects.toThrow(`${path}: ${message}`);
  });

  test('rejects a file that is not JSON, or missing', async () => {
    const path = await writeScenario('broken.json', '{ "name": "x", turns: [] }');
    await expect(loadScenarioFile(path)).rejects.toThrow(`${path}: invalid JSON:`);
    await expect(loadScenarioFile(join(dir, 'nope.json'))).rejects.toThrow(/nope\.json: cannot read scenario file: ENOENT/);
  });

  test('applies defaults', async () => {
    const path = await writeScenario('ok.json', { name: 'ok', turns: [{ tool_calls: [{ name: 'Glob' }] }] });
    const s = await loadScenarioFile(path);
    expect(s.turns[0]!.tool_calls![0]).toEqual({ name: 'Glob', arguments: {} });
  });
});

describe('vars', () => {
  const scenario = {
    name: 'v',
    turns: [
      {
        text: 'in ${WORKSPACE}',
        tool_calls: [
          { name: 'Read', arguments: { file_path: '${WORKSPACE}/a.js', nested: ['${WORKSPACE}', 2] } },
          { name: 'Bash', arguments: '{"command": "echo $${HOME} ${WORKSPACE}"}' },
        ],
      },
    ],
  };

  test('substitutes ${NAME} in every string value; $${NAME} is a literal', () => {
    const s = parseScenario(scenario, { vars: { WORKSPACE: '/tmp/ws' } });
    expect(s.turns[0]!.text).toBe('in /tmp/ws');
    expect(s.turns[0]!.tool_calls).toEqual([
      { name: 'Read', arguments: { file_path: '/tmp/ws/a.js', nested: ['/tmp/ws', 2] } },
      { name: 'Bash', arguments: '{"command": "echo ${HOME} /tmp/ws"}' },
    ]);
  });

  test('an unknown variable is an error naming the field', async () => {
    const path = await writeScenario('vars.json', scenario);
    await expect(loadScenarioFile(path)).rejects.toThrow(
      `${path}: turns.0.text: unknown variable \${WORKSPACE} (pass it in vars, or --var WORKSPACE=VALUE; write $\${WORKSPACE} for a literal)`,
    );
  });

  test('are applied once: by loadScenarioFile, or by startScriptedModel for plain objects', async () => {
    const path = await writeScenario('vars2.json', scenario);
    const loaded = await loadScenarioFile(path, { vars: { WORKSPACE: '/from/file' } });
    const model = await startScriptedModel({
      scenarios: [loaded, { name: 'inline', turns: [turn.text('at ${WORKSPACE}')] }],
      vars: { WORKSPACE: '/from/server' },
    });
    try {
      expect(model.scenario('v').turns[0]!.tool_calls![1]!.arguments).toBe('{"command": "echo ${HOME} /from/file"}');
      const client = new OpenAI({ baseURL: model.url, apiKey: 'x', maxRetries: 0, defaultHeaders: { 'x-scenario': 'inline' } });
      const res = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
      expect(res.choices[0]!.message.content).toBe('at /from/server');
    } finally {
      await model.close();
    }
  });
});

test('the demo script edits examples/workspace/greet.js where it is written', async () => {
  const workspace = resolve(__dirname, '../../examples/workspace');
  const demo = await loadScenarioFile(resolve(__dirname, '../../examples/scenarios/demo.json'), { vars: { WORKSPACE: workspace } });
  const calls = demo.turns.map((t) => t.tool_calls?.map((c) => c.name) ?? []);
  expect(calls).toEqual([['Read'], ['Edit'], ['Bash'], []]);

  const edit = demo.turns[1]!.tool_calls![0]!.arguments as { file_path: string; old_string: string; new_string: string };
  expect(edit.file_path).toBe(join(workspace, 'greet.js'));
  const source = await readFile(edit.file_path, 'utf8');
  expect(source.split(edit.old_string)).toHaveLength(2); // exactly one match
  const run = (program: string) => {
    const lines: string[] = [];
    new Function('console', program)({ log: (s: string) => lines.push(s) });
    return lines;
  };
  expect(() => run(source)).toThrow('nme is not defined');
  expect(run(source.replace(edit.old_string, edit.new_string))).toEqual(['Hello, world!']);
});
