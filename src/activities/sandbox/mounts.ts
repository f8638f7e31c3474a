/**
 * What a sandboxed command sees of the filesystem, as bubblewrap arguments
 * (docs/ARCHITECTURE.md#bash-sandbox): the host's root read-only, its own /dev and /proc, a
 * private /tmp, the workspace writable, deny paths hidden.
 *
 * Paths are resolved to their real paths before mounting, so a symlink or `..` inside the
 * workspace that points outside it lands on the read-only root, and a denied directory reached
 * through a symlink is hidden too.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';

type MountKind =
  /** The session's private tmp dir, mounted at /tmp. */
  | 'tmp'
  | 'write'
  /** Read-only even inside a writable directory (denyWrite). */
  | 'readOnly'
  /** An empty read-only directory over a denied one. */
  | 'hideDir'
  /** /dev/null over a denied file. */
  | 'hideFile'
  /** A host file (the network proxy's Unix socket) at another path, read-only. */
  | 'file';

export interface Mount {
  kind: MountKind;
  /** Where it appears inside the sandbox (a real path on the host, except /tmp). */
  path: string;
  /** The host directory, for `tmp`; the host file, for `file`. */
  source?: string;
}

/** Later kinds win on the same path: a path both writable and denied is denied. */
const KIND_ORDER: MountKind[] = ['tmp', 'write', 'readOnly', 'hideDir', 'hideFile', 'file'];

function depth(p: string): number {
  return p.split('/').filter(Boolean).length;
}

/**
 * Mounts in the order bubblewrap must apply them: a mount hides whatever an earlier one put at
 * or below its path, so shallower paths go first — a denied `.env` inside the workspace stays
 * hidden, and a workspace inside a denied directory stays reachable.
 */
export function orderMounts(mounts: readonly Mount[]): Mount[] {
  return [...mounts].sort((a, b) => depth(a.path) - depth(b.path) || KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind));
}

export interface BwrapArgsInput {
  mounts: readonly Mount[];
  /** 'host': the host's network namespace (outside the walls); 'own': a namespace with loopback only. */
  network: 'host' | 'own';
  cwd: string;
  argv: readonly string[];
}

/** The full bubblewrap argument list (pure). */
export function bwrapArgs({ mounts, network, cwd, argv }: BwrapArgsInput): string[] {
  const args = [
    // Killing bwrap (timeout, interrupt) kills everything inside: the namespace's init dies with it.
    '--die-with-parent',
    '--new-session',
    // Its own PID namespace and /proc: the worker's /proc/<pid>/environ and memory do not exist here.
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    // Every network mode but 'host' starts from a namespace with loopback only: the host's
    // ports, its other addresses, its abstract Unix sockets and its /proc/net are not there.
    ...(network === 'host' ? [] : ['--unshare-net']),
    // A worker running as root must not hand the command root's capabilities (remount, raw devices).
    '--cap-drop',
    'ALL',
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
  ];
  const remount: string[] = [];
  for (const m of orderMounts(mounts)) {
    switch (m.kind) {
      case 'tmp':
        args.push('--bind', m.source!, m.path);
        break;
      case 'write':
        args.push('--bind', m.path, m.path);
        break;
      case 'readOnly':
        args.push('--ro-bind', m.path, m.path);
        break;
      case 'hideDir':
        // Writable while later mounts create their mount points in it, read-only afterwards.
        args.push('--tmpfs', m.path);
        remount.push('--remount-ro', m.path);
        break;
      case 'hideFile':
        args.push('--ro-bind', '/dev/null', m.path);
        break;
      case 'file':
        args.push('--ro-bind', m.source!, m.path);
        break;
    }
  }
  args.push(...remount, '--chdir', cwd, '--', ...argv);
  return args;
}

/** `~` and `~/x` from the worker's home, relative paths from the session's cwd. */
export function expandPath(p: string, { cwd, home }: { cwd: string; home: string }): string {
  if (p === '~') return home;
  if (p.startsWith('~/')) return path.join(home, p.slice(2));
  return path.resolve(cwd, p);
}

/** The real path and whether it is a directory, or undefined when it does not exist. */
async function resolveExisting(p: string): Promise<{ path: string; isDirectory: boolean } | undefined> {
  try {
    const real = await fsp.realpath(p);
    return { path: real, isDirectory: (await fsp.stat(real)).isDirectory() };
  } catch {
    return undefined;
  }
}

export interface MountPlanInput {
  cwd: string;
  /** additionalDirectories and the settings' allowWrite (expanded). */
  writable: readonly string[];
  denyWrite: readonly string[];
  denyRead: readonly string[];
  privateTmp: string;
}

/**
 * Resolve every path and build the mounts. Paths that do not exist are left out: nothing can be
 * hidden there yet, and a writable one cannot be created from inside the read-only root.
 */
export async function planMounts(input: MountPlanInput): Promise<Mount[]> {
  const wanted: { p: string; kind: (isDir: boolean) => MountKind }[] = [
    ...[input.cwd, ...input.writable].map((p) => ({ p, kind: () => 'write' as const })),
    ...input.denyWrite.map((p) => ({ p, kind: () => 'readOnly' as const })),
    ...input.denyRead.map((p) => ({ p, kind: (dir: boolean) => (dir ? ('hideDir' as const) : ('hideFile' as const)) })),
  ];
  // Resolved side by side: this runs before every command, and each path is a realpath + stat.
  const found = await Promise.all(wanted.map((w) => resolveExisting(w.p)));
  const mounts: Mount[] = [{ kind: 'tmp', path: '/tmp', source: input.privateTmp }];
  wanted.forEach((w, i) => {
    const f = found[i];
    if (f) mounts.push({ kind: w.kind(f.isDirectory), path: f.path });
  });
  return mounts;
}
