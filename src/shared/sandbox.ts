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

const ALLOWLIST_REFUSED =
  'a host allowlist is not supported yet: it needs a filtering proxy, which this version does not run. ' +
  "Use network 'on' or 'off' (an empty list means 'off').";

/**
 * `'on'`, `'off'`, or Claude Code's `{allowedDomains: [...]}`. A host allowlist needs a filtering
 * proxy between the sandbox and the network; until one exists a non-empty list is refused by name
 * rather than silently widened to 'on' or narrowed to 'off'. Checked by hand: a zod union would
 * report "invalid input" instead of which rule failed.
 */
const SandboxNetwork = sharedSchema(
  'sandbox.SandboxNetwork',
  () =>
    z.unknown().transform((v, ctx): 'on' | 'off' => {
      if (v === 'on' || v === 'off') return v;
      if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
        const keys = Object.keys(v);
        const list = (v as { allowedDomains?: unknown }).allowedDomains;
        const unknownKey = keys.find((k) => k !== 'allowedDomains');
        if (unknownKey) {
          ctx.addIssue({ code: 'custom', path: [unknownKey], message: `unknown option '${unknownKey}' (only allowedDomains)` });
        } else if (!Array.isArray(list) || !list.every((d) => typeof d === 'string')) {
          ctx.addIssue({ code: 'custom', path: ['allowedDomains'], message: 'expected an array of host names' });
        } else if (list.length > 0) {
          ctx.addIssue({ code: 'custom', path: ['allowedDomains'], message: ALLOWLIST_REFUSED });
        } else return 'off';
        return z.NEVER;
      }
      ctx.addIssue({ code: 'custom', message: "expected 'on', 'off' or {allowedDomains: [...]}" });
      return z.NEVER;
    }) as unknown as z.ZodType<'on' | 'off', 'on' | 'off' | { allowedDomains: string[] }>,
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
      network: SandboxNetwork.default('on').describe("'on' (the host's network) or 'off' (a network namespace of its own: loopback only)."),
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
  if (!status || status.available) return undefined;
  const mode = session ? sandboxMode(session) : status.defaultMode;
  if (mode === 'off') return undefined;
  if (mode === 'required') {
    return `Bash will be refused in this session: it requires a sandbox (sandbox: 'required') and none works on the tools worker: ${status.detail}.`;
  }
  return (
    `Bash runs WITHOUT a sandbox in this session: none works on the tools worker (${status.detail}). ` +
    "Commands can read the worker's files and write wherever its user can. Install bubblewrap on the worker, " +
    "or set sandbox: 'required' to refuse Bash instead."
  );
}
