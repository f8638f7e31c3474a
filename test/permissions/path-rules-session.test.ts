/**
 * Path rules on real paths, through a session on the real worker (ARCHITECTURE.md#path-rules-on-real-paths):
 * with `Read(./secrets/**)` and `Edit(./protected/**)` denied, no symlink, search or glob reads
 * or changes what they cover, while the same tools work everywhere else.
 */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { turn } from '../../src/testing/scripted-model';
import { toolResultsById } from '../helpers/chaos';
import { useHarness } from '../helpers/harness';

const h = useHarness();
const SECRET = 'hunter2-secret-value';

test('symlinks, Grep and Glob do not get past Read and Edit deny rules', async () => {
  const cwd = h.workspace();
  mkdirSync(path.join(cwd, 'secrets'));
  mkdirSync(path.join(cwd, 'protected'));
  mkdirSync(path.join(cwd, 'src'));
  writeFileSync(path.join(cwd, 'secrets', 'key'), `${SECRET}\n`);
  writeFileSync(path.join(cwd, 'protected', 'conf'), 'original\n');
  writeFileSync(path.join(cwd, 'src', 'app.txt'), 'public text\n');
  symlinkSync(path.join(cwd, 'secrets', 'key'), path.join(cwd, 'key-link'));
  symlinkSync(path.join(cwd, 'secrets'), path.join(cwd, 'dir-link'));
  symlinkSync(path.join(cwd, 'protected', 'conf'), path.join(cwd, 'conf-link'));
  symlinkSync(path.join(cwd, 'protected'), path.join(cwd, 'prot-link'));
  const calls = [
    { id: 'read-file-link', name: 'Read', arguments: { file_path: path.join(cwd, 'key-link') } },
    { id: 'read-dir-link', name: 'Read', arguments: { file_path: path.join(cwd, 'dir-link', 'key') } },
    { id: 'grep-parent', name: 'Grep', arguments: { pattern: 'hunter2', path: cwd, output_mode: 'content' } },
    { id: 'grep-glob', name: 'Grep', arguments: { pattern: 'hunter2', glob: 'secrets/*', output_mode: 'content' } },
    { id: 'glob', name: 'Glob', arguments: { pattern: '**/key' } },
    { id: 'read-public', name: 'Read', arguments: { file_path: path.join(cwd, 'src', 'app.txt') } },
    {
      id: 'edit-file-link',
      name: 'Edit',
      arguments: { file_path: path.join(cwd, 'conf-link'), old_string: 'original', new_string: 'changed' },
    },
    { id: 'write-dir-link', name: 'Write', arguments: { file_path: path.join(cwd, 'prot-link', 'conf'), content: 'overwritten\n' } },
    { id: 'write-public', name: 'Write', arguments: { file_path: path.join(cwd, 'src', 'new.txt'), content: 'new\n' } },
  ];
  const run = await h.run(
    { name: 'path-rules', turns: [turn.tools(calls), turn.text('done')] },
    { cwd, permissionMode: 'bypassPermissions', disallowedTools: ['Read(./secrets/**)', 'Edit(./protected/**)'] },
  );
  expect(run.result).toMatchObject({ subtype: 'success' });
  const results = toolResultsById(await run.handle.transcript());
  const text = (id: string) => JSON.stringify(results.get(id)?.content ?? '');
  for (const id of ['read-file-link', 'read-dir-link', 'grep-parent', 'grep-glob', 'glob']) {
    expect([id, text(id).includes(SECRET)]).toEqual([id, false]);
  }
  for (const id of ['read-file-link', 'read-dir-link', 'edit-file-link', 'write-dir-link']) {
    expect([id, results.get(id)?.is_error]).toEqual([id, true]);
  }
  expect(text('glob')).not.toContain(path.join('secrets', 'key'));
  expect(text('read-public')).toContain('public text');
  expect(readFileSync(path.join(cwd, 'protected', 'conf'), 'utf8')).toBe('original\n');
  expect(readFileSync(path.join(cwd, 'src', 'new.txt'), 'utf8')).toBe('new\n');
});
