/**
 * The Bash sandbox through the real Bash tool: real bubblewrap, real temp dirs, real sockets.
 * Each boundary is checked against its unsandboxed control, so a sandbox that lets it through
 * fails here. bubblewrap must be installed (the test set-up installs it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import net from 'node:net';
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

describe('network', () => {
  let server: net.Server;
  let port: number;
  let connections = 0;
  beforeAll(async () => {
    server = net.createServer((s) => {
      connections++;
      s.end('hello from the host\n');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as net.AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));
  const connect = () => `exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3`;

  test("'off': a loopback port of the host cannot be reached", async () => {
    const before = connections;
    const out = await bash(connect(), { network: 'off' });
    expect(out).toMatchObject({ isError: true, structured: { sandboxed: true } });
    expect(out.content).toMatch(/Connection refused/);
    expect(connections).toBe(before);
  });

  test("'on': it can", async () => {
    const out = await bash(connect(), { network: 'on' });
    expect(out).toMatchObject({ content: 'hello from the host', isError: false, structured: { sandboxed: true } });
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
