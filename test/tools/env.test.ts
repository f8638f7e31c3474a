import { buildChildEnv, isScrubbedEnvName, parseScrubList } from '../../src/activities/tools';

describe('env scrubbing', () => {
  test.each([
    ['OPENAI_API_KEY', true],
    ['OPENAI_BASE_URL', true],
    ['TEMPORAL_ADDRESS', true],
    ['ANTHROPIC_AUTH', true],
    ['DURABLE_AGENT_ENCRYPTION_KEY', true],
    ['STRIPE_API_KEY', true],
    ['AWS_SECRET_ACCESS_KEY', true],
    ['GITHUB_TOKEN', true],
    ['PATH', false],
    ['HOME', false],
    ['TOKENIZERS_PARALLELISM', false],
  ])('%s scrubbed: %s', (name, scrubbed) => {
    expect(isScrubbedEnvName(name)).toBe(scrubbed);
  });

  test('configured names and patterns', () => {
    const extra = parseScrubList(' DB_PASSWORD , INTERNAL_*,*_PRIVATE ,');
    expect(extra).toEqual(['DB_PASSWORD', 'INTERNAL_*', '*_PRIVATE']);
    expect(['DB_PASSWORD', 'INTERNAL_URL', 'KEY_PRIVATE', 'DB_HOST'].map((n) => isScrubbedEnvName(n, extra))).toEqual([
      true,
      true,
      true,
      false,
    ]);
  });

  test('the session env is added after scrubbing', () => {
    expect(
      buildChildEnv({
        base: { PATH: '/bin', OPENAI_API_KEY: 'worker', DB_PASSWORD: 'pw' },
        scrub: ['DB_PASSWORD'],
        sessionEnv: { MODE: 'test', OPENAI_API_KEY: 'session-owned' },
      }),
    ).toEqual({ PATH: '/bin', MODE: 'test', OPENAI_API_KEY: 'session-owned' });
  });
});
