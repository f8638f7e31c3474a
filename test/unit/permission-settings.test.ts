import { ConfigError } from '../../src/shared/config';
import {
  hookMatcherMatches,
  mergeSettings,
  parseSettings,
  parseSettingsJson,
  rulesFromSettings,
  SettingsError,
  type MergedSettings,
  type SettingsLayer,
} from '../../src/shared/permissions/settings';
import { evaluatePermission } from '../../src/shared/permissions';

const dirs = { cwd: '/proj', homeDir: '/home/u' };
const hook = (command: string, timeout?: number) => ({ type: 'command', command, ...(timeout ? { timeout } : {}) });

function errorOf(f: () => unknown): SettingsError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(SettingsError);
    expect(e).toBeInstanceOf(ConfigError);
    expect((e as Error).name).toBe('SettingsError');
    return e as SettingsError;
  }
  throw new Error('expected a SettingsError');
}

describe('mergeSettings', () => {
  const layers: SettingsLayer[] = [
    // Given out of order on purpose: precedence comes from the source, not the array order.
    {
      source: 'local',
      file: '/proj/.claude/settings.local.json',
      settings: { permissions: { allow: ['Bash(make:*)', 'Bash(npm test:*)'], defaultMode: 'acceptEdits' } },
    },
    {
      source: 'user',
      file: '/home/u/.claude/settings.json',
      settings: {
        permissions: { allow: ['Bash(npm test:*)'], deny: ['Read(~/.ssh/**)'], defaultMode: 'plan', additionalDirectories: ['~/notes'] },
        hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [hook('audit.sh')] }] },
      },
    },
    {
      source: 'project',
      file: '/proj/.claude/settings.json',
      settings: {
        $schema: 'https://json.schemastore.org/claude-code-settings.json',
        permissions: {
          deny: ['Bash(rm:*)', 'Read(~/.ssh/**)'],
          ask: ['Bash(git push:*)'],
          additionalDirectories: ['../shared', '/abs/dir'],
        },
        hooks: {
          PreToolUse: [{ matcher: 'Bash', hooks: [hook('audit.sh'), hook('guard.sh', 5)] }],
          Stop: [{ hooks: [hook('check-done.sh')] }],
        },
        statusLine: { type: 'command', command: 'x' },
      },
    },
    { source: 'session', file: 'session options', settings: { permissions: { allow: ['Read'], deny: ['Bash(rm:*)'] } } },
  ];
  // Merged afresh for each test, not once while the file loads nor in beforeAll: Stryker activates
  // a mutant only for the run and attributes coverage to a test from its start, which comes before
  // beforeEach; so a mutant of mergeSettings is run with, and can fail, every test that reads this.
  let merged: MergedSettings;
  beforeEach(() => {
    merged = mergeSettings(layers, dirs);
  });

  it('concatenates and de-duplicates permission lists, lowest precedence first, each naming its file', () => {
    expect(merged.permissions.allow.map((r) => [r.rule, r.source])).toEqual([
      ['Bash(npm test:*)', 'user'],
      ['Bash(make:*)', 'local'],
      ['Read', 'session'],
    ]);
    expect(merged.permissions.deny.map((r) => r.rule)).toEqual(['Read(~/.ssh/**)', 'Bash(rm:*)']);
    expect(merged.permissions.ask).toEqual([{ rule: 'Bash(git push:*)', source: 'project', file: '/proj/.claude/settings.json' }]);
  });

  it('takes defaultMode from the highest-precedence source that sets it', () => {
    expect(merged.permissions.defaultMode).toBe('acceptEdits');
    expect(merged.permissions.defaultModeFile).toBe('/proj/.claude/settings.local.json');
    const flag = mergeSettings(
      [...layers, { source: 'flag', file: 'extra.json', settings: { permissions: { defaultMode: 'dontAsk' } } }],
      dirs,
    );
    expect(flag.permissions.defaultMode).toBe('dontAsk');
  });

  it('resolves additional directories (~ and relative to cwd)', () => {
    expect(merged.permissions.additionalDirectories).toEqual(['/home/u/notes', '/shared', '/abs/dir']);
  });

  it('runs hooks from every source, without running the same command twice', () => {
    expect(merged.hooks.PreToolUse!.map((m) => [m.source, m.hooks.map((h) => h.command)])).toEqual([
      ['user', ['audit.sh']],
      ['project', ['guard.sh']],
    ]);
    expect(merged.hooks.PreToolUse![1]!.hooks[0]!.timeout).toBe(5);
    expect(merged.hooks.Stop![0]).toMatchObject({ file: '/proj/.claude/settings.json', hooks: [{ command: 'check-done.sh' }] });
  });

  it('reports the Claude Code keys it does not use instead of dropping them silently', () => {
    expect(merged.ignoredKeys).toEqual([{ file: '/proj/.claude/settings.json', key: 'statusLine' }]);
  });

  it('yields rules that decide calls and name their file', () => {
    const rules = rulesFromSettings(merged);
    const d = evaluatePermission({
      toolName: 'Bash',
      input: { command: 'make && rm -rf x' },
      readOnly: false,
      mode: 'bypassPermissions',
      rules,
      workspace: dirs,
    });
    expect(d).toMatchObject({
      behavior: 'deny',
      matched: [{ rule: 'Bash(rm:*)', source: '/proj/.claude/settings.json', subject: 'rm -rf x' }],
    });
    expect(
      evaluatePermission({ toolName: 'Bash', input: { command: 'make all' }, readOnly: false, mode: 'default', rules, workspace: dirs })
        .behavior,
    ).toBe('allow');
  });

  it('a disableBypassPermissionsMode from any source sticks', () => {
    const m = mergeSettings(
      [
        { source: 'user', file: 'u', settings: { permissions: { disableBypassPermissionsMode: 'disable' } } },
        { source: 'local', file: 'l', settings: {} },
      ],
      dirs,
    );
    expect(m.permissions.disableBypassPermissionsMode).toBe(true);
    expect(merged.permissions.disableBypassPermissionsMode).toBe(false);
  });

  it('starts from empty lists, no hooks and no bypass lock', () => {
    const empty: MergedSettings = {
      permissions: { allow: [], deny: [], ask: [], additionalDirectories: [], disableBypassPermissionsMode: false },
      hooks: {},
      ignoredKeys: [],
    };
    expect(mergeSettings([], dirs)).toEqual(empty);
    expect(mergeSettings([{ source: 'user', file: 'u', settings: { permissions: {} } }], dirs)).toEqual(empty);
  });

  it('resolves a bare ~ to the home directory and lists each directory once', () => {
    const m = mergeSettings(
      [
        { source: 'user', file: 'u', settings: { permissions: { additionalDirectories: ['~', '/home/u/x', '~/x'] } } },
        { source: 'project', file: 'p', settings: { permissions: { additionalDirectories: ['/home/u/', '../proj/y', 'y'] } } },
      ],
      dirs,
    );
    expect(m.permissions.additionalDirectories).toEqual(['/home/u', '/home/u/x', '/proj/y']);
  });

  it('keeps a hook command once per event and matcher; an absent matcher and "" are the same', () => {
    const m = mergeSettings(
      [
        {
          source: 'user',
          file: 'u',
          settings: {
            hooks: {
              PreToolUse: [
                { matcher: 'Bash', hooks: [hook('log.sh')] },
                { matcher: 'Write', hooks: [hook('log.sh')] },
              ],
              Stop: [{ hooks: [hook('done.sh')] }],
            },
          },
        },
        { source: 'project', file: 'p', settings: { hooks: { Stop: [{ matcher: '', hooks: [hook('done.sh')] }] } } },
      ],
      dirs,
    );
    expect(m.hooks.PreToolUse!.map((x) => [x.matcher, x.hooks.map((h) => h.command)])).toEqual([
      ['Bash', ['log.sh']],
      ['Write', ['log.sh']],
    ]);
    expect(m.hooks.Stop).toEqual([{ hooks: [hook('done.sh')], source: 'user', file: 'u' }]);
  });

  it('accepts a "*" matcher (match all), which is not a valid regex', () => {
    const s = parseSettings({ hooks: { PreToolUse: [{ matcher: '*', hooks: [hook('x')] }] } }, 'f.json');
    expect(s.hooks?.PreToolUse?.[0]?.matcher).toBe('*');
  });
});

