/**
 * Read/Edit path rules on real paths (docs/ARCHITECTURE.md#path-rules-on-real-paths): real temp
 * dirs, real symlinks, real ripgrep and the JS fallback. Each bypass has its control — the same
 * call without `pathGuard` gets through — so a guard that stops working fails here.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { createToolOps, findExecutable, nodeFs, type ToolFs, type ToolOps } from '../../src/activities/tools';
import type { PathGuard } from '../../src/shared/tools';
import { age, call, readStamp, removeTempDirs, tempDir, write } from './helpers';

const SECRET = 'TOPSECRET-4711';

let cwd: string;
let guard: PathGuard;
beforeEach(async () => {
  cwd = await tempDir('da-guard-');
  await write(path.join(cwd, 'secrets/key'), `${SECRET}\n`);
  await write(path.join(cwd, 'secrets/deeper/more.ts'), `const k = '${SECRET}';\n`);
  await write(path.join(cwd, 'protected/conf'), 'original\n');
  await write(path.join(cwd, 'src/ok.txt'), 'nothing here\n');
  await fs.symlink(path.join(cwd, 'secrets/key'), path.join(cwd, 'link-file'));
  await fs.symlink(path.join(cwd, 'secrets'), path.join(cwd, 'link-dir'));
  // A symlink inside an allowed folder pointing into the denied one.
  await fs.symlink('../secrets', path.join(cwd, 'src/inner-link'));
  await fs.symlink('../secrets/key', path.join(cwd, 'src/inner-file'));
  await fs.symlink(path.join(cwd, 'protected/conf'), path.join(cwd, 'prot-file'));
  await fs.symlink(path.join(cwd, 'protected'), path.join(cwd, 'prot-dir'));
  guard = {
    noRead: ['./secrets/**'],
    noEdit: ['./protected/**'],
    protectedFiles: [path.join(cwd, '.claude/settings.local.json')],
    bases: { cwd },
  };
});
afterAll(removeTempDirs);

const guarded = (extra: { ops?: ToolOps; guard?: PathGuard } = {}) => ({
  ctx: { pathGuard: extra.guard ?? guard },
  ...(extra.ops ? { ops: extra.ops } : {}),
});
const readDenied = (asked: string, real: string, tool = 'Read') =>
  `${tool} denied: ${asked} resolves to ${real}, which matches the Read rule pattern ./secrets/**`;

describe('Read', () => {
  test('through a file symlink, a folder symlink and a symlink inside an allowed folder: denied, naming the rule and the real path', async () => {
    const key = path.join(cwd, 'secrets/key');
    for (const asked of ['link-file', 'link-dir/key', 'src/inner-link/key', 'src/inner-file']) {
      const file = path.join(cwd, asked);
      // The control: without path rules the link reads the secret.
      expect((await call(cwd, 'Read', { file_path: file })).content).toContain(SECRET);
      expect(await call(cwd, 'Read', { file_path: file }, guarded())).toEqual({ content: readDenied(file, key), isError: true });
    }
  });

  test('the path as given: direct, with `..`, doubled slashes and a trailing dot segment', async () => {
    const key = path.join(cwd, 'secrets/key');
    for (const asked of [key, `${cwd}/src/../secrets/key`, `${cwd}//secrets///key`, `${cwd}/./secrets/./key`]) {
      expect(await call(cwd, 'Read', { file_path: asked }, guarded())).toEqual({
        content: `Read denied: ${key} matches the Read rule pattern ./secrets/**`,
        isError: true,
      });
    }
  });

  test('a dangling symlink into the denied folder, a symlink loop, and an allowed file still read', async () => {
    await fs.symlink(path.join(cwd, 'secrets/not-yet'), path.join(cwd, 'dangling'));
    expect(await call(cwd, 'Read', { file_path: path.join(cwd, 'dangling') }, guarded())).toEqual({
      content: readDenied(path.join(cwd, 'dangling'), path.join(cwd, 'secrets/not-yet')),
      isError: true,
    });
    await fs.symlink(path.join(cwd, 'loop-b'), path.join(cwd, 'loop-a'));
    await fs.symlink(path.join(cwd, 'loop-a'), path.join(cwd, 'loop-b'));
    const loop = await call(cwd, 'Read', { file_path: path.join(cwd, 'loop-a') }, guarded());
    expect(loop).toMatchObject({ isError: true, content: expect.stringMatching(/^Cannot resolve path .*loop-a: ELOOP$/) });
    expect(await call(cwd, 'Read', { file_path: path.join(cwd, 'src/ok.txt') }, guarded())).toMatchObject({
      content: '     1\tnothing here',
      isError: false,
    });
  });

  test('a floating pattern (`*.pem`) matches at any depth, through a link too', async () => {
    await write(path.join(cwd, 'src/deep/cert.pem'), `${SECRET}\n`);
    await fs.symlink(path.join(cwd, 'src/deep/cert.pem'), path.join(cwd, 'cert-link'));
    const g = { ...guard, noRead: ['*.pem'] };
    expect((await call(cwd, 'Read', { file_path: path.join(cwd, 'cert-link') }, guarded({ guard: g }))).content).toBe(
      `Read denied: ${cwd}/cert-link resolves to ${cwd}/src/deep/cert.pem, which matches the Read rule pattern *.pem`,
    );
  });

  test('a symlink swapped between the check and the open: the opened file is checked, nothing is read', async () => {
    // `public` is a real folder when the path is resolved and checked; the first stat after the
    // check (Read's own) swaps it for a symlink into secrets/, as a racing process would.
    await write(path.join(cwd, 'public/key'), 'public\n');
    const file = path.join(cwd, 'public/key');
    let swapped = false;
    const racing: ToolFs = {
      ...nodeFs,
      async stat(p) {
        if (!swapped && p === file) {
          swapped = true;
          await fs.rename(path.join(cwd, 'public'), path.join(cwd, 'public-old'));
          await fs.symlink(path.join(cwd, 'secrets'), path.join(cwd, 'public'));
        }
        return nodeFs.stat(p);
      },
    };
    const out = await call(cwd, 'Read', { file_path: file }, guarded({ ops: createToolOps({ fs: racing }) }));
    expect(swapped).toBe(true);
    expect(out).toEqual({ content: readDenied(file, path.join(cwd, 'secrets/key')), isError: true });
  });
});

const RG_MISSING = 'ripgrep not installed: apt-get install ripgrep';
const implementations: [string, () => ToolOps][] = [
  ['JS fallback', () => createToolOps({ ripgrep: null })],
  [
    'ripgrep',
    () => {
      const rg = findExecutable('rg');
      if (!rg) throw new Error(RG_MISSING);
      return createToolOps({ ripgrep: rg });
    },
  ],
];

describe.each(implementations)('Grep via %s', (_name, makeOps) => {
  const grep = (input: Record<string, unknown>, g: PathGuard | null = guard) =>
    call(cwd, 'Grep', input, g ? { ops: makeOps(), ctx: { pathGuard: g } } : { ops: makeOps() });

  test('over the parent folder, in every output mode: nothing from secrets/', async () => {
    // The control: without path rules the search finds both files.
    const control = (await grep({ pattern: SECRET }, null)).content.split('\n');
    expect([control[0], ...control.slice(1).sort()]).toEqual(['Found 2 files', `${cwd}/secrets/deeper/more.ts`, `${cwd}/secrets/key`]);
    expect((await grep({ pattern: SECRET })).content).toBe('No files found');
    expect((await grep({ pattern: SECRET, output_mode: 'content' })).content).toBe('No matches found');
    expect((await grep({ pattern: SECRET, output_mode: 'count' })).content).not.toContain(SECRET);
    expect((await grep({ pattern: SECRET, output_mode: 'count' })).content).toMatch(/^No matches found/);
  });

  test('a glob or a type naming the denied folder brings nothing back', async () => {
    for (const extra of [
      { glob: 'secrets/*' },
      { glob: 'secrets/**' },
      { glob: '**/key' },
      { glob: '{secrets,src}/**' },
      { type: 'ts' },
      { glob: '*.ts', type: 'ts' },
    ]) {
      const out = await grep({ pattern: SECRET, output_mode: 'content', ...extra });
      expect([extra, out.content]).toEqual([extra, 'No matches found']);
    }
    // The control: the same glob without rules finds the file.
    expect((await grep({ pattern: SECRET, glob: 'secrets/*' }, null)).content).toBe(`Found 1 file\n${cwd}/secrets/key`);
  });

  test('a path into the denied folder, directly or through a link, is refused naming the rule', async () => {
    expect(await grep({ pattern: SECRET, path: 'secrets' })).toEqual({
      content: `Grep denied: ${cwd}/secrets matches the Read rule pattern ./secrets/**`,
      isError: true,
    });
    expect(await grep({ pattern: SECRET, path: path.join(cwd, 'link-dir') })).toEqual({
      content: readDenied(`${cwd}/link-dir`, `${cwd}/secrets`, 'Grep'),
      isError: true,
    });
    expect(await grep({ pattern: SECRET, path: path.join(cwd, 'src/inner-file') })).toEqual({
      content: readDenied(`${cwd}/src/inner-file`, `${cwd}/secrets/key`, 'Grep'),
      isError: true,
    });
    // Symlinks inside the searched folder are never followed (no rg --follow): with or without rules.
    expect((await grep({ pattern: SECRET, path: 'src' }, null)).content).toBe('No files found');
  });

  test('a result the search could not exclude is left out by its real path, with a note', async () => {
    await write(path.join(cwd, 'src/a/secret.txt'), `${SECRET}\n`);
    await write(path.join(cwd, 'src/a/fine.txt'), `${SECRET} is not here\n`);
    // `/**/secret.txt` anchors at the project root, above the searched `src`: rg gets no glob for it.
    const g = { ...guard, noRead: ['/**/secret.txt'] };
    const out = await grep({ pattern: SECRET, path: 'src', output_mode: 'content' }, g);
    expect(out.content).toBe(
      `${cwd}/src/a/fine.txt:1:${SECRET} is not here\n\n(1 result was left out because its real path matches a Read rule.)`,
    );
  });
});

