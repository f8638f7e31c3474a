import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { createToolOps, findExecutable, type ToolOps } from '../../src/activities/tools';
import { age, call, removeTempDirs, tempDir, write } from './helpers';

let cwd: string;
beforeAll(async () => {
  cwd = await tempDir();
  const files: [string, string | Buffer, number][] = [
    ['src/app.ts', "import x from 'y';\n// TODO: fix this\nconst a = 1;\n// todo lower\nexport {};\n", 100],
    ['src/util.js', 'function f() {}\n// TODO in js\n', 200],
    ['lib/helper.py', '# TODO python\ndef g(): pass\n', 300],
    ['docs/readme.md', 'Docs TODO list\n', 400],
    ['.hidden/conf.ts', '// TODO hidden\n', 500],
    ['wide.txt', `TODO ${'w'.repeat(600)}\n`, 600],
    ['multi.txt', 'start\nfoo\nbar\nend\n', 700],
    ['.git/config', 'TODO git\n', 800],
    ['bin.dat', Buffer.from('TODO\0binary\n'), 900],
  ];
  for (const [rel, content, secondsAgo] of files) {
    await write(path.join(cwd, rel), content);
    await age(path.join(cwd, rel), secondsAgo);
  }
});
afterAll(removeTempDirs);

const RG_MISSING = 'ripgrep not installed: apt-get install ripgrep';
function rgOps(): ToolOps {
  const rg = findExecutable('rg');
  if (!rg) throw new Error(RG_MISSING);
  return createToolOps({ ripgrep: rg });
}
const implementations: [string, () => ToolOps][] = [
  ['JS fallback', () => createToolOps({ ripgrep: null })],
  ['ripgrep', rgOps],
];

describe.each(implementations)('Grep via %s', (_name, makeOps) => {
  const grep = (input: Record<string, unknown>) => call(cwd, 'Grep', input, { ops: makeOps() });

  test('files_with_matches (default): newest first, hidden files in, VCS and binary files out', async () => {
    expect(await grep({ pattern: 'TODO' })).toMatchObject({
      content: [
        'Found 6 files',
        `${cwd}/src/app.ts`,
        `${cwd}/src/util.js`,
        `${cwd}/lib/helper.py`,
        `${cwd}/docs/readme.md`,
        `${cwd}/.hidden/conf.ts`,
        `${cwd}/wide.txt`,
      ].join('\n'),
      isError: false,
    });
    expect((await grep({ pattern: 'nothing-matches-this' })).content).toBe('No files found');
  });

  test('count, with -i', async () => {
    expect((await grep({ pattern: 'todo', output_mode: 'count' })).content).toBe(
      `${cwd}/src/app.ts:1\n\nFound 1 total occurrence across 1 file.`,
    );
    expect((await grep({ pattern: 'todo', output_mode: 'count', '-i': true })).content).toBe(
      [
        `${cwd}/.hidden/conf.ts:1`,
        `${cwd}/docs/readme.md:1`,
        `${cwd}/lib/helper.py:1`,
        `${cwd}/src/app.ts:2`,
        `${cwd}/src/util.js:1`,
        `${cwd}/wide.txt:1`,
        '',
        'Found 7 total occurrences across 6 files.',
      ].join('\n'),
    );
  });

  test('content with context and a glob', async () => {
    expect((await grep({ pattern: 'TODO', output_mode: 'content', glob: '*.ts', '-C': 1 })).content).toBe(
      [
        `${cwd}/.hidden/conf.ts:1:// TODO hidden`,
        '--',
        `${cwd}/src/app.ts-1-import x from 'y';`,
        `${cwd}/src/app.ts:2:// TODO: fix this`,
        `${cwd}/src/app.ts-3-const a = 1;`,
      ].join('\n'),
    );
    expect((await grep({ pattern: 'TODO', output_mode: 'content', path: 'src', '-n': false, '-A': 1 })).content).toBe(
      [`${cwd}/src/app.ts:// TODO: fix this`, `${cwd}/src/app.ts-const a = 1;`, '--', `${cwd}/src/util.js:// TODO in js`].join('\n'),
    );
  });

  test('head_limit, type, long lines', async () => {
    expect((await grep({ pattern: 'TODO', output_mode: 'content', head_limit: 2 })).content).toBe(
      [
        `${cwd}/.hidden/conf.ts:1:// TODO hidden`,
        `${cwd}/docs/readme.md:1:Docs TODO list`,
        '',
        '(Showing the first 2 lines (head_limit=2). Raise head_limit, or narrow pattern, path, glob or type, to see the rest.)',
      ].join('\n'),
    );
    expect((await grep({ pattern: 'TODO', head_limit: 1 })).content).toBe(
      `Found 6 files\n${cwd}/src/app.ts\n\n(Showing the first 1 of 6 files (head_limit=1). Raise head_limit, or narrow pattern, path, glob or type, to see the rest.)`,
    );
    expect((await grep({ pattern: 'TODO', output_mode: 'content', type: 'py' })).content).toBe(`${cwd}/lib/helper.py:1:# TODO python`);
    expect((await grep({ pattern: 'TODO w', output_mode: 'content' })).content).toBe(
      `${cwd}/wide.txt:1:TODO ${'w'.repeat(495)} [... omitted end of long line]`,
    );
  });

  test('multiline', async () => {
    expect((await grep({ pattern: 'foo.bar', output_mode: 'content' })).content).toBe('No matches found');
    expect((await grep({ pattern: 'foo.bar', output_mode: 'content', multiline: true })).content).toBe(
      `${cwd}/multi.txt:2:foo\n${cwd}/multi.txt:3:bar`,
    );
    expect((await grep({ pattern: 'o\\nb', output_mode: 'count', multiline: true })).content).toBe(
      `${cwd}/multi.txt:1\n\nFound 1 total occurrence across 1 file.`,
    );
  });

  test('a single file, a missing path, a bad type', async () => {
    expect((await grep({ pattern: 'TODO', path: `${cwd}/src/app.ts`, output_mode: 'content' })).content).toBe(
      `${cwd}/src/app.ts:2:// TODO: fix this`,
    );
    expect(await grep({ pattern: 'x', path: `${cwd}/missing` })).toMatchObject({
      content: `Path does not exist: ${cwd}/missing`,
      isError: true,
    });
    expect(await grep({ pattern: 'x', type: 'nosuchtype' })).toMatchObject({
      content: 'unrecognized file type: nosuchtype',
      isError: true,
    });
  });
});

