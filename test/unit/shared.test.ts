import { parseSessionConfig, ConfigError } from '../../src/shared/config';
import { decide } from '../../src/shared/permissions';
import { costOf, lookupPrice } from '../../src/shared/pricing';
import { buildSystemPrompt } from '../../src/shared/system-prompt';
import { normalizePath, capText } from '../../src/shared/tools';

describe('session config', () => {
  it('applies defaults', () => {
    const c = parseSessionConfig({ prompt: 'hi', cwd: '/w' });
    expect(c.permissionMode).toBe('default');
    expect(c.retry).toEqual({ maxAttempts: 5, initialIntervalMs: 1000, maximumIntervalMs: 60000 });
  });
  it('names an unknown field', () => {
    expect(() => parseSessionConfig({ prompt: 'hi', cwd: '/w', maxTurn: 3 })).toThrow(
      "invalid session config: maxTurn: unknown option 'maxTurn'",
    );
  });
  it('names an invalid field', () => {
    try {
      parseSessionConfig({ prompt: 'hi', cwd: 'relative', maxTurns: 2 });
      throw new Error('expected a ConfigError');
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      expect((e as ConfigError).field).toBe('cwd');
      expect((e as Error).message).toBe('invalid session config: cwd: must be an absolute path');
    }
    expect(() => parseSessionConfig({ prompt: 'hi', cwd: '/w', maxTurns: -1 })).toThrow(/maxTurns/);
    expect(() => parseSessionConfig({ prompt: 'hi', cwd: '/w', retry: { maxAttempts: 'x' } })).toThrow(/retry\.maxAttempts/);
  });
});

describe('permissions.decide', () => {
  const base = { allowedTools: [] as string[], disallowedTools: [] as string[], mode: 'default' as const };
  it('denies by rule even in bypassPermissions', () => {
    expect(decide({ ...base, toolName: 'Bash', readOnly: false, mode: 'bypassPermissions', disallowedTools: ['Bash'] }).behavior).toBe(
      'deny',
    );
  });
  it('allows read-only tools, asks for mutating ones in default mode', () => {
    expect(decide({ ...base, toolName: 'Read', readOnly: true }).behavior).toBe('allow');
    expect(decide({ ...base, toolName: 'Bash', readOnly: false }).behavior).toBe('ask');
    expect(decide({ ...base, toolName: 'Bash', readOnly: false, allowedTools: ['Bash'] }).behavior).toBe('allow');
  });
  it('acceptEdits allows edits only; plan allows nothing mutating; dontAsk denies instead of asking', () => {
    expect(decide({ ...base, toolName: 'Edit', readOnly: false, mode: 'acceptEdits' }).behavior).toBe('allow');
    expect(decide({ ...base, toolName: 'Bash', readOnly: false, mode: 'acceptEdits' }).behavior).toBe('ask');
    expect(decide({ ...base, toolName: 'Write', readOnly: false, mode: 'plan', allowedTools: ['Write'] }).behavior).toBe('deny');
    expect(decide({ ...base, toolName: 'Bash', readOnly: false, mode: 'dontAsk' }).behavior).toBe('deny');
  });
});

describe('pricing', () => {
  it('matches dated snapshots and provider prefixes; unknown models have no price', () => {
    expect(lookupPrice('claude-sonnet-4-5-20250929')?.input).toBe(3);
    expect(lookupPrice('openai/gpt-4.1-mini')?.output).toBe(1.6);
    expect(lookupPrice('gpt-4.1-mini-2025-04-14')?.output).toBe(1.6);
    expect(lookupPrice('my-local-llama')).toBeUndefined();
  });
  it('prices all four token kinds per million', () => {
    const price = { input: 2, output: 8, cacheRead: 0.5, cacheWrite: 2.5, contextWindow: 1 };
    expect(costOf({ inputTokens: 1e6, outputTokens: 1e6, cacheReadInputTokens: 1e6, cacheCreationInputTokens: 1e6 }, price)).toBeCloseTo(
      13,
    );
  });
});

describe('system prompt', () => {
  const facts = { cwd: '/w', additionalDirectories: [], platform: 'linux', date: '2026-11-21', toolNames: ['Read'] };
  const config = parseSessionConfig({ prompt: 'x', cwd: '/w' });
  it('includes the environment in our default prompt', () => {
    const p = buildSystemPrompt(config, facts);
    expect(p).toContain('Working directory: /w');
    expect(p).toContain('Date: 2026-11-21');
  });
  it('replaces with a string and appends with a preset', () => {
    expect(buildSystemPrompt({ ...config, systemPrompt: 'Be terse.' }, facts)).toBe('Be terse.');
    expect(buildSystemPrompt({ ...config, systemPrompt: { type: 'preset', append: 'EXTRA' } }, facts)).toMatch(/Tools: Read\n\nEXTRA$/);
  });
});

describe('path and text helpers', () => {
  it('normalises paths without node:path', () => {
    expect(normalizePath('/a/./b/../c//d')).toBe('/a/c/d');
  });
  it('says how much was cut', () => {
    expect(capText('abcdef', 3, 'use offset')).toBe('abc\n\n... [3 characters truncated; use offset]');
  });
});
