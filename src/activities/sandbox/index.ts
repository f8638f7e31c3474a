/**
 * The sandbox for commands that run on the workspace — Bash and command hooks
 * (docs/ARCHITECTURE.md#bash-sandbox). `launch` turns a command's argv into what to spawn: the
 * same argv wrapped in bubblewrap, the bare argv (sandbox off, an excluded command, or no
 * bubblewrap under 'auto'), or a refusal (no bubblewrap under 'required').
 *
 * Whether bubblewrap works is learned once per worker by running it, not by looking for the
 * binary: a container without user namespaces has the binary and cannot use it.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { accessSync, constants as fsConstants, mkdirSync, mkdtempSync, realpathSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  isExcludedCommand,
  networkKind,
  parseAllowedDomain,
  parseSandboxOption,
  sandboxMode,
  type AllowedDomain,
  type SandboxNetworkSetting,
  type SandboxNetworkStatus,
  type SandboxSettings,
  type SandboxStatus,
} from '../../shared/sandbox';
import { isScrubbedEnvName, parseScrubList, SCRUB_ENV_VAR } from '../tools/env';
import { findExecutable } from '../tools/which';
import { bwrapArgs, expandPath, planMounts, type Mount } from './mounts';
import { startNetworkProxy, type NetworkProxy } from './proxy';

export { bwrapArgs, orderMounts } from './mounts';
const BWRAP_ENV_VAR = 'DURABLE_AGENT_BWRAP';
const SANDBOX_ENV_VAR = 'DURABLE_AGENT_SANDBOX';
const SANDBOX_DENY_READ_ENV_VAR = 'DURABLE_AGENT_SANDBOX_DENY_READ';

/** Settings files in the workspace that Bash never writes (relative to cwd). */
const PROJECT_SETTINGS_FILES = ['.claude/settings.json', '.claude/settings.local.json'];

/** Hidden from every sandboxed command, with the worker's key and settings files. */
export const DEFAULT_DENY_READ = [
  '~/.ssh',
  '~/.aws',
  '~/.config',
  '~/.claude',
  '~/.gnupg',
  '~/.netrc',
  '~/.git-credentials',
  '~/.docker',
  '~/.kube',
];

export interface SandboxOptions {
  /** bubblewrap: a path, or a name looked up on PATH; null: none on this worker. Default: DURABLE_AGENT_BWRAP, else `bwrap`. */
  bwrapPath?: string | null;
  /** socat, the bridge from the sandbox's loopback to the network proxy; null: none. Default: `socat` on PATH. */
  socatPath?: string | null;
  /** Settings of sessions that give none. Default: DURABLE_AGENT_SANDBOX (a mode or JSON settings), else 'auto'. */
  defaults?: SandboxSettings;
  /** Hidden besides DEFAULT_DENY_READ and the key files. Default: DURABLE_AGENT_SANDBOX_DENY_READ (comma-separated). */
  denyRead?: string[];
  /** Parent of the sessions' private tmp dirs. Default: <os tmpdir>/durable-agent-sandbox-<uid>. */
  tmpRoot?: string;
  /** The worker's environment: files its secret variables name (TEMPORAL_TLS_CLIENT_KEY_PATH, …) are hidden. */
  workerEnv?: NodeJS.ProcessEnv;
  home?: string;
  /** Read-only in every sandbox, even inside a writable directory, and visible even under /tmp:
   *  the workspaces' mirrors, whose objects sessions' clones borrow (ARCHITECTURE.md#workspaces). */
  readOnly?: string[];
}

export interface LaunchRequest {
  /** The session's setting; absent: the worker's default. */
  settings?: SandboxSettings;
  cwd: string;
  additionalDirectories: readonly string[];
  /** Keys the session's private tmp, which persists across its commands. */
  sessionId: string;
  argv: readonly string[];
  /** The command as the model wrote it, matched against `excludedCommands`. */
  commandText: string;
}

export type Launch =
  | { kind: 'sandboxed'; file: string; args: string[]; env: Record<string, string> }
  | { kind: 'unsandboxed'; file: string; args: string[]; env: Record<string, string>; why: 'off' | 'excluded' | 'unavailable' }
  | { kind: 'refused'; message: string };

export interface Sandbox {
  /** Probes bubblewrap on first call; the same answer afterwards. */
  status(): Promise<SandboxStatus>;
  launch(request: LaunchRequest): Promise<Launch>;
}

