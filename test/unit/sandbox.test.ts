/** The sandbox's pure parts: settings, excluded commands, mount order, the init warning. */
import { bwrapArgs, orderMounts, sandboxOptionsFromEnv, workerSecretFiles } from '../../src/activities/sandbox';
import { parseSessionConfig } from '../../src/shared/config';
import {
  isExcludedCommand,
  matchAllowedDomain,
  parseAllowedDomain,
  parseSandboxOption,
  sandboxInitWarning,
  sandboxMode,
  type AllowedDomain,
  type SandboxStatus,
} from '../../src/shared/sandbox';
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
    expect(parseSandboxOption({ network: 'host' }).network).toBe('host');
    expect(parseSandboxOption({ network: { allowedDomains: ['*.GitHub.com', 'localhost:5432'] } }).network).toEqual({
      allowedDomains: ['*.GitHub.com', 'localhost:5432'],
    });
    // An object with a field we lack is named as such, not as "expected a mode or an object".
    expect(() => parseSandboxOption({ bogus: 1 })).toThrow('Unrecognized key: \\"bogus\\"');
  });

  test('errors name the field', () => {
    expect(configError({ network: { allowedDomains: ['github.com', 'https://x.org/', 'db:99999'] } })).toBe(
      "invalid session config: sandbox.network.allowedDomains.1: 'https://x.org/' is not a host, *.host or host:port " +
        '(e.g. registry.npmjs.org, *.github.com, localhost:5432)',
    );
    expect(configError({ network: { allowedDomains: ['db:99999'] } })).toBe(
      "invalid session config: sandbox.network.allowedDomains.0: 'db:99999': port must be 1 to 65535",
    );
    expect(configError({ network: { allowedDomains: 'github.com' } })).toBe(
      'invalid session config: sandbox.network.allowedDomains: expected an array of host names',
    );
    expect(configError('on')).toBe("invalid session config: sandbox: expected 'auto', 'required', 'off' or a settings object");
    expect(configError({ autoAllowBashIfSandboxed: true })).toBe(
      "invalid session config: sandbox.autoAllowBashIfSandboxed: unknown option 'autoAllowBashIfSandboxed'",
    );
    expect(configError({ network: 'none' })).toBe(
      "invalid session config: sandbox.network: expected 'on', 'off', 'host' or {allowedDomains: [...]}",
    );
    expect(configError({ filesystem: { denyRead: [''] } })).toMatch(/^invalid session config: sandbox\.filesystem\.denyRead\.0: /);
  });

  test('DURABLE_AGENT_SANDBOX takes a mode or JSON settings, and names itself when wrong', () => {
    expect(sandboxOptionsFromEnv({ DURABLE_AGENT_SANDBOX: 'required' }).defaults).toMatchObject({ failIfUnavailable: true });
    expect(sandboxOptionsFromEnv({ DURABLE_AGENT_SANDBOX: '{"network":"off"}' }).defaults).toMatchObject({ network: 'off' });
    expect(() => sandboxOptionsFromEnv({ DURABLE_AGENT_SANDBOX: '{"network":"offline"}' })).toThrow(
      "DURABLE_AGENT_SANDBOX: network: expected 'on', 'off', 'host' or {allowedDomains: [...]}",
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
    const args = bwrapArgs({ mounts, network: 'own', cwd: '/ws', argv: ['bash', '-c', 'x'] });
    expect(args.join(' ')).toContain(
      '--bind /var/t/s1 /tmp --bind /ws /ws --tmpfs /ws --ro-bind /dev/null /ws/.env --tmpfs /home/u/.config ' +
        '--bind /home/u/.config/app/ws2 /home/u/.config/app/ws2 --remount-ro /ws --remount-ro /home/u/.config --chdir /ws -- bash -c x',
    );
    expect(args).toContain('--unshare-net');
    expect(bwrapArgs({ mounts, network: 'host', cwd: '/ws', argv: ['true'] })).not.toContain('--unshare-net');
  });
});

