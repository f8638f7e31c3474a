import { ConfigError, parseSessionConfig, type PermissionMode } from '../../src/shared/config';
import {
  decide,
  evaluatePermission,
  parseRule,
  parseRules,
  PermissionRuleError,
  type PermissionDecision,
  type Workspace,
} from '../../src/shared/permissions';
import { absolutePath, globRegex, isInside, matchPathPattern, missingBase } from '../../src/shared/permissions/paths';
import { escapeRegex, matchBashPattern, parseBashPattern, PermissionRuleList, ruleCoversTool } from '../../src/shared/permissions/rules';

const WS: Workspace = { cwd: '/proj', homeDir: '/home/u', additionalDirectories: ['/extra'] };
const MODES: PermissionMode[] = ['default', 'acceptEdits', 'plan', 'bypassPermissions', 'dontAsk'];
const READ_ONLY = new Set(['Read', 'Glob', 'Grep']);

interface Row {
  allow?: string[];
  deny?: string[];
  ask?: string[];
  mode?: PermissionMode;
  workspace?: Workspace;
  paths?: string[];
}

function run(tool: string, input: unknown, row: Row = {}): PermissionDecision {
  return evaluatePermission({
    toolName: tool,
    input,
    readOnly: READ_ONLY.has(tool),
    mode: row.mode ?? 'default',
    rules: parseRules({ allow: row.allow, deny: row.deny, ask: row.ask }),
    workspace: row.workspace ?? WS,
    paths: row.paths,
  });
}
const bash = (command: string, row: Row = {}) => run('Bash', { command }, row);

describe('here-strings', () => {
  it('a command on the line after a here-string still meets the deny rules', () => {
    expect(bash('cat <<<x\nrm -rf /tmp/y', { allow: ['Bash(cat *)'], deny: ['Bash(rm:*)'] }).behavior).toBe('deny');
    expect(bash('cat <<<x\nls', { allow: ['Bash(cat *)'] }).behavior).toBe('ask');
    expect(bash('cat <<<x', { allow: ['Bash(cat *)'] }).behavior).toBe('allow');
  });
});

