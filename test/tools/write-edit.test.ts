import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { call, readStamp, removeTempDirs, tempDir, write } from './helpers';

let cwd: string;
beforeEach(async () => {
  cwd = await tempDir();
});
afterAll(removeTempDirs);

const NOT_READ = 'File has not been read yet. Read it first before writing to it.';
const MODIFIED = 'File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.';

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

/**
 * A retried attempt after a lost worker (ARCHITECTURE.md#side-effects-reported-as-unknown): the
 * first attempt wrote the file and died before completing, so the workflow's read stamp is older
 * than the file. The retry recognises its own change and reports success; anything else is still
 * "modified since read".
 */
describe('a retry whose first attempt landed', () => {
  async function landed(before: string, after: string) {
    const file = path.join(cwd, 'landed.txt');
    await write(file, before);
    const stamp = await readStamp(cwd, file);
    await write(file, after); // what the lost first attempt did
    await bumpMtime(file);
    return { file, stamp };
  }

  test('Write: the exact content on disk is success on a retry, an error on a first attempt', async () => {
    const { file, stamp } = await landed('old\n', 'new\n');
    const input = { file_path: file, content: 'new\n' };
    expect(await call(cwd, 'Write', input, { ctx: { readStamp: stamp } })).toMatchObject({ content: MODIFIED, isError: true });
    const out = await call(cwd, 'Write', input, { ctx: { readStamp: stamp }, attempt: 2 });
    expect(out).toMatchObject({ content: `The file ${file} has been updated successfully.`, isError: false });
    expect(out.fileStamps).toEqual([{ path: file, mtimeMs: (await fs.stat(file)).mtimeMs }]);
    // Other content: somebody else changed the file, the retry must not overwrite it.
    expect(await call(cwd, 'Write', { file_path: file, content: 'other\n' }, { ctx: { readStamp: stamp }, attempt: 2 })).toMatchObject({
      content: MODIFIED,
      isError: true,
    });
    expect(await fs.readFile(file, 'utf8')).toBe('new\n');
  });

  test('Write: a retry of a create whose first attempt landed reports the create, as a fault-free run does', async () => {
    const file = path.join(cwd, 'created-by-lost-attempt.txt');
    await write(file, 'fresh\n'); // the lost first attempt created it; the session never read it
    const input = { file_path: file, content: 'fresh\n' };
    expect(await call(cwd, 'Write', input, { attempt: 2 })).toMatchObject({
      content: `File created successfully at: ${file}`,
      isError: false,
    });
    // Other content in an unread file: not ours, refused as before.
    expect(await call(cwd, 'Write', { file_path: file, content: 'other\n' }, { attempt: 2 })).toMatchObject({ isError: true });
    expect(await fs.readFile(file, 'utf8')).toBe('fresh\n');
  });

  test('Edit: new text present and old text gone is success on a retry; old text still there is not', async () => {
    const { file, stamp } = await landed('a\nbeta\nc\n', 'a\nBETA\nc\n');
    const input = { file_path: file, old_string: 'beta', new_string: 'BETA' };
    expect(await call(cwd, 'Edit', input, { ctx: { readStamp: stamp } })).toMatchObject({ content: MODIFIED, isError: true });
    const out = await call(cwd, 'Edit', input, { ctx: { readStamp: stamp }, attempt: 2 });
    expect(out).toMatchObject({ content: `The file ${file} has been updated successfully.`, isError: false });
    expect(out.fileStamps).toEqual([{ path: file, mtimeMs: (await fs.stat(file)).mtimeMs }]);
    expect(await fs.readFile(file, 'utf8')).toBe('a\nBETA\nc\n');

    // Changed by someone else, and the old text is still there: genuinely stale.
    const other = await landed('x\nbeta\n', 'x\nbeta\nBETA\n');
    expect(await call(cwd, 'Edit', { ...input, file_path: other.file }, { ctx: { readStamp: other.stamp }, attempt: 2 })).toMatchObject({
      content: MODIFIED,
      isError: true,
    });
  });
});
