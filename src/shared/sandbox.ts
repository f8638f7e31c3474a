/**
 * The Bash sandbox's settings, shaped like Claude Code's `sandbox` block, and the pure decisions
 * around them (docs/ARCHITECTURE.md#bash-sandbox). Pure: the workflow may import it.
 *
 * `sandbox` in a session config is a mode — `'auto'` (sandboxed where bubblewrap works),
 * `'required'` (Bash refused where it does not), `'off'` — or a settings object; a mode is
 * shorthand for `{enabled: true}`, `{enabled: true, failIfUnavailable: true}`, `{enabled: false}`.
 */
import { z } from 'zod';
import { sharedSchema } from './shared-schema';

export const SandboxMode = sharedSchema('sandbox.SandboxMode', () => z.enum(['auto', 'required', 'off']));
export type SandboxMode = z.infer<typeof SandboxMode>;

const MODE_SETTINGS: Record<SandboxMode, { enabled: boolean; failIfUnavailable?: boolean }> = {
  auto: { enabled: true },
  required: { enabled: true, failIfUnavailable: true },
  off: { enabled: false },
};

/**
 * One `allowedDomains` entry, parsed: `host` (any port), `*.host` (any subdomain of host, not host
 * itself), either with `:port` (that port only), an IPv6 address in brackets (`[::1]:5432`).
 * docs/ARCHITECTURE.md#bash-sandbox says how entries are matched.
 */
export interface AllowedDomain {
  /** Lower case, without brackets or a trailing dot; for a wildcard, the part after `*.`. */
  host: string;
  wildcard: boolean;
  port?: number;
}

const LABELS = /^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/;
const IPV6 = /^[0-9a-f:.]+$/;

/** The entry parsed, or why it is not one (pure). */
export function parseAllowedDomain(entry: string): AllowedDomain | string {
  const bad = `'${entry}' is not a host, *.host or host:port (e.g. registry.npmjs.org, *.github.com, localhost:5432)`;
  let rest = entry.trim().toLowerCase();
  let port: number | undefined;
  let host: string;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(rest);
  if (bracketed) {
    host = bracketed[1]!;
    if (!IPV6.test(host) || !host.includes(':')) return bad;
    if (bracketed[2] !== undefined) port = Number(bracketed[2]);
  } else if ((rest.match(/:/g) ?? []).length > 1) {
    // A bare IPv6 address: no port can follow it unbracketed.
    if (!IPV6.test(rest)) return bad;
    host = rest;
  } else {
    const colon = rest.lastIndexOf(':');
    if (colon >= 0) {
      if (!/^\d+$/.test(rest.slice(colon + 1))) return bad;
      port = Number(rest.slice(colon + 1));
      rest = rest.slice(0, colon);
    }
    host = rest.replace(/\.$/, '');
  }
  if (port !== undefined && !(port >= 1 && port <= 65535)) return `'${entry}': port must be 1 to 65535`;
  const wildcard = host.startsWith('*.');
  if (wildcard) host = host.slice(2);
  if (!host.includes(':') && !LABELS.test(host)) return bad;
  if (wildcard && host.includes(':')) return bad;
  return { host, wildcard, ...(port !== undefined ? { port } : {}) };
}

/** A host as a client names it (`Example.COM.`, `[::1]`) in the form entries are compared in. */
export function normalizeHost(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
}

/**
 * The first entry that allows `host:port`, or undefined (pure). `host` is the name the command
 * asked for, before any DNS lookup: `localhost:5432` allows `localhost`, not `127.0.0.1`.
 */
export function matchAllowedDomain(host: string, port: number, entries: readonly AllowedDomain[]): AllowedDomain | undefined {
  const h = normalizeHost(host);
  return entries.find((e) => (e.port === undefined || e.port === port) && (e.wildcard ? h.endsWith(`.${e.host}`) : h === e.host));
}

/** `'host'`, `'on'`, `'off'` or an allowlist; see SandboxSettings.network. */
export type SandboxNetworkSetting = 'host' | 'on' | 'off' | { allowedDomains: string[] };