describe('Bash rules', () => {
  it.each<[string, string, string, 'allow' | 'ask']>([
    ['exact', 'Bash(npm run build)', 'npm run build', 'allow'],
    ['exact: more arguments are not the same command', 'Bash(npm run build)', 'npm run build --prod', 'ask'],
    ['space before *: word boundary', 'Bash(ls *)', 'ls -la', 'allow'],
    ['space before *: the bare command too', 'Bash(ls *)', 'ls', 'allow'],
    ['space before *: not another command', 'Bash(ls *)', 'lsof', 'ask'],
    ['no space before *: any continuation', 'Bash(ls*)', 'lsof', 'allow'],
    ['legacy :*', 'Bash(npm test:*)', 'npm test -- --watch', 'allow'],
    ['legacy :* is a word boundary', 'Bash(npm test:*)', 'npm testx', 'ask'],
    ['legacy :* alone', 'Bash(npm test:*)', 'npm test', 'allow'],
    ['* in the middle', 'Bash(git * main)', 'git push origin main', 'allow'],
    ['* in the middle, other branch', 'Bash(git * main)', 'git push origin dev', 'ask'],
    ['* at the start', 'Bash(* --version)', 'node --version', 'allow'],
    ['escaped \\* is a literal star', 'Bash(echo \\*)', 'echo *', 'allow'],
    ['escaped \\* does not match anything', 'Bash(echo \\*)', 'echo hi', 'ask'],
    ['Bash(*) is every command', 'Bash(*)', 'anything at all && more', 'allow'],
    ['documented wrappers are stripped for allow', 'Bash(npm test *)', 'timeout 60 npm test --ci', 'allow'],
    ['VAR= prefixes are not stripped for allow', 'Bash(npm test *)', 'LD_PRELOAD=x.so npm test', 'ask'],
    ['quoted && stays one command', 'Bash(echo *)', 'echo "a && b"', 'allow'],
    ['quoted ; stays one command', 'Bash(echo *)', "echo 'a; rm x'", 'allow'],
  ])('%s: %s vs %j → %s', (_name, rule, command, expected) => {
    expect(bash(command, { allow: [rule] }).behavior).toBe(expected);
  });

  // A prefix rule never allows `safe && other`: every part must be allowed on its own.
  it.each([
    ['&&', 'echo ok && rm -rf x', 'rm -rf x'],
    ['||', 'echo ok || rm x', 'rm x'],
    [';', 'echo ok; rm x', 'rm x'],
    ['newline', 'echo ok\nrm x', 'rm x'],
    ['pipe', 'echo ok | rm x', 'rm x'],
    ['background &', 'echo ok & rm x', 'rm x'],
    ['$(…)', 'echo $(rm x)', 'rm x'],
    ['$(…) in double quotes', 'echo "$(rm x)"', 'rm x'],
    ['backticks', 'echo `rm x`', 'rm x'],
    ['subshell', '(rm x)', 'rm x'],
    ['process substitution', 'echo <(rm x)', 'rm x'],
    ['sh -c', 'echo ok && sh -c "rm x"', 'sh -c "rm x"'],
  ])('compound bypass via %s is not allowed by Bash(echo *)', (_name, command, uncovered) => {
    const d = bash(command, { allow: ['Bash(echo *)'] });
    expect(d.behavior).toBe('ask');
    if (d.behavior === 'ask') {
      expect(d.message).toContain(`\`${uncovered}\``);
      expect(d.suggestions).toContain(`Bash(${uncovered})`);
    }
  });

  it('allows a compound command when every part is allowed, naming each rule', () => {
    const d = bash('npm test && git status', { allow: ['Bash(npm test:*)', 'Bash(git status)'] });
    expect(d).toMatchObject({ behavior: 'allow', reason: 'rule' });
    expect(d.matched.map((m) => [m.rule, m.subject])).toEqual([
      ['Bash(npm test:*)', 'npm test'],
      ['Bash(git status)', 'git status'],
    ]);
  });

  it.each([
    ['&&', 'echo ok && rm -rf x'],
    [';', 'ls; rm x'],
    ['newline', 'ls\nrm x'],
    ['pipe', 'cat f | rm x'],
    ['$(…)', 'echo $(rm x)'],
    ['backticks', 'echo `rm x`'],
    ['subshell', '(rm x)'],
    ['if', 'if true; then rm x; fi'],
    ['timeout', 'timeout 5 rm x'],
    ['nohup nice', 'nohup nice -n 5 rm x'],
    ['sudo', 'sudo rm x'],
    ['VAR=', 'FOO=1 rm x'],
    ['env', 'env FOO=1 rm x'],
    ['env - (an empty environment)', 'env - rm x'],
    ['env by its path, with a quoted assignment', "/usr/bin/env 'FOO=a b' rm x"],
    ['xargs', 'find . | xargs rm'],
    ['redirection first', '>log rm x'],
    ['bash -c', 'bash -c "rm x"'],
    ['eval', "eval 'rm x'"],
    ['quoted name', "'rm' x"],
    ['escaped name', '\\rm x'],
    ['full path', '/bin/rm x'],
  ])('a deny rule for any part denies the whole (%s), even with Bash allowed', (_name, command) => {
    const d = bash(command, { deny: ['Bash(rm:*)'], allow: ['Bash'] });
    expect(d).toMatchObject({ behavior: 'deny', reason: 'rule' });
    expect(d.matched[0]!.rule).toBe('Bash(rm:*)');
    expect(d.matched[0]!.unchecked).toBeUndefined();
  });

  it.each([
    ['a computed command name', '$CMD x'],
    ['an unterminated quote', 'echo "oops'],
    ['a function definition', 'f() { echo; }; f'],
    ['a case statement', 'case $x in a) echo;; esac'],
  ])('a command we cannot analyse (%s) meets deny rules as if it matched', (_name, command) => {
    const d = bash(command, { deny: ['Bash(rm:*)'], mode: 'bypassPermissions' });
    expect(d.behavior).toBe('deny');
    expect(d.matched[0]!.unchecked).toEqual(expect.any(String));
    if (d.behavior === 'deny') expect(d.message).toMatch(/cannot be checked against the deny rule Bash\(rm:\*\)/);
    // …and is never allowed by a Bash(…) rule, only by the bare tool.
    expect(bash(command, { allow: ['Bash(* x)', 'Bash(echo *)'] }).behavior).toBe('ask');
    expect(bash(command, { allow: ['Bash'] }).behavior).toBe('allow');
  });

  it('deny rules keep their word boundary', () => {
    expect(bash('rmdir x', { deny: ['Bash(rm:*)'], allow: ['Bash'] }).behavior).toBe('allow');
    expect(bash('echo rm -rf x', { deny: ['Bash(rm:*)'], allow: ['Bash'] }).behavior).toBe('allow');
  });

  it.each(MODES)("disallowedTools ['Bash(rm:*)'] denies `rm -f x` in %s mode", (mode) => {
    const d = decide({
      toolName: 'Bash',
      readOnly: false,
      mode,
      allowedTools: ['Bash'],
      disallowedTools: ['Bash(rm:*)'],
      toolInput: { command: 'rm -f x' },
    });
    expect(d.behavior).toBe('deny');
    if (d.behavior === 'deny') expect(d.message).toContain('Bash(rm:*)');
    const other = decide({
      toolName: 'Bash',
      readOnly: false,
      mode,
      allowedTools: ['Bash'],
      disallowedTools: ['Bash(rm:*)'],
      toolInput: { command: 'ls' },
    });
    expect(other.behavior).toBe(mode === 'plan' ? 'deny' : 'allow');
  });

  it('without the tool input, a specifier deny rule still applies (it cannot be checked); other answers are as before', () => {
    const d = decide({ toolName: 'Bash', readOnly: false, mode: 'bypassPermissions', allowedTools: [], disallowedTools: ['Bash(rm:*)'] });
    expect(d.behavior).toBe('deny');
    expect(decide({ toolName: 'Bash', readOnly: false, mode: 'default', allowedTools: ['Bash(ls *)'], disallowedTools: [] })).toMatchObject(
      {
        behavior: 'ask',
        message:
          'Permission to use Bash has not been granted. Allow it with allowedTools: ["Bash"] or a permissionMode such as acceptEdits or bypassPermissions.',
      },
    );
    expect(decide({ toolName: 'Write', readOnly: false, mode: 'acceptEdits', allowedTools: [], disallowedTools: [] }).behavior).toBe(
      'allow',
    );
  });
});

describe('precedence and modes', () => {
  it('deny beats a more specific allow; ask beats allow', () => {
    expect(bash('aws s3 ls', { deny: ['Bash(aws *)'], allow: ['Bash(aws s3 ls)'] }).behavior).toBe('deny');
    expect(bash('git push origin', { ask: ['Bash(git push:*)'], allow: ['Bash'] })).toMatchObject({
      behavior: 'ask',
      matched: [{ rule: 'Bash(git push:*)', list: 'ask' }],
    });
    expect(bash('git push', { ask: ['Bash(git push:*)'], deny: ['Bash(git:*)'] }).behavior).toBe('deny');
  });

  it('ask rules ask even in bypassPermissions, and deny in dontAsk', () => {
    expect(bash('git push', { ask: ['Bash(git push:*)'], mode: 'bypassPermissions' }).behavior).toBe('ask');
    expect(bash('git push', { ask: ['Bash(git push:*)'], allow: ['Bash'], mode: 'dontAsk' }).behavior).toBe('deny');
  });

  it.each<[PermissionMode, string, unknown, Row, 'allow' | 'ask' | 'deny']>([
    ['default', 'Bash', { command: 'make' }, {}, 'ask'],
    ['default', 'Read', { file_path: '/anywhere/x' }, {}, 'allow'],
    ['dontAsk', 'Bash', { command: 'make' }, {}, 'deny'],
    ['dontAsk', 'Bash', { command: 'make' }, { allow: ['Bash(make)'] }, 'allow'],
    ['bypassPermissions', 'Bash', { command: 'make' }, {}, 'allow'],
    ['bypassPermissions', 'Write', { file_path: '/proj/a' }, { deny: ['Write'] }, 'deny'],
    ['plan', 'Write', { file_path: '/proj/a' }, { allow: ['Write'] }, 'deny'],
    ['plan', 'Bash', { command: 'ls' }, { allow: ['Bash'] }, 'deny'],
    ['plan', 'Grep', { pattern: 'x' }, {}, 'allow'],
    ['acceptEdits', 'Edit', { file_path: '/proj/src/a.ts' }, {}, 'allow'],
    ['acceptEdits', 'Write', { file_path: '/extra/b.ts' }, {}, 'allow'],
    ['acceptEdits', 'Write', { file_path: '/proj/../outside/b.ts' }, {}, 'ask'],
    ['acceptEdits', 'Write', { file_path: '/proj/a' }, { paths: ['/proj/a', '/etc/passwd'] }, 'ask'],
    ['acceptEdits', 'Bash', { command: 'touch a' }, {}, 'ask'],
  ])('%s: %s %j → %s', (mode, tool, input, row, expected) => {
    expect(run(tool, input, { ...row, mode }).behavior).toBe(expected);
  });
});

