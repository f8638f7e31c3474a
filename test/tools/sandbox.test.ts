/**
 * The Bash sandbox through the real Bash tool: real bubblewrap, real temp dirs, real sockets.
 * Each boundary is checked against its unsandboxed control, so a sandbox that lets it through
 * fails here. bubblewrap must be installed (the test set-up installs it).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import * as path from 'node:path';
import { createToolOps } from '../../src/activities/tools';
import { createSandbox } from '../../src/activities/sandbox';
import { parseSandboxOption, type SandboxOptionInput } from '../../src/shared/sandbox';
import type { ToolOutcome } from '../../src/shared/tools';
import { call, processesNamed, removeTempDirs, tempDir, type CallOptions } from './helpers';
import { waitFor } from '../helpers/wait';
import { removeVarTmpDirs, varTmpDir } from '../helpers/outside-tmp';

jest.setTimeout(60_000);

let cwd: string;
beforeEach(async () => {
  cwd = await tempDir('da-sbx-');
});
afterAll(async () => {
  await removeTempDirs();
  removeVarTmpDirs();
});

function bash(command: string, sandbox: SandboxOptionInput = 'auto', opts: CallOptions = {}): Promise<ToolOutcome> {
  return call(opts.ctx?.cwd ?? cwd, 'Bash', { command }, { ...opts, ctx: { sandbox: parseSandboxOption(sandbox), ...opts.ctx } });
}

describe('other processes are invisible', () => {
  let victim: ChildProcess;
  const canary = `sk-canary-${process.pid}-${Date.now()}`;
  beforeAll(() => {
    // A process holding a secret in its environment, as the worker holds OPENAI_API_KEY.
    victim = spawn('sleep', ['300'], { env: { PATH: process.env.PATH, OPENAI_API_KEY: canary }, stdio: 'ignore' });
  });
  afterAll(() => {
    victim.kill('SIGKILL');
  });
  const snoop = `cat /proc/$PPID/environ; for f in /proc/*/environ; do tr '\\0' '\\n' < "$f"; done; ls /proc | grep -c '^[0-9]'`;

  test('unsandboxed, a command reads another process environment (the control)', async () => {
    const out = await bash(`tr '\\0' '\\n' < /proc/${victim.pid}/environ`, 'off');
    expect(out.content).toContain(`OPENAI_API_KEY=${canary}`);
  });

  test("sandboxed, /proc holds only the sandbox's own processes and no secret", async () => {
    const out = await bash(snoop);
    expect(out.structured).toMatchObject({ sandboxed: true });
    expect(out.content).not.toContain(canary);
    // bwrap's init, bash, the process listing: a handful, not the host's hundreds.
    const count = Number(out.content.trim().split('\n').pop());
    expect(count).toBeLessThan(10);
    const direct = await bash(`tr '\\0' '\\n' < /proc/${victim.pid}/environ; kill -0 ${victim.pid} || echo unreachable`);
    expect(direct.content).not.toContain(canary);
    expect(direct.content).toContain('unreachable');
  });

  test('the command has no capabilities, even when the worker runs as root', async () => {
    const out = await bash("grep -E '^Cap(Eff|Prm):' /proc/self/status");
    expect(out.content).toBe('CapPrm:\t0000000000000000\nCapEff:\t0000000000000000');
  });
});

describe('writes stay inside the workspace', () => {
  test('outside paths, a symlink out of the workspace and `..` are all refused', async () => {
    const base = varTmpDir('da-sbx-base-');
    const ws = path.join(base, 'ws');
    const outside = path.join(base, 'outside');
    const tmpOutside = await tempDir('da-outside-');
    await fs.mkdir(ws);
    await fs.mkdir(outside);
    await fs.symlink(outside, path.join(ws, 'link'));
    const attempts = [
      `echo x > ${tmpOutside}/f`,
      `echo x > ${outside}/a`,
      'echo x > link/b',
      'echo x > ../outside/c',
      `cp /etc/hostname ${outside}/d`,
    ];
    for (const command of attempts) {
      const out = await bash(command, 'auto', { ctx: { cwd: ws } });
      expect({ command, isError: out.isError }).toEqual({ command, isError: true });
    }
    expect(await fs.readdir(outside)).toEqual([]);
    expect(await fs.readdir(tmpOutside)).toEqual([]);
    // The control: the same commands unsandboxed do write (so the test can see a leak).
    await bash('echo x > ../outside/c', 'off', { ctx: { cwd: ws } });
    expect(await fs.readdir(outside)).toEqual(['c']);
  });

  test('the workspace, additionalDirectories and allowWrite are writable; denyWrite is not', async () => {
    const extra = varTmpDir('da-sbx-extra-');
    const allowed = varTmpDir('da-sbx-allowed-');
    await fs.mkdir(path.join(cwd, 'locked'));
    const out = await bash(
      `echo a > in-ws && echo b > ${extra}/in-extra && echo c > ${allowed}/in-allowed && (echo d > locked/no || echo refused)`,
      { filesystem: { allowWrite: [allowed], denyWrite: ['locked'] } },
      { ctx: { additionalDirectories: [extra] } },
    );
    expect(out.content).toMatch(/Read-only file system\nrefused$/);
    expect(await fs.readFile(path.join(cwd, 'in-ws'), 'utf8')).toBe('a\n');
    expect(await fs.readFile(path.join(extra, 'in-extra'), 'utf8')).toBe('b\n');
    expect(await fs.readFile(path.join(allowed, 'in-allowed'), 'utf8')).toBe('c\n');
    expect(existsSync(path.join(cwd, 'locked', 'no'))).toBe(false);
  });

  test("/tmp is the session's own: kept between its calls, not the host's, not another session's", async () => {
    const name = `da-sbx-tmp-${process.pid}-${Date.now()}`;
    expect((await bash(`echo kept > /tmp/${name}; echo $TMPDIR`, 'auto', { ctx: { sessionId: 's-one' } })).content).toBe('/tmp');
    expect((await bash(`cat /tmp/${name}`, 'auto', { ctx: { sessionId: 's-one' } })).content).toBe('kept');
    expect(existsSync(`/tmp/${name}`)).toBe(false);
    expect((await bash(`cat /tmp/${name}`, 'auto', { ctx: { sessionId: 's-two' } })).isError).toBe(true);
  });
});

describe('reads everywhere except deny paths', () => {
  test("the worker's ~/.ssh, its key files and the session's denyRead are hidden; the rest reads", async () => {
    const home = varTmpDir('da-sbx-home-');
    await fs.mkdir(path.join(home, '.ssh'));
    await fs.writeFile(path.join(home, '.ssh', 'id_rsa'), 'PRIVATE-KEY');
    const keyFile = path.join(varTmpDir('da-sbx-key-'), 'client.key');
    await fs.writeFile(keyFile, 'TLS-KEY');
    await fs.writeFile(path.join(cwd, '.env'), 'DB_PASSWORD=hunter2');
    await fs.writeFile(path.join(cwd, 'readme'), 'public');
    const sandbox = createSandbox({ home, workerEnv: { TEMPORAL_TLS_CLIENT_KEY_PATH: keyFile, HARMLESS: keyFile } });
    const command = `cat ${home}/.ssh/id_rsa ${keyFile} .env readme; ls -A ${home}/.ssh`;
    const out = await bash(command, { filesystem: { denyRead: ['.env'] } }, { ops: createToolOps({ sandbox }) });
    expect(out.content).not.toMatch(/PRIVATE-KEY|TLS-KEY|hunter2/);
    expect(out.content).toContain('public');
    const control = await bash(command, 'off', { ops: createToolOps({ sandbox }) });
    expect(control.content).toMatch(/PRIVATE-KEY[^]*TLS-KEY[^]*hunter2[^]*public/);
  });
});

describe('network: the host is out of reach', () => {
  /** Stand-ins for the Temporal frontend, the dashboard and the model endpoint: counting raw TCP listeners on every address. */
  const listeners: { name: string; server: net.Server; port: number; hits: number }[] = [];
  let web: http.Server;
  let webPort: number;
  let webHits = 0;
  const abstractName = `da-sbx-abstract-${process.pid}-${Date.now()}`;
  /** A service on an abstract Unix socket (no file: only a shared network namespace reaches it). */
  let abstract: ChildProcess;
  const open = new Set<net.Socket>();
  /** The machine's own non-loopback addresses (IPv4 and IPv6), where the listeners also answer. */
  const ownAddresses = Object.values(os.networkInterfaces())
    .flat()
    .filter((i): i is os.NetworkInterfaceInfo => !!i && !i.internal && !i.address.startsWith('fe80'))
    .map((i) => i.address);
  const hits = () => listeners.reduce((n, l) => n + l.hits, 0) + webHits;

  beforeAll(async () => {
    for (const name of ['temporal frontend', 'dashboard', 'model endpoint']) {
      const l = { name, server: net.createServer(), port: 0, hits: 0 };
      l.server.on('connection', (s) => {
        open.add(s);
        l.hits++;
        s.end(`hello from the ${name}\n`);
      });
      // '::' with dual stack: 127.0.0.1, ::1 and every address of the host.
      await new Promise<void>((r) => l.server.listen(0, '::', r));
      l.port = (l.server.address() as net.AddressInfo).port;
      listeners.push(l);
    }
    web = http.createServer((_req, res) => {
      webHits++;
      res.end('hello over http\n');
    });
    await new Promise<void>((r) => web.listen(0, '::', r));
    webPort = (web.address() as net.AddressInfo).port;
    abstract = spawn('socat', [`ABSTRACT-LISTEN:${abstractName},fork`, 'SYSTEM:echo hello from an abstract socket'], { stdio: 'ignore' });
    expect(ownAddresses.length).toBeGreaterThan(0);
  });
  afterAll(async () => {
    abstract.kill('SIGKILL');
    for (const s of open) s.destroy();
    web.closeAllConnections();
    for (const s of [...listeners.map((l) => l.server), web]) await new Promise<void>((r) => s.close(() => r()));
  });

  /** Every way a command might try a host port: raw TCP (bash's /dev/tcp) and through the proxy (curl), by name and by number. */
  function attempts(port: number): string[] {
    // [::ffff:127.0.0.1] once got through: a URL spells it [::ffff:7f00:1], which the proxy missed.
    const hosts = ['127.0.0.1', 'localhost', '127.0.0.2', '0.0.0.0', '[::1]', '[::]', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]'];
    hosts.push('2130706433', '0x7f000001', '127.1', '017700000001');
    for (const a of ownAddresses) hosts.push(a.includes(':') ? `[${a}]` : a);
    const raw = hosts.map((h) => `(exec 3<>/dev/tcp/${h.replace(/^\[|\]$/g, '')}/${port} && cat <&3)`);
    const viaProxy = hosts.flatMap((h) => [`curl -sS --max-time 5 http://${h}:${port}/`, `curl -sS -p --max-time 5 http://${h}:${port}/`]);
    return [...raw, ...viaProxy];
  }

  test("default ('on'): the host's ports on loopback and on its own addresses refuse, raw or through the proxy", async () => {
    const before = hits();
    for (const l of listeners) {
      const out = await bash(`${attempts(l.port).join('; ')}; echo end`);
      expect(out.structured).toMatchObject({ sandboxed: true });
      expect(out.content).not.toContain('hello');
      expect(out.content).toMatch(/end$/);
      expect(out.content).toMatch(/Connection refused/);
      expect(out.content).toMatch(/durable-agent sandbox: .* is the worker host itself/);
    }
    expect(hits()).toBe(before);
    // The same attempts outside the walls ('host') reach them: the probes can see a leak.
    const control = await bash(`(exec 3<>/dev/tcp/127.0.0.1/${listeners[0]!.port} && cat <&3); curl -sS http://[::1]:${webPort}/`, {
      network: 'host',
    });
    expect(control.content).toBe(`hello from the ${listeners[0]!.name}\nhello over http`);
  });

  test('PostgreSQL on 127.0.0.1:5432 refuses from the sandbox and answers outside it', async () => {
    const probe = 'exec 3<>/dev/tcp/127.0.0.1/5432 && echo connected';
    const proxied = 'curl -sS -p --max-time 5 telnet://127.0.0.1:5432 </dev/null';
    const inside = await bash(`(${probe}); ${proxied}; echo end`);
    expect(inside.content).not.toContain('connected');
    expect(inside.content).toMatch(/Connection refused[^]*CONNECT tunnel failed, response 403[^]*end$/);
    expect((await bash(probe, { network: 'host' })).content).toBe('connected');
  });

  test('cloud metadata addresses and the host gateway are refused', async () => {
    const out = await bash(
      'curl -sS --max-time 5 http://169.254.169.254/latest/meta-data/; curl -sS --max-time 5 "http://[fd00:ec2::254]/"; ' +
        'curl -sS --max-time 5 http://[fe80::1]/; (exec 3<>/dev/tcp/169.254.169.254/80); ip route; echo end',
    );
    expect(out.content.match(/is the worker host itself or a link-local\/metadata address/g)).toHaveLength(3);
    // No route out of the namespace at all: only the proxy leads anywhere.
    expect(out.content).toMatch(/Network is unreachable\nend$/);
  });

  test("/proc/net/tcp inside shows none of the host's listeners; an abstract Unix socket of the host is not there", async () => {
    const hex = (p: number) => `:${p.toString(16).toUpperCase().padStart(4, '0')}`;
    const cmd = `cat /proc/net/tcp /proc/net/tcp6; socat -u ABSTRACT-CONNECT:${abstractName} - ; echo end`;
    const inside = await bash(cmd);
    for (const l of listeners) expect(inside.content).not.toContain(hex(l.port));
    expect(inside.content).not.toContain(hex(5432));
    expect(inside.content).not.toContain('hello from an abstract socket');
    const outside = await bash(cmd, { network: 'host' });
    expect(outside.content).toContain(hex(listeners[0]!.port));
    expect(outside.content).toContain('hello from an abstract socket');
  });

  test('allowedDomains: a named host:port connects, by that name only; nothing else does', async () => {
    const [a, b] = listeners;
    const own4 = ownAddresses.find((x) => net.isIPv4(x))!;
    const settings = { network: { allowedDomains: [`127.0.0.1:${a!.port}`, `localhost:${webPort}`, `${own4}:${b!.port}`] } };
    const out = await bash(
      [
        `curl -sS -p --max-time 5 telnet://127.0.0.1:${a!.port} </dev/null`,
        `curl -sS --max-time 5 http://localhost:${webPort}/`,
        `curl -sS -p --max-time 5 telnet://${own4}:${b!.port} </dev/null`,
        // Not named: another port, the same port by another name, an outside host.
        `curl -sS -p --max-time 5 telnet://127.0.0.1:${b!.port} </dev/null`,
        `curl -sS --max-time 5 http://127.0.0.1:${webPort}/`,
        'curl -sS --max-time 5 https://registry.npmjs.org/',
        // Raw TCP still has no way out.
        `(exec 3<>/dev/tcp/127.0.0.1/${a!.port} && cat <&3)`,
        'echo end',
      ].join('; '),
      settings,
    );
    expect(out.content).toContain(`hello from the ${a!.name}`);
    expect(out.content).toContain('hello over http');
    expect(out.content).toContain(`hello from the ${b!.name}`);
    expect(out.content.match(/not in the session's sandbox.network.allowedDomains|response 403/g)!.length).toBeGreaterThanOrEqual(3);
    expect(out.content).toMatch(/Connection refused\nend$/);
  });

  test("'on' forwards to hosts that are not this machine (the gateway answers, here with a refusal)", async () => {
    // No outside host is reachable from the test machine; the proxy reaching the gateway's
    // closed port (a refusal from another host, not a 403 of ours) is as far as this can go.
    const gw = execFileSync('ip', ['-4', 'route', 'show', 'default'], { encoding: 'utf8' }).match(/via (\S+)/)?.[1];
    expect(gw).toBeDefined();
    const out = await bash(`curl -sS --max-time 10 http://${gw}:9/; echo; cat /etc/resolv.conf | grep -c nameserver`);
    expect(out.content).not.toMatch(/worker host itself/);
    expect(out.content).toMatch(/durable-agent sandbox: connect (ECONNREFUSED|ETIMEDOUT|EHOSTUNREACH)/);
  });

  test("'off' has loopback only: no proxy either", async () => {
    const out = await bash(
      `curl -sS --max-time 5 http://127.0.0.1:${webPort}/; env | grep -c '^https_proxy='; (exec 3<>/dev/tcp/127.0.0.1/${webPort})`,
      {
        network: 'off',
      },
    );
    expect(out.content).toMatch(/Failed to connect to 127.0.0.1 port \d+[^]*\n0\n[^]*Connection refused/);
  });

  test("without socat, 'on' fails closed: sandboxed with loopback only, never the host's network", async () => {
    const sandbox = createSandbox({ socatPath: null });
    const ops = createToolOps({ sandbox });
    const out = await bash(
      `(exec 3<>/dev/tcp/127.0.0.1/${webPort}); curl -sS --max-time 5 http://127.0.0.1:${webPort}/; echo end`,
      'auto',
      {
        ops,
      },
    );
    expect(out).toMatchObject({ structured: { sandboxed: true } });
    expect(out.content).toMatch(/Connection refused[^]*Failed to connect[^]*end$/);
    expect((await sandbox.status()).network).toEqual({
      available: false,
      detail: 'no socat configured for this worker',
      defaultNetwork: 'on',
    });
  });
});