/** Worker options from its environment; a bad value throws naming the variable. */
export function sandboxOptionsFromEnv(env: NodeJS.ProcessEnv): SandboxOptions {
  const raw = env[SANDBOX_ENV_VAR]?.trim();
  let defaults: SandboxSettings | undefined;
  if (raw) {
    let value: unknown = raw;
    if (raw.startsWith('{')) {
      try {
        value = JSON.parse(raw);
      } catch (e) {
        throw new Error(`${SANDBOX_ENV_VAR}: not valid JSON: ${(e as Error).message}`);
      }
    }
    try {
      defaults = parseSandboxOption(value);
    } catch (e) {
      const issue = (e as { issues?: { path: PropertyKey[]; message: string }[] }).issues?.[0];
      throw new Error(
        `${SANDBOX_ENV_VAR}: ${issue ? `${[...issue.path].map(String).join('.') || '(value)'}: ${issue.message}` : (e as Error).message}`,
      );
    }
  }
  return {
    ...(env[BWRAP_ENV_VAR] ? { bwrapPath: env[BWRAP_ENV_VAR] } : {}),
    ...(defaults ? { defaults } : {}),
    denyRead: parseScrubList(env[SANDBOX_DENY_READ_ENV_VAR]),
    workerEnv: env,
  };
}

/** Files named by the worker's secret variables (the ones Bash children never see). */
export function workerSecretFiles(env: NodeJS.ProcessEnv): string[] {
  const extra = parseScrubList(env[SCRUB_ENV_VAR]);
  const files: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (!value || !path.isAbsolute(value) || !isScrubbedEnvName(name, extra)) continue;
    try {
      if (statSync(value).isFile()) files.push(value);
    } catch {
      // names no file
    }
  }
  return files;
}

function run(file: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: 15_000, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) || (err && code === -1 ? err.message : '') });
    });
  });
}

function resolveBwrap(bwrap: string): string | null {
  if (!bwrap.includes('/')) return findExecutable(bwrap);
  try {
    accessSync(bwrap, fsConstants.X_OK);
    return bwrap;
  } catch {
    return null;
  }
}