describe('Read / Edit path rules', () => {
  const other: Workspace = { cwd: '/proj/pkg', projectRoot: '/proj', homeDir: '/home/u' };
  it.each<[string, string, string, string, Row, boolean]>([
    ['x: at any depth below cwd', 'Read(.env)', 'Read', '/proj/sub/.env', {}, true],
    ['./x: the same', 'Read(./.env)', 'Read', '/proj/.env', {}, true],
    ['x: not outside cwd', 'Read(.env)', 'Read', '/other/.env', {}, false],
    ['*.ext at any depth', 'Read(*.pem)', 'Read', '/proj/a/b/key.pem', {}, true],
    ['a/b is anchored at cwd', 'Read(config/secrets.json)', 'Read', '/proj/sub/config/secrets.json', {}, false],
    ['//abs from the filesystem root', 'Read(//etc/**)', 'Read', '/etc/ssl/cert.pem', {}, true],
    ['~/ from the home directory', 'Read(~/.ssh/**)', 'Read', '/home/u/.ssh/id_rsa', {}, true],
    ['/x from the project root', 'Edit(/src/**)', 'Edit', '/proj/src/a.ts', { workspace: other }, true],
    ['/x is not cwd-relative when they differ', 'Edit(/src/**)', 'Edit', '/proj/pkg/src/a.ts', { workspace: other }, false],
    ['x from cwd when they differ', 'Edit(src/**)', 'Edit', '/proj/pkg/src/a.ts', { workspace: other }, true],
    ['* is one level', 'Edit(/src/*.ts)', 'Edit', '/proj/src/a/b.ts', {}, false],
    ['* one level, matching', 'Edit(/src/*.ts)', 'Edit', '/proj/src/b.ts', {}, true],
    ['** any depth', 'Edit(/src/**/*.ts)', 'Edit', '/proj/src/a/b/c.ts', {}, true],
    ['** also zero levels', 'Edit(/src/**/*.ts)', 'Edit', '/proj/src/c.ts', {}, true],
    ['a directory covers its contents', 'Read(//etc)', 'Read', '/etc/passwd', {}, true],
    ['.. in the rule is normalised', 'Read(../secrets/**)', 'Read', '/secrets/k', { workspace: { cwd: '/proj' } }, true],
    ['Edit rules cover Write', 'Edit(/docs/**)', 'Write', '/proj/docs/a.md', {}, true],
    ['Edit rules cover NotebookEdit', 'Edit(/nb/**)', 'NotebookEdit', '/proj/nb/a.ipynb', {}, true],
    ['Read rules cover Grep', 'Read(//etc/**)', 'Grep', '/etc/x', {}, true],
    ['Write rules cover only Write', 'Write(/docs/**)', 'Edit', '/proj/docs/a.md', {}, false],
  ])('%s: %s vs %s %s', (_name, rule, tool, path, row, matches) => {
    const input = tool === 'NotebookEdit' ? { notebook_path: path } : tool === 'Grep' ? { pattern: 'x', path } : { file_path: path };
    expect(run(tool, input, { ...row, deny: [rule] }).behavior).toBe(matches ? 'deny' : READ_ONLY.has(tool) ? 'allow' : 'ask');
  });

  it('paths with .. are normalised before matching', () => {
    expect(run('Read', { file_path: '/proj/src/../../etc/passwd' }, { deny: ['Read(//etc/**)'] }).behavior).toBe('deny');
    expect(run('Edit', { file_path: '/proj/src/../secret.ts' }, { allow: ['Edit(/src/**)'] }).behavior).toBe('ask');
    expect(run('Edit', { file_path: '/proj/lib/../src/./ok.ts' }, { allow: ['Edit(/src/**)'] }).behavior).toBe('allow');
  });

  it('resolved paths from the caller (a symlink and its target) are all checked', () => {
    const link = { file_path: '/proj/link' };
    expect(run('Read', link, { deny: ['Read(//etc/**)'], paths: ['/proj/link', '/etc/shadow'] }).behavior).toBe('deny');
    expect(run('Edit', link, { allow: ['Edit(/**)'], paths: ['/proj/link', '/etc/shadow'] }).behavior).toBe('ask');
    expect(run('Edit', link, { allow: ['Edit(/**)'], paths: ['/proj/link', '/proj/real'] }).behavior).toBe('allow');
  });

  it('a ~ rule without a known home directory applies as deny, never as allow', () => {
    const ws = { cwd: '/proj' };
    const d = run('Read', { file_path: '/home/u/.ssh/id_rsa' }, { deny: ['Read(~/.ssh/**)'], workspace: ws });
    expect(d.behavior).toBe('deny');
    expect(d.matched[0]!.unchecked).toMatch(/base directory/);
    expect(run('Edit', { file_path: '/home/u/x' }, { allow: ['Edit(~/**)'], workspace: ws }).behavior).toBe('ask');
  });
});