describe('settings errors name the file, the key and the problem', () => {
  it.each<[string, unknown, string]>([
    [
      'a rule that does not parse',
      { permissions: { deny: ['Bash', 'Bash(rm'] } },
      "f.json: permissions.deny[1]: invalid permission rule 'Bash(rm': a specifier must end with ')'",
    ],
    [
      'an unsupported specifier',
      { permissions: { allow: ['Skill(x)'] } },
      "f.json: permissions.allow[0]: invalid permission rule 'Skill(x)'",
    ],
    [
      'an unknown hook event',
      { hooks: { PreToolUsee: [{ hooks: [hook('x')] }] } },
      "f.json: hooks.PreToolUsee: unknown hook event 'PreToolUsee' (expected one of PreToolUse,",
    ],
    [
      'a matcher that is not a regex',
      { hooks: { PreToolUse: [{ matcher: 'Bash(', hooks: [hook('x')] }] } },
      'f.json: hooks.PreToolUse[0].matcher: not a valid regular expression',
    ],
    [
      'a hook type we do not run',
      { hooks: { Stop: [{ hooks: [{ type: 'prompt', prompt: 'x' }] }] } },
      "f.json: hooks.Stop[0].hooks[0].type: only 'command' hooks are supported",
    ],
    ['a hook without a command', { hooks: { Stop: [{ hooks: [{ type: 'command' }] }] } }, 'f.json: hooks.Stop[0].hooks[0].command:'],
    ['a negative timeout', { hooks: { Stop: [{ hooks: [hook('x', -1)] }] } }, 'f.json: hooks.Stop[0].hooks[0].timeout:'],
    ['an unknown permissions key', { permissions: { alow: ['Bash'] } }, "f.json: permissions.alow: unknown key 'alow'"],
    ['two unknown permissions keys', { permissions: { alow: ['Bash'], dny: [] } }, "f.json: permissions.alow: unknown keys 'alow', 'dny'"],
    ['an unknown mode', { permissions: { defaultMode: 'auto' } }, 'f.json: permissions.defaultMode: Invalid option'],
    ['a rule list that is not a list', { permissions: { allow: 'Bash' } }, 'f.json: permissions.allow: Invalid input: expected array'],
    ['not an object', ['Bash'], 'f.json: (root): Invalid input: expected object'],
  ])('%s', (_name, json, message) => {
    const e = errorOf(() => parseSettings(json, 'f.json'));
    expect(e.message.startsWith(message)).toBe(true);
    expect(e.file).toBe('f.json');
  });

  it('mergeSettings names the layer whose file is wrong', () => {
    const e = errorOf(() =>
      mergeSettings(
        [
          { source: 'user', file: 'good.json', settings: { permissions: { allow: ['Bash'] } } },
          { source: 'project', file: '/proj/.claude/settings.json', settings: { permissions: { ask: ['Bash('] } } },
        ],
        dirs,
      ),
    );
    expect(e).toMatchObject({ file: '/proj/.claude/settings.json', key: 'permissions.ask[0]' });
  });

  it('a ~ directory without a known home is an error, not a guess', () => {
    const e = errorOf(() =>
      mergeSettings([{ source: 'user', file: 'u.json', settings: { permissions: { additionalDirectories: ['~/x'] } } }], { cwd: '/proj' }),
    );
    expect(e.key).toBe('permissions.additionalDirectories[0]');
    expect(e.problem).toBe("'~/x' needs the home directory, which is unknown here");
  });

  it('text that is not JSON names the line and column', () => {
    const e = errorOf(() => parseSettingsJson('{\n  "permissions": {,\n}', '/proj/.claude/settings.json'));
    expect(e.message).toMatch(/^\/proj\/\.claude\/settings\.json: \(file\): not valid JSON at line 2 column 19/);
    expect(parseSettingsJson('{"permissions": {"allow": ["Bash"]}}', 'ok.json').permissions?.allow).toEqual(['Bash']);
  });
});

describe('hookMatcherMatches', () => {
  it.each<[string | undefined, string, boolean]>([
    [undefined, 'Bash', true],
    ['', 'Bash', true],
    ['*', 'Write', true],
    ['Bash', 'Bash', true],
    ['Bash', 'BashOutput', false],
    ['Write|Edit', 'Edit', true],
    ['Write|Edit', 'TodoWrite', false],
    ['Notebook.*', 'NotebookEdit', true],
    ['mcp__github__.*', 'mcp__github__create_pr', true],
    ['^Read$', 'Read', true],
  ])('%j vs %s → %s', (matcher, tool, expected) => {
    expect(hookMatcherMatches(matcher, tool)).toBe(expected);
  });
});
