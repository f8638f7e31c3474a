import { parseSessionConfig } from '../../src/shared/config';
import { buildSystemPrompt, defaultSystemPrompt } from '../../src/shared/system-prompt';
import { capText, MAX_TOOL_RESULT_CHARS, normalizePath } from '../../src/shared/tools';

const facts = {
  cwd: '/repo',
  additionalDirectories: [] as string[],
  platform: 'linux',
  date: '2026-01-02',
  toolNames: ['Read', 'Edit', 'Bash'],
};

describe('default system prompt', () => {
  test('ends with the environment, every fact on its own line', () => {
    expect(defaultSystemPrompt(facts)).toMatch(
      /\n\nEnvironment:\n- Working directory: \/repo\n- Platform: linux\n- Date: 2026-01-02\n- Tools: Read, Edit, Bash$/,
    );
  });

  test('lists additional directories right after the working directory, only when there are some', () => {
    const p = defaultSystemPrompt({ ...facts, additionalDirectories: ['/lib', '/docs'] });
    expect(p).toContain('- Working directory: /repo\nAlso available: /lib, /docs\n- Platform: linux');
    expect(defaultSystemPrompt(facts)).not.toContain('Also available');
  });

  test('says how to work and when to stop', () => {
    const p = defaultSystemPrompt(facts);
    expect(p).toMatch(/^You are a coding agent working in a software repository on the user's behalf\./);
    expect(p).toContain('\n\nHow to work:\n- Look before you change');
    expect(p).toContain('\n\nWhen to stop: once the task is done and checked');
  });
});

describe('buildSystemPrompt', () => {
  const config = parseSessionConfig({ prompt: 'x', cwd: '/repo' });

  test('no option: our default prompt', () => {
    expect(buildSystemPrompt(config, facts)).toBe(defaultSystemPrompt(facts));
  });

  test('a string replaces it, even an empty one', () => {
    expect(buildSystemPrompt({ ...config, systemPrompt: 'Be terse.' }, facts)).toBe('Be terse.');
    expect(buildSystemPrompt({ ...config, systemPrompt: '' }, facts)).toBe('');
  });

  test('a preset is our prompt, with `append` after a blank line', () => {
    expect(buildSystemPrompt({ ...config, systemPrompt: { type: 'preset', append: 'Use tabs.' } }, facts)).toBe(
      `${defaultSystemPrompt(facts)}\n\nUse tabs.`,
    );
    expect(buildSystemPrompt({ ...config, systemPrompt: { type: 'preset' } }, facts)).toBe(defaultSystemPrompt(facts));
    expect(buildSystemPrompt({ ...config, systemPrompt: { type: 'preset', append: '' } }, facts)).toBe(defaultSystemPrompt(facts));
  });
});

describe('capText', () => {
  test('text of exactly the limit is left alone', () => {
    expect(capText('abc', 3)).toBe('abc');
  });

  test('one character over is cut, saying how many and, by default, what to do', () => {
    expect(capText('abcd', 3)).toBe('abc\n\n... [1 characters truncated; narrow the request to see the rest]');
  });

  test('the limit for one tool result', () => {
    expect(MAX_TOOL_RESULT_CHARS).toBe(100_000);
  });
});

describe('normalizePath', () => {
  test.each([
    ['/a/b/c', '/a/b/c'],
    ['/a/./b/../c//d', '/a/c/d'],
    ['/a/b/', '/a/b'],
    ['/../..', '/'],
    ['/', '/'],
    ['a/./b/..', 'a'],
    ['./x', 'x'],
    ['', ''],
  ])('%j → %j', (p, expected) => {
    expect(normalizePath(p)).toBe(expected);
  });
});