describe('MCP, Task and WebFetch rules', () => {
  it.each<[string, string, unknown, 'allow' | 'ask']>([
    ['mcp__github', 'mcp__github__create_pr', {}, 'allow'],
    ['mcp__github__*', 'mcp__github__create_pr', {}, 'allow'],
    ['mcp__github__create_pr', 'mcp__github__create_pr', {}, 'allow'],
    ['mcp__github__create_pr', 'mcp__github__merge_pr', {}, 'ask'],
    ['mcp__github', 'mcp__githubber__x', {}, 'ask'],
    ['Task(Explore)', 'Task', { subagent_type: 'Explore', prompt: 'p', description: 'd' }, 'allow'],
    ['Task(Explore)', 'Task', { subagent_type: 'general', prompt: 'p', description: 'd' }, 'ask'],
    ['Agent(Explore)', 'Task', { subagent_type: 'Explore', prompt: 'p', description: 'd' }, 'allow'],
    ['WebFetch(domain:example.com)', 'WebFetch', { url: 'https://user@Example.com:8080/a' }, 'allow'],
    ['WebFetch(domain:example.com)', 'WebFetch', { url: 'https://evil.com/?example.com' }, 'ask'],
    ['WebFetch(domain:*.example.com)', 'WebFetch', { url: 'https://api.example.com/' }, 'allow'],
  ])('allow %s: %s %j → %s', (rule, tool, input, expected) => {
    expect(run(tool, input, { allow: [rule] }).behavior).toBe(expected);
    if (expected === 'allow') expect(run(tool, input, { allow: ['Bash'], deny: [rule] }).behavior).toBe('deny');
  });
});

describe('parseRule', () => {
  it.each([
    ['Bash', { kind: 'tool', tool: 'Bash' }],
    ['Bash(*)', { kind: 'tool', tool: 'Bash' }],
    ['Bash(npm test)', { kind: 'bash', pattern: { type: 'exact', command: 'npm test' } }],
    ['Bash(npm test:*)', { kind: 'bash', pattern: { type: 'prefix', prefix: 'npm test' } }],
    ['Bash(npm test *)', { kind: 'bash', pattern: { type: 'prefix', prefix: 'npm test' } }],
    ['Bash(git * main)', { kind: 'bash', pattern: { type: 'wildcard', pattern: 'git * main' } }],
    ['Read(~/.ssh/**)', { kind: 'path', tool: 'Read', pattern: '~/.ssh/**' }],
    ['mcp__srv', { kind: 'mcpServer', server: 'srv' }],
    ['mcp__srv__*', { kind: 'mcpServer', server: 'srv' }],
    ['mcp__srv__tool', { kind: 'tool', tool: 'mcp__srv__tool' }],
    ['Task(Explore)', { kind: 'agent', agent: 'Explore' }],
    ['WebFetch(domain:Example.COM)', { kind: 'domain', domain: 'example.com' }],
  ])('%s', (text, expected) => {
    expect(parseRule(text)).toMatchObject({ text, ...expected });
    expect(JSON.parse(JSON.stringify(parseRule(text)))).toEqual(parseRule(text)); // plain JSON: safe in workflow state
  });

  it.each([
    ['', /empty/],
    ['Bash(rm', /must end with '\)'/],
    ['Bash()', /specifier is empty/],
    ['Bash(:*)', /needs a command prefix/],
    ['rm)', /'\)' without '\('/],
    ['Bash rm', /not a tool name/],
    ['Ba*sh', /wildcard in a tool name/],
    ['Skill(commit)', /supported only for Bash, Read, Edit, Write, Task/],
    ['mcp__srv__tool(x)', /MCP rules take no specifier/],
    ['WebFetch(example.com)', /domain:/],
    ['Read(~bob/x)', /~user paths/],
  ])('refuses %j by name', (text, why) => {
    let error: unknown;
    try {
      parseRule(text);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PermissionRuleError);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as PermissionRuleError).rule).toBe(text);
    expect((error as PermissionRuleError).reason).toMatch(why);
    expect((error as Error).message).toContain(`'${text}'`);
  });

  it('parseRules names the list and index; session config refuses a bad rule before anything starts', () => {
    expect(() => parseRules({ deny: ['Bash', 'Bash(rm'] })).toThrow(/^disallowedTools\[1\]: invalid permission rule 'Bash\(rm'/);
    expect(() => parseSessionConfig({ prompt: 'p', cwd: '/w', disallowedTools: ['Bash', 'Skill(x)'] })).toThrow(
      /invalid session config: disallowedTools\.1: invalid permission rule 'Skill\(x\)'/,
    );
    expect(() => parseSessionConfig({ prompt: 'p', cwd: '/w', askTools: ['Bash(git push'] })).toThrow(/askTools\.0/);
    expect(parseSessionConfig({ prompt: 'p', cwd: '/w', allowedTools: ['Bash(npm test:*)'] }).askTools).toEqual([]);
  });
});

describe('decide: rule strings, with and without the call input', () => {
  const base = { readOnly: false, mode: 'default' as PermissionMode, allowedTools: [] as string[], disallowedTools: [] as string[] };

  it('with the input, the decision is the evaluator’s, its message naming the command', () => {
    expect(decide({ ...base, toolName: 'Bash', toolInput: { command: 'make' } })).toEqual({
      behavior: 'ask',
      reason: 'noRule',
      matched: [],
      suggestions: ['Bash(make)'],
      message:
        'Permission to use Bash has not been granted for `make`. Allow it with allowedTools: ["Bash(make)"] or permissionMode bypassPermissions.',
    });
  });

  it('without the input, a decision made by a rule keeps its own message', () => {
    expect(decide({ ...base, toolName: 'Bash', askTools: ['Bash'] })).toEqual({
      behavior: 'ask',
      reason: 'rule',
      matched: [{ rule: 'Bash', list: 'ask', source: 'askTools' }],
      suggestions: [],
      message: 'Bash needs approval: it matches the ask rule Bash (askTools).',
    });
  });

  it.each(['Write', 'Edit', 'MultiEdit', 'NotebookEdit'])('without the input, acceptEdits allows %s by mode', (toolName) => {
    expect(decide({ ...base, toolName, mode: 'acceptEdits' })).toEqual({ behavior: 'allow', reason: 'mode', matched: [] });
    expect(decide({ ...base, toolName }).behavior).toBe('ask');
  });

  it('the workspace is passed on: acceptEdits allows an edit inside cwd, and asks outside it', () => {
    const edit = (file_path: string) =>
      decide({ ...base, toolName: 'Edit', mode: 'acceptEdits', toolInput: { file_path }, workspace: { cwd: '/proj' } });
    expect(edit('/proj/a.ts')).toEqual({ behavior: 'allow', reason: 'mode', matched: [] });
    expect(edit('/elsewhere/a.ts').behavior).toBe('ask');
  });
});