describe('allowedDomains entries', () => {
  test('host, *.host, host:port and bracketed IPv6 parse; anything else is refused with the entry', () => {
    expect(parseAllowedDomain('Registry.NPMJS.org.')).toEqual({ host: 'registry.npmjs.org', wildcard: false });
    expect(parseAllowedDomain('*.github.com:443')).toEqual({ host: 'github.com', wildcard: true, port: 443 });
    expect(parseAllowedDomain('127.0.0.1:5432')).toEqual({ host: '127.0.0.1', wildcard: false, port: 5432 });
    expect(parseAllowedDomain('[::1]:5432')).toEqual({ host: '::1', wildcard: false, port: 5432 });
    expect(parseAllowedDomain('fd00::2')).toEqual({ host: 'fd00::2', wildcard: false });
    for (const bad of ['', '*', '*.', 'a..b', 'http://a', 'a/b', 'a:b', '*x.com', 'a.*.com', '[::1', 'a b']) {
      expect({ bad, parsed: typeof parseAllowedDomain(bad) }).toEqual({ bad, parsed: 'string' });
    }
  });

  test('a wildcard matches subdomains only; a port narrows; names are compared as written', () => {
    const list = ['github.com', '*.npmjs.org', 'localhost:5432', '[::1]:8080'].map((d) => parseAllowedDomain(d) as AllowedDomain);
    expect(matchAllowedDomain('GitHub.com.', 22, list)).toMatchObject({ host: 'github.com' });
    expect(matchAllowedDomain('api.github.com', 443, list)).toBeUndefined();
    expect(matchAllowedDomain('registry.npmjs.org', 443, list)).toMatchObject({ wildcard: true });
    expect(matchAllowedDomain('npmjs.org', 443, list)).toBeUndefined();
    expect(matchAllowedDomain('evilnpmjs.org', 443, list)).toBeUndefined();
    expect(matchAllowedDomain('localhost', 5432, list)).toMatchObject({ port: 5432 });
    expect(matchAllowedDomain('localhost', 5433, list)).toBeUndefined();
    expect(matchAllowedDomain('127.0.0.1', 5432, list)).toBeUndefined();
    expect(matchAllowedDomain('[::1]', 8080, list)).toMatchObject({ host: '::1' });
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

  test("says when 'on' gets no network (no socat on the worker) and when a session shares the host's network", () => {
    const up: SandboxStatus = { available: true, detail: 'bubblewrap 0.8.0', defaultMode: 'auto' };
    const noSocat = { ...up, network: { available: false, detail: "socat ('socat') is not on PATH", defaultNetwork: 'on' as const } };
    const withSocat = { ...up, network: { ...noSocat.network, available: true, detail: 'socat 1.7.4.4' } };
    expect(sandboxInitWarning(undefined, bash(noSocat))).toBe(
      "Bash has NO network in this session: the sandbox's network proxy cannot run on the tools worker (socat ('socat') is " +
        "not on PATH), so commands get loopback only, as with network 'off'. Install socat on the worker.",
    );
    expect(sandboxInitWarning(parseSandboxOption({ network: { allowedDomains: ['x.org'] } }), bash(noSocat))).toMatch(
      /^Bash has NO network/,
    );
    expect(sandboxInitWarning(parseSandboxOption({ network: 'off' }), bash(noSocat))).toBeUndefined();
    expect(sandboxInitWarning(undefined, bash(withSocat))).toBeUndefined();
    // A worker older than the network status: nothing to say (replays of its sessions stay the same).
    expect(sandboxInitWarning(undefined, bash(up))).toBeUndefined();
    expect(sandboxInitWarning(parseSandboxOption({ network: 'host' }), bash(withSocat))).toMatch(
      /^Bash shares the tools worker's network in this session \(sandbox.network 'host'\)/,
    );
    expect(sandboxInitWarning(parseSandboxOption('off'), bash(withSocat))).toBeUndefined();
  });
});
