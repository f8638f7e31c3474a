/**
 * The environment of Bash children and command hooks, by allowlist
 * (ARCHITECTURE.md#secrets-stay-on-workers): of the worker's own variables only PATH, HOME,
 * LANG/LC_*, TERM, TZ, USER, LOGNAME, SHELL and TMPDIR, plus the names the operator lists in
 * DURABLE_AGENT_PASS_ENV (read on the worker: the way to give Bash a secret without it travelling
 * in history); DURABLE_AGENT_SCRUB_ENV names are never passed, whatever else says so. The
 * session's own `env` is added last (it was screened by the client: src/shared/secret-env.ts).
 * A worker's database password, cloud keys or API tokens reach no model-driven command unless
 * named.
 */
import { looksSecret } from '../../shared/secret-env';

/** Worker variable listing extra names never passed (comma-separated; `PREFIX_*` / `*_SUFFIX` allowed). */
export const SCRUB_ENV_VAR = 'DURABLE_AGENT_SCRUB_ENV';
/** Worker variable listing extra names of its own that Bash and hooks get (comma-separated names). */
export const PASS_ENV_VAR = 'DURABLE_AGENT_PASS_ENV';

/** What every Bash child and hook gets of the worker's environment. */
const ALLOWED_NAMES = new Set(['PATH', 'HOME', 'LANG', 'TERM', 'TZ', 'USER', 'LOGNAME', 'SHELL', 'TMPDIR']);
const ALLOWED_PREFIX = 'LC_';

/** The worker's own settings: the sandbox hides files they name; never referenced by an MCP config. */
const WORKER_PREFIXES = ['OPENAI_', 'TEMPORAL_', 'ANTHROPIC_', 'DURABLE_AGENT_'];

export function parseScrubList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** DURABLE_AGENT_PASS_ENV: exact names only — passing by pattern would pass what nobody chose. */
export function parsePassList(value: string | undefined): string[] {
  const names = parseScrubList(value);
  const bad = names.filter((n) => !NAME.test(n));
  if (bad.length)
    throw new Error(
      `${PASS_ENV_VAR}: ${bad.map((b) => JSON.stringify(b)).join(', ')}: expected variable names (letters, digits, _), no patterns`,
    );
  return names;
}

function matchesName(name: string, rule: string): boolean {
  if (rule.endsWith('*') && !rule.startsWith('*')) return name.startsWith(rule.slice(0, -1));
  if (rule.startsWith('*') && !rule.endsWith('*')) return name.endsWith(rule.slice(1));
  if (rule.startsWith('*') && rule.endsWith('*') && rule.length > 1) return name.includes(rule.slice(1, -1));
  return name === rule;
}

/** One of the worker's own settings (model key, Temporal, durable-agent) or a name DURABLE_AGENT_SCRUB_ENV lists. */
export function isWorkerOwnEnvName(name: string, extra: readonly string[] = []): boolean {
  const upper = name.toUpperCase();
  return WORKER_PREFIXES.some((p) => upper.startsWith(p)) || extra.some((rule) => matchesName(name, rule));
}

/**
 * Whether a worker variable holds a secret of the worker's (its settings, a secret-looking name,
 * or a DURABLE_AGENT_SCRUB_ENV name): the sandbox hides the files such variables name.
 */
export function isScrubbedEnvName(name: string, extra: readonly string[] = []): boolean {
  // `DB_PASSWORD_FILE` names the file that holds the secret: that file is what must be hidden.
  return isWorkerOwnEnvName(name, extra) || looksSecret(name.replace(/[_-](FILE|PATH|DIR)$/i, ''));
}

export interface ChildEnvOptions {
  /** The worker's environment; DURABLE_AGENT_PASS_ENV is read from it. */
  base: NodeJS.ProcessEnv;
  /** DURABLE_AGENT_SCRUB_ENV: never passed, even when allowed or named in DURABLE_AGENT_PASS_ENV. */
  scrub?: readonly string[];
  /** The session's `env`: added last, so a session may set any name it wants. */
  sessionEnv?: Record<string, string>;
}

export function buildChildEnv({ base, scrub = [], sessionEnv = {} }: ChildEnvOptions): Record<string, string> {
  const pass = new Set(parseScrubList(base[PASS_ENV_VAR]));
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) {
    if (value === undefined) continue;
    const allowed = ALLOWED_NAMES.has(name) || name.startsWith(ALLOWED_PREFIX) || pass.has(name);
    if (allowed && !scrub.some((rule) => matchesName(name, rule))) env[name] = value;
  }
  return { ...env, ...sessionEnv };
}