describe('path patterns (paths.ts)', () => {
  const cwd = { cwd: '/proj' };
  it.each<[string, string, object, 'yes' | 'no' | 'unknown']>([
    ['~', '/home/u/a', { homeDir: '/home/u' }, 'yes'],
    ['~', '/home/v/a', { homeDir: '/home/u' }, 'no'],
    ['~', '/home/u/a', cwd, 'unknown'],
    ['/src/a', '/proj/src/a', cwd, 'yes'],
    ['/src/a', '/root/src/a', { cwd: '/proj', projectRoot: '/root' }, 'yes'],
    ['/src/a', '/proj/src/a', {}, 'unknown'],
    ['a', '/proj/a', {}, 'unknown'],
    ['//etc', '/etc/x', {}, 'yes'],
    ['logs/', '/proj/a/logs/f.txt', cwd, 'yes'],
    ['logs//', '/proj/a/logs/f.txt', cwd, 'yes'],
    ['./', '/proj/a', cwd, 'yes'],
    ['./', '/other/a', cwd, 'no'],
    ['.', '/proj/a', cwd, 'yes'],
    ['..', '/proj/x', { cwd: '/proj/sub' }, 'yes'],
    ['..', '/other/x', { cwd: '/proj/sub' }, 'no'],
    ['*', '/proj', cwd, 'no'],
    ['*', '/proj/a', cwd, 'yes'],
    ['a', '/a/x', { cwd: '/' }, 'yes'],
    ['*.pem', '/a/k.pem', { cwd: '/' }, 'yes'],
    ['*.pem', '/projx/k.pem', cwd, 'no'],
    ['./.env', '/proj/sub/.env', cwd, 'yes'],
    ['a/b', '/proj/x/ab', cwd, 'no'],
    ['proj', '/proj/x', cwd, 'no'],
    ['j', '/proj/x', cwd, 'no'],
    ['//', '/etc/x', {}, 'yes'],
  ])('%s vs %s with %j → %s', (pattern, path, bases, expected) => {
    expect(matchPathPattern(pattern, path, bases)).toBe(expected);
  });

  it('missingBase says which base directory a pattern needs', () => {
    expect(missingBase('~/x', { cwd: '/p' })).toBe('the home directory');
    expect(missingBase('/x', {})).toBe('the project root');
    expect(missingBase('x', { homeDir: '/h' })).toBe('the working directory');
    expect(missingBase('//x', {})).toBeUndefined();
    expect(missingBase('x', { cwd: '/p' })).toBeUndefined();
  });

  it('isInside and absolutePath', () => {
    expect(isInside('/x', '/')).toBe(true);
    expect(isInside('/proj', '/proj')).toBe(true);
    expect(isInside('/proj/a', '/proj')).toBe(true);
    expect(isInside('/projx', '/proj')).toBe(false);
    expect(absolutePath('a/../b', '/p')).toBe('/p/b');
    expect(absolutePath('/x/../y', undefined)).toBe('/y');
    expect(absolutePath('a', undefined)).toBeUndefined();
  });

  it.each<[string, string[], string[]]>([
    ['a/**/b', ['a/b', 'a/x/y/b'], ['a/xb', 'ab']],
    ['a/**', ['a', 'a/x/y'], ['ab']],
    ['a/**x', ['a/yx', 'a/y/zx'], ['ax']],
    ['a**b', ['ab', 'a/x/b'], ['a/x/c']],
    ['a*', ['a', 'abc'], ['a/b']],
    ['a?c', ['abc'], ['ac', 'a/c', 'abbc']],
    ['[ab]x', ['ax', 'bx'], ['cx', 'sx', '[ab]x']],
    ['[!a]x', ['bx', '!x'], ['ax']],
    ['[^a]x', ['bx', '^x'], ['ax']],
    ['[a!]x', ['ax', '!x'], ['bx']],
    ['[a^]x', ['ax', '^x'], ['bx']],
    ['ab]', ['ab]'], ['b']],
    ['[]a]', [']', 'a'], ['b']],
    ['[a\\]', ['a', '\\'], ['b']],
    ['[ab', ['[ab'], ['a']],
    ['a\\*', ['a*'], ['ab', 'a\\b']],
    ['a\\', ['a\\'], ['a']],
    ['a.b', ['a.b'], ['axb']],
    ['+(x)|{y}$^', ['+(x)|{y}$^'], ['x', 'y']],
  ])('glob %s', (glob, yes, no) => {
    const re = globRegex(glob);
    for (const s of yes) expect([s, re.test(s)]).toEqual([s, true]);
    for (const s of no) expect([s, re.test(s)]).toEqual([s, false]);
    expect(globRegex(glob)).toBe(re);
  });
});