describe('ripgrep and the JS fallback agree', () => {
  const queries: Record<string, unknown>[] = [
    { pattern: 'TODO' },
    { pattern: 'o', output_mode: 'count' },
    { pattern: '[a-z]+\\(', output_mode: 'content', '-B': 2 },
    { pattern: 'e', output_mode: 'content', '-C': 1, head_limit: 7 },
    { pattern: 'TODO', output_mode: 'content', glob: '*.{js,py} !lib/**' },
    { pattern: 'todo', '-i': true, type: 'ts', output_mode: 'content' },
    { pattern: 'TODO', glob: 'src/*', type: 'py' },
    { pattern: '^(s|e)', output_mode: 'content', multiline: true, '-A': 1 },
    { pattern: 'start.*end', output_mode: 'count', multiline: true },
  ];
  test.each(queries)('%j', async (input) => {
    const rg = await call(cwd, 'Grep', input, { ops: rgOps() });
    const js = await call(cwd, 'Grep', input, { ops: createToolOps({ ripgrep: null }) });
    expect(js).toEqual(rg);
    expect(rg.isError).toBe(false);
  });

  test("the content printer matches rg's own output", async () => {
    const rg = findExecutable('rg');
    if (!rg) throw new Error(RG_MISSING);
    const args = ['--no-config', '--hidden', '--no-ignore', '--sort', 'path', '-n', '-C', '1', '--glob', '!.git', 'TODO', cwd];
    const plain = execFileSync(rg, args, { encoding: 'utf8' }).replace(/\n$/, '');
    const out = await call(cwd, 'Grep', { pattern: 'TODO', output_mode: 'content', '-C': 1 }, { ops: rgOps() });
    // the one difference by design: long lines are cut at 500 columns
    expect(out.content).toBe(plain.replace(/TODO w+/, `TODO ${'w'.repeat(495)} [... omitted end of long line]`));
    expect(out.content.split('\n').length).toBeGreaterThan(10);
  });
});
