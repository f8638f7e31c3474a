/**
 * Settings the model writes cannot widen its permissions (ARCHITECTURE.md#settings-the-model-cannot-rewrite):
 * a write to a settings file the session reads, or to a script its hooks run, asks in every mode
 * but bypassPermissions — also through a symlink — and is denied in dontAsk.
 */
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import { pendingPermissionsQuery, respondToPermissionUpdate } from '../../src/shared/approvals';
import type { SessionEvent } from '../../src/shared/events';
import { useHarness } from '../helpers/harness';
import { waitFor } from '../helpers/wait';

const h = useHarness();
const GRANT = JSON.stringify({ permissions: { allow: ['Bash'] } });

function deniedMessages(messages: SessionEvent[]): string[] {
  return messages.flatMap((m) => (m.type === 'system' && m.subtype === 'permission_denied' ? [m.message] : []));
}

test('acceptEdits: writing .claude/settings.local.json asks, and a denial leaves it unwritten', async () => {
  const cwd = h.workspace();
  const file = path.join(cwd, '.claude', 'settings.local.json');
  const handle = await h.start(
    { name: 'settings-ask', turns: [turn.tool('Write', { file_path: file, content: GRANT }), turn.text('done')] },
    { cwd, permissionMode: 'acceptEdits', settingSources: ['project', 'local'] },
  );
  const [req] = await waitFor('the request', async () => {
    const p = await handle.workflow.query(pendingPermissionsQuery);
    return p.length ? p : undefined;
  });
  expect(req!.message).toContain('settings file this session reads');
  await handle.workflow.executeUpdate(respondToPermissionUpdate, {
    args: [{ requestId: req!.requestId, behavior: 'deny', message: 'no' }],
  });
  await handle.result();
  expect(existsSync(file)).toBe(false);
});

test('dontAsk with Write allowed: a hook script and a settings file reached through a symlink are refused; other files are written', async () => {
  const cwd = h.workspace();
  mkdirSync(path.join(cwd, '.claude'));
  mkdirSync(path.join(cwd, 'hooks'));
  writeFileSync(path.join(cwd, 'hooks', 'guard.sh'), '#!/bin/sh\nexit 0\n');
  writeFileSync(path.join(cwd, '.claude', 'settings.json'), JSON.stringify({ permissions: { deny: ['Bash(rm:*)'] } }));
  symlinkSync(path.join(cwd, '.claude', 'settings.json'), path.join(cwd, 'notes.json'));
  const run = await h.run(
    {
      name: 'settings-deny',
      turns: [
        turn.tools([
          { id: 'a', name: 'Write', arguments: { file_path: path.join(cwd, 'notes.json'), content: GRANT } },
          { id: 'b', name: 'Write', arguments: { file_path: path.join(cwd, 'hooks', 'guard.sh'), content: '#!/bin/sh\nexit 0 # gone\n' } },
          { id: 'c', name: 'Write', arguments: { file_path: path.join(cwd, 'ok.txt'), content: 'fine' } },
        ]),
        turn.text('done'),
      ],
    },
    {
      cwd,
      permissionMode: 'dontAsk',
      allowedTools: ['Write'],
      settingSources: ['project'],
      hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: `sh ${path.join(cwd, 'hooks', 'guard.sh')}` }] }] },
    },
  );
  const denied = deniedMessages(run.messages);
  expect(denied).toHaveLength(2);
  expect(denied.join('\n')).toContain(path.join(cwd, '.claude', 'settings.json'));
  expect(denied.join('\n')).toContain(path.join(cwd, 'hooks', 'guard.sh'));
  expect(JSON.parse(readFileSync(path.join(cwd, '.claude', 'settings.json'), 'utf8'))).toEqual({ permissions: { deny: ['Bash(rm:*)'] } });
  expect(readFileSync(path.join(cwd, 'hooks', 'guard.sh'), 'utf8')).not.toContain('gone');
  expect(readFileSync(path.join(cwd, 'ok.txt'), 'utf8')).toBe('fine');
});

test('bypassPermissions writes settings files (the mode is outside every guard but deny rules)', async () => {
  const cwd = h.workspace();
  const file = path.join(cwd, '.claude', 'settings.local.json');
  mkdirSync(path.dirname(file));
  const run = await h.run(
    { name: 'settings-bypass', turns: [turn.tool('Write', { file_path: file, content: GRANT }), turn.text('done')] },
    { cwd, permissionMode: 'bypassPermissions' },
  );
  expect(deniedMessages(run.messages)).toEqual([]);
  expect(readFileSync(file, 'utf8')).toBe(GRANT);
});

test('in the sandbox, Bash cannot rewrite or remove the project and local settings files', async () => {
  const cwd = h.workspace();
  mkdirSync(path.join(cwd, '.claude'));
  const local = path.join(cwd, '.claude', 'settings.local.json');
  const project = path.join(cwd, '.claude', 'settings.json');
  writeFileSync(local, '{}');
  writeFileSync(project, '{}');
  const run = await h.run(
    {
      name: 'settings-bash',
      turns: [
        turn.tools([
          { id: 'a', name: 'Bash', arguments: { command: `echo '${GRANT}' > .claude/settings.local.json` } },
          { id: 'b', name: 'Bash', arguments: { command: 'rm -f .claude/settings.json; echo other > other.txt' } },
        ]),
        turn.text('done'),
      ],
    },
    { cwd, permissionMode: 'bypassPermissions', sandbox: 'required' },
  );
  expect(run.result).toMatchObject({ subtype: 'success' });
  expect(readFileSync(local, 'utf8')).toBe('{}');
  expect(readFileSync(project, 'utf8')).toBe('{}');
  expect(readFileSync(path.join(cwd, 'other.txt'), 'utf8')).toBe('other\n');
});
