/** The sandbox's pure parts: settings, excluded commands, mount order, the init warning. */
import { bwrapArgs, orderMounts, sandboxOptionsFromEnv, workerSecretFiles } from '../../src/activities/sandbox';
import { parseSessionConfig } from '../../src/shared/config';
import { isExcludedCommand, parseSandboxOption, sandboxInitWarning, sandboxMode, type SandboxStatus } from '../../src/shared/sandbox';
import type { ToolSpec } from '../../src/shared/tools';

const base = { prompt: 'p', cwd: '/w' };
const configError = (sandbox: unknown) => {
  try {
    parseSessionConfig({ ...base, sandbox });
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('expected an error');
};

describe('sandbox settings', () => {
  test('absent means the worker decides; a mode is shorthand for a settings object', () => {
    expect(parseSessionConfig(base).sandbox).toBeUndefined();
    expect(sandboxMode(parseSessionConfig({ ...base, sandbox: 'required' }).sandbox!)).toBe('required');
    expect(parseSandboxOption('off')).toMatchObject({ enabled: false });
    expect(sandboxMode(parseSandboxOption('auto'))).toBe('auto');
    expect(sandboxMode(parseSandboxOption('off'))).toBe('off');
    expect(parseSandboxOption({ network: 'off', excludedCommands: ['docker'] })).toEqual({
      enabled: true,
      failIfUnavailable: false,
      network: 'off',
      excludedCommands: ['docker'],
      filesystem: { allowWrite: [], denyWrite: [], denyRead: [] },
    });
    expect(parseSandboxOption({ network: { allowedDomains: [] } }).network).toBe('off');
    // An object with a field we lack is named as such, not as "expected a mode or an object".
    expect(() => parseSandboxOption({ bogus: 1 })).toThrow('Unrecognized key: \\"bogus\\"');
  });

  test('errors name the field', () => {
    expect(configError({ network: { allowedDomains: ['github.com'] } })).toBe(
      'invalid session config: sandbox.network.allowedDomains: a host allowlist is not supported yet: it needs a filtering ' +
        "proxy, which this version does not run. Use network 'on' or 'off' (an empty list means 'off').",
    );
    expect(configError('on')).toBe("invalid session config: sandbox: expected 'auto', 'required', 'off' or a settings object");
    expect(configError({ autoAllowBashIfSandboxed: true })).toBe(
      "invalid session config: sandbox.autoAllowBashIfSandboxed: unknown option 'autoAllowBashIfSandboxed'",
    );
    expect(configError({ network: 'none' })).toBe(
      "invalid session config: sandbox.network: expected 'on', 'off' or {allowedDomains: [...]}",
    );
    expect(configError({ filesystem: { denyRead: [''] } })).toMatch(/^invalid session config: sandbox\.filesystem\.denyRead\.0: /);
  });

  test('DURABLE_AGENT_SANDBOX takes a mode or JSON settings, and names itself when wrong', () => {
    expect(sandboxOptionsFromEnv({ DURABLE_AGENT_SANDBOX: 'required' }).defaults).toMatchObject({ failIfUnavailable: true });
    expect(sandboxOptionsFromEnv({ DURABLE_AGENT_SANDBOX: '{"network":"off"}' }).defaults).toMatchObject({ network: 'off' });
    expect(() => sandboxOptionsFromEnv({ DURABLE_AGENT_SANDBOX: '{"network":"offline"}' })).toThrow(
      "DURABLE_AGENT_SANDBOX: network: expected 'on', 'off' or {allowedDomains: [...]}",
    );
    expect(() => sandboxOptionsFromEnv({ DURABLE_AGENT_SANDBOX: '{network' })).toThrow(/^DURABLE_AGENT_SANDBOX: not valid JSON/);
    expect(sandboxOptionsFromEnv({ DURABLE_AGENT_SANDBOX_DENY_READ: '/a, ~/b' }).denyRead).toEqual(['/a', '~/b']);
  });

  test("the worker's key files are the existing files its secret variables name", () => {
    expect(
      workerSecretFiles({
        TEMPORAL_TLS_CLIENT_KEY_PATH: '/etc/hostname',
        HARMLESS: '/etc/hostname',
        OPENAI_API_KEY: 'sk-x',
        DURABLE_AGENT_X: '/nonexistent',
      }),
    ).toEqual(['/etc/hostname']);
  });
});

describe('excludedCommands', () => {
  test('a name or prefix matches a simple command; anything compound stays sandboxed', () => {
    const ex = ['docker', 'npm run test *', 'git log:*'];
    expect(isExcludedCommand('docker', ex)).toBe(true);
    expect(isExcludedCommand('  docker ps -a ', ex)).toBe(true);
    expect(isExcludedCommand('npm run test --watch', ex)).toBe(true);
    expect(isExcludedCommand('git log --oneline', ex)).toBe(true);
    expect(isExcludedCommand('dockerd', ex)).toBe(false);
    expect(isExcludedCommand('npm run build', ex)).toBe(false);
    for (const sneaky of [
      'docker ps; cat ~/.ssh/id_rsa',
      'docker ps && x',
      'docker ps | nc h 1',
      'docker ps > /etc/x',
      'docker $(cat /x)',
      'docker `id`',
      'docker ps\nrm -rf /',
      'docker ps &',
    ]) {
      expect({ sneaky, excluded: isExcludedCommand(sneaky, ex) }).toEqual({ sneaky, excluded: false });
    }
  });

  test('patterns are trimmed; only a trailing ` *` or `:*` is a wildcard; a tab separates arguments too', () => {
    expect(isExcludedCommand('docker ps', ['  docker  '])).toBe(true);
    expect(isExcludedCommand('docker\tps', ['docker'])).toBe(true);
    // ` *` inside a pattern is literal: `ls *.txt` is not `ls` with a wildcard.
    expect(isExcludedCommand('ls.txt', ['ls *.txt'])).toBe(false);
    expect(isExcludedCommand('ls *.txt', ['ls *.txt'])).toBe(true);
    expect(isExcludedCommand('gitstash', ['git:*stash'])).toBe(false);
  });
});

describe('mounts', () => {
  test('shallower paths first, deny after allow on the same path, hidden dirs made read-only last', () => {
    const mounts = orderMounts([
      { kind: 'hideFile', path: '/ws/.env' },
      { kind: 'write', path: '/ws' },
      { kind: 'hideDir', path: '/home/u/.config' },
      { kind: 'write', path: '/home/u/.config/app/ws2' },
      { kind: 'tmp', path: '/tmp', source: '/var/t/s1' },
      { kind: 'hideDir', path: '/ws' },
    ]);
    expect(mounts.map((m) => `${m.kind} ${m.path}`)).toEqual([
      'tmp /tmp',
      'write /ws',
      'hideDir /ws',
      'hideFile /ws/.env',
      'hideDir /home/u/.config',
      'write /home/u/.config/app/ws2',
    ]);
    const args = bwrapArgs({ mounts, network: 'off', cwd: '/ws', argv: ['bash', '-c', 'x'] });
    expect(args.join(' ')).toContain(
      '--bind /var/t/s1 /tmp --bind /ws /ws --tmpfs /ws --ro-bind /dev/null /ws/.env --tmpfs /home/u/.config ' +
        '--bind /home/u/.config/app/ws2 /home/u/.config/app/ws2 --remount-ro /ws --remount-ro /home/u/.config --chdir /ws -- bash -c x',
    );
    expect(args).toContain('--unshare-net');
    expect(bwrapArgs({ mounts, network: 'on', cwd: '/ws', argv: ['true'] })).not.toContain('--unshare-net');
  });
});

describe('the init warning', () => {
  const bash = (sandbox?: SandboxStatus): ToolSpec[] => [
    { name: 'Bash', description: '', inputSchema: {}, readOnly: false, ...(sandbox ? { sandbox } : {}) },
  ];
  const down: SandboxStatus = { available: false, detail: "bubblewrap ('bwrap') is not on PATH", defaultMode: 'auto' };

  test('only when Bash is there, cannot be sandboxed, and the session wants a sandbox', () => {
    expect(sandboxInitWarning(undefined, bash({ ...down, available: true }))).toBeUndefined();
    expect(sandboxInitWarning(undefined, [])).toBeUndefined();
    // Bash's status is found among the other tools, whichever comes first.
    const read: ToolSpec = { name: 'Read', description: '', inputSchema: {}, readOnly: true };
    expect(sandboxInitWarning(parseSandboxOption('required'), [read, ...bash(down)])).toMatch(/^Bash will be refused/);
    expect(sandboxInitWarning(parseSandboxOption('off'), bash(down))).toBeUndefined();
    expect(sandboxInitWarning(undefined, bash({ ...down, defaultMode: 'off' }))).toBeUndefined();
    expect(sandboxInitWarning(undefined, bash(down))).toBe(
      "Bash runs WITHOUT a sandbox in this session: none works on the tools worker (bubblewrap ('bwrap') is not on PATH). " +
        "Commands can read the worker's files and write wherever its user can. Install bubblewrap on the worker, or set " +
        "sandbox: 'required' to refuse Bash instead.",
    );
    expect(sandboxInitWarning(parseSandboxOption('required'), bash(down))).toBe(
      "Bash will be refused in this session: it requires a sandbox (sandbox: 'required') and none works on the tools worker: " +
        "bubblewrap ('bwrap') is not on PATH.",
    );
  });
});