/**
 * `'on'`, `'off'`, `'host'`, or Claude Code's `{allowedDomains: [...]}` (an empty list is
 * `'off'`). Checked by hand: a zod union would report "invalid input" instead of which rule
 * failed; each bad entry is named by its index.
 */
const SandboxNetwork = sharedSchema(
  'sandbox.SandboxNetwork',
  () =>
    z.unknown().transform((v, ctx): SandboxNetworkSetting => {
      if (v === 'on' || v === 'off' || v === 'host') return v;
      if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
        const keys = Object.keys(v);
        const list = (v as { allowedDomains?: unknown }).allowedDomains;
        const unknownKey = keys.find((k) => k !== 'allowedDomains');
        if (unknownKey) {
          ctx.addIssue({ code: 'custom', path: [unknownKey], message: `unknown option '${unknownKey}' (only allowedDomains)` });
        } else if (!Array.isArray(list) || !list.every((d) => typeof d === 'string')) {
          ctx.addIssue({ code: 'custom', path: ['allowedDomains'], message: 'expected an array of host names' });
        } else {
          let ok = true;
          list.forEach((d, i) => {
            const parsed = parseAllowedDomain(d);
            if (typeof parsed === 'string') {
              ok = false;
              ctx.addIssue({ code: 'custom', path: ['allowedDomains', i], message: parsed });
            }
          });
          if (ok) return list.length === 0 ? 'off' : { allowedDomains: [...list] };
        }
        return z.NEVER;
      }
      ctx.addIssue({ code: 'custom', message: "expected 'on', 'off', 'host' or {allowedDomains: [...]}" });
      return z.NEVER;
    }) as unknown as z.ZodType<SandboxNetworkSetting, SandboxNetworkSetting>,
);

const PathList = sharedSchema('sandbox.PathList', () => z.array(z.string().min(1)).default([]));

export const SandboxSettings = sharedSchema('sandbox.SandboxSettings', () =>
  z.strictObject(
    {
      enabled: z.boolean().default(true).describe('Run Bash commands in the sandbox (false: never).'),
      failIfUnavailable: z
        .boolean()
        .default(false)
        .describe('Refuse Bash when no sandbox works on the worker, instead of running it unsandboxed.'),
      network: SandboxNetwork.default('on').describe(
        "'on' (outside hosts through a filtering proxy, none of the worker host's own services), " +
          "{allowedDomains: [...]} (only those), 'off' (loopback only) or 'host' (the host's network: outside the walls).",
      ),
      excludedCommands: z
        .array(z.string().min(1))
        .default([])
        .describe('Commands that run outside the sandbox: `docker` matches `docker ps`; a compound command never matches.'),
      filesystem: z
        .strictObject({
          allowWrite: PathList.describe('Writable besides cwd, additionalDirectories and the private /tmp.'),
          denyWrite: PathList.describe('Read-only even inside a writable directory (e.g. `.git/hooks`).'),
          denyRead: PathList.describe("Hidden, in addition to the worker's defaults (~/.ssh, ~/.aws, ~/.config, its key files)."),
        })
        .prefault({}),
    },
    { error: (iss) => (iss.code === 'invalid_type' ? "expected 'auto', 'required', 'off' or a settings object" : undefined) },
  ),
);
export type SandboxSettings = z.infer<typeof SandboxSettings>;

/** What a session may write: a mode or a (partial) settings object. */
export type SandboxOptionInput = SandboxMode | z.input<typeof SandboxSettings>;

/**
 * `sandbox` as a session option: a mode string becomes its settings object, so errors inside an
 * object name the exact field (`sandbox.network: …`) instead of a union's "invalid input".
 * The cast restores the input type a preprocess loses.
 */
export const SandboxOption = sharedSchema(
  'sandbox.SandboxOption',
  () =>
    z.preprocess(
      (v) => (typeof v === 'string' && v in MODE_SETTINGS ? MODE_SETTINGS[v as SandboxMode] : v),
      SandboxSettings,
    ) as unknown as z.ZodType<SandboxSettings, SandboxOptionInput>,
);

export function parseSandboxOption(input: unknown): SandboxSettings {
  return SandboxOption.parse(input);
}

export function sandboxMode(settings: SandboxSettings): SandboxMode {
  if (!settings.enabled) return 'off';
  return settings.failIfUnavailable ? 'required' : 'auto';
}

