import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { call, removeTempDirs, tempDir, write } from './helpers';

let cwd: string;
beforeEach(async () => {
  cwd = await tempDir();
});
afterAll(removeTempDirs);

const read = (input: Record<string, unknown>) => call(cwd, 'Read', input);

describe('Read', () => {
  test('cat -n format, with the file stamp', async () => {
    const file = path.join(cwd, 'a.txt');
    await write(file, 'alpha\n\tbeta\r\ngamma');
    const out = await read({ file_path: file });
    expect(out.content).toBe('     1\talpha\n     2\t\tbeta\n     3\tgamma');
    expect(out.isError).toBe(false);
    expect(out.fileStamps).toEqual([{ path: file, mtimeMs: (await fs.stat(file)).mtimeMs }]);
  });

  test('offset and limit, with a note on how to read on', async () => {
    const file = path.join(cwd, 'n.txt');
    await write(file, Array.from({ length: 10 }, (_, i) => `l${i + 1}`).join('\n') + '\n');
    expect((await read({ file_path: file, offset: 4, limit: 2 })).content).toBe(
      '     4\tl4\n     5\tl5\n\n(Showing lines 4-5 of 10. Call Read with offset=6 to read more.)',
    );
    expect((await read({ file_path: file, offset: 9 })).content).toBe('     9\tl9\n    10\tl10');
  });

  test('the default limit is 2000 lines', async () => {
    const file = path.join(cwd, 'long.txt');
    await write(file, Array.from({ length: 2500 }, (_, i) => `${i + 1}`).join('\n'));
    const out = await read({ file_path: file });
    const lines = out.content.split('\n');
    expect(lines[1999]).toBe('  2000\t2000');
    expect(lines.slice(2000)).toEqual(['', '(Showing lines 1-2000 of 2500. Call Read with offset=2001 to read more.)']);
  });

  test('lines over 2000 characters are cut', async () => {
    const file = path.join(cwd, 'wide.txt');
    await write(file, `${'x'.repeat(2500)}\nshort\n`);
    expect((await read({ file_path: file })).content).toBe(
      `     1\t${'x'.repeat(2000)}... [line truncated: 500 more characters]\n     2\tshort`,
    );
  });

  test('empty file warns', async () => {
    const file = path.join(cwd, 'empty.txt');
    await write(file, '');
    const out = await read({ file_path: file });
    expect(out).toMatchObject({
      content: '<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>',
      isError: false,
    });
    expect(out.fileStamps).toHaveLength(1);
  });

  test('offset past the end says how long the file is', async () => {
    const file = path.join(cwd, 'short.txt');
    await write(file, 'a\nb\nc\n');
    expect((await read({ file_path: file, offset: 10 })).content).toBe(
      '<system-reminder>Warning: the file exists but is shorter than the provided offset (10). The file has 3 lines.</system-reminder>',
    );
  });

  test('file not found, directory, binary file', async () => {
    expect(await read({ file_path: path.join(cwd, 'nope.txt') })).toMatchObject({
      content: 'File does not exist.',
      isError: true,
    });
    await fs.mkdir(path.join(cwd, 'dir'));
    expect(await read({ file_path: path.join(cwd, 'dir') })).toMatchObject({
      content: 'EISDIR: illegal operation on a directory, read',
      isError: true,
    });
    const bin = path.join(cwd, 'x.bin');
    await write(bin, Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2]));
    expect(await read({ file_path: bin })).toMatchObject({
      content: `This tool cannot read binary files. The file ${bin} appears to be binary (it contains NUL bytes). Use Bash (e.g. file, xxd, strings) to inspect it.`,
      isError: true,
    });
  });

  test('files over 256 KB need offset/limit; with them, any size works', async () => {
    const file = path.join(cwd, 'big.txt');
    await write(file, 'y'.repeat(99) + '\n'.repeat(1) + `${'z'.repeat(99)}\n`.repeat(3000));
    expect(await read({ file_path: file })).toMatchObject({
      content:
        'File content (294KB) exceeds maximum allowed size (256KB). Please use offset and limit parameters to read ' +
        'specific portions of the file, or use the Grep tool to search for specific content.',
      isError: true,
    });
    expect((await read({ file_path: file, offset: 3001, limit: 5 })).content).toBe(`  3001\t${'z'.repeat(99)}`);
  });

  test('output stays under the result cap and says where to continue', async () => {
    const file = path.join(cwd, 'wide-many.txt');
    await write(file, `${'w'.repeat(1000)}\n`.repeat(150));
    const out = await read({ file_path: file });
    const lines = out.content.split('\n');
    // each numbered line is 1007 characters + newline; 97 fit in 98,000
    expect(lines).toHaveLength(97 + 2);
    expect(lines[98]).toBe('(Showing lines 1-97 of 150 (output limited to 98000 characters). Call Read with offset=98 to read more.)');
  });

  test('a file read whole and a file too big for that, which is streamed, give the same lines', async () => {
    // CRLF, a multi-byte character, a blank line, no final newline: split the same way on both paths.
    const head = 'één\r\ntwee\n\ndrie\r\nvier';
    const small = path.join(cwd, 'small.txt');
    await write(small, head);
    const big = path.join(cwd, 'big-tail.txt');
    await write(big, `${head}\n${`${'p'.repeat(99)}\n`.repeat(3000)}`);
    const whole = await read({ file_path: small, offset: 1, limit: 5 });
    const streamed = await read({ file_path: big, offset: 1, limit: 5 });
    expect(whole.content).toBe('     1\téén\n     2\ttwee\n     3\t\n     4\tdrie\n     5\tvier');
    expect(streamed.content.split('\n\n(Showing')[0]).toBe(whole.content);
  });

  test('a device is sniffed, never read to its end: /dev/zero is binary', async () => {
    expect(await call(cwd, 'Read', { file_path: '/dev/zero' }, { ctx: { additionalDirectories: ['/dev'] } })).toMatchObject({
      content: expect.stringContaining('This tool cannot read binary files. The file /dev/zero appears to be binary'),
      isError: true,
    });
  });

  test('a relative path is rejected', async () => {
    expect(await read({ file_path: 'a.txt' })).toMatchObject({
      content: 'File path must be absolute, not relative: a.txt',
      isError: true,
    });
  });
});