describe('Glob', () => {
  const glob = (input: Record<string, unknown>, g: PathGuard | null = guard) =>
    call(cwd, 'Glob', input, g ? { ctx: { pathGuard: g } } : {});

  test('never lists names under a denied folder', async () => {
    expect((await glob({ pattern: '**/*' }, null)).content).toContain(`${cwd}/secrets/key`);
    const all = (await glob({ pattern: '**/*' })).content;
    expect(all).not.toContain('secrets');
    expect(all).toContain(`${cwd}/src/ok.txt`);
    expect((await glob({ pattern: '**/key' })).content).toBe('No files found');
    expect((await glob({ pattern: '*/deeper/*' })).content).toBe('No files found');
  });

  test('a pattern or path naming the denied folder, directly or through a link, is refused', async () => {
    expect((await glob({ pattern: 'secrets/*' })).content).toBe(`Glob denied: ${cwd}/secrets matches the Read rule pattern ./secrets/**`);
    expect((await glob({ pattern: `${cwd}/secrets/**` })).content).toBe(
      `Glob denied: ${cwd}/secrets matches the Read rule pattern ./secrets/**`,
    );
    expect((await glob({ pattern: 'link-dir/*' })).content).toBe(readDenied(`${cwd}/link-dir`, `${cwd}/secrets`, 'Glob'));
    expect((await glob({ pattern: '*', path: 'src/inner-link' })).content).toBe(
      readDenied(`${cwd}/src/inner-link`, `${cwd}/secrets`, 'Glob'),
    );
  });

  test('a result the walk could not skip is left out, with a note', async () => {
    await write(path.join(cwd, 'src/a/secret.txt'), 'x\n');
    const out = await glob({ pattern: '**/*.txt', path: 'src' }, { ...guard, noRead: ['/**/secret.txt'] });
    expect(out.content).toBe(`${cwd}/src/ok.txt\n(1 result was left out because its real path matches a Read rule.)`);
  });
});