describe('when bubblewrap does not work', () => {
  const missing = () => createToolOps({ sandbox: createSandbox({ bwrapPath: '/nonexistent/bwrap' }) });

  test("'required' refuses the command without running it", async () => {
    const out = await bash('touch ran', 'required', { ops: missing() });
    expect(out).toMatchObject({ isError: true, structured: { sandboxed: false, refused: true } });
    expect(out.content).toBe(
      "The command was not run: this session requires a sandbox (sandbox: 'required') and none works on this worker: " +
        'no executable bubblewrap at /nonexistent/bwrap (DURABLE_AGENT_BWRAP). ' +
        "Nothing was executed; the worker's operator must install bubblewrap, or the session must allow sandbox 'auto' or 'off'.",
    );
    expect(existsSync(path.join(cwd, 'ran'))).toBe(false);
  });

  test("'auto' runs it unsandboxed, and the status says why", async () => {
    const ops = missing();
    const out = await bash('touch ran', 'auto', { ops });
    expect(out).toMatchObject({ isError: false, structured: { sandboxed: false } });
    expect(existsSync(path.join(cwd, 'ran'))).toBe(true);
    expect(await ops.sandbox.status()).toEqual({
      available: false,
      detail: 'no executable bubblewrap at /nonexistent/bwrap (DURABLE_AGENT_BWRAP)',
      defaultMode: 'auto',
      network: { available: true, detail: expect.stringMatching(/^socat \S+ \(\/.*socat\)$/), defaultNetwork: 'on' },
    });
  });

  test('a working bubblewrap reports its version', async () => {
    expect(await createSandbox().status()).toMatchObject({
      available: true,
      detail: expect.stringMatching(/^bubblewrap \d+\.\d+.* \(\/.*bwrap\)$/),
    });
  });
});