describe('rules.ts: parsing and matching in detail', () => {
  it.each<[string, object]>([
    [' Bash ', { text: ' Bash ', kind: 'tool', tool: 'Bash' }],
    ['my-tool_2', { kind: 'tool', tool: 'my-tool_2' }],
    ['_x', { kind: 'tool', tool: '_x' }],
    ['Agent', { kind: 'tool', tool: 'Task' }],
    ['Bash( * )', { kind: 'tool', tool: 'Bash' }],
    ['Task( Explore )', { kind: 'agent', tool: 'Task', agent: 'Explore' }],
    ['Agent(Plan)', { kind: 'agent', tool: 'Task', agent: 'Plan' }],
    ['WebFetch( domain:ab.COM )', { kind: 'domain', tool: 'WebFetch', domain: 'ab.com' }],
    ['Write(~)', { kind: 'path', tool: 'Write', pattern: '~' }],
    ['Edit(~/x)', { kind: 'path', tool: 'Edit', pattern: '~/x' }],
    ['mcp__a-b_c', { kind: 'mcpServer', server: 'a-b_c' }],
    ['mcp__a__b__*', { kind: 'mcpServer', server: 'a__b' }],
  ])('%j parses to %j', (text, expected) => {
    expect(parseRule(text, 'src')).toMatchObject({ text, source: 'src', ...expected });
  });

  it.each<[string, string]>([
    ['   ', 'the rule is empty'],
    ['Bash(  )', 'the specifier is empty; write Bash to match every call'],
    ['2tool', "'2tool' is not a tool name (expected Tool or Tool(specifier))"],
    ['2tool(x)', "'2tool' is not a tool name"],
    ['mcp__srv__to*', 'a wildcard in a tool name is supported only as mcp__server__*'],
    ['WebFetch(xdomain:a.com)', 'WebFetch rules take the form WebFetch(domain:example.com)'],
    [
      'Skill(commit)',
      'specifiers are supported only for Bash, Read, Edit, Write, Task (or Agent) and WebFetch; write the bare name Skill to match every call',
    ],
    ['Read(~bob/x)', '~user paths are not supported; write ~/path, //absolute/path, /project/path or relative/path'],
    ['Read(a\0b)', 'the path contains a NUL byte'],
  ])('refuses %j: %s', (text, reason) => {
    let error: PermissionRuleError | undefined;
    try {
      parseRule(text);
    } catch (e) {
      error = e as PermissionRuleError;
    }
    expect(error?.reason).toBe(reason);
    expect(error?.name).toBe('PermissionRuleError');
    expect(error?.message).toBe(`invalid permission rule '${text}': ${reason}`);
  });

  it('parseRules names the list of each rule and prefixes the field in its error', () => {
    const rules = parseRules({ allow: ['Read'], ask: ['Bash(git push:*)'] });
    expect(rules.allow[0]!.source).toBe('allowedTools');
    expect(rules.ask[0]!.source).toBe('askTools');
    expect(rules.deny).toEqual([]);
    let error: PermissionRuleError | undefined;
    try {
      parseRules({ ask: ['Bash('] }, { allow: 'a', deny: 'd', ask: 'permissions.ask' });
    } catch (e) {
      error = e as PermissionRuleError;
    }
    expect(error?.message).toBe(
      "permissions.ask[0]: invalid permission rule 'Bash(': a specifier must end with ')' (expected Tool(specifier))",
    );
    expect(error?.rule).toBe('Bash(');
  });

  it.each<[string, object]>([
    ['*', { type: 'any' }],
    [' * ', { type: 'any' }],
    ['npm test :*', { type: 'prefix', prefix: 'npm test' }],
    ['a\nb:*', { type: 'prefix', prefix: 'a\nb' }],
    ['ls  *', { type: 'prefix', prefix: 'ls' }],
    ['echo \\* *', { type: 'prefix', prefix: 'echo *' }],
    ['echo \\ *', { type: 'wildcard', pattern: 'echo \\ *' }],
    ['a * b *', { type: 'wildcard', pattern: 'a * b *' }],
    ['echo \\\\*', { type: 'wildcard', pattern: 'echo \\\\*' }],
    ['echo \\\\', { type: 'exact', command: 'echo \\' }],
    ['echo \\*', { type: 'exact', command: 'echo *' }],
  ])('parseBashPattern(%j) → %j', (raw, expected) => {
    expect(parseBashPattern(raw)).toEqual(expected);
  });

  it('parseBashPattern names the rule it refuses', () => {
    expect(() => parseBashPattern(' :*')).toThrow(
      "invalid permission rule 'Bash( :*)': ':*' needs a command prefix before it, e.g. Bash(npm test:*)",
    );
  });

  it.each<[string, string, boolean]>([
    ['ls *', 'ls\t-la', true],
    ['ls *', '  ls  ', true],
    ['npm test', ' npm test ', true],
    ['echo \\\\*', 'echo \\abc', true],
    ['echo \\\\*', 'echo abc', false],
    ['a.b*', 'a.bc', true],
    ['a.b*', 'axbc', false],
    ['(x)+ *', '(x)+ y', true],
    ['* end', 'a\nb end', true],
  ])('matchBashPattern(%j, %j) → %s', (spec, command, expected) => {
    expect(matchBashPattern(parseBashPattern(spec), command)).toBe(expected);
    expect(matchBashPattern(parseBashPattern(spec), command)).toBe(expected); // the compiled pattern is reused
  });

  it('escapeRegex escapes every regex metacharacter', () => {
    const special = '.*+?^${}()|[]\\/';
    expect(escapeRegex(special)).toBe('\\.\\*\\+\\?\\^\\$\\{\\}\\(\\)\\|\\[\\]\\\\\\/');
    expect(new RegExp(`^${escapeRegex(special)}$`).test(special)).toBe(true);
  });

  it.each<[string, string, boolean]>([
    ['mcp__srv', 'mcp__srv__x', true],
    ['mcp__srv', 'mcp__srvx__y', false],
    ['mcp__srv', 'mcp__srv', false],
    ['Edit', 'MultiEdit', true],
    ['Edit', 'NotebookEdit', true],
    ['Edit', 'Read', false],
    ['Read', 'Glob', true],
    ['Read', 'Grep', true],
    ['Read', 'Edit', false],
    ['Task', 'Agent', true],
    ['Write', 'Edit', false],
    ['constructor', 'constructor', true],
    ['toString', 'Edit', false],
  ])('rule %s covers %s: %s', (rule, tool, expected) => {
    expect(ruleCoversTool(parseRule(rule), tool)).toBe(expected);
  });
});

