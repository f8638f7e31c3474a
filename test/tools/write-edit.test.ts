import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { call, readStamp, removeTempDirs, tempDir, write } from './helpers';

let cwd: string;
beforeEach(async () => {
  cwd = await tempDir();
});
afterAll(removeTempDirs);

const NOT_READ = 'File has not been read yet. Read it first before writing to it.';
const MODIFIED =
  'File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.';

async function bumpMtime(file: string) {
  const t = new Date(Date.now() + 5000);
  await fs.utimes(file, t, t);
}

describe('Write', () => {
  test('creates a new file and its parent directories', async () => {
    const file = path.join(cwd, 'a/b/new.txt');
    const out = await call(cwd, 'Write', { file_path: file, content: 'hello\n' });
    expect(out).toMatchObject({ content: `File created successfully at: ${file}`, isError: false });
    expect(await fs.readFile(file, 'utf8')).toBe('hello\n');
    expect(out.fileStamps).toEqual([{ path: file, mtimeMs: (await fs.stat(file)).mtimeMs }]);
  });

  test('an existing file must have been read, and be unchanged since', async () => {
    const file = path.join(cwd, 'x.txt');
    await write(file, 'old');
    expect(await call(cwd, 'Write', { file_path: file, content: 'new' })).toMatchObject({ content: NOT_READ, isError: true });
    const stamp = await readStamp(cwd, file);
    await bumpMtime(file);
    expect(await call(cwd, 'Write', { file_path: file, content: 'new' }, { ctx: { readStamp: stamp } })).toMatchObject({
      content: MODIFIED,
      isError: true,
    });
    expect(await fs.readFile(file, 'utf8')).toBe('old');
    const fresh = await readStamp(cwd, file);
    const out = await call(cwd, 'Write', { file_path: file, content: 'new' }, { ctx: { readStamp: fresh } });
    expect(out).toMatchObject({ content: `The file ${file} has been updated successfully.`, isError: false });
    expect(await fs.readFile(file, 'utf8')).toBe('new');
    expect(out.fileStamps?.[0]?.mtimeMs).toBe((await fs.stat(file)).mtimeMs);
  });

  test('missing content is invalid input', async () => {
    expect((await call(cwd, 'Write', { file_path: path.join(cwd, 'x') })).content).toBe(
      'InputValidationError: Write failed due to the following issue:\nThe required parameter `content` is missing',
    );
  });
});

describe('Edit', () => {
  async function prepared(content: string) {
    const file = path.join(cwd, 'code.ts');
    await write(file, content);
    return { file, readStamp: await readStamp(cwd, file) };
  }
  const edit = (input: Record<string, unknown>, readStamp?: number) => call(cwd, 'Edit', input, { ctx: { readStamp } });

  test('replaces exactly one occurrence', async () => {
    const { file, readStamp } = await prepared('const a = 1;\nconst b = $1;\n');
    const out = await edit({ file_path: file, old_string: 'b = $1', new_string: "b = '$&'" }, readStamp);
    expect(out).toMatchObject({ content: `The file ${file} has been updated successfully.`, isError: false });
    expect(await fs.readFile(file, 'utf8')).toBe("const a = 1;\nconst b = '$&';\n");
    expect(out.fileStamps?.[0]).toEqual({ path: file, mtimeMs: (await fs.stat(file)).mtimeMs });
  });

  test('an ambiguous old_string is refused', async () => {
    const { file, readStamp } = await prepared('x = 1\nx = 1\nx = 1\n');
    expect(await edit({ file_path: file, old_string: 'x = 1', new_string: 'x = 2' }, readStamp)).toMatchObject({
      content:
        'Found 3 matches of the string to replace, but replace_all is false. To replace all occurrences, set ' +
        'replace_all to true. To replace only one occurrence, please provide more context to uniquely identify ' +
        'the instance.\nString: x = 1',
      isError: true,
    });
    expect(await fs.readFile(file, 'utf8')).toBe('x = 1\nx = 1\nx = 1\n');
  });

  test('replace_all replaces every occurrence', async () => {
    const { file, readStamp } = await prepared('x = 1\nx = 1\ny = 1\n');
    const out = await edit({ file_path: file, old_string: 'x = 1', new_string: 'x = 2', replace_all: true }, readStamp);
    expect(out).toMatchObject({
      content: `The file ${file} has been updated. All occurrences of 'x = 1' were successfully replaced with 'x = 2'.`,
      isError: false,
    });
    expect(await fs.readFile(file, 'utf8')).toBe('x = 2\nx = 2\ny = 1\n');
  });

  test('not found, no-op, missing file', async () => {
    const { file, readStamp } = await prepared('abc\n');
    expect(await edit({ file_path: file, old_string: 'xyz', new_string: 'q' }, readStamp)).toMatchObject({
      content: 'String to replace not found in file.\nString: xyz',
      isError: true,
    });
    expect(await edit({ file_path: file, old_string: 'abc', new_string: 'abc' }, readStamp)).toMatchObject({
      content: 'No changes to make: old_string and new_string are exactly the same.',
      isError: true,
    });
    expect(await edit({ file_path: path.join(cwd, 'nope.ts'), old_string: 'a', new_string: 'b' })).toMatchObject({
      content: 'File does not exist.',
      isError: true,
    });
  });

  test('read-before-edit, as for Write', async () => {
    const { file, readStamp } = await prepared('abc\n');
    expect(await edit({ file_path: file, old_string: 'abc', new_string: 'def' })).toMatchObject({ content: NOT_READ, isError: true });
    await bumpMtime(file);
    expect(await edit({ file_path: file, old_string: 'abc', new_string: 'def' }, readStamp)).toMatchObject({
      content: MODIFIED,
      isError: true,
    });
  });

  test('an empty old_string creates a new file, but never overwrites one', async () => {
    const file = path.join(cwd, 'fresh/new.ts');
    expect(await edit({ file_path: file, old_string: '', new_string: 'export {};\n' })).toMatchObject({
      content: `File created successfully at: ${file}`,
      isError: false,
    });
    expect(await fs.readFile(file, 'utf8')).toBe('export {};\n');
    expect(await edit({ file_path: file, old_string: '', new_string: 'x' }, Date.now())).toMatchObject({
      content: 'Cannot create new file - file already exists.',
      isError: true,
    });
  });
});