/** Run bubblewrap as a real command would be run (own namespaces, no network, a private tmp). */
async function probe(bwrapPath: string | null, tmpRoot: string): Promise<{ available: boolean; detail: string; bwrap?: string }> {
  if (bwrapPath === null) return { available: false, detail: 'no bubblewrap configured for this worker' };
  const bwrap = resolveBwrap(bwrapPath);
  if (!bwrap) {
    return {
      available: false,
      detail: bwrapPath.includes('/')
        ? `no executable bubblewrap at ${bwrapPath} (${BWRAP_ENV_VAR})`
        : `bubblewrap ('${bwrapPath}') is not on PATH; install Debian's bubblewrap or set ${BWRAP_ENV_VAR}`,
    };
  }
  const version = (await run(bwrap, ['--version'])).stdout.trim() || 'bubblewrap';
  mkdirSync(tmpRoot, { recursive: true, mode: 0o700 });
  const dir = realpathSync(mkdtempSync(path.join(tmpRoot, 'probe-')));
  try {
    const args = bwrapArgs({
      mounts: [
        { kind: 'tmp', path: '/tmp', source: dir },
        { kind: 'write', path: dir },
      ],
      network: 'own',
      cwd: dir,
      argv: ['true'],
    });
    const r = await run(bwrap, args);
    if (r.code === 0) return { available: true, detail: `${version} (${bwrap})`, bwrap };
    const why = r.stderr.trim().split('\n')[0] || `exit ${r.code}`;
    return { available: false, detail: `${bwrap} cannot create a sandbox here: ${why}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Where the proxy's socket appears inside the sandbox: /dev is the sandbox's own tmpfs, so bubblewrap can create the mount point. */
const PROXY_SOCKET_IN_SANDBOX = '/dev/.durable-agent-proxy.sock';
/** The bridge's port on the sandbox's own loopback (the namespace is the command's alone, so no clash). */
const PROXY_PORT = 3128;
const PROXY_URL = `http://127.0.0.1:${PROXY_PORT}`;

/** What a command through the proxy finds in its environment: every common spelling, and no bypass list. */
const PROXY_ENV: Record<string, string> = {
  http_proxy: PROXY_URL,
  HTTP_PROXY: PROXY_URL,
  https_proxy: PROXY_URL,
  HTTPS_PROXY: PROXY_URL,
  all_proxy: PROXY_URL,
  ALL_PROXY: PROXY_URL,
  no_proxy: '',
  NO_PROXY: '',
};

/**
 * The sh script that runs first inside the sandbox: socat listens on the namespace's loopback and
 * hands each connection to the proxy's socket; the script waits until it listens (reading
 * /proc/net/tcp with builtins, no process per look), so the command's first connection finds it,
 * then becomes the command. If socat never listens, the command runs anyway and finds no proxy:
 * it fails closed, with no network.
 */
function bridgeScript(socat: string): string {
  const listening = `0100007F:${PROXY_PORT.toString(16).toUpperCase().padStart(4, '0')} 0A`;
  return (
    `'${socat.replace(/'/g, "'\\''")}' TCP-LISTEN:${PROXY_PORT},bind=127.0.0.1,reuseaddr,fork UNIX-CONNECT:${PROXY_SOCKET_IN_SANDBOX} ` +
    `</dev/null >/dev/null 2>&1 &\n` +
    `i=0; while [ $i -lt 20000 ]; do while read -r _ l _ s _; do [ "$l $s" = "${listening}" ] && break 2; done </proc/net/tcp; i=$((i+1)); done\n` +
    'exec "$@"'
  );
}

/** socat on this worker, learned once: without it 'on' and allowedDomains get no network at all. */
async function probeSocat(socatPath: string | null): Promise<{ available: boolean; detail: string; socat?: string }> {
  if (socatPath === null) return { available: false, detail: 'no socat configured for this worker' };
  const socat = resolveBwrap(socatPath);
  if (!socat) return { available: false, detail: `socat ('${socatPath}') is not on PATH; install Debian's socat` };
  const r = await run(socat, ['-V']);
  const version = /socat version (\S+)/.exec(r.stdout)?.[1];
  if (r.code !== 0 || !version)
    return { available: false, detail: `${socat} -V failed: ${r.stderr.trim().split('\n')[0] || `exit ${r.code}`}` };
  return { available: true, detail: `socat ${version} (${socat})`, socat };
}

/** The proxy's key for a network setting: one proxy (and socket) per distinct policy, for the worker's life. */
function policyKey(network: SandboxNetworkSetting): string {
  return typeof network === 'object'
    ? JSON.stringify([...new Set(network.allowedDomains.map((d) => d.trim().toLowerCase()))].sort())
    : 'on';
}

export function createSandbox(options: SandboxOptions = {}): Sandbox {
  const defaults = options.defaults ?? parseSandboxOption('auto');
  const uid = typeof process.getuid === 'function' ? process.getuid() : 'user';
  const tmpRoot = options.tmpRoot ?? path.join(os.tmpdir(), `durable-agent-sandbox-${uid}`);
  const home = options.home ?? os.homedir();
  const workerEnv = options.workerEnv ?? process.env;
  // The proxies' sockets: this worker's own directory, hidden inside every sandbox, so a command
  // can reach only the one socket bound in for its session's policy.
  const netDir = path.join(tmpRoot, `net-${process.pid}`);
  let probed: Promise<{ available: boolean; detail: string; bwrap?: string }> | undefined;
  let socatProbed: Promise<{ available: boolean; detail: string; socat?: string }> | undefined;
  let denied: string[] | undefined;
  const proxies = new Map<string, Promise<NetworkProxy>>();
  const probeOnce = () => (probed ??= probe(options.bwrapPath === undefined ? 'bwrap' : options.bwrapPath, tmpRoot));
  const socatOnce = () => (socatProbed ??= probeSocat(options.socatPath === undefined ? 'socat' : options.socatPath));
  const workerDenyRead = () =>
    (denied ??= [...DEFAULT_DENY_READ, ...(options.denyRead ?? [])]
      .map((p) => expandPath(p, { cwd: home, home }))
      .concat(workerSecretFiles(workerEnv), [netDir]));

  const privateTmp = (sessionId: string) => {
    const dir = path.join(tmpRoot, createHash('sha256').update(sessionId).digest('hex').slice(0, 20));
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return dir;
  };

  const proxyFor = (network: 'on' | { allowedDomains: string[] }): Promise<NetworkProxy> => {
    const key = policyKey(network);
    let p = proxies.get(key);
    if (!p) {
      if (proxies.size === 0) {
        mkdirSync(netDir, { recursive: true, mode: 0o700 });
        process.once('exit', () => rmSync(netDir, { recursive: true, force: true }));
      }
      const socketPath = path.join(netDir, `${createHash('sha256').update(key).digest('hex').slice(0, 16)}.sock`);
      rmSync(socketPath, { force: true });
      const allowed = typeof network === 'object' ? network.allowedDomains.map((d) => parseAllowedDomain(d) as AllowedDomain) : undefined;
      p = startNetworkProxy(socketPath, allowed ? { allowed } : {});
      // A proxy that failed to start is retried by the next command, not cached as broken.
      p.catch(() => proxies.delete(key));
      proxies.set(key, p);
    }
    return p;
  };

  return {
    async status() {
      const [p, s] = await Promise.all([probeOnce(), socatOnce()]);
      const network: SandboxNetworkStatus = { available: s.available, detail: s.detail, defaultNetwork: networkKind(defaults.network) };
      return { available: p.available, detail: p.detail, defaultMode: sandboxMode(defaults), network };
    },
    async launch(req) {
      const settings = req.settings ?? defaults;
      const bare = { file: req.argv[0]!, args: req.argv.slice(1), env: {} };
      if (!settings.enabled) return { kind: 'unsandboxed', ...bare, why: 'off' };
      if (isExcludedCommand(req.commandText, settings.excludedCommands)) return { kind: 'unsandboxed', ...bare, why: 'excluded' };
      const p = await probeOnce();
      if (!p.available || !p.bwrap) {
        if (!settings.failIfUnavailable) return { kind: 'unsandboxed', ...bare, why: 'unavailable' };
        return {
          kind: 'refused',
          message:
            `The command was not run: this session requires a sandbox (sandbox: 'required') and none works on this worker: ${p.detail}. ` +
            "Nothing was executed; the worker's operator must install bubblewrap, or the session must allow sandbox 'auto' or 'off'.",
        };
      }
      const at = { cwd: req.cwd, home };
      const fsSettings = settings.filesystem;
      const mounts: Mount[] = await planMounts({
        cwd: req.cwd,
        writable: [...req.additionalDirectories, ...fsSettings.allowWrite].map((d) => expandPath(d, at)),
        // The session's project and local settings files stay read-only: a command must not grant the
        // agent what its rules withhold (ARCHITECTURE.md#settings-the-model-cannot-rewrite). A file
        // created later is caught on resume, where changed settings are not applied unasked.
        denyWrite: [...fsSettings.denyWrite, ...PROJECT_SETTINGS_FILES].map((d) => expandPath(d, at)).concat(options.readOnly ?? []),
        denyRead: [...workerDenyRead(), ...fsSettings.denyRead.map((d) => expandPath(d, at))],
        privateTmp: privateTmp(req.sessionId),
      });
      const env: Record<string, string> = { TMPDIR: '/tmp', TMP: '/tmp', TEMP: '/tmp' };
      let argv = req.argv;
      const network = settings.network;
      if (network === 'on' || typeof network === 'object') {
        // Fails closed: without socat the command still runs sandboxed, with loopback only
        // (the session was warned at init), never on the host's network.
        const s = await socatOnce();
        if (s.available && s.socat) {
          const proxy = await proxyFor(network);
          mounts.push({ kind: 'file', path: PROXY_SOCKET_IN_SANDBOX, source: proxy.socketPath });
          argv = ['/bin/sh', '-c', bridgeScript(s.socat), 'sh', ...req.argv];
          Object.assign(env, PROXY_ENV);
        }
      }
      return {
        kind: 'sandboxed',
        file: p.bwrap,
        args: bwrapArgs({ mounts, network: network === 'host' ? 'host' : 'own', cwd: req.cwd, argv }),
        env,
      };
    },
  };
}

/** One line for the worker's start-up log. */
export function describeSandbox(status: SandboxStatus): string {
  if (status.available) {
    const net = status.network;
    const network = !net
      ? ''
      : net.available
        ? `, network proxy through ${net.detail}, sessions default to network '${net.defaultNetwork}'`
        : `, network proxy UNAVAILABLE (${net.detail}) — network 'on' and allowedDomains get loopback only, sessions default to network '${net.defaultNetwork}'`;
    return `sandbox: ${status.detail}, sessions default to '${status.defaultMode}'${network}`;
  }
  return (
    `sandbox: UNAVAILABLE (${status.detail}) — Bash runs unsandboxed in 'auto' sessions and is refused in 'required' ones; ` +
    `sessions default to '${status.defaultMode}'`
  );
}