describe('decide.ts: each answer in full', () => {
  const NO_SOURCE = (deny: string[], allow: string[] = []) => ({
    allow: allow.map((r) => parseRule(r)),
    deny: deny.map((r) => parseRule(r)),
    ask: [],
  });

  it('a deny rule: its list, source, subject and message', () => {
    expect(bash('rm x', { deny: ['Bash(rm:*)'] })).toEqual({
      behavior: 'deny',
      reason: 'rule',
      matched: [{ rule: 'Bash(rm:*)', list: 'deny', source: 'disallowedTools', subject: 'rm x' }],
      message: 'Permission to use Bash has been denied by the rule Bash(rm:*) (disallowedTools) for `rm x`.',
    });
    const noSource = evaluatePermission({
      toolName: 'Bash',
      input: { command: 'rm x' },
      readOnly: false,
      mode: 'default',
      rules: NO_SOURCE(['Bash(rm:*)']),
      workspace: WS,
    });
    expect(noSource.behavior === 'deny' && noSource.message).toBe(
      'Permission to use Bash has been denied by the rule Bash(rm:*) for `rm x`.',
    );
    expect(run('Skill', {}, { deny: ['Skill'] })).toMatchObject({
      message: 'Permission to use Skill has been denied by the rule Skill (disallowedTools).',
    });
  });

  it('a deny rule that cannot be checked says why, with the part or without one', () => {
    expect(bash('$CMD x', { deny: ['Bash(rm:*)'] })).toMatchObject({
      message:
        'Permission to use Bash has been denied: the command name is computed at run time (`$CMD x`), so it cannot be checked against the deny rule Bash(rm:*) (disallowedTools). Rewrite the call so it can be checked.',
    });
    const problem = evaluatePermission({
      toolName: 'Bash',
      input: { command: 'echo "oops' },
      readOnly: false,
      mode: 'default',
      rules: NO_SOURCE(['Bash(rm:*)']),
      workspace: WS,
    });
    expect(problem).toEqual({
      behavior: 'deny',
      reason: 'rule',
      matched: [
        { rule: 'Bash(rm:*)', list: 'deny', source: undefined, unchecked: 'the command cannot be analysed (unterminated double quote)' },
      ],
      message:
        'Permission to use Bash has been denied: the command cannot be analysed (unterminated double quote), so it cannot be checked against the deny rule Bash(rm:*). Rewrite the call so it can be checked.',
    });
  });

  it.each<[string, unknown, string]>([
    ['Bash', { command: '' }, 'the command is empty'],
    ['Bash', { command: '# only a comment' }, 'the command is empty'],
    ['Bash', {}, 'the call has no command'],
    ['Bash', { command: 42 }, 'the call has no command'],
    ['Bash', null, 'the call has no command'],
    ['Edit', {}, 'the call names no path'],
    ['NotebookEdit', { file_path: '/proj/a.ipynb' }, 'the call names no path'],
    ['Task', { prompt: 'p' }, 'the call names no subagent_type'],
    ['WebFetch', { prompt: 'p' }, 'the call has no URL with a host'],
    ['WebFetch', { url: ' https://a.com/' }, 'the call has no URL with a host'],
  ])('%s %j cannot be checked: %s', (tool, input, why) => {
    const rule = { Bash: 'Bash(rm:*)', Edit: 'Edit(/x)', NotebookEdit: 'Edit(/x)', Task: 'Task(x)', WebFetch: 'WebFetch(domain:x.com)' }[
      tool
    ]!;
    expect(run(tool, input, { deny: [rule] }).matched).toEqual([{ rule, list: 'deny', source: 'disallowedTools', unchecked: why }]);
  });

  it('a relative path without a working directory cannot be checked', () => {
    const d = run('Read', { file_path: 'a.txt' }, { deny: ['Read(//etc/**)'], workspace: {} });
    expect(d.matched).toEqual([
      {
        rule: 'Read(//etc/**)',
        list: 'deny',
        source: 'disallowedTools',
        unchecked: 'its relative path has no working directory to resolve against',
      },
    ]);
  });

  it('plan mode, dontAsk and bypassPermissions: reason and matched rules', () => {
    expect(run('Write', { file_path: '/proj/a' }, { mode: 'plan' })).toEqual({
      behavior: 'deny',
      reason: 'mode',
      matched: [],
      message: 'Write was not run: the session is in plan mode, where only read-only tools run. Present the plan instead.',
    });
    expect(bash('git push', { ask: ['Bash(git push:*)'], mode: 'dontAsk' })).toEqual({
      behavior: 'deny',
      reason: 'rule',
      matched: [{ rule: 'Bash(git push:*)', list: 'ask', source: 'askTools', subject: 'git push' }],
      message:
        'Permission to use Bash was denied: it matches the ask rule Bash(git push:*) (askTools) for `git push`, and permissionMode dontAsk never asks.',
    });
    expect(bash('make', { mode: 'bypassPermissions' })).toEqual({ behavior: 'allow', reason: 'mode', matched: [] });
    expect(run('Grep', { pattern: 'x' })).toEqual({ behavior: 'allow', reason: 'readOnly', matched: [] });
    expect(bash('make', { mode: 'dontAsk' })).toEqual({
      behavior: 'deny',
      reason: 'noRule',
      matched: [],
      message:
        'Permission to use Bash has not been granted for `make`. Allow it with allowedTools: ["Bash(make)"] or permissionMode bypassPermissions.',
    });
  });

  it('allow rules: the bare rule, and the rule for each part, in list allow', () => {
    expect(bash('make && ls', { allow: ['Bash'] })).toEqual({
      behavior: 'allow',
      reason: 'rule',
      matched: [{ rule: 'Bash', list: 'allow', source: 'allowedTools' }],
    });
    expect(bash('make && ls', { allow: ['Bash(make)', 'Bash(ls)'] }).matched).toEqual([
      { rule: 'Bash(make)', list: 'allow', source: 'allowedTools', subject: 'make' },
      { rule: 'Bash(ls)', list: 'allow', source: 'allowedTools', subject: 'ls' },
    ]);
  });

  it.each<[string, unknown, Row, string[], string]>([
    ['Bash', { command: 'ls && rm x' }, {}, ['Bash(ls)', 'Bash(rm x)'], ' for `ls`, `rm x`'],
    ['Bash', { command: 'echo *' }, {}, ['Bash(echo \\*)'], ' for `echo *`'],
    ['Bash', { command: '$CMD x' }, {}, [], ' for `$CMD x`'],
    ['Bash', { command: 'ls && $CMD x' }, {}, [], ' for `ls`, `$CMD x`'],
    ['Bash', { command: 'echo "oops' }, {}, [], ' (the command cannot be analysed (unterminated double quote))'],
    ['Edit', {}, {}, ['Edit'], ' (the call names no path)'],
    ['Skill', {}, {}, ['Skill'], ''],
    ['Task', { subagent_type: 'general' }, {}, ['Task(general)'], ''],
    ['WebFetch', { url: 'https://Example.com/a' }, {}, ['WebFetch(domain:example.com)'], ''],
    ['Write', { file_path: '/etc/x' }, {}, ['Edit(//etc/x)'], ''],
  ])('not granted: %s %j → suggestions %j, message naming%s', (tool, input, row, suggestions, what) => {
    const d = run(tool, input, row);
    const modes = ['Edit', 'Write'].includes(tool)
      ? 'a permissionMode such as acceptEdits or bypassPermissions'
      : 'permissionMode bypassPermissions';
    const rules = suggestions.length ? `allowedTools: ${JSON.stringify(suggestions)} or ` : '';
    expect(d).toEqual({
      behavior: 'ask',
      reason: 'noRule',
      matched: [],
      suggestions,
      message: `Permission to use ${tool} has not been granted${what}. Allow it with ${rules}${modes}.`,
    });
  });

  it('a read tool that is not read-only is suggested a Read rule', () => {
    const d = evaluatePermission({
      toolName: 'Read',
      input: { file_path: '/etc/x' },
      readOnly: false,
      mode: 'default',
      rules: parseRules({}),
      workspace: WS,
    });
    expect(d.behavior === 'ask' && d.suggestions).toEqual(['Read(//etc/x)']);
  });

  it('NotebookEdit is checked by notebook_path, Grep and Glob by path (or cwd)', () => {
    expect(run('NotebookEdit', { notebook_path: '/proj/other/a.ipynb' }, { deny: ['Edit(/nb/**)'] }).behavior).toBe('ask');
    expect(run('Grep', { pattern: 'x', path: '/proj/src' }, { deny: ['Read(//etc/**)'] }).behavior).toBe('allow');
    expect(run('Glob', { pattern: '*' }, { deny: ['Read(//etc/**)'] }).behavior).toBe('allow');
    expect(run('Glob', { pattern: '*' }, { deny: ['Read(/**)'] }).matched).toEqual([
      { rule: 'Read(/**)', list: 'deny', source: 'disallowedTools', subject: '/proj' },
    ]);
  });

  it('Agent calls are checked like Task calls', () => {
    expect(run('Agent', { subagent_type: 'Explore' }, { allow: ['Task(Explore)'] }).behavior).toBe('allow');
  });

  it('WebFetch hosts: bracketed IPv6, a domain that only ends like the rule, a URL not at the start', () => {
    expect(run('WebFetch', { url: 'http://[::1]:8080/' }, { allow: ['WebFetch(domain:[::1])'] }).behavior).toBe('allow');
    expect(run('WebFetch', { url: 'https://notexample.com/' }, { allow: ['WebFetch(domain:example.com)'] }).behavior).toBe('ask');
    expect(run('WebFetch', { url: 'x https://example.com/' }, { allow: ['WebFetch(domain:example.com)'] }).behavior).toBe('ask');
  });

  it('acceptEdits: additional directories are normalised, and a workspace without cwd still works', () => {
    const edit = (file_path: string, workspace: Workspace) => run('Edit', { file_path }, { mode: 'acceptEdits', workspace }).behavior;
    expect(edit('/other/a', { cwd: '/proj', additionalDirectories: ['/extra/../other'] })).toBe('allow');
    expect(edit('/extra/a', { additionalDirectories: ['/extra'] })).toBe('allow');
    expect(edit('/proj/a', { additionalDirectories: ['/extra'] })).toBe('ask');
  });

  it('the command is checked as written, unquoted, and by its name without the path, from where it starts', () => {
    const deny = (command: string, rule: string) => bash(command, { deny: [rule], allow: ['Bash'] }).behavior;
    expect(deny('sudo rm "a b"', 'Bash(rm "a b")')).toBe('deny');
    expect(deny("'/bin/rm' -rf x", 'Bash(/bin/rm -rf x)')).toBe('deny');
    expect(deny('/bin/rm -rf x', 'Bash(rm -rf x)')).toBe('deny');
    expect(deny('FOO=1', 'Bash(* *)')).toBe('allow');
    expect(bash('FOO=1', { allow: ['Bash(FOO=1)'] }).behavior).toBe('allow');
    expect(bash('timeout 5', { allow: ['Bash(timeout 5)'] }).behavior).toBe('allow');
    expect(bash('sudo npm test', { allow: ['Bash(npm test *)'] }).behavior).toBe('ask');
  });
});

