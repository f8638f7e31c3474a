import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { call, readStamp, removeTempDirs, tempDir, write } from './helpers';

let cwd: string;
let outside: string;
let extra: string;
beforeEach(async () => {
  cwd = await tempDir('da-ws-');
  outside = await tempDir('da-outside-');
  extra = await tempDir('da-extra-');
  await write(path.join(outside, 'secret.txt'), 'TOP SECRET\n');
  await write(path.join(extra, 'shared.txt'), 'shared\n');
});
afterAll(removeTempDirs);

const denied = (p: string) => `Path ${p} is outside the allowed working directories: ${cwd}, ${extra}`;
const opts = () => ({ ctx: { additionalDirectories: [extra] } });

describe('path policy', () => {
  test('a path outside cwd and additionalDirectories is refused by every file tool', async () => {
    const secret = path.join(outside, 'secret.txt');
    const cases: [string, Record<string, unknown>][] = [
      ['Read', { file_path: secret }],
      ['Write', { file_path: path.join(outside, 'new.txt'), content: 'x' }],
      ['Edit', { file_path: secret, old_string: 'TOP', new_string: 'NO' }],
      ['Glob', { pattern: '*', path: outside }],
      ['Grep', { pattern: 'SECRET', path: outside }],
    ];
    for (const [tool, input] of cases) {
      const target = (input.file_path ?? input.path) as string;
      expect(await call(cwd, tool, input, opts())).toEqual({ content: denied(target), isError: true });
    }
    expect(await call(cwd, 'Read', { file_path: `${cwd}/../${path.basename(outside)}/secret.txt` }, opts())).toEqual({
      content: denied(secret),
      isError: true,
    });
    expect(await fs.readFile(secret, 'utf8')).toBe('TOP SECRET\n');
    await expect(fs.stat(path.join(outside, 'new.txt'))).rejects.toThrow(/ENOENT/);
  });

  test('additionalDirectories are allowed', async () => {
    const out = await call(cwd, 'Read', { file_path: path.join(extra, 'shared.txt') }, opts());
    expect(out).toMatchObject({ content: '     1\tshared', isError: false });
  });

  test('a symlink escaping the workspace is refused; Glob and Grep do not follow it', async () => {
    await fs.symlink(path.join(outside, 'secret.txt'), path.join(cwd, 'link.txt'));
    await fs.symlink(outside, path.join(cwd, 'linkdir'));
    expect(await call(cwd, 'Read', { file_path: path.join(cwd, 'link.txt') }, opts())).toEqual({
      content: denied(path.join(cwd, 'link.txt')),
      isError: true,
    });
    expect(await call(cwd, 'Read', { file_path: path.join(cwd, 'linkdir/secret.txt') }, opts())).toEqual({
      content: denied(path.join(cwd, 'linkdir/secret.txt')),
      isError: true,
    });
    // writing a new file through a linked directory
    expect(await call(cwd, 'Write', { file_path: path.join(cwd, 'linkdir/planted.txt'), content: 'x' }, opts())).toEqual({
      content: denied(path.join(cwd, 'linkdir/planted.txt')),
      isError: true,
    });
    expect((await call(cwd, 'Glob', { pattern: '**/*' }, opts())).content).toBe('No files found');
    expect((await call(cwd, 'Glob', { pattern: 'linkdir/*' }, opts())).content).toBe(denied(path.join(cwd, 'linkdir')));
    expect((await call(cwd, 'Grep', { pattern: 'SECRET' }, { ...opts(), opsOptions: { ripgrep: null } })).content).toBe('No files found');
    expect((await call(cwd, 'Grep', { pattern: 'SECRET' }, opts())).content).toBe('No files found');
  });

  test('a dangling symlink pointing outside cannot be written through', async () => {
    await fs.symlink(path.join(outside, 'not-yet.txt'), path.join(cwd, 'dangling'));
    expect(await call(cwd, 'Write', { file_path: path.join(cwd, 'dangling'), content: 'x' }, opts())).toEqual({
      content: denied(path.join(cwd, 'dangling')),
      isError: true,
    });
    expect(await call(cwd, 'Edit', { file_path: path.join(cwd, 'dangling'), old_string: '', new_string: 'x' }, opts())).toEqual({
      content: denied(path.join(cwd, 'dangling')),
      isError: true,
    });
    await expect(fs.stat(path.join(outside, 'not-yet.txt'))).rejects.toThrow(/ENOENT/);
  });

  test('a symlink inside the workspace works, and stamps cover both paths', async () => {
    await write(path.join(cwd, 'real.txt'), 'hello\n');
    await fs.symlink(path.join(cwd, 'real.txt'), path.join(cwd, 'alias.txt'));
    const out = await call(cwd, 'Read', { file_path: path.join(cwd, 'alias.txt') });
    const mtimeMs = (await fs.stat(path.join(cwd, 'real.txt'))).mtimeMs;
    expect(out.fileStamps).toEqual([
      { path: path.join(cwd, 'alias.txt'), mtimeMs },
      { path: path.join(cwd, 'real.txt'), mtimeMs },
    ]);
    const stamp = await readStamp(cwd, path.join(cwd, 'alias.txt'));
    const edited = await call(
      cwd,
      'Edit',
      { file_path: path.join(cwd, 'alias.txt'), old_string: 'hello', new_string: 'bye' },
      { ctx: { readStamp: stamp } },
    );
    expect(edited.isError).toBe(false);
    expect((await fs.lstat(path.join(cwd, 'alias.txt'))).isSymbolicLink()).toBe(true);
    expect(await fs.readFile(path.join(cwd, 'real.txt'), 'utf8')).toBe('bye\n');
  });
});
