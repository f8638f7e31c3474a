/**
 * The scripted model drives all six core tools through a real session on a sample repository,
 * which must end in the expected state; Bash children never see the worker's secrets.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import type { ToolResultBlock } from '../../src/shared/messages';
import { useHarness } from '../helpers/harness';

// Secrets in the worker's environment before its tools are first used, as in production.
process.env.OPENAI_API_KEY = 'sk-worker-secret';
process.env.TEMPORAL_API_KEY = 'temporal-secret';
process.env.ANTHROPIC_API_KEY = 'anthropic-secret';
process.env.DURABLE_AGENT_TEST_SECRET = 'custom-secret';
const h = useHarness();

function sampleRepo(): string {
  const ws = h.workspace();
  mkdirSync(path.join(ws, 'src'));
  writeFileSync(path.join(ws, 'src', 'math.js'), 'function add(a, b) {\n  return a - b;\n}\n\nmodule.exports = { add };\n');
  writeFileSync(path.join(ws, 'src', 'strings.js'), 'function shout(s) {\n  return s.toUpperCase();\n}\n\nmodule.exports = { shout };\n');
  writeFileSync(
    path.join(ws, 'test.js'),
    "const { add } = require('./src/math');\nif (add(2, 3) !== 5) { console.error('add is broken'); process.exit(1); }\nconsole.log('all tests pass');\n",
  );
  return ws;
}

test('a session uses Glob, Grep, Read, Edit, Write and Bash and leaves the repository fixed', async () => {
  const ws = sampleRepo();
  const math = path.join(ws, 'src', 'math.js');
  const { handle, result } = await h.run(
    {
      name: 'six-tools',
      turns: [
        turn.tools([
          { id: 'g1', name: 'Glob', arguments: { pattern: 'src/*.js' } },
          { id: 'g2', name: 'Grep', arguments: { pattern: 'function add', output_mode: 'content' } },
        ]),
        turn.tool('Read', { file_path: math }),
        turn.tool('Edit', { file_path: math, old_string: 'return a - b;', new_string: 'return a + b;' }),
        turn.tool('Write', { file_path: path.join(ws, 'CHANGELOG.md'), content: '# Changelog\n\n- Fix add() to add.\n' }),
        turn.tool('Bash', { command: 'node test.js' }),
        turn.text('Fixed add() and recorded it in CHANGELOG.md; the tests pass.'),
      ],
    },
    { cwd: ws, permissionMode: 'acceptEdits', allowedTools: ['Bash'] },
  );
  expect(result.subtype).toBe('success');
  expect(readFileSync(math, 'utf8')).toBe('function add(a, b) {\n  return a + b;\n}\n\nmodule.exports = { add };\n');
  expect(readFileSync(path.join(ws, 'CHANGELOG.md'), 'utf8')).toBe('# Changelog\n\n- Fix add() to add.\n');

  const results = (await handle.transcript())
    .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
    .filter((b): b is ToolResultBlock => b.type === 'tool_result');
  expect(results.map((r) => r.is_error ?? false)).toEqual([false, false, false, false, false, false]);
  expect(results[0]!.content.split('\n').sort()).toEqual([math, path.join(ws, 'src', 'strings.js')].sort());
  expect(results[1]!.content).toBe(`${math}:1:function add(a, b) {`);
  expect(results[2]!.content).toBe(
    '     1\tfunction add(a, b) {\n     2\t  return a - b;\n     3\t}\n     4\t\n     5\tmodule.exports = { add };',
  );
  expect(results[5]!.content).toBe('all tests pass');
});

test('Edit refuses a file the session has not read', async () => {
  const ws = sampleRepo();
  const { handle } = await h.run(
    {
      name: 'edit-unread',
      turns: [turn.tool('Edit', { file_path: path.join(ws, 'src', 'math.js'), old_string: 'a - b', new_string: 'a + b' }), turn.text('ok')],
    },
    { cwd: ws },
  );
  const transcript = await handle.transcript();
  const result = (transcript[2]!.content as ToolResultBlock[])[0]!;
  expect(result).toMatchObject({ is_error: true, content: 'File has not been read yet. Read it first before writing to it.' });
  expect(readFileSync(path.join(ws, 'src', 'math.js'), 'utf8')).toContain('a - b');
});

test("a Bash child sees none of the worker's secrets, and does see the session's env", async () => {
  const { handle } = await h.run(
    { name: 'env', turns: [turn.tool('Bash', { command: 'env | sort' }), turn.text('ok')] },
    { env: { PROJECT_FLAG: 'on' } },
  );
  const output = ((await handle.transcript())[2]!.content as ToolResultBlock[])[0]!.content;
  expect(output).toContain('PROJECT_FLAG=on');
  expect(output).toMatch(/^PATH=/m); // the ordinary environment is passed through
  expect(output).not.toMatch(/secret/);
  expect(output).not.toMatch(/^(OPENAI|TEMPORAL|ANTHROPIC|DURABLE_AGENT)_/m);
});