describe('rules.ts: the corners', () => {
  it("a rule that starts with '(' has no tool name", () => {
    expect(() => parseRule('(x)')).toThrow("invalid permission rule '(x)': '' is not a tool name");
  });

  it('a WebFetch domain is one line', () => {
    expect(() => parseRule('WebFetch(domain:a.com\nb)')).toThrow('WebFetch rules take the form WebFetch(domain:example.com)');
  });

  it('a ~ inside a path pattern is no ~user path', () => {
    expect(parseRule('Read(backup~1)')).toMatchObject({ kind: 'path', pattern: 'backup~1' });
  });

  it.each<[string, object]>([
    ['a:*b', { type: 'wildcard', pattern: 'a:*b' }],
    ['echo \\ :*', { type: 'wildcard', pattern: 'echo \\ *' }],
  ])('parseBashPattern(%j) → %j', (raw, expected) => {
    expect(parseBashPattern(raw)).toEqual(expected);
  });

  it.each<[string, string, boolean]>([
    ['a\\b*', 'a\\bc', true],
    ['a\\b*', 'abc', false],
    ['a\\*b*', 'a*bc', true],
    ['a\\*b*', 'a\\xbc', false],
    ['x\\\\y*', 'x\\yz', true],
    ['x*z', 'xyz', true],
    ['x*z', 'xyzw', false],
    ['ab*', 'xab', false],
  ])('a wildcard compiled afresh: %j vs %j → %s', (spec, command, expected) => {
    expect(matchBashPattern(parseBashPattern(spec), command)).toBe(expected);
  });

  it('the any pattern matches every command', () => {
    expect(matchBashPattern({ type: 'any' }, 'rm -rf /')).toBe(true);
  });

  it('PermissionRuleList reports a bad rule as a custom issue at its index', () => {
    const parsed = PermissionRuleList.safeParse(['Bash', 'Bash(']);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => [i.code, i.path, i.message])).toEqual([
      ['custom', [1], "invalid permission rule 'Bash(': a specifier must end with ')' (expected Tool(specifier))"],
    ]);
  });
});