/** Whether bubblewrap works on a worker, as its `listTools` reports it on the Bash spec. */
export interface SandboxStatus {
  available: boolean;
  /** `bubblewrap 0.8.0 (/usr/bin/bwrap)`, or why it does not work. */
  detail: string;
  /** The mode of sessions that give no `sandbox` setting on this worker. */
  defaultMode: SandboxMode;
  /** Network isolation on this worker (absent from workers older than 'host'). */
  network?: SandboxNetworkStatus;
}

/** What a network setting asks for, without the list. */
export type SandboxNetworkKind = 'host' | 'on' | 'off' | 'allowlist';

export function networkKind(network: SandboxNetworkSetting): SandboxNetworkKind {
  return typeof network === 'object' ? 'allowlist' : network;
}

export interface SandboxNetworkStatus {
  /** Whether 'on' and allowedDomains work (the proxy bridge runs); where not, those sessions get no network at all. */
  available: boolean;
  /** `socat 1.7.4.4 (/usr/bin/socat)`, or why not. */
  detail: string;
  /** The network of sessions that give no `sandbox` setting on this worker. */
  defaultNetwork: SandboxNetworkKind;
}

/** Characters that make a command more than one simple command, or redirect it. */
const COMPOUND = /[;&|<>`\n\r]|\$\(/;

/**
 * Whether `command` is one of `patterns` (runs outside the sandbox). `docker` matches `docker`
 * and `docker ps`; `docker *` and `docker:*` mean the same. Anything compound — `;`, `&&`, `|`,
 * redirections, `$(…)`, backquotes — never matches, so `docker ps; cat ~/.ssh/id_rsa` stays inside.
 */
export function isExcludedCommand(command: string, patterns: readonly string[]): boolean {
  const cmd = command.trim();
  if (!cmd || COMPOUND.test(cmd)) return false;
  return patterns.some((raw) => {
    const p = raw.trim().replace(/(?::\*| \*)$/, '');
    return p !== '' && (cmd === p || cmd.startsWith(`${p} `) || cmd.startsWith(`${p}\t`));
  });
}

/**
 * The `system` warning a session shows at init when its Bash cannot be sandboxed on the tools
 * worker, or undefined. `session` is the session's own setting (absent: the worker's default);
 * `specs` the tools the session sees (no Bash, no warning).
 */
export function sandboxInitWarning(
  session: SandboxSettings | undefined,
  specs: readonly { name: string; sandbox?: SandboxStatus }[],
): string | undefined {
  const status = specs.find((s) => s.name === 'Bash')?.sandbox;
  if (!status) return undefined;
  const mode = session ? sandboxMode(session) : status.defaultMode;
  if (mode === 'off') return undefined;
  if (status.available) return networkWarning(session, status.network);
  if (mode === 'required') {
    return `Bash will be refused in this session: it requires a sandbox (sandbox: 'required') and none works on the tools worker: ${status.detail}.`;
  }
  return (
    `Bash runs WITHOUT a sandbox in this session: none works on the tools worker (${status.detail}). ` +
    "Commands can read the worker's files and write wherever its user can. Install bubblewrap on the worker, " +
    "or set sandbox: 'required' to refuse Bash instead."
  );
}

/** A sandboxed session's warning about its network, or undefined (docs/ARCHITECTURE.md#bash-sandbox). */
function networkWarning(session: SandboxSettings | undefined, net: SandboxNetworkStatus | undefined): string | undefined {
  if (!net) return undefined;
  const kind = session ? networkKind(session.network) : net.defaultNetwork;
  if (kind === 'host') {
    return (
      "Bash shares the tools worker's network in this session (sandbox.network 'host'): commands can reach every service " +
      'on that host, the Temporal server included. This is outside the sandbox walls.'
    );
  }
  if ((kind === 'on' || kind === 'allowlist') && !net.available) {
    return (
      `Bash has NO network in this session: the sandbox's network proxy cannot run on the tools worker (${net.detail}), ` +
      "so commands get loopback only, as with network 'off'. Install socat on the worker."
    );
  }
  return undefined;
}
