/**
 * Hooks are a snapshot taken at session start: a model that rewrites `.claude/settings.json`
 * (it may: cwd is writable) to drop a PreToolUse guard does not get past it.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import { useHarness } from '../helpers/harness';

const h = useHarness();

test('the model rewrites .claude/settings.json to drop the guard: the next Bash call is blocked', async () => {
  const cwd = h.workspace();
  mkdirSync(path.join(cwd, '.claude'));
  const guard = {
    hooks: {
      PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'if grep -q forbidden; then echo no >&2; exit 2; fi' }] }],
    },
  };
  writeFileSync(path.join(cwd, '.claude', 'settings.json'), JSON.stringify(guard));
  const { result } = await h.run(
    {
      name: 'snapshot-e2e',
      turns: [
        turn.tool('Bash', { command: 'echo forbidden > a' }),
        turn.tool('Bash', { command: "echo '{}' > .claude/settings.json" }),
        turn.tool('Bash', { command: 'echo forbidden > b' }),
        turn.text('done'),
      ],
    },
    { cwd, settingSources: ['project'] },
  );
  expect(result).toMatchObject({ subtype: 'success' });
  expect(existsSync(path.join(cwd, 'a'))).toBe(false);
  expect(existsSync(path.join(cwd, 'b'))).toBe(false);
});