describe('excludedCommands and process lifetime', () => {
  test('an excluded command runs outside; a compound one stays inside', async () => {
    const outside = varTmpDir('da-sbx-excl-');
    const settings = { excludedCommands: ['touch'] };
    expect(await bash(`touch ${outside}/a`, settings)).toMatchObject({ isError: false, structured: { sandboxed: false } });
    expect(await bash(`touch ${outside}/b; touch ${outside}/c`, settings)).toMatchObject({
      isError: true,
      structured: { sandboxed: true },
    });
    expect((await fs.readdir(outside)).sort()).toEqual(['a']);
  });

  test('a timeout kills everything inside the sandbox', async () => {
    const name = `da-sbx-timeout-${process.pid}-${Date.now()}`;
    const running = call(cwd, 'Bash', { command: `(exec -a ${name} sleep 60) & exec -a ${name} sleep 60`, timeout: 5_000 });
    await waitFor('both sleeps', () => (processesNamed(name).length === 2 ? true : undefined));
    expect(await running).toMatchObject({ content: 'Command timed out after 5s', isError: true, structured: { sandboxed: true } });
    await waitFor('no sleeps', () => (processesNamed(name).length === 0 ? true : undefined));
  });

  test("background processes end with the command (the sandbox's namespace ends with it)", async () => {
    const name = `da-sbx-bg-${process.pid}-${Date.now()}`;
    const out = await bash(`(exec -a ${name} sleep 60) & kill -0 $! && echo alive`);
    expect(out).toMatchObject({ content: 'alive', isError: false, structured: { sandboxed: true } });
    await waitFor('the background sleep to be gone', () => (processesNamed(name).length === 0 ? true : undefined));
  });
});
