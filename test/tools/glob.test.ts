import * as path from 'node:path';
import { globToRegExp } from '../../src/activities/tools';
import { age, call, removeTempDirs, tempDir, write } from './helpers';

let cwd: string;
beforeEach(async () => {
  cwd = await tempDir();
});
afterAll(removeTempDirs);

const glob = (input: Record<string, unknown>) => call(cwd, 'Glob', input);

describe('globToRegExp', () => {
  test.each([
    ['*.ts', 'a.ts', true],
    ['*.ts', 'src/a.ts', false],
    ['**/*.ts', 'a.ts', true],
    ['**/*.ts', 'src/deep/a.ts', true],
    ['src/**', 'src/x/y.md', true],
    ['src/**/test/*.ts', 'src/test/a.ts', true],
    ['src/**/test/*.ts', 'src/a/b/test/a.ts', true],
    ['*.{ts,tsx}', 'a.tsx', true],
    ['*.{ts,{md,txt}}', 'a.txt', true],
    ['*.{ts,tsx}', 'a.js', false],
    ['file?.txt', 'file1.txt', true],
    ['file?.txt', 'file10.txt', false],
    ['[ab]*.js', 'b.js', true],
    ['[!ab]*.js', 'b.js', false],
    ['[a-c].js', 'c.js', true],
    ['a.b', 'aXb', false],
    ['(x)+.js', '(x)+.js', true],
  ])('%s ~ %s → %s', (pattern, file, expected) => {
    expect(globToRegExp(pattern).test(file)).toBe(expected);
  });
});

describe('Glob', () => {
  test('absolute paths, newest first', async () => {
    await write(path.join(cwd, 'old.ts'), '');
    await write(path.join(cwd, 'src/mid.ts'), '');
    await write(path.join(cwd, 'src/deep/new.ts'), '');
    await write(path.join(cwd, 'src/readme.md'), '');
    await write(path.join(cwd, '.git/hooks/x.ts'), '');
    await age(path.join(cwd, 'old.ts'), 300);
    await age(path.join(cwd, 'src/mid.ts'), 200);
    await age(path.join(cwd, 'src/deep/new.ts'), 100);
    expect((await glob({ pattern: '**/*.ts' })).content).toBe([`${cwd}/src/deep/new.ts`, `${cwd}/src/mid.ts`, `${cwd}/old.ts`].join('\n'));
    expect((await glob({ pattern: '*.ts' })).content).toBe(`${cwd}/old.ts`);
    expect((await glob({ pattern: '*.{md,ts}', path: path.join(cwd, 'src') })).content).toBe(
      [`${cwd}/src/readme.md`, `${cwd}/src/mid.ts`].join('\n'),
    );
    expect((await glob({ pattern: `${cwd}/src/**/*.ts` })).content).toBe(`${cwd}/src/deep/new.ts\n${cwd}/src/mid.ts`);
  });

  test('at most 100 results, then a note', async () => {
    for (let i = 0; i < 105; i++) {
      const f = path.join(cwd, `f${String(i).padStart(3, '0')}.txt`);
      await write(f, '');
      await age(f, 1000 - i);
    }
    const out = await glob({ pattern: '*.txt' });
    const lines = out.content.split('\n');
    expect(lines).toHaveLength(101);
    expect(lines[0]).toBe(`${cwd}/f104.txt`);
    expect(lines[99]).toBe(`${cwd}/f005.txt`);
    expect(lines[100]).toBe('(Results are truncated. Consider using a more specific path or pattern.)');
  });

  test('no match, missing directory, not a directory', async () => {
    await write(path.join(cwd, 'a.txt'), '');
    expect(await glob({ pattern: '**/*.rs' })).toMatchObject({ content: 'No files found', isError: false });
    expect(await glob({ pattern: '*', path: path.join(cwd, 'nope') })).toMatchObject({
      content: `Directory does not exist: ${cwd}/nope`,
      isError: true,
    });
    expect(await glob({ pattern: '*', path: path.join(cwd, 'a.txt') })).toMatchObject({
      content: `Path is not a directory: ${cwd}/a.txt`,
      isError: true,
    });
  });
});