describe('Edit and Write', () => {
  const conf = () => path.join(cwd, 'protected/conf');
  const editDenied = (asked: string, real: string, tool: string) =>
    `${tool} denied: ${asked} resolves to ${real}, which matches the Edit rule pattern ./protected/**`;

  test('Edit through a file symlink into protected/ is denied and the file is unchanged; the control edits it', async () => {
    const link = path.join(cwd, 'prot-file');
    const stamp = await readStamp(cwd, link);
    const edit = { file_path: link, old_string: 'original', new_string: 'changed' };
    expect(await call(cwd, 'Edit', edit, { ctx: { pathGuard: guard, readStamp: stamp } })).toEqual({
      content: editDenied(link, conf(), 'Edit'),
      isError: true,
    });
    expect(await fs.readFile(conf(), 'utf8')).toBe('original\n');
    expect((await call(cwd, 'Edit', edit, { ctx: { readStamp: stamp } })).isError).toBe(false);
    expect(await fs.readFile(conf(), 'utf8')).toBe('changed\n');
  });

  test('Write through a folder symlink into protected/, new file or existing, is denied and nothing changes', async () => {
    const planted = path.join(cwd, 'prot-dir/new.txt');
    expect(await call(cwd, 'Write', { file_path: planted, content: 'x' }, guarded())).toEqual({
      content: editDenied(planted, path.join(cwd, 'protected/new.txt'), 'Write'),
      isError: true,
    });
    const nested = path.join(cwd, 'prot-dir/sub/new.txt');
    expect((await call(cwd, 'Write', { file_path: nested, content: 'x' }, guarded())).isError).toBe(true);
    expect((await fs.readdir(path.join(cwd, 'protected'))).sort()).toEqual(['conf']);
    const existing = path.join(cwd, 'prot-dir/conf');
    const stamp = await readStamp(cwd, existing);
    expect(await call(cwd, 'Write', { file_path: existing, content: 'x' }, { ctx: { pathGuard: guard, readStamp: stamp } })).toEqual({
      content: editDenied(existing, conf(), 'Write'),
      isError: true,
    });
    expect(await fs.readFile(conf(), 'utf8')).toBe('original\n');
    // The control: without rules the write lands.
    expect((await call(cwd, 'Write', { file_path: planted, content: 'x' })).isError).toBe(false);
    expect(await fs.readFile(path.join(cwd, 'protected/new.txt'), 'utf8')).toBe('x');
  });

  test('a protected settings file, directly or through a symlink, is not written', async () => {
    const settings = path.join(cwd, '.claude/settings.local.json');
    const why = "is a file this session's settings or hooks depend on; writing it needs approval";
    expect(await call(cwd, 'Write', { file_path: settings, content: '{}' }, guarded())).toEqual({
      content: `Write denied: ${settings} ${why}`,
      isError: true,
    });
    await fs.mkdir(path.join(cwd, '.claude'));
    await fs.symlink(settings, path.join(cwd, 'innocent.json'));
    expect(await call(cwd, 'Write', { file_path: path.join(cwd, 'innocent.json'), content: '{}' }, guarded())).toEqual({
      content: `Write denied: ${cwd}/innocent.json resolves to ${settings}, which ${why}`,
      isError: true,
    });
    expect(
      await call(cwd, 'Edit', { file_path: path.join(cwd, 'innocent.json'), old_string: '', new_string: '{}' }, guarded()),
    ).toMatchObject({ isError: true });
    await expect(fs.stat(settings)).rejects.toThrow(/ENOENT/);
  });

  test('a folder swapped for a symlink into protected/ between the check and the write: refused, nothing created or changed', async () => {
    await write(path.join(cwd, 'work/conf'), 'mine\n');
    // Same mtimes, so the read stamp of work/conf also fits protected/conf: only the path rule can refuse.
    await age(path.join(cwd, 'work/conf'), 100);
    await age(conf(), 100);
    for (const [name, stamped] of [
      ['conf', true],
      ['brand-new', false],
    ] as const) {
      const file = path.join(cwd, 'work', name);
      const stamp = stamped ? await readStamp(cwd, file) : undefined;
      let swapped = false;
      const racing: ToolFs = {
        ...nodeFs,
        async stat(p) {
          if (!swapped && p === file) {
            swapped = true;
            await fs.rename(path.join(cwd, 'work'), path.join(cwd, `work-old-${name}`));
            await fs.symlink(path.join(cwd, 'protected'), path.join(cwd, 'work'));
          }
          return nodeFs.stat(p);
        },
      };
      const out = await call(
        cwd,
        'Write',
        { file_path: file, content: 'pwned\n' },
        { ops: createToolOps({ fs: racing }), ctx: { pathGuard: guard, ...(stamp ? { readStamp: stamp } : {}) } },
      );
      expect(swapped).toBe(true);
      expect(out).toEqual({ content: editDenied(file, path.join(cwd, 'protected', name), 'Write'), isError: true });
      await fs.rm(path.join(cwd, 'work'));
      await fs.rename(path.join(cwd, `work-old-${name}`), path.join(cwd, 'work'));
    }
    // No file created (the refused `brand-new` was removed again), none changed.
    expect((await fs.readdir(path.join(cwd, 'protected'))).sort()).toEqual(['conf']);
    expect(await fs.readFile(conf(), 'utf8')).toBe('original\n');
  });
});
